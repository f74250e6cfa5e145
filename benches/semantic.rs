//! The semantic ranker's cost in the profile it is built with (feature
//! `semantic`, the model of `scripts/fetch_model` or `TOOLBOX_MODEL`):
//! loading the model, embedding a batch of 8 tool descriptions, embedding
//! a query, and a hybrid search over 1,000 tools (the query's embedding
//! included). In release, and in a debug build, where this workspace's
//! Cargo.toml optimizes candle's crates (docs/providers.md has the figures
//! with and without that override):
//!
//! ```text
//! cargo bench --features semantic --bench semantic
//! cargo bench --profile dev --features semantic --bench semantic
//! ```
#![allow(missing_docs)] // criterion's macros generate undocumented items

#[path = "../tests/support/catalog.rs"]
mod fixture;

use std::sync::Arc;
use std::time::Instant;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use toolbox::catalog::semantic::{Embedder, Embeddings, HybridSearch, SemanticIndex};
use toolbox::catalog::ToolSearch;
use toolbox::ToolSpecification;

fn bench_model(c: &mut Criterion) {
    let dir = std::env::var("TOOLBOX_MODEL").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/.interop/model/all-MiniLM-L6-v2"
        )
        .to_owned()
    });
    let started = Instant::now();
    let embedder = Arc::new(Embedder::load(&dir).expect("the model loads (scripts/fetch_model)"));
    println!(
        "{} build, {} threads: loading the model {:.0} ms",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        embedder.threads(),
        started.elapsed().as_secs_f64() * 1e3
    );
    let specs: Vec<ToolSpecification> = fixture::large(12).into_iter().take(1_000).collect();
    // 20 tools embedded; the other 980 reuse their vectors (a search's
    // cost does not depend on the vectors' values).
    let mut store = Embeddings::new(&embedder);
    let started = Instant::now();
    let first = SemanticIndex::with_embeddings(embedder.clone(), &specs[..20], &mut store)
        .expect("20 tools embed");
    println!(
        "embedding 20 tools (both texts): {:.2} s",
        started.elapsed().as_secs_f64()
    );
    for (i, spec) in specs.iter().enumerate().skip(20) {
        let vector = first.vector(&specs[i % 20].name).expect("embedded");
        store.insert(spec, vector).expect("the model's length");
    }
    let hybrid = HybridSearch::new(embedder.clone(), &specs, &mut store).expect("the hybrid");
    assert_eq!(hybrid.embedded(), 0);
    let batch: Vec<&str> = specs[..8].iter().map(|s| s.description.as_str()).collect();
    let query = "list the open pull requests of a repository";
    let mut group = c.benchmark_group("semantic_model");
    group.sample_size(10);
    group.bench_function("embed_8_descriptions", |b| {
        b.iter(|| embedder.embed(black_box(&batch)))
    });
    group.bench_function("query_embedding", |b| {
        b.iter(|| embedder.embed(&[black_box(query)]))
    });
    group.bench_function("hybrid/1000", |b| {
        b.iter(|| hybrid.search(black_box(query), 5))
    });
    group.finish();
}

criterion_group!(benches, bench_model);
criterion_main!(benches);
