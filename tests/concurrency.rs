//! 10,000 calls in flight at once on a multi-thread runtime: no event lost.

use crate::common;

use std::sync::Arc;

use common::Counts;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Barrier;
use toolbox::prelude::*;
use toolbox::EmptyToolBox;

#[derive(Deserialize, JsonSchema)]
struct Job {
    n: u64,
}

const CALLS: usize = 10_000;
const INVALID_EVERY: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_calls_in_flight_lose_no_event() {
    let valid = CALLS - CALLS / INVALID_EVERY;
    // Every valid call waits at the barrier, so none can finish before all
    // of them are in flight at once.
    let barrier = Arc::new(Barrier::new(valid));
    let work = FnToolBox::new([tool_fn("square", "Squares after everyone arrives", {
        let barrier = barrier.clone();
        move |job: Job| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                job.n * job.n
            }
        }
    })])
    .unwrap();
    let tools = Arc::new(
        MultiToolBox::builder()
            .add("math", work)
            .add("other", EmptyToolBox)
            .build()
            .unwrap(),
    );
    let counts = Counts::default();
    let handler = counts.handler();

    let mut tasks = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let (tools, handler) = (tools.clone(), handler.clone());
        tasks.push(tokio::spawn(async move {
            let arguments = if i % INVALID_EVERY == 0 {
                json!({"n": "not a number"})
            } else {
                json!({"n": i})
            };
            let ctx = Context::new().with_call_id(format!("call_{i}"));
            (
                i,
                tools.call("math_square", &arguments, &ctx, &handler).await,
            )
        }));
    }
    let mut ok = 0;
    for task in tasks {
        let (i, response) = task.await.unwrap();
        if i % INVALID_EVERY == 0 {
            assert!(response.is_error, "call {i}: {}", response.content);
        } else {
            assert_eq!(response.content, (i * i).to_string());
            ok += 1;
        }
    }
    let (starts, successes, errors) = counts.get();
    assert_eq!(starts, CALLS);
    assert_eq!(successes + errors, CALLS);
    assert_eq!(successes, valid);
    assert_eq!(ok, valid);
    assert_eq!(errors, CALLS / INVALID_EVERY);
}
