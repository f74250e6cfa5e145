//! The macros work for a user who depends on toolbox-core alone, through
//! `crate = toolbox_core`.

use serde_json::json;
use toolbox_core::{Context, NamedToolBox, ToolBox, ToolBoxExt, ToolHandler};

struct Clock;

/// Time tools.
#[toolbox_macros::tool_box(register = false, crate = toolbox_core)]
impl Clock {
    /// Adds seconds to a timestamp.
    #[toolbox_macros::tool]
    fn later(&self, at: u64, seconds: Option<u64>) -> u64 {
        at + seconds.unwrap_or(60)
    }
}

/// Doubles a number.
#[toolbox_macros::tool(crate = toolbox_core)]
fn double(n: i64) -> i64 {
    n * 2
}

#[tokio::test]
async fn generated_code_reaches_the_runtime_through_the_crate_override() {
    let handler = ToolHandler::empty();
    let ctx = Context::new();
    let response = Clock
        .call("later", &json!({"at": 100}), &ctx, &handler)
        .await;
    assert_eq!(response.content, "160");
    assert_eq!(Clock.box_name(), "clock");
    assert_eq!(
        Clock.specifications(&ctx)[0].parameters["required"],
        json!(["at"])
    );
    assert_eq!(
        DoubleTool
            .call("double", &json!({"n": 21}), &ctx, &handler)
            .await
            .content,
        "42"
    );
}
