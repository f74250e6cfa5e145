//! Record and replay: a model turn recorded to a tape (one JSON line per
//! call), re-run from the tape with no tool executed, then a drifted run —
//! the model asked for something else — reported with its first difference.
//!
//! Run it with `cargo run --example record_replay`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolbox::boxes::{read_tape, RecordingToolBox, ReplayToolBox};
use toolbox::prelude::*;
use toolbox::{provider::Provider, turn::TurnRunner};

/// Orders; counts how often a tool really ran.
struct Orders {
    runs: Arc<AtomicUsize>,
}

/// Orders and refunds.
#[tool_box(register = false)]
impl Orders {
    /// Gets an order by its number.
    #[tool(read_only)]
    fn get_order(
        &self,
        /// The order number, e.g. 98765.
        number: u32,
    ) -> Result<String, String> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match number {
            98765 => Ok("order 98765: shipped 2026-11-20, not delivered".to_owned()),
            _ => Err(format!("no order {number}")),
        }
    }

    /// Checks a parcel's tracking status.
    #[tool(read_only)]
    fn track(
        &self,
        /// The order number.
        number: u32,
    ) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        format!("parcel of {number}: lost in transit since 2026-11-22")
    }
}

/// The model's turn, as OpenAI's Chat Completions sends it.
fn turn(number: u32) -> serde_json::Value {
    json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_order", "arguments": format!("{{\"number\":{number}}}")}},
        {"id": "call_2", "type": "function",
         "function": {"name": "track", "arguments": format!("{{\"number\":{number}}}")}}
    ]}}]})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let openai = Provider::OpenAiChat { strict: true };
    let tape = std::env::temp_dir().join(format!("record_replay-{}.jsonl", std::process::id()));
    let runs = Arc::new(AtomicUsize::new(0));
    let ctx = Context::new();

    println!("== 1. record a turn");
    let recording = RecordingToolBox::to_file(Orders { runs: runs.clone() }, &tape)?;
    let outcomes = TurnRunner::new(&recording)
        .run(openai.parse_calls(&turn(98765))?, &ctx)
        .await;
    for outcome in &outcomes {
        println!("{} -> {}", outcome.call.name, outcome.response.content);
    }
    println!("tools run: {}", runs.load(Ordering::SeqCst));
    let entries = read_tape(&tape)?.strict()?;
    println!("tape: {} entries in {}", entries.len(), tape.display());
    for entry in &entries {
        println!("  {}", serde_json::to_string(entry)?);
    }

    println!("\n== 2. replay it: the same answers, no tool runs");
    let live = Arc::new(AtomicUsize::new(0));
    let replay = ReplayToolBox::new(entries.clone(), Orders { runs: live.clone() });
    let replayed = TurnRunner::new(&replay)
        .run(openai.parse_calls(&turn(98765))?, &ctx)
        .await;
    for (outcome, recorded) in replayed.iter().zip(&outcomes) {
        let same = outcome.response == recorded.response;
        println!(
            "{} -> {} (same as recorded: {same})",
            outcome.call.name, outcome.response.content
        );
    }
    println!(
        "tools run: {}, calls replayed: {}",
        live.load(Ordering::SeqCst),
        replay.replayed()
    );

    println!("\n== 3. a drifted run: the model asks about another order");
    let strict = ReplayToolBox::new(entries, Orders { runs: live.clone() });
    let drifted = TurnRunner::new(&strict)
        .handler(
            ToolHandler::empty().on_error(|e| println!("  drift reported: {}", e.error.report())),
        )
        .run(openai.parse_calls(&turn(12345))?, &ctx)
        .await;
    for outcome in &drifted {
        println!(
            "{} -> [{}] {}",
            outcome.call.name,
            if outcome.response.is_error {
                "error"
            } else {
                "ok"
            },
            outcome.response.content
        );
    }
    println!("tools run: {}", live.load(Ordering::SeqCst));
    let _ = std::fs::remove_file(&tape);
    Ok(())
}
