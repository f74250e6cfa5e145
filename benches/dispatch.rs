//! Dispatch overhead: tools called through `ToolBox::call` (the whole
//! lifecycle, no-op handler) against hand-written baselines measured in the
//! same run, and MultiToolBox routing with 1 vs 1,000 child boxes.
//!
//! `baseline` is the hand-written path: a fresh clone of the
//! argument `Value`, `serde_json::from_value`, the function,
//! `serde_json::to_string`. `call` borrows the arguments (the caller keeps
//! them for its transcript), so `baseline_borrowed` — `T::deserialize(&Value)`
//! without the clone — is also measured: the strictest floor for the same work.
//!
//! The tools never wait, so each call is driven by one poll with a no-op
//! waker: the numbers are the call path's, not an executor's.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::future::Future;
use std::task::{Context as TaskContext, Poll, Waker};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[derive(Deserialize, JsonSchema)]
struct Filters {
    tags: Vec<String>,
    since: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    query: String,
    limit: Option<u32>,
    filters: Filters,
}

#[derive(Serialize)]
struct SearchResult {
    query: String,
    limit: u32,
    tags: Vec<String>,
    since: Option<String>,
    total: u64,
}

fn search(query: String, limit: Option<u32>, filters: Filters) -> SearchResult {
    SearchResult {
        total: query.len() as u64 * 7,
        query,
        limit: limit.unwrap_or(10),
        tags: filters.tags,
        since: filters.since,
    }
}

fn closure_tools() -> ToolSet {
    ToolSet::new([
        tool_fn("add", "Adds two integers", |x: AddArgs| async move {
            add(x.a, x.b)
        }),
        tool_fn("search", "Searches", |x: SearchArgs| async move {
            search(x.query, x.limit, x.filters)
        }),
    ])
    .expect("valid tools")
}

fn add_arguments() -> Value {
    json!({"a": 40, "b": 2})
}

fn search_arguments() -> Value {
    json!({"query": "rust tool calling", "limit": 5, "filters": {"tags": ["mcp", "agents"], "since": "2025-01-01"}})
}

/// Drives a future that completes without waiting.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut TaskContext::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("benchmarked tools never wait"),
    }
}

fn bench_tools(c: &mut Criterion) {
    let tools = closure_tools();
    let ctx = Context::new();
    let handler = ToolHandler::empty();

    let arguments = add_arguments();
    let mut group = c.benchmark_group("add");
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let args: AddArgs = serde_json::from_value(black_box(&arguments).clone()).unwrap();
            serde_json::to_string(&add(args.a, args.b)).unwrap()
        })
    });
    group.bench_function("baseline_borrowed", |b| {
        b.iter(|| {
            let args = AddArgs::deserialize(black_box(&arguments)).unwrap();
            serde_json::to_string(&add(args.a, args.b)).unwrap()
        })
    });
    group.bench_function("closure_tool", |b| {
        b.iter(|| ready(tools.call("add", black_box(&arguments), &ctx, &handler)).content)
    });
    group.finish();

    let arguments = search_arguments();
    let mut group = c.benchmark_group("search");
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let args: SearchArgs = serde_json::from_value(black_box(&arguments).clone()).unwrap();
            serde_json::to_string(&search(args.query, args.limit, args.filters)).unwrap()
        })
    });
    group.bench_function("baseline_borrowed", |b| {
        b.iter(|| {
            let args = SearchArgs::deserialize(black_box(&arguments)).unwrap();
            serde_json::to_string(&search(args.query, args.limit, args.filters)).unwrap()
        })
    });
    group.bench_function("closure_tool", |b| {
        b.iter(|| ready(tools.call("search", black_box(&arguments), &ctx, &handler)).content)
    });
    group.finish();
}

fn bench_routing(c: &mut Criterion) {
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    let arguments = add_arguments();
    let mut group = c.benchmark_group("multi_routing");
    for boxes in [1usize, 1_000] {
        let mut builder = MultiToolBox::builder();
        for i in 0..boxes {
            builder = builder.add(format!("box{i}"), closure_tools());
        }
        let merged = builder.build().expect("valid merge");
        let target = format!("box{}_add", boxes - 1);
        group.bench_function(format!("{boxes}_boxes"), |b| {
            b.iter(|| ready(merged.call(&target, black_box(&arguments), &ctx, &handler)).content)
        });
    }
    group.finish();
}

criterion_group!(benches, bench_tools, bench_routing);
criterion_main!(benches);
