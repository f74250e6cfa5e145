//! The quick start, the support-agent scenario:
//!
//! 1. closure tools in a `MultiToolBox`, called with a handler that prints
//!    every event and its timing;
//! 2. two `#[tool_box]` boxes (an impl block and a module) scanned into a
//!    `Registry`, and an agent's tool list resolved by name;
//! 3. the agent's tools as OpenAI, Anthropic and Gemini definitions, and a
//!    recorded OpenAI response with parallel tool calls run through the turn
//!    runner, with the result messages to send back.
//!
//! Run it with `cargo run --example quickstart`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolbox::prelude::*;
use toolbox::{provider::Provider, turn::TurnRunner};

// ---- 1. closure tools ----

/// Two integers.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

fn math() -> Result<FnToolBox, toolbox::DefinitionError> {
    FnToolBox::new([
        tool_fn(
            "add",
            "Adds two integers.",
            |x: Pair| async move { x.a + x.b },
        )
        .describe_arg("a", "The first addend")
        .describe_arg("b", "The second addend")
        .read_only(),
        tool_fn("divide", "Divides a by b.", |x: Pair| async move {
            if x.b == 0 {
                Err("cannot divide by zero; pass a non-zero b".to_owned())
            } else {
                Ok(x.a / x.b)
            }
        }),
    ])
}

// ---- 2. the support agent's boxes ----

#[derive(Serialize, JsonSchema)]
struct Customer {
    id: u32,
    name: String,
    tier: &'static str,
}

/// Customer records.
struct Crm;

/// Customer records.
#[tool_box(register = false)]
impl Crm {
    /// Gets a customer by id.
    #[tool(read_only)]
    fn get_customer(
        &self,
        /// The customer's id, e.g. 42.
        id: u32,
    ) -> Result<Customer, String> {
        match id {
            42 => Ok(Customer {
                id,
                name: "Ada Lovelace".into(),
                tier: "gold",
            }),
            _ => Err(format!(
                "no customer {id}; customer ids are 42 in this demo"
            )),
        }
    }
}

/// Orders and their shipping state.
#[tool_box]
mod orders {
    /// Gets an order by its number.
    #[tool(read_only)]
    pub(crate) async fn get_order(
        /// The order number, e.g. "A-1001".
        number: String,
    ) -> String {
        format!("order {number}: shipped 2026-11-28, arriving 2026-12-02")
    }
}

fn printing_handler() -> ToolHandler {
    ToolHandler::empty()
        .on_start(|e| println!("  start   {} {}", e.name, e.arguments))
        .on_success(|e| println!("  success {} in {:?}", e.name, e.elapsed))
        .on_error(|e| {
            println!(
                "  error   {} in {:?}: {}",
                e.name,
                e.elapsed,
                e.error.report()
            )
        })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handler = printing_handler();

    println!("== 1. closure tools in a MultiToolBox");
    let tools = MultiToolBox::builder().add("math", math()?).build()?;
    for spec in tools.specifications(&Context::new()) {
        println!("{}", serde_json::to_string(&spec)?);
    }
    let calls = [
        ("math_add", json!({"a": 40, "b": 2})),
        ("math_add", json!("{\"a\": 1, \"b\": 2}")),
        ("math_divide", json!({"a": 1, "b": 0})),
        ("math_add", json!({"a": "forty", "b": 2})),
        ("math_ad", json!({})),
    ];
    for (name, arguments) in &calls {
        let response = tools.call(name, arguments, &Context::new(), &handler).await;
        let marker = if response.is_error { "error" } else { "ok" };
        println!("{name} -> [{marker}] {}", response.content);
    }
    tools.close().await?;

    println!("\n== 2. the support agent: a registry and its resolution");
    let registry = Registry::new(); // holds now@core
    registry.scan(Crm)?;
    registry.scan(orders::Tools)?;
    let keys: Vec<String> = registry.keys().iter().map(ToString::to_string).collect();
    println!("registered: {}", keys.join(", "));

    let agent = registry.resolve(["get_customer@crm", "get_order@orders", "now"])?;
    for spec in agent.specifications(&Context::new()) {
        println!("{}", serde_json::to_string_pretty(&spec)?);
    }
    let turn = [
        ("get_customer", json!({"id": 42})),
        ("get_order", json!({"number": "A-1001"})),
        ("now", json!(null)),
        ("get_customer", json!({"id": 7})),
    ];
    for (i, (name, arguments)) in turn.iter().enumerate() {
        let ctx = Context::new().with_call_id(format!("call_{i}"));
        let response = agent.call(name, arguments, &ctx, &handler).await;
        let marker = if response.is_error { "error" } else { "ok" };
        println!("{name} -> [{marker}] {}", response.content);
    }

    println!("\n== 3. providers: definitions, a recorded turn, result messages");
    let specs = agent.specifications(&Context::new());
    for (label, provider) in [
        (
            "OpenAI Chat Completions (strict)",
            Provider::OpenAiChat { strict: true },
        ),
        (
            "Anthropic Messages (strict)",
            Provider::Anthropic { strict: true },
        ),
        ("Gemini (parametersJsonSchema)", Provider::Gemini),
    ] {
        println!("-- {label}");
        println!(
            "{}",
            serde_json::to_string_pretty(&provider.definitions(&specs)?)?
        );
    }
    // A recorded Chat Completions response: the model asks for two tools at once.
    let recorded = json!({
        "id": "chatcmpl-demo",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_cust", "type": "function",
                 "function": {"name": "get_customer", "arguments": "{\"id\":42}"}},
                {"id": "call_order", "type": "function",
                 "function": {"name": "get_order", "arguments": "{\"number\":\"A-1001\"}"}},
                {"id": "call_now", "type": "function",
                 "function": {"name": "now", "arguments": "{}"}}
            ]
        }}]
    });
    let openai = Provider::OpenAiChat { strict: true };
    let calls = openai.parse_calls(&recorded)?;
    println!(
        "-- the turn: {} calls, run concurrently (all read-only)",
        calls.len()
    );
    let outcomes = TurnRunner::new(&agent)
        .handler(handler.clone())
        .run(calls, &Context::new())
        .await;
    let results: Vec<_> = outcomes.iter().map(|o| o.pair()).collect();
    println!("-- result messages to send back");
    println!(
        "{}",
        serde_json::to_string_pretty(&openai.result_messages(&results))?
    );
    Ok(())
}
