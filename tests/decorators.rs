//! Recording, replay and deferred tools.

use crate::common;

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

/// Tapes that survive crashes, concurrent writers, full-precision floats
/// and oversized lines.
mod tapes_survive {

    use std::sync::Arc;
    use std::time::Duration;

    use crate::common::{self};
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::{json, Value};
    use toolbox::prelude::*;

    use toolbox::{boxes::read_tape, boxes::RecordingToolBox, boxes::ReplayToolBox};

    struct Napper;

    /// A tool that takes its time.
    #[tool_box(register = false)]
    impl Napper {
        /// Sleeps.
        #[tool]
        async fn nap(&self, ms: u64) -> u64 {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ms
        }
    }

    fn tape_path(name: &str) -> common::ScratchFile {
        common::ScratchFile::new("tapes", name)
    }

    #[tokio::test]
    async fn a_tape_cut_at_any_byte_keeps_every_complete_entry() {
        let path = tape_path("torn.jsonl");
        let recording = RecordingToolBox::to_file(Napper, &path).unwrap();
        let handler = ToolHandler::empty();
        for ms in [1, 2, 3] {
            recording
                .call("nap", &json!({"ms": ms}), &Context::new(), &handler)
                .await;
        }
        let bytes = std::fs::read(&path).unwrap();
        let line_ends: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(line_ends.len(), 3);
        let cut = tape_path("cut.jsonl");
        for at in 0..=bytes.len() {
            std::fs::write(&cut, &bytes[..at]).unwrap();
            let tape = read_tape(&cut).unwrap();
            let complete = line_ends.iter().filter(|end| **end <= at).count();
            // A cut right before a newline leaves a whole JSON object: readable.
            let readable_tail = line_ends.contains(&(at + 1));
            assert_eq!(
                tape.entries.len(),
                complete + usize::from(readable_tail),
                "cut at {at}"
            );
            let torn = !line_ends.contains(&at) && at != 0;
            if torn && !readable_tail {
                let defect = tape.torn_tail().expect("the torn tail is reported");
                assert_eq!(defect.line, complete + 1);
                assert!(defect.reason.contains("cut short"), "{}", defect.reason);
            } else if !readable_tail {
                assert!(tape.defects.is_empty(), "cut at {at}: {:?}", tape.defects);
            }
        }
    }

    #[test]
    fn recorders_appending_to_one_file_never_interleave() {
        let path = tape_path("shared.jsonl");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap();
        let long = "x".repeat(5_000);
        runtime.block_on(async {
            let mut tasks = Vec::new();
            for recorder in 0..4 {
                let recording = Arc::new(
                    RecordingToolBox::to_file(
                        FnToolBox::new([tool_fn("echo", "Echoes", |v: Value| async move { v })])
                            .unwrap(),
                        &path,
                    )
                    .unwrap(),
                );
                let long = long.clone();
                tasks.push(tokio::spawn(async move {
                    for i in 0..1_000 {
                        let arguments = json!({"r": recorder, "i": i, "pad": long});
                        recording
                            .call("echo", &arguments, &Context::new(), &ToolHandler::empty())
                            .await;
                    }
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
        });
        let tape = read_tape(&path).unwrap();
        assert!(
            tape.defects.is_empty(),
            "{} corrupt lines",
            tape.defects.len()
        );
        assert_eq!(tape.entries.len(), 4_000);
    }

    #[tokio::test]
    async fn full_precision_floats_replay_exactly() {
        let path = tape_path("floats.jsonl");
        let tools = || {
            FnToolBox::new([tool_fn("scale", "Scales", |a: Numbers| async move {
                a.v.iter().map(|x| x * 1.000_000_1).collect::<Vec<f64>>()
            })])
            .unwrap()
        };
        let recording = RecordingToolBox::to_file(tools(), &path).unwrap();
        let mut seed = 12345u64;
        let mut values = Vec::new();
        for _ in 0..2_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            values.push(f64::from_bits((seed >> 2) | 0x3ff0_0000_0000_0000) * 1.0e-3);
        }
        let mut live = Vec::new();
        for chunk in values.chunks(100) {
            let response = recording
                .call(
                    "scale",
                    &json!({ "v": chunk }),
                    &Context::new(),
                    &ToolHandler::empty(),
                )
                .await;
            live.push(response.content);
        }
        let replay = ReplayToolBox::new(read_tape(&path).unwrap(), tools());
        for (i, chunk) in values.chunks(100).enumerate() {
            let response = replay
                .call(
                    "scale",
                    &json!({ "v": chunk }),
                    &Context::new(),
                    &ToolHandler::empty(),
                )
                .await;
            assert_eq!(response.content, live[i], "chunk {i} drifted");
        }
    }

    /// Numbers to scale.
    #[derive(Deserialize, JsonSchema)]
    struct Numbers {
        v: Vec<f64>,
    }

    #[test]
    fn an_oversized_tape_line_is_a_defect_not_a_memory_blowup() {
        let path = tape_path("oversized.jsonl");
        let good = r#"{"name":"quick","arguments":{},"response":{"content":"done","is_error":false},"duration_us":1}"#;
        let mut data = Vec::with_capacity(toolbox::boxes::MAX_TAPE_LINE + 1_024);
        data.extend_from_slice(good.as_bytes());
        data.push(b'\n');
        data.extend(std::iter::repeat_n(
            b'x',
            toolbox::boxes::MAX_TAPE_LINE + 10,
        ));
        data.push(b'\n');
        data.extend_from_slice(good.as_bytes());
        data.push(b'\n');
        std::fs::write(&path, &data).unwrap();
        let tape = read_tape(&path).unwrap();
        assert_eq!(tape.entries.len(), 2, "{:?}", tape.defects);
        assert_eq!(tape.defects.len(), 1);
        assert_eq!(tape.defects[0].line, 2);
        assert!(tape.defects[0].reason.ends_with(&format!(
            "the line is longer than {} bytes; skipped",
            toolbox::boxes::MAX_TAPE_LINE
        )));
    }
}

/// A box that panics, for the forwarding wrapper below.
#[derive(Default)]
struct Fragile;

#[tool_box(register = false)]
impl Fragile {
    /// Panics.
    #[tool]
    fn explode(&self) -> String {
        panic!("the fuse was short")
    }

    /// Answers.
    #[tool]
    fn answer(&self) -> u32 {
        42
    }
}

/// A wrapper of the application's own that forwards everything.
struct Owned<B> {
    inner: B,
}

impl<B: ToolBox> ToolBox for Owned<B> {
    toolbox::forward_listing!(inner);
    toolbox::forward_calls!(inner);
}

#[tokio::test]
async fn a_forwarding_wrapper_offers_runs_and_catches_what_the_wrapped_box_does() {
    let owned = Owned { inner: Fragile };
    let ctx = Context::new();
    // The wrapped box catches its tools' panics, so the wrapper does too.
    assert!(Fragile.catches_panics());
    assert!(owned.catches_panics());
    let names: Vec<String> = owned
        .specifications(&ctx)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["explode", "answer"]);
    assert!(owned.contains("answer", &ctx) && !owned.contains("missing", &ctx));
    // The wrapped box's own deserializer checks the arguments.
    let error = owned
        .check("answer", r#"{"x": 1}"#.into(), &ctx)
        .unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);

    let counts = Counts::default();
    let handler = counts.handler();
    let empty = json!({});
    assert_eq!(
        owned.call("answer", &empty, &ctx, &handler).await.content,
        "42"
    );
    let response = owned.call("explode", &empty, &ctx, &handler).await;
    assert!(response.is_error);
    assert_eq!(
        *counts.error_kinds.lock().unwrap(),
        [ToolErrorKind::Panicked]
    );
}
