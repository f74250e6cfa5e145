//! The turn runner: concurrency within a bound, effects respected, results
//! in call order, approval hooks.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Counts;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::{
    provider::Provider,
    turn::{Decision, PendingCall, TurnRunner},
};

/// Tracks how many calls run at once.
#[derive(Default)]
struct Gauge {
    active: AtomicUsize,
    peak: AtomicUsize,
    log: Mutex<Vec<String>>,
}

impl Gauge {
    fn enter(&self, what: String) -> usize {
        let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.log.lock().unwrap().push(format!("start {what}"));
        now
    }

    fn exit(&self, what: String) {
        self.log.lock().unwrap().push(format!("end {what}"));
        self.active.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Ops {
    gauge: Arc<Gauge>,
    destructive_overlap: Arc<AtomicUsize>,
}

/// Tools with effects.
#[tool_box(register = false)]
impl Ops {
    /// Reads slowly.
    #[tool(read_only)]
    async fn read(&self, n: usize) -> usize {
        self.gauge.enter(format!("read {n}"));
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.gauge.exit(format!("read {n}"));
        n
    }

    /// Deletes slowly; must run alone.
    #[tool(destructive)]
    async fn delete(&self, n: usize) -> usize {
        let active = self.gauge.enter(format!("delete {n}"));
        if active != 1 {
            self.destructive_overlap.fetch_add(1, Ordering::SeqCst);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if self.gauge.active.load(Ordering::SeqCst) != 1 {
            self.destructive_overlap.fetch_add(1, Ordering::SeqCst);
        }
        self.gauge.exit(format!("delete {n}"));
        n
    }

    /// Always fails.
    #[tool]
    fn broken(&self) -> Result<u8, String> {
        Err("the disk is full".into())
    }
}

fn ops() -> (Ops, Arc<Gauge>, Arc<AtomicUsize>) {
    let gauge = Arc::new(Gauge::default());
    let overlap = Arc::new(AtomicUsize::new(0));
    (
        Ops {
            gauge: gauge.clone(),
            destructive_overlap: overlap.clone(),
        },
        gauge,
        overlap,
    )
}

fn call(i: usize, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall::new(name, arguments).with_id(format!("call_{i}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_slow_reads_overlap_and_come_back_in_order() {
    let (ops, gauge, _) = ops();
    let calls: Vec<ToolCall> = (0..64).map(|i| call(i, "read", json!({"n": i}))).collect();
    let counts = Counts::default();
    let outcomes = TurnRunner::new(&ops)
        .concurrency(16)
        .handler(counts.handler())
        .run(calls, &Context::new())
        .await;
    let peak = gauge.peak.load(Ordering::SeqCst);
    assert_eq!(
        peak, 16,
        "the calls overlapped up to the bound, and never beyond it"
    );
    let contents: Vec<String> = outcomes
        .iter()
        .map(|o| o.response.content.clone())
        .collect();
    let expected: Vec<String> = (0..64).map(|i| i.to_string()).collect();
    assert_eq!(contents, expected, "results in call order");
    assert!(outcomes
        .iter()
        .enumerate()
        .all(|(i, o)| o.call.id.as_deref() == Some(&*format!("call_{i}"))));
    assert_eq!(counts.get(), (64, 64, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_call_waits_for_those_before_and_blocks_those_after() {
    let (ops, gauge, overlap) = ops();
    let calls = vec![
        call(0, "read", json!({"n": 0})),
        call(1, "read", json!({"n": 1})),
        call(2, "delete", json!({"n": 2})),
        call(3, "read", json!({"n": 3})),
        call(4, "delete", json!({"n": 4})),
        call(5, "read", json!({"n": 5})),
    ];
    let outcomes = TurnRunner::new(&ops).run(calls, &Context::new()).await;
    assert_eq!(
        overlap.load(Ordering::SeqCst),
        0,
        "a destructive call never ran next to another"
    );
    let log = gauge.log.lock().unwrap().clone();
    let position = |entry: &str| log.iter().position(|l| l == entry).unwrap();
    assert!(position("end read 0") < position("start delete 2"));
    assert!(position("end read 1") < position("start delete 2"));
    assert!(position("end delete 2") < position("start read 3"));
    assert!(position("end read 3") < position("start delete 4"));
    assert!(position("end delete 4") < position("start read 5"));
    let contents: Vec<&str> = outcomes
        .iter()
        .map(|o| o.response.content.as_str())
        .collect();
    assert_eq!(contents, ["0", "1", "2", "3", "4", "5"]);
}

#[tokio::test]
async fn failing_unknown_and_invalid_calls_still_get_their_results() {
    let (ops, _, _) = ops();
    let calls = vec![
        call(0, "read", json!({"n": 7})),
        call(1, "raed", json!({"n": 1})),
        call(2, "broken", json!({})),
        call(3, "read", json!("{\"n\": ")),
    ];
    let outcomes = TurnRunner::new(&ops).run(calls, &Context::new()).await;
    let results: Vec<(bool, &str)> = outcomes
        .iter()
        .map(|o| (o.response.is_error, o.response.content.as_str()))
        .collect();
    assert_eq!(results[0], (false, "7"));
    assert_eq!(
        results[1],
        (true, "unknown tool `raed`; did you mean `read`?")
    );
    assert_eq!(results[2], (true, "the disk is full"));
    assert!(
        results[3].0
            && results[3]
                .1
                .starts_with("invalid arguments: the arguments are not valid JSON")
    );
    let pairs: Vec<_> = outcomes.iter().map(|o| o.pair()).collect();
    let messages = Provider::Anthropic { strict: true }.result_messages(&pairs);
    let blocks = messages[0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 4, "one tool_result per tool_use");
    assert_eq!(blocks[1]["tool_use_id"], "call_1");
    assert_eq!(blocks[1]["is_error"], true);
}

#[tokio::test]
async fn the_approval_hook_approves_rejects_or_defers() {
    let (ops, gauge, _) = ops();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let approval = move |request: toolbox::turn::ApprovalRequest| {
        record.lock().unwrap().push((
            request.call.name.clone(),
            request.read_only(),
            request.destructive(),
        ));
        async move {
            match request.call.name.as_str() {
                "read" => Decision::Approve,
                "delete" if request.call.arguments["n"] == 1 => Decision::Reject {
                    reason: "deleting record 1 needs a manager".into(),
                },
                _ => Decision::Defer,
            }
        }
    };
    let counts = Counts::default();
    let calls = vec![
        call(0, "read", json!({"n": 0})),
        call(1, "delete", json!({"n": 1})),
        call(2, "delete", json!({"n": 2})),
        call(3, "delete", json!({"wrong": true})),
    ];
    let outcomes = TurnRunner::new(&ops)
        .approval(approval)
        .handler(counts.handler())
        .run(calls, &Context::new())
        .await;
    assert_eq!(outcomes[0].response.content, "0");
    assert_eq!(
        outcomes[1].response,
        ToolResponse::error("the call was not approved: deleting record 1 needs a manager")
    );
    assert!(outcomes[2].pending.is_some());
    assert!(!outcomes[2].response.is_error);
    assert!(
        outcomes[3]
            .response
            .content
            .starts_with("invalid arguments"),
        "invalid calls are not offered for approval"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("read".to_owned(), true, false),
            ("delete".to_owned(), false, true),
            ("delete".to_owned(), false, true)
        ]
    );
    let log = gauge.log.lock().unwrap().clone();
    assert!(
        !log.iter().any(|l| l.contains("delete")),
        "no delete ran: {log:?}"
    );
    // A deferred call is a serializable request the application resolves later.
    let pending: &PendingCall = outcomes[2].pending.as_ref().unwrap();
    let stored = serde_json::to_string(pending).unwrap();
    let restored: PendingCall = serde_json::from_str(&stored).unwrap();
    assert_eq!(restored.call.arguments, json!({"n": 2}));
    assert!(restored.specification.is_destructive());
    // Rejected calls pass the lifecycle too (start + error); the deferred one has not ended.
    assert_eq!(counts.get(), (3, 1, 2));

    // Later, the application resolves the stored request.
    let runner = TurnRunner::new(&ops).handler(counts.handler());
    let still = runner
        .resume(&restored, Decision::Defer, &Context::new())
        .await;
    assert!(still.pending.is_some());
    let refused = runner
        .resume(
            &restored,
            Decision::Reject {
                reason: "not today".into(),
            },
            &Context::new(),
        )
        .await;
    assert_eq!(
        refused.response,
        ToolResponse::error("the call was not approved: not today")
    );
    let done = runner
        .resume(&restored, Decision::Approve, &Context::new())
        .await;
    assert_eq!(done.response.content, "2");
    assert!(done.pending.is_none());
    assert_eq!(
        done.call.id.as_deref(),
        Some("call_2"),
        "the result answers the original call"
    );
    assert!(gauge
        .log
        .lock()
        .unwrap()
        .contains(&"end delete 2".to_owned()));
    assert_eq!(counts.get(), (5, 2, 3));
}

#[tokio::test]
async fn a_recorded_openai_turn_runs_end_to_end() {
    let (ops, _, _) = ops();
    let response = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "read", "arguments": "{\"n\":1}"}},
        {"id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{\"n\":2}"}}
    ]}}]});
    let provider = Provider::OpenAiChat { strict: true };
    let calls = provider.parse_calls(&response).unwrap();
    let outcomes = TurnRunner::new(&ops).run(calls, &Context::new()).await;
    let pairs: Vec<_> = outcomes.iter().map(|o| o.pair()).collect();
    assert_eq!(
        provider.result_messages(&pairs),
        [
            json!({"role": "tool", "tool_call_id": "call_a", "content": "1"}),
            json!({"role": "tool", "tool_call_id": "call_b", "content": "2"})
        ]
    );
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    common::assert_fits_every_provider(&ops().0);
}

/// Approval that a hostile model cannot skip: odd argument shapes, the
/// check held to the deserializer, calls the hook cannot see.
mod approval_cannot_be_skipped {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use crate::common::Counts;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};
    use toolbox::prelude::*;
    use toolbox::ToolSpecification;

    use toolbox::turn::{Decision, TurnRunner};
    use toolbox::{Arguments, DispatchFuture};

    /// How hard to wipe.
    #[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
    #[allow(missing_docs)]
    pub(crate) enum Level {
        Soft,
        Hard,
    }

    /// A target given by id.
    #[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
    pub(crate) struct Target {
        id: u32,
    }

    /// A tagged shape.
    #[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
    #[serde(tag = "kind")]
    #[allow(missing_docs)]
    pub(crate) enum Shape {
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

    /// A box whose listing hides a tool its dispatch still runs.
    struct Inconsistent(Arc<AtomicUsize>);

    impl ToolBox for Inconsistent {
        fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
            Vec::new()
        }

        fn dispatch<'a>(
            &'a self,
            _: &'a str,
            _: Arguments<'a>,
            _: &'a Context,
        ) -> DispatchFuture<'a> {
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
                    ToolCall::new("wipe", json!({"level": "Hard", "target": {"id": 1}}))
                        .with_id("c1"),
                ],
                &Context::new(),
            )
            .await;
        assert_eq!(outcome[0].response.content, "the call was not approved: no");
        assert_eq!(danger.runs.load(Ordering::SeqCst), 0);
    }
}

/// A key a model invents reaches the operator's log escaped, as every
/// other model text does: a `\n` in it cannot forge a log line.
#[test]
fn a_models_key_is_logged_escaped_when_the_call_is_normalized() {
    use std::io::Write;

    #[derive(Clone, Default)]
    struct Buffer(Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let sink = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Odd {
        /// A key with a line break in its name.
        #[serde(rename = "a\nb", default)]
        odd: i64,
    }
    let tools = toolbox::FnToolBox::new([toolbox::tool_fn(
        "lookup",
        "Looks a key up",
        |args: Odd| async move { args.odd },
    )])
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcomes = runtime.block_on(
        TurnRunner::new(&tools)
            .provider(Provider::OpenAiChat { strict: true })
            .run(
                vec![ToolCall::new("lookup", serde_json::json!({"a\nb": null}))],
                &Context::new(),
            ),
    );
    assert_eq!(outcomes.len(), 1);
    let log = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("argument normalized"), "{log}");
    assert!(
        log.contains(r"change=`a\nb`: `null` taken as absent"),
        "{log}"
    );
    assert!(
        !log.contains("a\nb"),
        "a raw newline reached the log: {log}"
    );
}

/// Under Gemini's `parameters` (which cannot close objects) a model may
/// send an undeclared key, `null` or not; the provider route drops it
/// before a tool that refuses unknown fields reads the arguments, at the
/// top and inside an externally tagged enum's variant.
#[tokio::test]
async fn gemini_parameters_undeclared_nulls_reach_no_tool() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Query {
        query: String,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    enum Step {
        Move { x: i64 },
        Stop,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Plan {
        step: Step,
    }
    let tools = toolbox::FnToolBox::new([
        toolbox::tool_fn("search", "Searches", |q: Query| async move { q.query }),
        toolbox::tool_fn("plan", "Plans a step", |p: Plan| async move {
            match p.step {
                Step::Move { x } => x,
                Step::Stop => 0,
            }
        }),
    ])
    .unwrap();
    let outcomes = TurnRunner::new(&tools)
        .provider(Provider::GeminiLegacy)
        .run(
            vec![
                ToolCall::new("search", json!({"query": "nzc", "x_extra": null})),
                ToolCall::new(
                    "plan",
                    json!({"step": {"Move": {"x": 3}, "x_extra": null}, "y_extra": null}),
                ),
            ],
            &Context::new(),
        )
        .await;
    let answers: Vec<(&str, bool)> = outcomes
        .iter()
        .map(|o| (o.response.content.as_str(), o.response.is_error))
        .collect();
    assert_eq!(answers, [("nzc", false), ("3", false)]);
}
