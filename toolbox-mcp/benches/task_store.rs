//! A served task's store operations on each store, in one run: the
//! in-memory store is the baseline, Redis and PostgreSQL (on 127.0.0.1,
//! from `TOOLBOX_REDIS_URL` and `TOOLBOX_POSTGRES_URL`, as
//! `scripts/task_stores run` sets them) beside it.
//!
//! - `create`: the write a server makes before it answers `tools/call`;
//! - `get`: one `tasks/get` poll;
//! - `life`: create, two progress reports, a lease renewal, the end and
//!   the read of the result (what one task costs its store).
//!
//! ```sh
//! scripts/task_stores run cargo bench -p toolbox-mcp --features task-redis,task-postgres --bench task_store
//! ```
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use toolbox_mcp::server::{
    Lease, MemoryTaskStore, PostgresTaskStore, RedisTaskStore, TaskOutcome, TaskProgress,
    TaskRecord, TaskStore,
};

fn record() -> TaskRecord {
    TaskRecord::new(
        "compile",
        json!({"target": "release"}),
        Some("alice".into()),
    )
    .with_ttl(Duration::from_secs(600))
    .with_lease(Lease::new("replica-a", Duration::from_secs(30)))
}

async fn life(store: &dyn TaskStore) {
    let task = record();
    store.create(&task).await.unwrap();
    for step in 1..=2 {
        store
            .set_progress(
                &task.id,
                TaskProgress {
                    progress: f64::from(step),
                    total: Some(2.0),
                },
                Some("compiling"),
            )
            .await
            .unwrap();
    }
    store
        .renew_lease(&task.id, "replica-a", Duration::from_secs(30))
        .await
        .unwrap();
    store
        .finish(
            &task.id,
            TaskOutcome::Completed {
                result: json!({"content": [{"type": "text", "text": "built"}]}),
            },
        )
        .await
        .unwrap();
    store
        .result(&task.id, Some("alice"))
        .await
        .unwrap()
        .unwrap();
}

fn stores(runtime: &tokio::runtime::Runtime) -> Vec<Arc<dyn TaskStore>> {
    let mut stores: Vec<Arc<dyn TaskStore>> = vec![Arc::new(MemoryTaskStore::new())];
    let prefix = format!("bench:{}:", uuid::Uuid::new_v4());
    match std::env::var("TOOLBOX_REDIS_URL") {
        Ok(url) => stores.push(Arc::new(
            runtime
                .block_on(RedisTaskStore::connect_prefixed(&url, &prefix))
                .unwrap(),
        )),
        Err(_) => eprintln!("redis: skipped, TOOLBOX_REDIS_URL is not set"),
    }
    match std::env::var("TOOLBOX_POSTGRES_URL") {
        Ok(url) => stores.push(Arc::new(
            runtime
                .block_on(async {
                    drop_table(&url).await;
                    PostgresTaskStore::connect_table(&url, "bench_tasks").await
                })
                .unwrap(),
        )),
        Err(_) => eprintln!("postgres: skipped, TOOLBOX_POSTGRES_URL is not set"),
    }
    stores
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let stores = stores(&runtime);
    let mut group = c.benchmark_group("task_store");
    for store in &stores {
        let name = store.name();
        group.bench_function(format!("create/{name}"), |b| {
            b.iter(|| runtime.block_on(store.create(&record())).unwrap())
        });
        let polled = record();
        runtime.block_on(store.create(&polled)).unwrap();
        group.bench_function(format!("get/{name}"), |b| {
            b.iter(|| {
                runtime
                    .block_on(store.get(&polled.id, Some("alice")))
                    .unwrap()
            })
        });
        group.bench_function(format!("life/{name}"), |b| {
            b.iter(|| runtime.block_on(life(&**store)))
        });
    }
    group.finish();
    drop(stores);
    // What the runs left in PostgreSQL goes (Redis drops its keys past
    // their ttl).
    if let Ok(url) = std::env::var("TOOLBOX_POSTGRES_URL") {
        runtime.block_on(drop_table(&url));
    }
}

async fn drop_table(url: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute("DROP TABLE IF EXISTS bench_tasks")
        .await
        .unwrap();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
