//! OpenAI Responses async tool calling: a tool that runs as a task is
//! declared `async`, a runner over a shared box answers the turn while such
//! a call runs on, and the call's output comes later, by its call id, its
//! lifecycle ending once. Payloads from
//! tests/fixtures/providers/openai_responses_async_tools.json.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::Counts;
use serde_json::{json, Value};
use tokio::sync::Notify;
use toolbox::prelude::*;
use toolbox::program::Callers;
use toolbox::provider::Provider;
use toolbox::turn::{BackgroundCalls, Decision, TurnRunner};
use toolbox::{CancellationToken, TaskSupport, ToolSpecification};

const RESPONSES: Provider = Provider::OpenAiResponses { strict: true };

fn fixture(key: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/providers/openai_responses_async_tools.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    all[key].clone()
}

/// The specification a fixture's tool definition describes.
fn described(definition: &Value) -> ToolSpecification {
    ToolSpecification::new(
        definition["name"].as_str().unwrap(),
        definition["description"].as_str().unwrap(),
    )
    .with_parameters(definition["parameters"].clone())
}

/// A body as it came over HTTP.
fn body(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Lookup {
    sku: String,
    task_handle: String,
}

/// The shop: `lookup_price` (a task) answers once the gate opens, or stops
/// when cancelled; `label` answers at once; `wipe` is destructive.
struct Shop {
    tools: Arc<FnToolBox>,
    gate: Arc<Notify>,
    runs: Arc<AtomicUsize>,
}

fn shop() -> Shop {
    let gate = Arc::new(Notify::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let (opened, counted) = (gate.clone(), runs.clone());
    let lookup = tool_fn(
        "lookup_price",
        fixture("request_tools")[0]["description"].as_str().unwrap(),
        move |lookup: Lookup, ctx: Context| {
            let (gate, runs) = (opened.clone(), counted.clone());
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let cancelled = ctx.cancellation().cloned().unwrap_or_default();
                let cents = if lookup.sku == "WIDGET" { 1200 } else { 1500 };
                tokio::select! {
                    _ = gate.notified() => json!({
                        "task_handle": lookup.task_handle,
                        "price_cents": cents,
                        "currency": "USD",
                    }),
                    _ = cancelled.cancelled() => json!("stopped"),
                }
            }
        },
    )
    .task(TaskSupport::Optional);
    let label = tool_fn("label", "Labels a SKU", |lookup: Lookup| async move {
        format!("label {}", lookup.sku)
    })
    .task(TaskSupport::Optional);
    let wipe = tool_fn("wipe", "Wipes a SKU", |lookup: Lookup| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        format!("wiped {}", lookup.sku)
    })
    .destructive()
    .task(TaskSupport::Optional);
    Shop {
        tools: Arc::new(FnToolBox::new([lookup, label, wipe]).unwrap()),
        gate,
        runs,
    }
}

/// An async call item of `name` with `call_id`.
fn async_call(name: &str, call_id: &str) -> Value {
    json!({"type": "function_call", "name": name, "async": true, "call_id": call_id,
        "arguments": "{\"sku\":\"WIDGET\",\"task_handle\":\"widget_price_1\"}"})
}

/// The ended calls, waited for at most a few seconds.
async fn finished(background: &BackgroundCalls) -> Vec<toolbox::turn::CallOutcome> {
    tokio::time::timeout(Duration::from_secs(5), background.finished())
        .await
        .expect("a background call ended")
}

/// Polls `check` until it holds (a spawned task's step, on another
/// thread).
async fn eventually(check: impl Fn() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the condition did not come to hold");
}

#[test]
fn a_task_tool_is_async_for_openai_responses_only() {
    let tools = fixture("request_tools");
    let specs = [
        described(&tools[0]).with_task(TaskSupport::Optional),
        described(&tools[1]),
    ];
    assert_eq!(RESPONSES.definitions(&specs).unwrap(), tools);
    let required = [described(&tools[0]).with_task(TaskSupport::Required)];
    assert_eq!(RESPONSES.definitions(&required).unwrap()[0]["async"], true);
    // The guide: no async tool for programmatic tool calling.
    let from_code = [described(&tools[0])
        .with_task(TaskSupport::Optional)
        .with_callers(Callers::ANY)];
    let defined = RESPONSES.definitions(&from_code).unwrap();
    assert!(defined[0].get("async").is_none(), "{defined}");
    // The other providers have no such field.
    for provider in common::PROVIDERS {
        if matches!(provider, Provider::OpenAiResponses { .. }) {
            continue;
        }
        let defined = provider.definitions(&specs).unwrap().to_string();
        assert!(!defined.contains("\"async\""), "{provider:?}: {defined}");
    }
}

#[test]
fn async_call_items_are_read_as_async_by_both_readers() {
    let items = fixture("registered_calls");
    let general = RESPONSES.parse_calls(&items).unwrap();
    let typed = RESPONSES
        .parse_response(&body(&json!({ "output": items })))
        .unwrap();
    assert_eq!(general, typed);
    let flags: Vec<bool> = typed.iter().map(ToolCall::is_async).collect();
    assert_eq!(flags, [true, true, false]);
    assert_eq!(typed[0].id.as_deref(), Some("call_widget"));
    let first = RESPONSES
        .parse_response(&body(&fixture("first_response")))
        .unwrap();
    assert_eq!(first.len(), 1);
    assert!(first[0].is_async());
}

/// The two requests of the guide: the first response's async call is
/// answered with a pending outcome while the tool still runs (nothing to
/// send for it), and its `function_call_output` comes later by call id;
/// the handler sees one start and one end.
#[tokio::test]
async fn an_async_call_is_answered_in_a_later_request() {
    let shop = shop();
    let counts = Counts::default();
    let runner = TurnRunner::shared(&shop.tools)
        .provider(RESPONSES)
        .handler(counts.handler());
    let background = runner.background();

    let calls = RESPONSES
        .parse_response(&body(&fixture("first_response")))
        .unwrap();
    let outcomes = tokio::time::timeout(Duration::from_secs(5), runner.run(calls, &Context::new()))
        .await
        .expect("the turn does not wait for the async call");
    let pending = outcomes[0].pending.as_ref().expect("a pending outcome");
    assert!(pending.running);
    assert_eq!(pending.specification.name, "lookup_price");
    assert!(RESPONSES.result_messages(&outcomes).is_empty());
    assert_eq!(RESPONSES.result_messages_json(&outcomes), "[]");
    // The tool still runs: started, not ended.
    assert_eq!(counts.get(), (1, 0, 0));
    assert_eq!(shop.runs.load(Ordering::SeqCst), 1);
    let running: Vec<_> = background.running().into_iter().map(|c| c.id).collect();
    assert_eq!(running, [Some("call_widget".to_owned())]);
    assert!(background.try_finished().is_empty());
    // Resuming it does not run it again.
    let resumed = runner
        .resume(pending, Decision::Approve, &Context::new())
        .await;
    assert!(resumed.pending.is_some_and(|p| p.running));

    shop.gate.notify_one();
    let ended = finished(&background).await;
    assert_eq!(ended.len(), 1);
    assert!(ended[0].pending.is_none());
    let later = RESPONSES.result_messages(&ended);
    let expected = fixture("later_input");
    assert_eq!(later.len(), 1);
    assert_eq!(later[0]["type"], expected[0]["type"]);
    assert_eq!(later[0]["call_id"], expected[0]["call_id"]);
    let output =
        |item: &Value| -> Value { serde_json::from_str(item["output"].as_str().unwrap()).unwrap() };
    assert_eq!(output(&later[0]), output(&expected[0]));
    let text: Value = serde_json::from_str(&RESPONSES.result_messages_json(&ended)).unwrap();
    assert_eq!(text, Value::Array(later));

    assert_eq!(counts.get(), (1, 1, 0), "one start, one end");
    assert_eq!(shop.runs.load(Ordering::SeqCst), 1);
    assert!(background.running().is_empty());
    assert!(finished(&background).await.is_empty(), "none left");
}

/// A call that ends in its first poll, one refused, one the approval hook
/// rejects or defers, and one of a destructive tool are answered in the
/// turn; so is every call of a runner that borrows its box, and every
/// call for another provider.
#[tokio::test]
async fn some_async_calls_are_answered_in_the_turn() {
    let shop = shop();
    let counts = Counts::default();
    let runner = TurnRunner::shared(&shop.tools)
        .provider(RESPONSES)
        .handler(counts.handler());
    let items = json!([
        async_call("label", "call_label"),
        async_call("missing", "call_missing"),
    ]);
    let outcomes = runner
        .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
        .await;
    assert!(outcomes.iter().all(|o| o.pending.is_none()));
    assert_eq!(outcomes[0].response.content, "label WIDGET");
    assert!(outcomes[1].response.is_error);
    assert_eq!(RESPONSES.result_messages(&outcomes).len(), 2);
    assert_eq!(counts.get(), (2, 1, 1));
    let items = json!([async_call("wipe", "call_wipe")]);
    let outcomes = runner
        .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
        .await;
    assert_eq!(outcomes[0].response.content, "wiped WIDGET");
    assert!(outcomes[0].pending.is_none());
    assert!(runner.background().running().is_empty());

    // A call before a destructive one runs in the turn: the destructive
    // call waits for it.
    let items = json!([
        async_call("lookup_price", "call_1"),
        async_call("wipe", "call_2")
    ]);
    let runner = TurnRunner::shared(&shop.tools).provider(RESPONSES);
    shop.gate.notify_one();
    let outcomes = runner
        .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
        .await;
    assert!(outcomes.iter().all(|o| o.pending.is_none()));
    assert!(outcomes[0].response.content.contains("1200"));

    // The approval hook is asked first; a rejected or deferred call does
    // not run.
    for (decision, deferred) in [
        (
            Decision::Reject {
                reason: "no".into(),
            },
            false,
        ),
        (Decision::Defer, true),
    ] {
        let runner = TurnRunner::shared(&shop.tools)
            .provider(RESPONSES)
            .approval(move |_| {
                let decision = decision.clone();
                async move { decision }
            });
        let items = json!([async_call("lookup_price", "call_3")]);
        let outcomes = runner
            .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
            .await;
        let pending = outcomes[0].pending.as_ref();
        assert_eq!(pending.is_some_and(|p| !p.running), deferred);
        assert!(runner.background().running().is_empty());
    }

    // A runner that borrows its box, or one for another provider, waits.
    for runner in [
        TurnRunner::new(&*shop.tools).provider(RESPONSES),
        TurnRunner::shared(&shop.tools).provider(Provider::OpenAiChat { strict: true }),
    ] {
        let items = json!([async_call("lookup_price", "call_4")]);
        let gate = shop.gate.clone();
        let opener = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            gate.notify_one();
        });
        let outcomes = runner
            .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
            .await;
        opener.await.unwrap();
        assert!(outcomes[0].pending.is_none());
        assert!(outcomes[0].response.content.contains("1200"));
    }
}

/// A running call is cancelled through its own token: by `cancel`, by the
/// turn's token, or once every handle is dropped; its lifecycle ends once,
/// `Cancelled`.
#[tokio::test]
async fn a_background_call_is_cancellable() {
    let shop = shop();
    let items = json!([async_call("lookup_price", "call_widget")]);

    // By call id: the outcome says so.
    let counts = Counts::default();
    let runner = TurnRunner::shared(&shop.tools)
        .provider(RESPONSES)
        .handler(counts.handler());
    let background = runner.background();
    runner
        .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
        .await;
    assert!(!background.cancel("call_other"));
    assert!(background.cancel("call_widget"));
    let ended = finished(&background).await;
    assert!(ended[0].response.is_error);
    assert!(
        ended[0].response.content.contains("cancelled"),
        "{}",
        ended[0].response.content
    );
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::Cancelled]);

    // By the turn's token.
    let counts = Counts::default();
    let token = CancellationToken::new();
    let runner = TurnRunner::shared(&shop.tools)
        .provider(RESPONSES)
        .handler(counts.handler());
    let ctx = Context::new().with_cancellation(token.clone());
    runner
        .run(RESPONSES.parse_calls(&items).unwrap(), &ctx)
        .await;
    token.cancel();
    let ended = finished(&runner.background()).await;
    assert!(ended[0].response.is_error);
    assert_eq!(counts.get(), (1, 0, 1));

    // Every handle dropped: nobody can read the output, so the call stops.
    let counts = Counts::default();
    let shared = BackgroundCalls::new();
    let runner = TurnRunner::shared(&shop.tools)
        .provider(RESPONSES)
        .handler(counts.handler())
        .with_background(shared.clone());
    runner
        .run(RESPONSES.parse_calls(&items).unwrap(), &Context::new())
        .await;
    assert_eq!(shared.running().len(), 1);
    drop(runner);
    assert_eq!(shared.running().len(), 1, "a clone keeps the calls");
    drop(shared);
    eventually(|| counts.get() == (1, 0, 1)).await;
    assert_eq!(counts.kinds(), [ToolErrorKind::Cancelled]);
}
