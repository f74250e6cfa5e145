//! Recording, replay and deferred tools.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::Counts;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::ToolSpecification;
use toolbox::{
    boxes::read_tape, boxes::DeferredToolBox, boxes::RecordingToolBox, boxes::ReplayToolBox,
    boxes::DEFERRED_ANSWER, ToolErrorKind,
};

#[derive(Deserialize, JsonSchema)]
struct Id {
    id: u32,
}

fn orders(runs: Arc<AtomicUsize>) -> FnToolBox {
    FnToolBox::new([tool_fn("get_order", "Gets an order", move |x: Id| {
        runs.fetch_add(1, Ordering::SeqCst);
        async move {
            if x.id == 0 {
                Err("order 0 does not exist; ids start at 1".to_owned())
            } else {
                Ok(format!("order {}", x.id))
            }
        }
    })])
    .unwrap()
}

fn tape_path(name: &str) -> common::ScratchFile {
    common::ScratchFile::new("tapes", name)
}

#[tokio::test]
async fn a_recorded_turn_replays_without_running_any_tool() {
    let path = tape_path("turn.jsonl");
    let runs = Arc::new(AtomicUsize::new(0));
    let recording = RecordingToolBox::to_file(orders(runs.clone()), &path).unwrap();
    let handler = ToolHandler::empty();
    let first = recording
        .call(
            "get_order",
            &json!({"id": 7}),
            &Context::new().with_call_id("c1"),
            &handler,
        )
        .await;
    let second = recording
        .call("get_order", &json!({"id": 0}), &Context::new(), &handler)
        .await;
    let third = recording
        .call("get_order", &json!({"id": "x"}), &Context::new(), &handler)
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    let tape = read_tape(&path).unwrap();
    assert_eq!(tape.len(), 3, "one line per call, flushed as it happened");
    assert_eq!(tape[0].call_id.as_deref(), Some("c1"));
    assert_eq!(tape[0].arguments, json!({"id": 7}));
    assert_eq!(tape[0].response, ToolResponse::text("order 7"));
    assert_eq!(tape[1].error.as_ref().unwrap().kind, ToolErrorKind::Failed);
    // One name for the kind everywhere: spans and tapes both say `tool_failed`,
    // and a tape written when tapes said `failed` still reads.
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text.lines().nth(1).unwrap();
    assert!(line.contains(r#""kind":"tool_failed""#), "{line}");
    std::fs::write(
        &path,
        text.replace(r#""kind":"tool_failed""#, r#""kind":"failed""#),
    )
    .unwrap();
    let old = read_tape(&path).unwrap().strict().unwrap();
    assert_eq!(old[1].error.as_ref().unwrap().kind, ToolErrorKind::Failed);
    assert_eq!(
        tape[2].error.as_ref().unwrap().kind,
        ToolErrorKind::InvalidArguments
    );

    let replay_runs = Arc::new(AtomicUsize::new(0));
    let replay = ReplayToolBox::new(tape, orders(replay_runs.clone()));
    let counts = Counts::default();
    let handler = counts.handler();
    assert_eq!(
        replay
            .call("get_order", &json!({"id": 7}), &Context::new(), &handler)
            .await,
        first
    );
    assert_eq!(
        replay
            .call("get_order", &json!({"id": 0}), &Context::new(), &handler)
            .await,
        second
    );
    assert_eq!(
        replay
            .call("get_order", &json!({"id": "x"}), &Context::new(), &handler)
            .await,
        third
    );
    assert_eq!(
        replay_runs.load(Ordering::SeqCst),
        0,
        "no tool ran during the replay"
    );
    assert_eq!(counts.get(), (3, 1, 2));
    assert_eq!(replay.replayed(), 3);
}

#[tokio::test]
async fn drift_is_an_error_naming_the_first_difference() {
    let path = tape_path("drift.jsonl");
    let recording = RecordingToolBox::to_file(orders(Default::default()), &path).unwrap();
    let handler = ToolHandler::empty();
    recording
        .call("get_order", &json!({"id": 7}), &Context::new(), &handler)
        .await;

    let replay = ReplayToolBox::new(read_tape(&path).unwrap(), orders(Default::default()));
    let drift = replay
        .call("get_order", &json!({"id": 8}), &Context::new(), &handler)
        .await;
    assert_eq!(
        drift,
        ToolResponse::error("replay drift at call 1 (`get_order`): the arguments differ at `id`: the tape has 7, the call has 8")
    );
    let ok = replay
        .call("get_order", &json!({"id": 7}), &Context::new(), &handler)
        .await;
    assert_eq!(
        ok.content, "order 7",
        "a drifting call does not consume the tape"
    );
    let extra = replay
        .call("get_order", &json!({"id": 7}), &Context::new(), &handler)
        .await;
    assert_eq!(
        extra.content,
        "replay drift at call 2: the tape holds 1 calls; this extra call is `get_order`"
    );

    let runs = Arc::new(AtomicUsize::new(0));
    let lenient = ReplayToolBox::new(read_tape(&path).unwrap(), orders(runs.clone())).lenient();
    let live = lenient
        .call("get_order", &json!({"id": 9}), &Context::new(), &handler)
        .await;
    assert_eq!(
        live.content, "order 9",
        "lenient mode falls through to the live box"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_broken_tape_line_is_reported_with_its_number() {
    let path = tape_path("broken.jsonl");
    std::fs::write(&path, "{\"name\":\"x\"}\n").unwrap();
    let tape = read_tape(&path).unwrap();
    assert!(tape.entries.is_empty());
    assert_eq!(tape.defects.len(), 1);
    assert!(!tape.defects[0].torn);
    assert!(
        tape.defects[0]
            .reason
            .contains("broken.jsonl:1: not a tape entry"),
        "{:?}",
        tape.defects
    );
    let error = read_tape(&path).unwrap().strict().unwrap_err();
    assert!(
        error
            .to_string()
            .contains("broken.jsonl:1: not a tape entry"),
        "{error}"
    );
}

#[tokio::test]
async fn calls_to_deferred_tools_are_answered_and_queued_for_a_planner() {
    let runs = Arc::new(AtomicUsize::new(0));
    let planner_tool =
        ToolSpecification::new("book_flight", "Books a flight; a planner runs it later");
    let tools = DeferredToolBox::new(orders(runs.clone()), vec![planner_tool]);
    let names: Vec<String> = tools
        .specifications(&Context::new())
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["get_order", "book_flight"]);
    let handler = ToolHandler::empty();
    let ctx = Context::new().with_call_id("call_9");
    let response = tools
        .call("book_flight", &json!({"to": "OSL"}), &ctx, &handler)
        .await;
    assert_eq!(response, ToolResponse::text(DEFERRED_ANSWER));
    assert_eq!(
        tools
            .call("get_order", &json!({"id": 1}), &ctx, &handler)
            .await
            .content,
        "order 1"
    );
    let queued = tools.take_deferred();
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].name, "book_flight");
    assert_eq!(queued[0].id.as_deref(), Some("call_9"));
    assert_eq!(queued[0].arguments, json!({"to": "OSL"}));
    assert!(tools.take_deferred().is_empty());
    assert!(
        tools
            .call("cancel_flight", &json!({}), &ctx, &handler)
            .await
            .is_error
    );
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    let planner_tool = ToolSpecification::new("book_flight", "Books a flight");
    common::assert_fits_every_provider(&DeferredToolBox::new(
        orders(Default::default()),
        vec![planner_tool],
    ));
}
