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
//! `baseline_text` is the floor for arguments sent as JSON text, the form
//! most providers use: `serde_json::from_str` → the function →
//! `serde_json::to_string`; `macro_tool_text` is `call` given that text.
//!
//! The tools never wait, so each call is driven by one poll with a no-op
//! waker: the numbers are the call path's, not an executor's.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::Deserialize;
use toolbox::prelude::*;

mod tools;
use tools::{add, add_arguments, ready, search, search_arguments, AddArgs, MacroTools, SearchArgs};

fn closure_tools() -> FnToolBox {
    FnToolBox::new([
        tool_fn("add", "Adds two integers", |x: AddArgs| async move {
            add(x.a, x.b)
        }),
        tool_fn("search", "Searches", |x: SearchArgs| async move {
            search(x.query, x.limit, x.filters)
        }),
    ])
    .expect("valid tools")
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
    let text = arguments.to_string();
    group.bench_function("baseline_text", |b| {
        b.iter(|| {
            let args: AddArgs = serde_json::from_str(black_box(&text)).unwrap();
            serde_json::to_string(&add(args.a, args.b)).unwrap()
        })
    });
    group.bench_function("macro_tool_text", |b| {
        b.iter(|| ready(MacroTools.call("add", black_box(text.as_str()), &ctx, &handler)).content)
    });
    group.bench_function("closure_tool", |b| {
        b.iter(|| ready(tools.call("add", black_box(&arguments), &ctx, &handler)).content)
    });
    group.bench_function("macro_tool", |b| {
        b.iter(|| ready(MacroTools.call("add", black_box(&arguments), &ctx, &handler)).content)
    });
    let filtered = MacroTools.filter_by(toolbox::boxes::AlwaysTrue);
    group.bench_function("macro_tool_filtered", |b| {
        b.iter(|| ready(filtered.call("add", black_box(&arguments), &ctx, &handler)).content)
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
    let text = arguments.to_string();
    group.bench_function("baseline_text", |b| {
        b.iter(|| {
            let args: SearchArgs = serde_json::from_str(black_box(&text)).unwrap();
            serde_json::to_string(&search(args.query, args.limit, args.filters)).unwrap()
        })
    });
    group.bench_function("macro_tool_text", |b| {
        b.iter(|| {
            ready(MacroTools.call("search", black_box(text.as_str()), &ctx, &handler)).content
        })
    });
    group.bench_function("closure_tool", |b| {
        b.iter(|| ready(tools.call("search", black_box(&arguments), &ctx, &handler)).content)
    });
    group.bench_function("macro_tool", |b| {
        b.iter(|| ready(MacroTools.call("search", black_box(&arguments), &ctx, &handler)).content)
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
