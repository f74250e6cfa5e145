//! One replica of an MCP server whose long tools run as tasks kept in a
//! shared store: start several on one Redis or PostgreSQL behind a
//! round-robin load balancer, and any of them answers `tasks/get`,
//! `tasks/cancel` and `tasks/result` for a task another created; a task
//! whose replica dies is run again by another (an idempotent tool) or ends
//! `failed` naming the replica that stopped.
//!
//! ```sh
//! cargo run --features mcp-task-redis,mcp-task-postgres --example tasks_replica -- \
//!     --http 127.0.0.1:8771 --store redis://127.0.0.1:6379/ --replica r1
//! ```
//!
//! `--store` takes a `redis://` URL (feature `mcp-task-redis`) or a
//! `postgres://` one (`mcp-task-postgres`); without it the tasks stay in
//! the process. `--namespace NAME` keeps them under `NAME:` in Redis, in
//! the table `NAME` in PostgreSQL (`toolbox_tasks` unless given). `--lease MS` is how long a task's lease lasts unrenewed
//! (30 s unless given). Each call it answers is logged on stderr
//! (`ok    jobs.work in 1.2s`), and the replica's id at its start.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolbox::mcp::server::{serve_http_with, HttpOptions, MemoryTaskStore, TaskStore};
use toolbox::mcp::McpServer;
use toolbox::prelude::*;
use toolbox::TaskSupport;

/// A job: its label and how long it takes.
#[derive(Deserialize, JsonSchema)]
struct Job {
    /// What to call it in the answer.
    label: String,
    /// How long it runs, in milliseconds.
    ms: u64,
}

/// Runs `job` for its time, or until the call is cancelled.
async fn run(job: &Job, ctx: &Context) -> Result<(), String> {
    let sleep = tokio::time::sleep(Duration::from_millis(job.ms));
    match ctx.cancellation() {
        Some(token) => tokio::select! {
            () = sleep => Ok(()),
            () = token.cancelled() => Err(format!("job {} cancelled", job.label)),
        },
        None => {
            sleep.await;
            Ok(())
        }
    }
}

fn tools() -> Result<MultiToolBox, DefinitionError> {
    let jobs = FnToolBox::new([
        tool_fn(
            "work",
            "Does a job that changes something: run twice, it would do it twice.",
            |job: Job, ctx: Context| async move {
                run(&job, &ctx).await?;
                Ok::<_, String>(format!("worked {}", job.label))
            },
        )
        .task(TaskSupport::Optional),
        tool_fn(
            "fetch",
            "Fetches a report: the same answer however often it runs.",
            |job: Job, ctx: Context| async move {
                run(&job, &ctx).await?;
                Ok::<_, String>(format!("fetched {}", job.label))
            },
        )
        .idempotent()
        .task(TaskSupport::Optional),
    ])?;
    MultiToolBox::builder().add("jobs", jobs).build()
}

/// The store named by `url` (its keys under `namespace:` in Redis, its
/// table `namespace` in PostgreSQL): in this process without one.
async fn store(
    url: Option<&str>,
    namespace: &str,
) -> Result<Arc<dyn TaskStore>, Box<dyn std::error::Error + Send + Sync>> {
    let Some(url) = url else {
        return Ok(Arc::new(MemoryTaskStore::new()));
    };
    #[cfg(feature = "mcp-task-redis")]
    if url.starts_with("redis://") {
        let prefix = format!("{namespace}:");
        return Ok(Arc::new(
            toolbox::mcp::server::RedisTaskStore::connect_prefixed(url, &prefix).await?,
        ));
    }
    #[cfg(feature = "mcp-task-postgres")]
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Arc::new(
            toolbox::mcp::server::PostgresTaskStore::connect_table(url, namespace).await?,
        ));
    }
    let _ = namespace;
    Err(format!(
        "no task store for `{}`: redis:// needs --features mcp-task-redis, postgres:// needs mcp-task-postgres",
        toolbox::mcp::client::shown_url(url)
    )
    .into())
}

/// Ctrl-C, or SIGTERM where there is one.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// The value after `flag`, if given.
fn option<'a>(arguments: &'a [String], flag: &str) -> Option<&'a str> {
    let at = arguments.iter().position(|a| a == flag)?;
    arguments.get(at + 1).map(String::as_str)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let address = option(&arguments, "--http").unwrap_or("127.0.0.1:8771");
    let replica = option(&arguments, "--replica").unwrap_or("replica");
    let lease = match option(&arguments, "--lease") {
        Some(ms) => Duration::from_millis(ms.parse().map_err(|_| "`--lease` needs milliseconds")?),
        None => Duration::from_secs(30),
    };
    let namespace = option(&arguments, "--namespace").unwrap_or("toolbox_tasks");
    let store = store(option(&arguments, "--store"), namespace).await?;
    let handler = ToolHandler::empty()
        .on_success(|e| eprintln!("ok    {} in {:?}", e.name, e.elapsed))
        .on_error(|e| eprintln!("error {}: {}", e.name, e.error.report()));
    let kind = store.name();
    let server = McpServer::new(tools()?, "toolbox-tasks")
        .handler(handler)
        .task_store(store)
        .replica_id(replica)
        .task_lease(lease);
    let running = serve_http_with(server, address, HttpOptions::default()).await?;
    eprintln!(
        "replica {replica} serving {} with tasks in {kind}",
        running.url()
    );
    running
        .run_until(stop_signal(), Duration::from_secs(5))
        .await;
    Ok(())
}
