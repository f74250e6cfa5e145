//! Where the layers meet, tried as a hostile model and a careless operator
//! would: approval that cannot be skipped, conditions the registry respects,
//! one end event per call, observers that cannot break calls, tapes that
//! survive crashes, bounded costs.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Counts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::ToolSpecification;
use toolbox::{boxes::read_tape, boxes::RecordingToolBox, boxes::ReplayToolBox};
use toolbox::{
    provider::Provider,
    turn::{Decision, TurnRunner},
};
use toolbox::{Arguments, DispatchFuture};

/// How hard to wipe.
#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[allow(missing_docs)]
pub enum Level {
    Soft,
    Hard,
}

/// A target given by id.
#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
pub struct Target {
    id: u32,
}

/// A tagged shape.
#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "kind")]
#[allow(missing_docs)]
pub enum Shape {
    Disk { id: u32 },
    All,
}

#[derive(Default)]
struct Danger {
    runs: Arc<AtomicUsize>,
}

/// Dangerous operations.
#[tool_box]
impl Danger {
    /// Wipes a target.
    #[tool(destructive)]
    fn wipe(&self, level: Level, target: Target, shape: Option<Shape>) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        format!("wiped {level:?} {target:?} {shape:?}")
    }
}

fn reject_everything(asked: Arc<AtomicUsize>) -> TurnRunner<'static, Danger> {
    let danger: &'static Danger = Box::leak(Box::default());
    TurnRunner::new(danger).approval(move |_request| {
        asked.fetch_add(1, Ordering::SeqCst);
        async {
            Decision::Reject {
                reason: "no".into(),
            }
        }
    })
}

#[tokio::test]
async fn odd_argument_shapes_cannot_skip_the_approval_hook() {
    let danger = Danger::default();
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let runner = TurnRunner::new(&danger).approval(move |_request| {
        counter.fetch_add(1, Ordering::SeqCst);
        async {
            Decision::Reject {
                reason: "nothing runs today".into(),
            }
        }
    });
    // Shapes serde accepts but the schema does not describe: an enum as
    // `{"Hard": null}`, a struct as an array, a tagged enum as an array.
    let shapes = [
        json!({"level": {"Hard": null}, "target": {"id": 1}}),
        json!({"level": "Hard", "target": [3]}),
        json!({"level": "Hard", "target": {"id": 1}, "shape": ["All"]}),
        json!({"level": "Soft", "target": {"id": 1}}),
        json!(r#"{"level": {"Hard": null}, "target": [3]}"#),
    ];
    for (i, arguments) in shapes.into_iter().enumerate() {
        let call = ToolCall::new("wipe", arguments.clone()).with_id(format!("c{i}"));
        let outcome = runner.run(vec![call], &Context::new()).await;
        assert!(outcome[0].response.is_error, "{arguments}");
    }
    assert_eq!(
        danger.runs.load(Ordering::SeqCst),
        0,
        "a destructive tool ran"
    );
    assert!(asked.load(Ordering::SeqCst) >= 4);

    // Arguments the deserializer refuses end as invalid, without running
    // and without asking the hook.
    let before = asked.load(Ordering::SeqCst);
    let counts = Counts::default();
    let outcome = runner
        .handler(counts.handler())
        .run(
            vec![ToolCall::new(
                "wipe",
                json!({"level": "Nuke", "target": {"id": 1}}),
            )],
            &Context::new(),
        )
        .await;
    assert_eq!(
        outcome[0].response.content,
        "invalid arguments at `level`: unknown variant `Nuke`, expected `Soft` or `Hard`"
    );
    assert_eq!(asked.load(Ordering::SeqCst), before);
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), vec![ToolErrorKind::InvalidArguments]);
    assert_eq!(danger.runs.load(Ordering::SeqCst), 0);
    let _ = reject_everything;
}

#[tokio::test]
async fn an_approved_odd_shape_runs_exactly_as_the_deserializer_reads_it() {
    let danger = Danger::default();
    let runner = TurnRunner::new(&danger).approval(|request| async move {
        assert!(request.destructive());
        Decision::Approve
    });
    let outcome = runner
        .run(
            vec![ToolCall::new(
                "wipe",
                json!({"level": {"Hard": null}, "target": [3]}),
            )],
            &Context::new(),
        )
        .await;
    assert_eq!(
        outcome[0].response.content,
        "wiped Hard Target { id: 3 } None"
    );
}

/// The tool's own argument struct, mirrored, for the differential test.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct WipeArgs {
    level: Level,
    target: Target,
    shape: Option<Shape>,
}

fn step(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn arbitrary_json(seed: &mut u64, depth: u32) -> Value {
    let pick = step(seed) % if depth == 0 { 6 } else { 8 };
    match pick {
        0 => Value::Null,
        1 => json!(step(seed).is_multiple_of(2)),
        2 => json!((step(seed) % 700) as i64 - 200),
        3 => json!(1.5),
        4 => json!(
            ["Soft", "Hard", "All", "Disk", "x", "1", "kind", "id"][(step(seed) % 8) as usize]
        ),
        5 => json!(u64::MAX),
        6 => {
            let n = step(seed) % 3;
            Value::Array((0..n).map(|_| arbitrary_json(seed, depth - 1)).collect())
        }
        _ => {
            let keys = [
                "level", "target", "shape", "id", "kind", "Hard", "Soft", "Disk", "All", "x",
            ];
            let n = step(seed) % 4;
            let mut map = serde_json::Map::new();
            for _ in 0..n {
                let key = keys[(step(seed) % keys.len() as u64) as usize];
                map.insert(key.to_owned(), arbitrary_json(seed, depth - 1));
            }
            Value::Object(map)
        }
    }
}

#[test]
fn the_check_accepts_exactly_what_the_tools_deserializer_accepts() {
    let danger = Danger::default();
    let ctx = Context::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..200_000 {
        let mut arguments = arbitrary_json(&mut seed, 3);
        if !arguments.is_object() {
            arguments = json!({"level": arguments, "target": {"id": 1}});
        }
        let checked = danger
            .check("wipe", Arguments::from(&arguments), &ctx)
            .is_ok();
        let deserialized = serde_json::from_value::<WipeArgs>(arguments.clone()).is_ok();
        assert_eq!(checked, deserialized, "{arguments}");
        // And the text form agrees with `from_str`.
        let text = arguments.to_string();
        let checked_text = danger.check("wipe", Arguments::Text(&text), &ctx).is_ok();
        assert_eq!(
            checked_text,
            serde_json::from_str::<WipeArgs>(&text).is_ok(),
            "{text}"
        );
        if checked {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    assert!(accepted > 100 && refused > 100, "{accepted} / {refused}");
}

#[test]
fn the_argument_deserializer_agrees_with_serde_json_on_edge_shapes() {
    use std::collections::HashMap;

    #[derive(Debug, Deserialize, PartialEq)]
    enum E {
        Empty(),
        Unit,
    }
    fn same<T: serde::de::DeserializeOwned + std::fmt::Debug + PartialEq>(value: Value) {
        let ours = Arguments::from(&json!({ "v": value.clone() }))
            .deserialize::<HashMap<String, T>>()
            .ok();
        let theirs =
            serde_json::from_value::<HashMap<String, T>>(json!({ "v": value.clone() })).ok();
        assert_eq!(ours, theirs, "{value}");
    }
    same::<HashMap<bool, u8>>(json!({"true": 1, "false": 2}));
    same::<HashMap<i128, u8>>(json!({"170141183460469231731687303715884105727": 1}));
    same::<HashMap<u128, u8>>(json!({"1": 1}));
    same::<HashMap<i32, u8>>(json!({"007": 1, "+5": 2}));
    same::<HashMap<i32, u8>>(json!({"-5": 1}));
    same::<E>(json!({"Empty": []}));
    same::<E>(json!("Unit"));
    same::<E>(json!({"Unit": null}));
    same::<(u8, u8)>(json!([1, 2, 3]));
}

#[derive(Clone)]
struct Admin;

fn admin_only(spec: &ToolSpecification, ctx: &Context) -> bool {
    spec.name != "secret" || ctx.extension::<Admin>().is_some()
}

fn secret_box() -> impl ToolBox {
    FnToolBox::new([
        tool_fn("secret", "Admins only", |_: ()| async { "the vault" }),
        tool_fn("public", "Everyone", |_: ()| async { "hello" }),
    ])
    .unwrap()
    .filter(admin_only)
}

#[tokio::test]
async fn hidden_tools_are_never_named_to_those_who_cannot_see_them() {
    let registry = Registry::empty();
    registry.register_box(secret_box(), "vault").unwrap();
    // Registered from the catalog, whatever the empty context sees.
    assert_eq!(
        registry
            .keys()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["public@vault", "secret@vault"]
    );
    let tools = registry.resolve(["secret@vault", "public@vault"]).unwrap();
    let handler = ToolHandler::empty();
    let guest = Context::new();
    for name in ["Secret", "secre", "vault_secret"] {
        let response = tools.call(name, &json!({}), &guest, &handler).await;
        assert_eq!(response.content, format!("unknown tool `{name}`"));
    }
    let response = tools.call("secret", &json!({}), &guest, &handler).await;
    assert_eq!(
        response.content,
        "tool `secret` is not available in this context"
    );
    let admin = Context::new().with_extension(Admin);
    let response = tools.call("secret", &json!({}), &admin, &handler).await;
    assert_eq!(response.content, "the vault");
    let response = tools.call("Secret", &json!({}), &admin, &handler).await;
    assert_eq!(
        response.content,
        "unknown tool `Secret`; did you mean `secret`?"
    );

    // The same through a merged box.
    let merged = MultiToolBox::builder()
        .add("v", secret_box())
        .build()
        .unwrap();
    let response = merged.call("v_secrt", &json!({}), &guest, &handler).await;
    assert_eq!(response.content, "unknown tool `v_secrt`");
}

#[test]
fn merges_collide_on_the_catalog_not_on_one_context() {
    let admin_tool = || {
        FnToolBox::new([tool_fn("b_c", "Admins only", |_: ()| async { "x" })])
            .unwrap()
            .filter(|_, ctx| ctx.extension::<Admin>().is_some())
    };
    let error = MultiToolBox::builder()
        .add("a", admin_tool())
        .add(
            "a_b",
            FnToolBox::new([tool_fn("c", "Everyone", |_: ()| async { "y" })]).unwrap(),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "exposed name `a_b_c` collides: tool `b_c` of box `a` and tool `c` of box `a_b`"
    );
}

struct Slow;

/// Slow tools.
#[tool_box]
impl Slow {
    /// Sleeps.
    #[tool]
    async fn nap(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }

    /// Answers at once.
    #[tool]
    fn quick(&self) -> String {
        "done".into()
    }
}

#[tokio::test]
async fn a_dropped_call_ends_with_one_cancelled_event() {
    let counts = Counts::default();
    let handler = counts.handler();
    let ctx = Context::new();
    let long_nap = json!({"ms": 10_000});
    let call = Slow.call("nap", &long_nap, &ctx, &handler);
    assert!(tokio::time::timeout(Duration::from_millis(20), call)
        .await
        .is_err());
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), vec![ToolErrorKind::Cancelled]);

    // Registry listeners too.
    let registry = Registry::empty();
    registry.scan(Slow).unwrap();
    let listened = Counts::default();
    registry.add_listener(listened.handler());
    let tools = registry.resolve(["nap"]).unwrap();
    let empty = ToolHandler::empty();
    tokio::select! {
        _ = tools.call("nap", &long_nap, &ctx, &empty) => unreachable!(),
        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
    }
    assert_eq!(listened.get(), (1, 0, 1));
    assert_eq!(listened.kinds(), vec![ToolErrorKind::Cancelled]);
}

#[tokio::test]
async fn panicking_observers_never_change_the_outcome() {
    let seen = Arc::new(AtomicUsize::new(0));
    let after = seen.clone();
    let handler = ToolHandler::empty()
        .on_start(|_| panic!("start observer"))
        .on_success(|_| panic!("success observer"))
        .on_success(move |_| {
            after.fetch_add(1, Ordering::SeqCst);
        })
        .on_error(|_| panic!("error observer"));
    let response = Slow
        .call("quick", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(response.content, "done");
    assert!(!response.is_error);
    assert_eq!(seen.load(Ordering::SeqCst), 1, "later observers still run");
    let response = Slow
        .call("nope", &json!({}), &Context::new(), &handler)
        .await;
    assert!(response.is_error);

    let registry = Registry::empty();
    registry.scan(Slow).unwrap();
    registry.add_listener(ToolHandler::empty().on_success(|_| panic!("listener")));
    let tools = registry.resolve(["quick"]).unwrap();
    let counts = Counts::default();
    let response = tools
        .call("quick", &json!({}), &Context::new(), &counts.handler())
        .await;
    assert_eq!(response.content, "done");
    assert_eq!(counts.get(), (1, 1, 0));
}

#[tokio::test]
async fn listeners_see_refused_calls_and_are_held_flat() {
    let registry = Registry::empty();
    registry.scan(Slow).unwrap();
    let listened = Counts::default();
    registry.add_listener(listened.handler());
    for _ in 0..60_000 {
        registry.add_listener(ToolHandler::empty().on_start(|_| {}));
    }
    let tools = registry.resolve(["nap"]).unwrap();
    let ctx = Context::new();
    let empty = ToolHandler::empty();
    let response = tools.call("nap", &json!("{not json"), &ctx, &empty).await;
    assert!(response.is_error);
    let response = tools.call("nap", &json!([1, 2]), &ctx, &empty).await;
    assert!(response.is_error);
    assert_eq!(listened.get(), (2, 0, 2));
    assert_eq!(
        listened.kinds(),
        vec![
            ToolErrorKind::InvalidArguments,
            ToolErrorKind::InvalidArguments
        ]
    );
}

fn tape_path(name: &str) -> common::ScratchFile {
    common::ScratchFile::new("hardening", name)
}

#[tokio::test]
async fn a_tape_cut_at_any_byte_keeps_every_complete_entry() {
    let path = tape_path("torn.jsonl");
    let recording = RecordingToolBox::to_file(Slow, &path).unwrap();
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
fn no_tool_call_responses_are_empty_not_errors() {
    let openai = json!({"choices": [{"message": {"role": "assistant", "content": "Hi", "tool_calls": null}}]});
    assert_eq!(
        Provider::OpenAiChat { strict: false }
            .parse_calls(&openai)
            .unwrap(),
        vec![]
    );
    for gemini in [
        json!({"candidates": [{"finishReason": "SAFETY"}]}),
        json!({"candidates": [{"content": {"role": "model"}}]}),
        json!({"candidates": []}),
        json!({"promptFeedback": {"blockReason": "SAFETY"}}),
    ] {
        assert_eq!(
            Provider::Gemini.parse_calls(&gemini).unwrap(),
            vec![],
            "{gemini}"
        );
    }
    let numeric = json!({"choices": [{"message": {"tool_calls": [
        {"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]}}]});
    let calls = Provider::OpenAiChat { strict: false }
        .parse_calls(&numeric)
        .unwrap();
    assert_eq!(calls[0].id.as_deref(), Some("7"));
}

#[test]
fn lowering_refuses_cycles_and_explosions_instead_of_aborting() {
    // A `$ref` with a sibling that points back at itself, nested in `$defs`.
    let cyclic = json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "description": "a"}},
        "$defs": {
            "A": {"$ref": "#/$defs/A", "description": "again",
                  "$defs": {"A": {"$ref": "#/$defs/A", "description": "inner"}}}
        }
    });
    // A chain whose every link references the next twice, with descriptions.
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/D{}", i + 1);
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {
                "l": {"$ref": next, "description": "left"},
                "r": {"$ref": next, "description": "right"}
            }, "required": ["l", "r"], "additionalProperties": false}),
        );
    }
    defs.insert("D40".into(), json!({"type": "string"}));
    let exploding = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/D0", "description": "root"}},
        "required": ["root"],
        "additionalProperties": false,
        "$defs": defs
    });
    for schema in [cyclic, exploding] {
        for provider in common::PROVIDERS {
            let spec = ToolSpecification::new("t", "A tool").with_parameters(schema.clone());
            // An error or a bounded result; never an abort or a hang.
            if let Ok(definition) = provider.definition(&spec) {
                assert!(definition.to_string().len() < 10_000_000);
            }
        }
    }
}

#[tokio::test]
async fn echoed_input_is_cut_escaped_and_names_are_bounded() {
    let response = Slow
        .call(
            "nap",
            &json!({"ms": "x".repeat(10_000_000)}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert!(response.content.len() < 600, "{}", response.content.len());
    assert!(response.content.contains("(10000000 characters)"));

    let response = Slow
        .call(
            "na\u{0}p\n\u{1b}[31m",
            &json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response.content, "unknown tool `na\\u0000p\\n\\u001b[31m`");

    // A name far longer than any tool's is not compared with every tool.
    let merged = MultiToolBox::builder().add("slow", Slow).build().unwrap();
    let long = "_".repeat(256 * 1024);
    let response = merged
        .call(&long, &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert!(response.content.starts_with("unknown tool `____"));
    assert!(response.content.len() < 600);
}

#[tokio::test]
async fn a_turn_runs_at_most_its_cap_and_answers_the_rest() {
    let counts = Counts::default();
    let calls: Vec<ToolCall> = (0..5)
        .map(|i| ToolCall::new("quick", json!({})).with_id(format!("c{i}")))
        .collect();
    let outcomes = TurnRunner::new(&Slow)
        .max_calls(3)
        .handler(counts.handler())
        .run(calls, &Context::new())
        .await;
    assert_eq!(outcomes.len(), 5);
    assert!(outcomes[..3].iter().all(|o| o.response.content == "done"));
    assert_eq!(
        outcomes[4].response.content,
        "too many tool calls in one turn (5); only the first 3 ran: send this call again in a later turn"
    );
    assert_eq!(counts.get(), (5, 3, 2));
}

#[tokio::test]
async fn non_finite_results_are_errors_naming_the_path() {
    #[derive(Serialize)]
    struct Reading {
        celsius: f64,
    }
    let tools = FnToolBox::new([
        tool_fn("nan", "NaN", |_: ()| async { f64::NAN }),
        tool_fn("reading", "A reading", |_: ()| async {
            Reading {
                celsius: f64::INFINITY,
            }
        }),
        tool_fn("fine", "A null that is a null", |_: ()| async {
            Option::<f64>::None
        }),
    ])
    .unwrap();
    let call = |name: &'static str| {
        let tools = &tools;
        async move {
            tools
                .call(name, &json!({}), &Context::new(), &ToolHandler::empty())
                .await
        }
    };
    let nan = call("nan").await;
    assert!(nan.is_error);
    assert_eq!(
        nan.content,
        "the tool's result is not valid JSON: the result is NaN, which JSON cannot carry"
    );
    let reading = call("reading").await;
    assert_eq!(
        reading.content,
        "the tool's result is not valid JSON: `celsius` is infinity, which JSON cannot carry"
    );
    let fine = call("fine").await;
    assert_eq!((fine.content.as_str(), fine.is_error), ("null", false));
}

/// Raw identifiers and default-function names that could meet.
mod naming {
    use super::*;

    pub(crate) struct Words;

    /// Word tools.
    #[tool_box]
    impl Words {
        /// Says what type a word is.
        #[tool]
        fn r#type(&self, word: String) -> String {
            format!("{word}: noun")
        }

        /// First.
        #[tool]
        fn a_b(&self, #[arg(default = 1)] c: u8) -> u8 {
            c
        }

        /// Second.
        #[tool]
        fn a(&self, #[arg(default = 2)] b_c: u8) -> u8 {
            b_c
        }
    }

    #[tokio::test]
    async fn raw_identifiers_and_meeting_default_names_work() {
        let names: Vec<String> = Words
            .specifications(&Context::new())
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["type", "a_b", "a"]);
        let h = ToolHandler::empty();
        let ctx = Context::new();
        assert_eq!(
            Words
                .call("type", &json!({"word": "box"}), &ctx, &h)
                .await
                .content,
            "box: noun"
        );
        assert_eq!(Words.call("a_b", &json!({}), &ctx, &h).await.content, "1");
        assert_eq!(Words.call("a", &json!({}), &ctx, &h).await.content, "2");
    }
}

#[test]
fn closures_need_no_annotations() {
    let _filtered = Slow.filter(|spec, ctx| spec.name != "nap" || ctx.call_id().is_some());
    let _runner = TurnRunner::new(&Slow).approval(|request| async move {
        if request.destructive() {
            Decision::Defer
        } else {
            Decision::Approve
        }
    });
    let _ = Mutex::new(());
}

/// A box whose listing hides a tool its dispatch still runs.
struct Inconsistent(Arc<AtomicUsize>);

impl ToolBox for Inconsistent {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        Vec::new()
    }

    fn dispatch<'a>(&'a self, _: &'a str, _: Arguments<'a>, _: &'a Context) -> DispatchFuture<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        DispatchFuture::ready(Ok(ToolResponse::text("ran")))
    }
}

#[tokio::test]
async fn a_call_the_hook_cannot_see_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let unlisted = Inconsistent(runs.clone());
    let runner = TurnRunner::new(&unlisted).approval(|_| async { Decision::Approve });
    let outcome = runner
        .run(vec![ToolCall::new("anything", json!({}))], &Context::new())
        .await;
    assert_eq!(outcome[0].response.content, "unknown tool `anything`");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // A condition that depends on the call's own id is judged in that context.
    let danger = Danger::default();
    let filtered = (&danger).filter(|_, ctx| ctx.call_id().is_some());
    let runner = TurnRunner::new(&filtered).approval(|_| async {
        Decision::Reject {
            reason: "no".into(),
        }
    });
    let outcome = runner
        .run(
            vec![
                ToolCall::new("wipe", json!({"level": "Hard", "target": {"id": 1}})).with_id("c1"),
            ],
            &Context::new(),
        )
        .await;
    assert_eq!(outcome[0].response.content, "the call was not approved: no");
    assert_eq!(danger.runs.load(Ordering::SeqCst), 0);
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
