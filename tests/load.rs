//! 100,000 calls of every outcome on a multi-thread runtime: for the call's
//! handler and the registry's listeners alike, starts = ends = calls.
//! Ignored by default (run it with `cargo test --release --test load --
//! --ignored`; `.ci/run` does).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::Counts;
use serde_json::json;
use toolbox::prelude::*;

struct Mixed;

/// Every outcome.
#[tool_box(register = false)]
impl Mixed {
    /// Succeeds.
    #[tool]
    fn ok(&self, n: u32) -> u32 {
        n
    }

    /// Fails with its own error.
    #[tool]
    fn fail(&self) -> Result<u32, String> {
        Err("it failed".into())
    }

    /// Panics.
    #[tool]
    fn boom(&self) -> u32 {
        panic!("boom")
    }

    /// Hangs past its timeout.
    #[tool(timeout = "1ms")]
    async fn hang(&self) -> u32 {
        tokio::time::sleep(Duration::from_secs(60)).await;
        0
    }

    /// Yields, then succeeds; dropped by the caller mid-way.
    #[tool]
    async fn slow(&self) -> u32 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        1
    }
}

#[test]
#[ignore = "100,000 calls: run in release by .ci/run"]
fn a_hundred_thousand_mixed_calls_each_end_exactly_once() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let registry = Arc::new(Registry::empty());
    registry.scan(Mixed).unwrap();
    let listened = Counts::default();
    registry.add_listener(listened.handler());
    let tools = Arc::new(
        registry
            .resolve(["ok", "fail", "boom", "hang", "slow"])
            .unwrap(),
    );
    let counts = Counts::default();
    let handler = counts.handler();
    let total = 100_000usize;
    let dropped = Arc::new(AtomicUsize::new(0));
    // Panics are expected: keep the test output readable.
    std::panic::set_hook(Box::new(|_| {}));
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for worker in 0..16 {
            let tools = tools.clone();
            let handler = handler.clone();
            let dropped = dropped.clone();
            tasks.push(tokio::spawn(async move {
                for i in (worker..total).step_by(16) {
                    let ctx = Context::new().with_call_id(format!("c{i}"));
                    let (name, arguments) = match i % 8 {
                        0 | 1 => ("ok", json!({"n": i})),
                        2 => ("fail", json!({})),
                        3 => ("boom", json!({})),
                        4 => ("hang", json!({})),
                        5 => ("ok", json!({"n": "not a number"})),
                        6 => ("unknown_tool", json!({})),
                        _ => ("slow", json!({})),
                    };
                    let call = tools.call(name, &arguments, &ctx, &handler);
                    if name == "slow" {
                        if tokio::time::timeout(Duration::from_micros(10), call)
                            .await
                            .is_err()
                        {
                            dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    } else {
                        call.await;
                    }
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    let _ = std::panic::take_hook();
    let (starts, successes, errors) = counts.get();
    assert_eq!(starts, total, "handler starts");
    assert_eq!(successes + errors, total, "handler ends");
    // Listeners see every call made through the resolution, unknown names too.
    let (l_starts, l_successes, l_errors) = listened.get();
    assert_eq!(l_starts, total, "listener starts");
    assert_eq!(l_successes + l_errors, total, "listener ends");
    assert_eq!((l_successes, l_errors), (successes, errors));
    assert!(
        dropped.load(Ordering::Relaxed) > 0,
        "some calls were dropped"
    );
    let kinds = counts.kinds();
    for kind in [
        ToolErrorKind::Failed,
        ToolErrorKind::Panicked,
        ToolErrorKind::TimedOut,
        ToolErrorKind::InvalidArguments,
        ToolErrorKind::UnknownTool,
        ToolErrorKind::Cancelled,
    ] {
        assert!(kinds.contains(&kind), "no {kind} seen");
    }
    println!(
        "calls {total}: {successes} successes, {errors} errors, {} dropped",
        dropped.load(Ordering::Relaxed)
    );
}
