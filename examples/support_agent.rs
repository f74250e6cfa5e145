//! The support desk, end to end: `CustomerTools` and `OrderTools` scanned
//! into a registry as `crm` and `orders`, a knowledge base served as an MCP
//! server (Streamable HTTP on 127.0.0.1) and proxied into the same registry
//! as `kb`, the agent's tools resolved by name, and a recorded conversation
//! ("Customer #12345 says their order #98765 never arrived") run through the
//! turn runner. The refund is destructive: it is held for approval and
//! resumed once the operator approves. Every event is printed with its
//! timing.
//!
//! Run it with `cargo run --example support_agent`.

use std::sync::Mutex;

use serde::Serialize;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::{
    provider::Provider,
    turn::{Decision, TurnRunner},
};
use toolbox_mcp::{serve_http, McpServer, McpToolBox};

#[derive(Serialize, schemars::JsonSchema)]
struct Customer {
    id: u32,
    name: String,
    tier: String,
}

/// Customer records.
struct CustomerTools;

/// Customer records.
#[tool_box(register = false, name = "crm")]
impl CustomerTools {
    /// Gets a customer by id.
    #[tool(read_only)]
    fn get_customer(
        &self,
        /// The customer's id, e.g. 12345.
        id: u32,
    ) -> Result<Customer, String> {
        match id {
            12345 => Ok(Customer {
                id,
                name: "Grace Hopper".into(),
                tier: "gold".into(),
            }),
            _ => Err(format!("no customer {id}")),
        }
    }
}

/// Orders and refunds; remembers what it refunded.
#[derive(Default)]
struct OrderTools {
    refunded: Mutex<Vec<u32>>,
}

/// Orders and refunds.
#[tool_box(name = "orders")]
impl OrderTools {
    /// Gets an order by id.
    #[tool(read_only)]
    fn get_order(
        &self,
        /// The order id, e.g. 98765.
        id: u32,
    ) -> Result<serde_json::Value, String> {
        match id {
            98765 => Ok(json!({"id": id, "customer": 12345, "total": "49.90 EUR",
                               "status": "shipped 2026-11-20, no delivery scan"})),
            _ => Err(format!("no order {id}")),
        }
    }

    /// Refunds an order in full. Needs an operator's approval.
    #[tool(destructive)]
    fn refund_order(
        &self,
        /// The order id.
        id: u32,
        /// Why, for the customer's record.
        reason: String,
    ) -> String {
        self.refunded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(id);
        format!("order {id} refunded in full ({reason})")
    }
}

/// The knowledge base, served over MCP by another process in real life.
struct KnowledgeBase;

/// Support articles.
#[tool_box(register = false, name = "kb")]
impl KnowledgeBase {
    /// Searches the support articles.
    #[tool(read_only)]
    fn search(
        &self,
        /// Words to look for.
        query: String,
    ) -> Vec<String> {
        let articles = [
            (
                "lost parcel",
                "Lost parcels: refund in full after 7 days without a delivery scan.",
            ),
            ("returns", "Returns: 30 days, unused, with the receipt."),
        ];
        articles
            .iter()
            .filter(|(topic, _)| {
                query.contains(topic) || topic.split(' ').any(|w| query.contains(w))
            })
            .map(|(_, text)| (*text).to_owned())
            .collect()
    }
}

fn printing() -> ToolHandler {
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

/// One recorded Chat Completions response asking for tools.
fn asks(calls: &[(&str, &str, serde_json::Value)]) -> serde_json::Value {
    let calls: Vec<serde_json::Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    println!("== the knowledge base as an MCP server");
    let kb_server = serve_http(
        McpServer::new(KnowledgeBase, "knowledge-base"),
        "127.0.0.1:0",
    )
    .await?;
    let kb = McpToolBox::http(kb_server.url()).connect().await?;
    if let Some((version, name)) = kb.server_info() {
        println!("connected to `{name}` over Streamable HTTP, protocol {version}");
    }

    println!("\n== the registry");
    let registry = Registry::new();
    registry.scan(CustomerTools)?;
    registry.scan(OrderTools::default())?;
    registry.register_box(kb, "kb")?;
    let keys: Vec<String> = registry.keys().iter().map(ToString::to_string).collect();
    println!("registered: {}", keys.join(", "));
    let agent = registry.resolve([
        "get_customer@crm",
        "get_order@orders",
        "refund_order@orders",
        "search@kb",
    ])?;
    let ctx = Context::new();
    let names: Vec<String> = agent
        .specifications(&ctx)
        .into_iter()
        .map(|s| s.name)
        .collect();
    println!("the agent's tools: {}", names.join(", "));

    let openai = Provider::OpenAiChat { strict: true };
    // Destructive calls wait for the operator; everything else runs.
    let runner = TurnRunner::new(&agent)
        .handler(printing())
        .approval(|request| async move {
            if request.destructive() {
                Decision::Defer
            } else {
                Decision::Approve
            }
        });

    println!("\n== user: Customer #12345 says their order #98765 never arrived.");
    println!("-- turn 1: the model looks things up (in parallel)");
    let turn1 = asks(&[
        ("call_1", "get_customer", json!({"id": 12345})),
        ("call_2", "get_order", json!({"id": 98765})),
        (
            "call_3",
            "search",
            json!({"query": "lost parcel never arrived"}),
        ),
    ]);
    for outcome in runner.run(openai.parse_calls(&turn1)?, &ctx).await {
        println!("{} -> {}", outcome.call.name, outcome.response.content);
    }

    println!("-- turn 2: the model asks for a refund");
    let turn2 = asks(&[(
        "call_4",
        "refund_order",
        json!({"id": 98765, "reason": "parcel lost in transit"}),
    )]);
    let outcomes = runner.run(openai.parse_calls(&turn2)?, &ctx).await;
    let mut held = Vec::new();
    for outcome in outcomes {
        println!("{} -> {}", outcome.call.name, outcome.response.content);
        held.extend(outcome.pending);
    }
    println!("held for approval: {}", held.len());

    println!("-- the operator approves");
    for pending in &held {
        let settled = runner.resume(pending, Decision::Approve, &ctx).await;
        println!("{} -> {}", settled.call.name, settled.response.content);
        let messages = openai.result_messages(&[settled.pair()]);
        println!("result message: {}", serde_json::to_string(&messages[0])?);
    }

    println!("-- turn 3: the model answers");
    println!("assistant: Your order #98765 was lost in transit; it has been refunded in full (49.90 EUR).");

    agent.close().await?;
    kb_server.shutdown(std::time::Duration::from_secs(5)).await;
    Ok(())
}
