//! The final lifecycle: start once, then exactly one of success / error, for
//! every way a call can end; the serialization rule; argument intake.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::Counts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::Arguments;
use toolbox::ToolSpecification;
use toolbox::{boxes::TimeoutToolBox, CancellationToken, DispatchFuture, ToolErrorKind};

#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

#[derive(Serialize)]
struct Forecast {
    city: &'static str,
    celsius: f64,
}

/// A box with one tool per way a call can end; `runs` counts tool bodies.
fn tools(runs: Arc<AtomicUsize>) -> FnToolBox {
    let r = |runs: &Arc<AtomicUsize>| {
        let runs = runs.clone();
        move || {
            runs.fetch_add(1, Ordering::SeqCst);
        }
    };
    let (r1, r2, r3, r4, r5, r6, r7) = (
        r(&runs),
        r(&runs),
        r(&runs),
        r(&runs),
        r(&runs),
        r(&runs),
        r(&runs),
    );
    FnToolBox::new([
        tool_fn("add", "Adds", move |p: Pair| {
            r1();
            async move { p.a + p.b }
        }),
        tool_fn("divide", "Divides", move |p: Pair| {
            r2();
            async move {
                if p.b == 0 {
                    Err("cannot divide by zero".to_owned())
                } else {
                    Ok(p.a / p.b)
                }
            }
        }),
        tool_fn("explode", "Panics", move |_: Nothing| {
            r3();
            async move {
                if true {
                    panic!("boom: secret=hunter2");
                }
            }
        }),
        tool_fn("slow", "Sleeps", move |_: Nothing| {
            r4();
            async move { tokio::time::sleep(Duration::from_secs(30)).await }
        })
        .timeout(Duration::from_millis(50)),
        tool_fn("greet", "Greets", move |_: Nothing| {
            r5();
            async move { "hello, \"world\"" }
        }),
        tool_fn("noop", "Does nothing", move |_: ()| {
            r6();
            async move {}
        }),
        tool_fn("forecast", "Forecast", move |_: Nothing| {
            r7();
            async move {
                Forecast {
                    city: "Prague",
                    celsius: 21.5,
                }
            }
        }),
    ])
    .unwrap()
}

async fn call(toolbox: &impl ToolBox, name: &str, arguments: Value) -> (ToolResponse, Counts) {
    let counts = Counts::default();
    let response = toolbox
        .call(name, &arguments, &Context::new(), &counts.handler())
        .await;
    (response, counts)
}

#[tokio::test]
async fn success_starts_once_and_succeeds_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (response, counts) = call(&tools(runs.clone()), "add", json!({"a": 40, "b": 2})).await;
    assert_eq!(response, ToolResponse::text("42"));
    assert_eq!(counts.get(), (1, 1, 0));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tool_error_becomes_an_error_response_with_its_text() {
    let (response, counts) = call(
        &tools(Default::default()),
        "divide",
        json!({"a": 1, "b": 0}),
    )
    .await;
    assert_eq!(response, ToolResponse::error("cannot divide by zero"));
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::Failed]);
}

#[tokio::test]
async fn invalid_arguments_name_the_path_and_never_reach_the_tool() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = tools(runs.clone());
    let (response, counts) = call(&toolbox, "add", json!({"a": "forty", "b": 2})).await;
    assert!(response.is_error);
    assert_eq!(
        response.content,
        "invalid arguments at `a`: got the string \"forty\", expected an integer"
    );
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::InvalidArguments]);

    let (response, _) = call(&toolbox, "add", json!({"a": 1})).await;
    assert_eq!(response.content, "invalid arguments: missing field `b`");
    let (response, _) = call(&toolbox, "add", json!([1, 2])).await;
    assert_eq!(
        response.content,
        "invalid arguments: expected a JSON object of arguments, got an array of 2 items"
    );
    let (response, _) = call(&toolbox, "add", json!("{not json")).await;
    assert!(
        response
            .content
            .starts_with("invalid arguments: the arguments are not valid JSON"),
        "{}",
        response.content
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no tool body ran");
}

#[tokio::test]
async fn arguments_arrive_as_object_string_double_encoded_or_null() {
    let toolbox = tools(Default::default());
    let (response, _) = call(&toolbox, "add", json!("{\"a\": 1, \"b\": 2}")).await;
    assert_eq!(response.content, "3");
    let double = serde_json::to_string(&json!({"a": 2, "b": 2}).to_string()).unwrap();
    let (response, _) = call(&toolbox, "add", Value::String(double)).await;
    assert_eq!(response.content, "4");
    let (response, counts) = call(&toolbox, "noop", Value::Null).await;
    assert_eq!(response, ToolResponse::text(""));
    assert_eq!(counts.get(), (1, 1, 0));
    let (response, _) = call(&toolbox, "noop", json!({"x": 1})).await;
    assert_eq!(
        response.content,
        "invalid arguments: unknown field `x`: this tool takes no arguments"
    );
}

#[tokio::test]
async fn an_unknown_tool_names_the_closest_tools() {
    let (response, counts) = call(&tools(Default::default()), "ad", json!({})).await;
    assert_eq!(
        response,
        ToolResponse::error("unknown tool `ad`; did you mean `add`?")
    );
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::UnknownTool]);
    let (response, _) = call(&tools(Default::default()), "forcast", json!({})).await;
    assert_eq!(
        response.content,
        "unknown tool `forcast`; did you mean `forecast`?"
    );
}

#[tokio::test]
async fn a_hidden_tool_is_unlisted_refused_and_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox =
        tools(runs.clone()).filter(|spec: &ToolSpecification, _: &Context| spec.name != "add");
    let names: Vec<String> = toolbox
        .specifications(&Context::new())
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(!names.contains(&"add".to_owned()), "{names:?}");
    assert!(names.contains(&"divide".to_owned()));
    assert!(toolbox.specification("add", &Context::new()).is_none());

    let (response, counts) = call(&toolbox, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(
        response,
        ToolResponse::error("tool `add` is not available in this context")
    );
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::NotAvailable]);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the hidden tool's body never ran"
    );

    // An unknown name suggests only visible tools.
    let (response, _) = call(&toolbox, "ad", json!({})).await;
    assert_eq!(response.content, "unknown tool `ad`");
}

#[derive(Clone)]
struct Role(&'static str);

#[tokio::test]
async fn conditions_see_the_call_context() {
    let toolbox = tools(Default::default()).filter(|spec: &ToolSpecification, ctx: &Context| {
        spec.name != "divide" || ctx.extension::<Role>().is_some_and(|r| r.0 == "admin")
    });
    let admin = Context::new().with_extension(Role("admin"));
    let guest = Context::new().with_extension(Role("guest"));
    assert!(toolbox.specification("divide", &admin).is_some());
    assert!(toolbox.specification("divide", &guest).is_none());
    let handler = ToolHandler::empty();
    let args = json!({"a": 4, "b": 2});
    assert_eq!(
        toolbox
            .call("divide", &args, &admin, &handler)
            .await
            .content,
        "2"
    );
    assert!(
        toolbox
            .call("divide", &args, &guest, &handler)
            .await
            .is_error
    );
}

#[tokio::test]
async fn a_panic_is_caught_reported_and_the_box_stays_usable() {
    let toolbox = tools(Default::default());
    let (response, counts) = call(&toolbox, "explode", json!({})).await;
    assert!(response.is_error);
    assert_eq!(
        response.content,
        "the tool failed with an internal error; do not retry this call"
    );
    assert!(
        !response.content.contains("hunter2"),
        "the model never sees the panic text"
    );
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::Panicked]);
    let (response, _) = call(&toolbox, "add", json!({"a": 1, "b": 1})).await;
    assert_eq!(response.content, "2");
}

/// A box whose raw dispatch panics before returning a future.
struct PanicsInDispatch;

impl ToolBox for PanicsInDispatch {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        vec![ToolSpecification::new("p", "panics")]
    }
    fn dispatch<'a>(&'a self, _: &'a str, _: Arguments<'a>, _: &'a Context) -> DispatchFuture<'a> {
        panic!("dispatch itself panicked")
    }
}

#[tokio::test]
async fn a_panic_while_starting_the_dispatch_is_caught() {
    let counts = Counts::default();
    let handler = counts
        .handler()
        .on_error(|e| assert!(e.error.report().contains("dispatch itself panicked")));
    let response = PanicsInDispatch
        .call("p", &json!({}), &Context::new(), &handler)
        .await;
    assert!(response.is_error);
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::Panicked]);
}

#[tokio::test]
async fn a_hanging_tool_times_out() {
    let (response, counts) = call(&tools(Default::default()), "slow", json!({})).await;
    assert_eq!(
        response,
        ToolResponse::error("the tool did not finish within 50ms")
    );
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::TimedOut]);
    let elapsed = counts.elapsed.lock().unwrap()[0];
    assert!(elapsed >= Duration::from_millis(45), "elapsed {elapsed:?}");
}

#[tokio::test]
async fn the_timeout_decorator_has_a_default_and_per_tool_limits() {
    #[derive(Deserialize, JsonSchema)]
    struct Wait {
        millis: u64,
    }
    let sleeper = |name: &str| {
        tool_fn(name, "Sleeps", |w: Wait| async move {
            tokio::time::sleep(Duration::from_millis(w.millis)).await;
            "woke"
        })
    };
    let toolbox = TimeoutToolBox::new(FnToolBox::new([sleeper("short"), sleeper("long")]).unwrap())
        .default_timeout(Duration::from_millis(40))
        .tool_timeout("long", Duration::from_millis(400));
    let (response, _) = call(&toolbox, "short", json!({"millis": 150})).await;
    assert_eq!(response.content, "the tool did not finish within 40ms");
    let (response, _) = call(&toolbox, "long", json!({"millis": 150})).await;
    assert_eq!(response.content, "woke");
    let (response, counts) = call(&toolbox, "long", json!({"millis": 5_000})).await;
    assert_eq!(response.content, "the tool did not finish within 400ms");
    assert_eq!(counts.get(), (1, 0, 1));

    let all = FnToolBox::new([sleeper("s")])
        .unwrap()
        .with_timeout(Duration::from_millis(30));
    let (response, _) = call(&all, "s", json!({"millis": 1_000})).await;
    assert_eq!(response.content, "the tool did not finish within 30ms");
}

#[tokio::test]
async fn a_cancelled_call_ends_with_one_error() {
    let toolbox = TimeoutToolBox::new(tools(Default::default()))
        .tool_timeout("slow", Duration::from_secs(60));
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let counts = Counts::default();
    let handler = counts.handler();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    let response = toolbox.call("slow", &json!({}), &ctx, &handler).await;
    canceller.await.unwrap();
    assert_eq!(response, ToolResponse::error("the call was cancelled"));
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::Cancelled]);
}

#[tokio::test]
async fn results_follow_the_one_serialization_rule() {
    let toolbox = tools(Default::default());
    let (response, _) = call(&toolbox, "greet", json!({})).await;
    assert_eq!(
        response.content, "hello, \"world\"",
        "a string goes as is, not quoted"
    );
    let (response, _) = call(&toolbox, "noop", json!({})).await;
    assert_eq!(response, ToolResponse::text(""), "() is an empty success");
    let (response, _) = call(&toolbox, "forecast", json!({})).await;
    assert_eq!(
        response.content, r#"{"city":"Prague","celsius":21.5}"#,
        "compact JSON"
    );
}

#[tokio::test]
async fn events_carry_the_name_call_id_and_arguments() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (s1, s2) = (seen.clone(), seen.clone());
    let handler = ToolHandler::empty()
        .on_start(move |e| {
            s1.lock()
                .unwrap()
                .push(format!("start {} {:?} {}", e.name, e.call_id, e.arguments))
        })
        .on_success(move |e| {
            s2.lock().unwrap().push(format!(
                "success {} {:?} {}",
                e.name, e.call_id, e.response.content
            ))
        });
    let ctx = Context::new().with_call_id("call_7");
    tools(Default::default())
        .call("add", &json!({"a": 1, "b": 2}), &ctx, &handler)
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "start add Some(\"call_7\") {\"a\":1,\"b\":2}",
            "success add Some(\"call_7\") 3"
        ]
    );
}

#[tokio::test]
async fn handlers_compose() {
    let (first, second) = (Counts::default(), Counts::default());
    let handler = first.handler().and(&second.handler());
    tools(Default::default())
        .call("add", &json!({"a": 1, "b": 2}), &Context::new(), &handler)
        .await;
    assert_eq!(first.get(), (1, 1, 0));
    assert_eq!(second.get(), (1, 1, 0));
    assert!(ToolHandler::empty().is_empty());
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_never_runs_the_tool() {
    let runs = Arc::new(AtomicUsize::new(0));
    let token = CancellationToken::new();
    token.cancel();
    let ctx = Context::new().with_cancellation(token);
    let counts = Counts::default();
    let response = tools(runs.clone())
        .call("add", &json!({"a": 1, "b": 2}), &ctx, &counts.handler())
        .await;
    assert_eq!(response, ToolResponse::error("the call was cancelled"));
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    common::assert_fits_every_provider(&tools(Default::default()));
}

/// A tool that cleans up when its call is cancelled, or ignores it.
struct Careful {
    cleaned: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

struct OnDrop(Arc<AtomicUsize>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl ToolBox for Careful {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        vec![
            ToolSpecification::new("export", "Exports rows; stops early when cancelled."),
            ToolSpecification::new("stubborn", "Never looks at its cancellation."),
        ]
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        let guard = OnDrop(self.dropped.clone());
        DispatchFuture::new(async move {
            let _guard = guard;
            if name == "stubborn" {
                tokio::time::sleep(Duration::from_secs(60)).await;
                return Ok(ToolResponse::text("done"));
            }
            let token = ctx.cancellation().cloned().unwrap_or_default();
            tokio::select! {
                () = token.cancelled() => {
                    // Cleanup that needs an await.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    self.cleaned.fetch_add(1, Ordering::SeqCst);
                    Ok(ToolResponse::text("3 of 10 rows exported"))
                }
                () = tokio::time::sleep(Duration::from_secs(60)) => Ok(ToolResponse::text("all rows")),
            }
        })
    }
}

async fn cancel_after(
    toolbox: &Careful,
    name: &str,
    token: CancellationToken,
) -> (ToolResponse, Counts) {
    let ctx = Context::new().with_cancellation(token.clone());
    let counts = Counts::default();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    let response = toolbox
        .call(name, &json!({}), &ctx, &counts.handler())
        .await;
    canceller.await.unwrap();
    (response, counts)
}

#[tokio::test]
async fn a_cancelled_tool_sees_its_cancellation_and_has_a_grace_to_finish() {
    let toolbox = Careful {
        cleaned: Arc::default(),
        dropped: Arc::default(),
    };
    // The tool's `cancelled()` branch runs, and what it answered reaches
    // the model, marked cancelled; one end event, `Cancelled`.
    let (response, counts) = cancel_after(&toolbox, "export", CancellationToken::new()).await;
    assert_eq!(
        response,
        ToolResponse::error(
            "the call was cancelled; before it stopped, the tool answered: 3 of 10 rows exported"
        )
    );
    assert_eq!(toolbox.cleaned.load(Ordering::SeqCst), 1);
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), [ToolErrorKind::Cancelled]);

    // A tool that ignores it is dropped when the grace is over.
    let token = CancellationToken::new().with_grace(Duration::from_millis(50));
    let started = std::time::Instant::now();
    let (response, counts) = cancel_after(&toolbox, "stubborn", token).await;
    assert_eq!(response, ToolResponse::error("the call was cancelled"));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(toolbox.dropped.load(Ordering::SeqCst), 2);
    assert_eq!(counts.get(), (1, 0, 1));

    // No grace: dropped at once, the cleanup never runs.
    let token = CancellationToken::new().with_grace(Duration::ZERO);
    let (response, _) = cancel_after(&toolbox, "export", token).await;
    assert_eq!(response, ToolResponse::error("the call was cancelled"));
    assert_eq!(toolbox.cleaned.load(Ordering::SeqCst), 1);
    assert_eq!(
        CancellationToken::new().grace(),
        CancellationToken::DEFAULT_GRACE
    );
}

#[test]
fn a_cancel_in_a_runtime_without_timers_ends_the_call_at_once() {
    // No `enable_time`: there is no timer for a grace, and none is needed.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let toolbox = FnToolBox::new([tool_fn("wait", "Waits forever.", |_: Nothing| async {
        std::future::pending::<()>().await
    })])
    .unwrap();
    let token = CancellationToken::new();
    let ctx = Context::new().with_cancellation(token.clone());
    let counts = Counts::default();
    let handler = counts.handler();
    let arguments = json!({});
    let response = runtime.block_on(async {
        let call = toolbox.call("wait", &arguments, &ctx, &handler);
        tokio::pin!(call);
        // Started (pending on its own select), then cancelled.
        assert!(futures_poll_once(call.as_mut()).await.is_none());
        token.cancel();
        call.await
    });
    assert_eq!(response, ToolResponse::error("the call was cancelled"));
    assert_eq!(counts.get(), (1, 0, 1));
}

/// Polls a future once: its output if it was ready.
async fn futures_poll_once<F: std::future::Future + Unpin>(mut future: F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        })
    })
    .await
}
