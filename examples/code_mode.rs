//! A local code mode against direct calls, on one ten-step task: restock
//! the warehouses that will run short of a product. A scripted model (no
//! network) solves it both ways over OpenAI Chat Completions payloads:
//!
//! - directly: five model turns (list the warehouses; read stock and
//!   demand at each; reorder where short; notify), every tool result sent
//!   back into the conversation;
//! - in code mode: one `run_code` call whose JavaScript makes the same ten
//!   calls inside the sandbox and returns two lines, then the answer.
//!
//! It prints how many bytes of model input each conversation costs. The
//! reorders need approval: the hook approves them in both ways (a script's
//! calls keep the approval hook).
//!
//! Run it with `cargo run --features code-mode --example code_mode`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolbox::code::CodeMode;
use toolbox::prelude::*;
use toolbox::provider::Provider;
use toolbox::turn::{Decision, TurnRunner};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Stock {
    /// The warehouse's id, e.g. "wh_north".
    warehouse: String,
    /// The product's SKU, e.g. "A1".
    sku: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Reorder {
    /// The warehouse's id.
    warehouse: String,
    /// The product's SKU.
    sku: String,
    /// Units to order, at least 1.
    units: u32,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    /// What the team should read.
    text: String,
}

const WAREHOUSES: [(&str, u32, u32); 3] = [
    ("wh_north", 120, 400),
    ("wh_south", 900, 300),
    ("wh_east", 40, 260),
];

fn warehouse_tools() -> Result<FnToolBox, toolbox::DefinitionError> {
    FnToolBox::new([
        tool_fn(
            "list_warehouses",
            "Every warehouse we run, with its id, city and manager.",
            |_: Nothing| async {
                json!(WAREHOUSES.iter().map(|(id, _, _)| json!({
                    "id": id,
                    "city": id.trim_start_matches("wh_"),
                    "manager": "ops@example.com",
                    "opened": "2019-04-01",
                    "dock_doors": 12,
                    "temperature_controlled": false
                })).collect::<Vec<_>>())
            },
        )
        .read_only(),
        tool_fn(
            "get_inventory",
            "Units of a SKU on hand in a warehouse, with bin locations and the last count.",
            |s: Stock| async move {
                let units = WAREHOUSES.iter().find(|w| w.0 == s.warehouse).map_or(0, |w| w.1);
                json!({"warehouse": s.warehouse, "sku": s.sku, "units": units,
                    "bins": ["A-01-03", "A-01-04", "C-12-01"], "last_counted": "2026-12-01T06:00:00Z",
                    "reserved": 0, "in_transit": 0})
            },
        )
        .read_only(),
        tool_fn(
            "get_demand",
            "Forecast demand for a SKU at a warehouse over the next 30 days, with its confidence band.",
            |s: Stock| async move {
                let units = WAREHOUSES.iter().find(|w| w.0 == s.warehouse).map_or(0, |w| w.2);
                json!({"warehouse": s.warehouse, "sku": s.sku, "next_30_days": units,
                    "low": units * 8 / 10, "high": units * 12 / 10, "model": "seasonal-2026-11",
                    "history_days": 730})
            },
        )
        .read_only(),
        tool_fn(
            "reorder",
            "Places a purchase order for a SKU delivered to a warehouse.",
            |r: Reorder| async move {
                json!({"order": format!("po_{}_{}", r.warehouse, r.units), "warehouse": r.warehouse,
                    "sku": r.sku, "units": r.units, "eta": "2026-12-12", "supplier": "Acme Parts"})
            },
        )
        .destructive(),
        tool_fn(
            "notify_team",
            "Posts a note to the operations team's channel.",
            |n: Note| async move { format!("posted ({} chars)", n.text.len()) },
        ),
    ])
}

/// One Chat Completions request's bytes: messages and tools.
fn request_bytes(messages: &[Value], tools: &Value) -> usize {
    json!({"model": "scripted", "messages": messages, "tools": tools})
        .to_string()
        .len()
}

fn assistant(calls: &[(String, &str, Value)]) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": calls.iter().map(|(id, name, args)| json!({
        "id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}
    })).collect::<Vec<_>>()})
}

const TASK: &str = "Product A1: restock every warehouse that will run short in the next 30 days, then tell the ops team what you ordered.";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let provider = Provider::OpenAiChat { strict: false };
    let approvals = Arc::new(AtomicUsize::new(0));
    let approve = |approvals: &Arc<AtomicUsize>| {
        let approvals = approvals.clone();
        move |request: toolbox::turn::ApprovalRequest| {
            let approvals = approvals.clone();
            async move {
                if request.destructive() {
                    approvals.fetch_add(1, Ordering::SeqCst);
                }
                Decision::Approve
            }
        }
    };
    let ctx = Context::new();

    // Directly: the model reads each result and decides the next calls.
    let tools = warehouse_tools()?;
    let definitions = provider.definitions(&tools.specifications(&ctx))?;
    let runner = TurnRunner::new(&tools)
        .provider(provider)
        .approval(approve(&approvals));
    let mut messages = vec![json!({"role": "user", "content": TASK})];
    let mut input = 0;
    let mut turns = 0;
    let mut direct_calls = 0;
    let mut short = Vec::new();
    for step in 0..4 {
        input += request_bytes(&messages, &definitions);
        turns += 1;
        let planned: Vec<(String, &str, Value)> = match step {
            0 => vec![("call_0".into(), "list_warehouses", json!({}))],
            1 => WAREHOUSES
                .iter()
                .enumerate()
                .flat_map(|(i, (id, _, _))| {
                    [
                        (
                            format!("call_inv_{i}"),
                            "get_inventory",
                            json!({"warehouse": id, "sku": "A1"}),
                        ),
                        (
                            format!("call_dem_{i}"),
                            "get_demand",
                            json!({"warehouse": id, "sku": "A1"}),
                        ),
                    ]
                })
                .collect(),
            2 => short
                .iter()
                .enumerate()
                .map(|(i, (id, units)): (usize, &(String, u64))| {
                    (
                        format!("call_po_{i}"),
                        "reorder",
                        json!({"warehouse": id, "sku": "A1", "units": units}),
                    )
                })
                .collect(),
            _ => vec![(
                "call_note".into(),
                "notify_team",
                json!({"text": "Reordered A1 for the short warehouses."}),
            )],
        };
        let message = assistant(&planned);
        let calls = provider.parse_calls(&message)?;
        direct_calls += calls.len();
        let outcomes = runner.run(calls, &ctx).await;
        if step == 1 {
            // The model compares stock with demand from the results it read.
            for pair in outcomes.chunks(2) {
                let stock: Value = serde_json::from_str(&pair[0].response.content)?;
                let demand: Value = serde_json::from_str(&pair[1].response.content)?;
                let (have, need) = (
                    stock["units"].as_u64().unwrap_or(0),
                    demand["next_30_days"].as_u64().unwrap_or(0),
                );
                if have < need {
                    short.push((
                        stock["warehouse"].as_str().unwrap_or_default().to_owned(),
                        need - have,
                    ));
                }
            }
        }
        messages.push(message);
        messages.extend(provider.result_messages(&outcomes));
    }
    input += request_bytes(&messages, &definitions);
    turns += 1;
    let direct_input = input;
    println!("direct: {turns} model turns, {direct_calls} tool calls, {direct_input} bytes of model input");

    // Code mode: one program, the same calls inside the sandbox.
    let code = CodeMode::new(warehouse_tools()?).approval(approve(&approvals));
    let definitions = provider.definitions(&code.specifications(&ctx))?;
    let mut messages = vec![json!({"role": "user", "content": TASK})];
    let mut input = request_bytes(&messages, &definitions);
    let script = r#"
const short = [];
for (const w of await tools.list_warehouses({})) {
  const stock = await tools.get_inventory({ warehouse: w.id, sku: "A1" });
  const demand = await tools.get_demand({ warehouse: w.id, sku: "A1" });
  if (stock.units < demand.next_30_days) short.push({ warehouse: w.id, units: demand.next_30_days - stock.units });
}
const orders = [];
for (const s of short) orders.push((await tools.reorder({ ...s, sku: "A1" })).order);
await tools.notify_team({ text: "Reordered A1: " + orders.join(", ") });
return { short, orders };
"#;
    let message = assistant(&[("call_run".into(), "run_code", json!({"code": script}))]);
    let calls = provider.parse_calls(&message)?;
    let outcomes = TurnRunner::new(&code)
        .provider(provider)
        .run(calls, &ctx)
        .await;
    let answer = &outcomes[0].response;
    messages.push(message);
    messages.extend(provider.result_messages(&outcomes));
    input += request_bytes(&messages, &definitions);
    println!("code mode: 2 model turns, 1 run_code call, {input} bytes of model input");
    println!("run_code -> {}", answer.content);
    println!(
        "code mode input: {:.1} % of direct ({} bytes saved)",
        100.0 * input as f64 / direct_input as f64,
        direct_input.saturating_sub(input)
    );
    println!(
        "approvals asked: {} (two reorders, each way)",
        approvals.load(Ordering::SeqCst)
    );
    Ok(())
}
