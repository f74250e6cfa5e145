//! toolbox's tools as rig tools: each a `DynamicTool` with toolbox's
//! schema, each call through toolbox's lifecycle (the handler prints every
//! event), failures as rig's error kinds.
//!
//! Run it with `cargo run --example bridge_rig --features rig`.

use std::sync::Arc;

use toolbox::bridge::rig::RigTools;
use toolbox::prelude::*;
use toolbox::provider::Provider;

/// Orders.
#[derive(Default)]
struct Orders;

#[tool_box]
impl Orders {
    /// Looks an order up by its number.
    #[tool(read_only)]
    fn get_order(
        &self,
        /** The order number, e.g. 98765. */
        number: u32,
    ) -> Result<String, String> {
        match number {
            98765 => Ok(format!("order {number}: shipped 2026-11-20")),
            _ => Err(format!(
                "no order {number}; check the number with the customer"
            )),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handler = ToolHandler::empty()
        .on_start(|e| println!("start {}", e.name))
        .on_success(|e| println!("success {}", e.name))
        .on_error(|e| println!("error {} ({})", e.name, e.error.kind()));
    let tools = RigTools::new(Arc::new(Orders))
        .handler(&handler)
        .provider(Provider::OpenAiChat { strict: true })
        .build()?;
    let tool = &tools[0];
    let definition = tool.definition();
    println!("rig tool: {} {}", definition.name, definition.parameters);

    let output = tool.execute(serde_json::json!({"number": 98765})).await?;
    println!("ok: {}", output.render());
    for arguments in [
        serde_json::json!({"number": 1}),
        serde_json::json!({"number": "x"}),
    ] {
        let error = tool.execute(arguments).await.unwrap_err();
        println!("refused ({}): {}", error.kind(), error.message());
    }
    Ok(())
}
