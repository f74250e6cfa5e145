//! The quick start: closure tools in a MultiToolBox, called with a handler
//! that prints every event and its timing.
//!
//! Run it with `cargo run --example quickstart`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolbox::prelude::*;

/// Two integers to add.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// A city to look up.
#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    /// The city, e.g. "Prague".
    city: String,
}

#[derive(Serialize)]
struct Forecast {
    city: String,
    celsius: f32,
    sky: &'static str,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let math = ToolSet::new([
        tool_fn("add", "Adds two integers.", |x: AddArgs| async move {
            x.a + x.b
        })
        .describe_arg("a", "The first addend")
        .describe_arg("b", "The second addend")
        .read_only(),
        tool_fn("divide", "Divides a by b.", |x: AddArgs| async move {
            if x.b == 0 {
                Err("cannot divide by zero; pass a non-zero b".to_owned())
            } else {
                Ok(x.a / x.b)
            }
        }),
    ])?;
    let weather = ToolSet::new([tool_fn(
        "get",
        "Gets the current weather for a city.",
        |x: CityArgs| async move {
            Forecast {
                city: x.city,
                celsius: 21.5,
                sky: "clear",
            }
        },
    )
    .read_only()])?;

    let tools = MultiToolBox::builder()
        .add("math", math)
        .add("weather", weather)
        .build()?;

    println!("== specifications");
    for spec in tools.specifications(&Context::new()) {
        println!("{}", serde_json::to_string_pretty(&spec)?);
    }

    let handler = ToolHandler::new()
        .on_start(|e| println!("  start   {} {}", e.name, e.arguments))
        .on_success(|e| println!("  success {} in {:?}", e.name, e.elapsed))
        .on_error(|e| {
            println!(
                "  error   {} in {:?}: {}",
                e.name,
                e.elapsed,
                e.error.report()
            )
        });

    println!("\n== calls");
    let calls = [
        ("math_add", json!({"a": 40, "b": 2})),
        ("math_add", json!("{\"a\": 1, \"b\": 2}")),
        ("weather_get", json!({"city": "Prague"})),
        ("math_divide", json!({"a": 1, "b": 0})),
        ("math_add", json!({"a": "forty", "b": 2})),
        ("math_ad", json!({})),
    ];
    for (name, arguments) in calls {
        let ctx = Context::new();
        let response = tools.call(name, &arguments, &ctx, &handler).await;
        let marker = if response.is_error { "error" } else { "ok" };
        println!("{name} -> [{marker}] {}", response.content);
    }
    tools.close().await?;
    Ok(())
}
