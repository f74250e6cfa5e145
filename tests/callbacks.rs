//! `callbacks(handler)`: the tools as framework-neutral callback objects.

use crate::common;

use std::sync::Arc;

use common::Counts;
use schemars::JsonSchema;
use serde::Deserialize;
use toolbox::events::ToolCallback;
use toolbox::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[tokio::test]
async fn callbacks_take_the_provider_argument_string_and_return_model_text() {
    let math = FnToolBox::new([
        tool_fn("add", "Adds", |p: Pair| async move { p.a + p.b }),
        tool_fn("mul", "Multiplies", |p: Pair| async move { p.a * p.b }),
    ])
    .unwrap();
    let tools = Arc::new(MultiToolBox::builder().add("math", math).build().unwrap());
    let counts = Counts::default();
    let callbacks = tools.callbacks(&counts.handler());
    let names: Vec<&str> = callbacks.iter().map(ToolCallback::name).collect();
    assert_eq!(names, ["math_add", "math_mul"]);
    assert_eq!(callbacks[0].specification().description, "Adds");
    assert_eq!(
        callbacks[0].specification().parameters["required"],
        serde_json::json!(["a", "b"])
    );

    assert_eq!(callbacks[0].call(r#"{"a": 2, "b": 3}"#).await, "5");
    assert_eq!(callbacks[1].call(r#"{"a": 2, "b": 3}"#).await, "6");
    assert_eq!(
        callbacks[1].call(r#"{"a": 2}"#).await,
        "invalid arguments: missing field `b`"
    );
    let response = callbacks[0]
        .call_with_context(r#"{"a": 1, "b": 1}"#, &Context::new().with_call_id("c1"))
        .await;
    assert_eq!(response, ToolResponse::text("2"));
    assert_eq!(
        counts.get(),
        (4, 3, 1),
        "every callback call passes the lifecycle"
    );

    let shared: Arc<dyn ToolBox> = tools;
    assert_eq!(ToolCallback::all(shared, &ToolHandler::empty()).len(), 2);
}
