//! The argument read alone: `search`'s arguments read into their struct
//! by the intake (`Arguments::deserialize_tool`, what a `#[tool]` call
//! does before the function runs) against serde_json reading the same
//! struct in the same run: `T::deserialize(&Value)` for a borrowed value,
//! `serde_json::from_str` for JSON text.
//!
//! `benches/dispatch.rs` times the whole call; this splits the read out
//! of it, so BENCHMARKS.md can say which part of the call's cost over its
//! floor is the reader's and which the call path's. A separate binary, so
//! adding it changes no inlining decision in the dispatch benchmark.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::Deserialize;

mod tools;
use tools::{search_arguments, SearchArgs};

fn bench_read(c: &mut Criterion) {
    let arguments = search_arguments();
    let text = arguments.to_string();
    let mut group = c.benchmark_group("read");
    group.bench_function("serde_json_borrowed", |b| {
        b.iter(|| SearchArgs::deserialize(black_box(&arguments)).unwrap())
    });
    group.bench_function("toolbox_borrowed", |b| {
        b.iter(|| {
            toolbox::Arguments::from(black_box(&arguments))
                .deserialize_tool::<SearchArgs>()
                .unwrap()
        })
    });
    group.bench_function("serde_json_text", |b| {
        b.iter(|| serde_json::from_str::<SearchArgs>(black_box(&text)).unwrap())
    });
    group.bench_function("toolbox_text", |b| {
        b.iter(|| {
            toolbox::Arguments::from(black_box(text.as_str()))
                .deserialize_tool::<SearchArgs>()
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_read);
criterion_main!(benches);
