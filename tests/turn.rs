//! The turn runner: concurrency within a bound, effects respected, results
//! in call order, approval hooks.

mod common;

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
#[tool_box]
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
