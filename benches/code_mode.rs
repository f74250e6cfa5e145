//! The local code mode's costs, in one run: a run's startup (a script that
//! calls nothing: QuickJS started, the prelude set up, a thread spawned),
//! and a nested call's overhead (a script making 100 calls, less the
//! startup, per call) against the same call made directly through the
//! lifecycle and against a direct call through `TurnRunner` (what each
//! nested call passes).
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::json;
use toolbox::code::CodeMode;
use toolbox::prelude::*;
use toolbox::turn::TurnRunner;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sku {
    sku: String,
}

fn shop() -> FnToolBox {
    FnToolBox::new([tool_fn("stock", "Units on hand.", |s: Sku| async move {
        json!({"sku": s.sku, "units": 3})
    })
    .read_only()])
    .unwrap()
}

fn bench_code_mode(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    let direct = shop();
    let arguments = json!({"sku": "A1"});
    let code = CodeMode::new(shop());
    let startup = json!({"code": "return 1;"});
    let hundred = json!({"code": "let n = 0; for (let i = 0; i < 100; i++) n += (await tools.stock({ sku: 'A1' })).units; return n;"});
    assert_eq!(
        runtime
            .block_on(code.call("run_code", &hundred, &ctx, &handler))
            .content,
        "300"
    );

    let mut group = c.benchmark_group("code_mode");
    group.bench_function("direct call (lifecycle)", |b| {
        b.iter(|| runtime.block_on(direct.call("stock", black_box(&arguments), &ctx, &handler)))
    });
    let runner = TurnRunner::new(&direct);
    group.bench_function("direct call (TurnRunner)", |b| {
        b.iter(|| {
            runtime.block_on(runner.run(
                vec![ToolCall::new("stock", black_box(arguments.clone()))],
                &ctx,
            ))
        })
    });
    group.bench_function("run startup (no calls)", |b| {
        b.iter(|| runtime.block_on(code.call("run_code", black_box(&startup), &ctx, &handler)))
    });
    group.sample_size(20);
    group.bench_function("run with 100 nested calls", |b| {
        b.iter(|| runtime.block_on(code.call("run_code", black_box(&hundred), &ctx, &handler)))
    });
    group.finish();
}

criterion_group!(benches, bench_code_mode);
criterion_main!(benches);
