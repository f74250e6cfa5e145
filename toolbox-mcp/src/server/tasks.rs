//! MCP Tasks (`io.modelcontextprotocol/tasks`, SEP-2663) on the server
//! side: a tool the server was told to run as a task
//! ([`McpServer::task`](super::McpServer::task)) is answered with a task to
//! clients that declared the extension, and as a plain call to the others.
//!
//! A task lives in the server's [`TaskStore`]: its record is written before
//! the `CreateTaskResult` goes out, and `tasks/get`, `tasks/update` and
//! `tasks/cancel` are answered from the store by whichever server receives
//! them. The runner (this module's [`Tasks::run`]) runs the same call (its
//! lifecycle, limits and call slots), writes the tool's progress as the
//! task's status message, watches the store's cancel flag (a cancel
//! recorded by any replica cancels the tool's `Context`), renews its lease,
//! and writes the outcome. A watcher on every server takes over the tasks
//! whose lease lapsed (their replica stopped): an idempotent tool's task is
//! run again, any other ends `failed` naming the replica that stopped.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, DetailedTask, ErrorData, InputRequests, Task, TaskPayload, TaskStatus,
};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::store::{
    MemoryTaskStore, TaskOutcome, TaskProgress, TaskRecord, TaskState, TaskStore, TaskStoreError,
};
use crate::auth::McpCaller;
use crate::progress::Progress;

tokio::task_local! {
    /// The task a served call runs as, while it runs: a progress report
    /// made in it also sets the task's status message, which a client that
    /// polls sees where notifications do not reach it.
    pub(super) static RUNNING: RunningTask;
}

/// How often clients are told to poll a task, in milliseconds.
const POLL_MS: u64 = 100;

/// How often a runner reads the store's cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// How many runs a task whose runners keep stopping gets in all.
const MAX_ATTEMPTS: u32 = 3;

/// How many lapsed tasks the watcher reads from the store at once.
const LAPSED_BATCH: usize = 32;

/// The lease a runner holds by default (renewed every third of it).
pub(super) const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A task's time to live by default, as rmcp's task manager had it.
pub(super) const DEFAULT_TTL: Duration = Duration::from_secs(300);

/// The status writes of one running task, in order.
enum Write {
    Progress(TaskProgress, String),
    Flush(oneshot::Sender<()>),
}

/// The running task a call's progress reports go to.
#[derive(Clone)]
pub(super) struct RunningTask {
    writes: mpsc::UnboundedSender<Write>,
}

impl RunningTask {
    /// Records `report` as the task's progress and `message` as its status
    /// message (written in order, after the call's earlier reports).
    pub(super) fn report(&self, report: &Progress, message: String) {
        let progress = TaskProgress {
            progress: report.progress,
            total: report.total,
        };
        let _ = self.writes.send(Write::Progress(progress, message));
    }
}

/// The tools served as tasks, and where their tasks live.
#[derive(Clone)]
pub(super) struct Tasks {
    pub(super) tools: Arc<HashSet<String>>,
    /// The tools served only as tasks: a client without the extension is
    /// refused (`-32021`).
    pub(super) required: Arc<HashSet<String>>,
    pub(super) store: Arc<dyn TaskStore>,
    /// This server's name among the replicas sharing the store.
    pub(super) replica: Arc<str>,
    pub(super) lease: Duration,
    pub(super) ttl: Option<Duration>,
    /// Set once the watcher (sweeps, lapsed leases) runs.
    pub(super) watching: Arc<OnceLock<()>>,
    /// The tasks this server's runners run now: a lease of its own that
    /// lapsed in a pause is renewed by its runner, never claimed by its
    /// own watcher (which would run the task twice here).
    running: Arc<std::sync::Mutex<HashSet<String>>>,
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks {
            tools: Arc::default(),
            required: Arc::default(),
            store: Arc::new(MemoryTaskStore::new()),
            replica: default_replica().into(),
            lease: DEFAULT_LEASE,
            ttl: Some(DEFAULT_TTL),
            watching: Arc::default(),
            running: Arc::default(),
        }
    }
}

/// A replica id unique to this server: the host's name when the
/// environment gives it, the process id and a random suffix.
fn default_replica() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "replica".to_owned());
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}-{}-{}", std::process::id(), &suffix[..8])
}

impl Tasks {
    /// The tools of `catalog` whose specification asks to run as a task.
    pub(super) fn marked(catalog: &[toolbox_core::ToolSpecification]) -> Self {
        use toolbox_core::spec::TaskSupport;
        let named = |support: &[TaskSupport]| -> HashSet<String> {
            catalog
                .iter()
                .filter(|spec| support.contains(&spec.task))
                .map(|spec| spec.name.clone())
                .collect()
        };
        Tasks {
            tools: Arc::new(named(&[TaskSupport::Optional, TaskSupport::Required])),
            required: Arc::new(named(&[TaskSupport::Required])),
            ..Tasks::default()
        }
    }

    /// Whether `tool` is served as a task.
    pub(super) fn serves(&self, tool: &str) -> bool {
        self.tools.contains(tool)
    }

    /// The refusal of `tool` to a client without the extension, where the
    /// tool is served only as a task.
    pub(super) fn refusal(&self, tool: &str) -> Option<ErrorData> {
        self.required.contains(tool).then(|| {
            ErrorData::new(
                rmcp::model::ErrorCode(-32021),
                format!(
                    "the tool `{}` runs only as an MCP task: declare the extension {} to call it",
                    toolbox_core::args::echo(tool),
                    rmcp::model::TASKS_EXTENSION_ID
                ),
                Some(serde_json::json!({
                    "requiredCapabilities": {
                        "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}}
                    }
                })),
            )
        })
    }

    /// Writes a new task for a call of `tool` to the store, held by this
    /// replica; returns its record once the store holds it.
    pub(super) async fn create(
        &self,
        tool: &str,
        arguments: Value,
        caller: Option<&McpCaller>,
        idempotent: bool,
    ) -> Result<TaskRecord, ErrorData> {
        let mut record = TaskRecord::new(tool, arguments, caller.map(|c| c.subject.clone()))
            .with_lease(super::store::Lease::new(&*self.replica, self.lease));
        if let Some(ttl) = self.ttl {
            record = record.with_ttl(ttl);
        }
        record.caller = caller.map(caller_json);
        record.idempotent = idempotent;
        record.poll_interval_ms = Some(POLL_MS);
        self.store.create(&record).await.map_err(|error| {
            tracing::warn!(target: "toolbox::mcp", tool = %toolbox_core::args::echo(tool), %error, "a task could not be stored");
            ErrorData::internal_error(format!("the task could not be stored: {error}"), None)
        })?;
        Ok(record)
    }

    /// Runs `call` as the task `id` in a tokio task of its own: `cancel` is
    /// the call's cancellation, which a cancel recorded in the store (by
    /// any replica), the task's end elsewhere (its ttl) or the loss of its
    /// lease triggers. The call's answer is the task's outcome.
    pub(super) fn run<F>(&self, id: String, cancel: CancellationToken, call: F)
    where
        F: std::future::Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static,
    {
        let tasks = self.clone();
        self.running_here().insert(id.clone());
        let (writes, mut queue) = mpsc::unbounded_channel();
        let store = self.store.clone();
        let writer_id = id.clone();
        tokio::spawn(async move {
            while let Some(write) = queue.recv().await {
                match write {
                    Write::Progress(progress, message) => {
                        // An ended task refuses a late report: nothing to do.
                        let _ = store
                            .set_progress(&writer_id, progress, Some(&message))
                            .await;
                    }
                    Write::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        tokio::spawn(async move {
            // Off the set however the runner ends (a panic included), so
            // a task whose runner is gone is taken over.
            let _here = Here(tasks.clone(), id.clone());
            let running = RunningTask {
                writes: writes.clone(),
            };
            let call = RUNNING.scope(running, call);
            tokio::pin!(call);
            let renew_every = (tasks.lease / 3).max(Duration::from_millis(10));
            let mut renew =
                tokio::time::interval_at(tokio::time::Instant::now() + renew_every, renew_every);
            let stop = tasks.stopped(&id);
            tokio::pin!(stop);
            // The lease is renewed until the call has ended, through the
            // grace a cancelled tool has to clean up.
            let (mut cancelled, mut lost) = (false, false);
            let outcome = loop {
                tokio::select! {
                    // A call that has ended keeps its answer, whatever
                    // else woke the runner with it (a cancel, a renewal).
                    biased;
                    answer = &mut call => break match (lost, cancelled) {
                        (true, _) => None,
                        (false, true) => Some(TaskOutcome::Cancelled),
                        (false, false) => Some(outcome_of(answer)),
                    },
                    () = &mut stop, if !cancelled && !lost => {
                        // The tool sees its Context cancelled; the call
                        // ends as the lifecycle ends it.
                        cancel.cancel();
                        cancelled = true;
                    }
                    _ = renew.tick(), if !lost => match tasks.store.renew_lease(&id, &tasks.replica, tasks.lease).await {
                        Ok(true) => {}
                        Ok(false) => {
                            // Ended elsewhere, or taken over by a replica
                            // that thought this one stopped: stop running.
                            tracing::warn!(target: "toolbox::mcp", task = %id, replica = %tasks.replica, "the task's lease is lost: its call is cancelled");
                            cancel.cancel();
                            lost = true;
                        }
                        Err(error) => {
                            tracing::warn!(target: "toolbox::mcp", task = %id, %error, "the task's lease could not be renewed");
                        }
                    },
                }
            };
            let (done, flushed) = oneshot::channel();
            if writes.send(Write::Flush(done)).is_ok() {
                let _ = flushed.await;
            }
            if let Some(outcome) = outcome {
                tasks.finish(&id, outcome).await;
            }
        });
    }

    fn running_here(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resolves once a cancel is recorded for the task, or it ended or went
    /// away (a store that fails is asked again).
    async fn stopped(&self, id: &str) {
        loop {
            match self.store.wait_cancel(id, CANCEL_POLL).await {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(target: "toolbox::mcp", task = %id, %error, "the task's cancel flag could not be read");
                    tokio::time::sleep(CANCEL_POLL * 5).await;
                }
            }
        }
    }

    /// Writes the task's end, trying again a few times while the store
    /// fails (a lapsed lease ends it later otherwise).
    async fn finish(&self, id: &str, outcome: TaskOutcome) {
        for attempt in 0..5u32 {
            match self.store.finish(id, outcome.clone()).await {
                Ok(_) => return,
                Err(error) => {
                    tracing::warn!(target: "toolbox::mcp", task = %id, %error, attempt, "the task's end could not be stored");
                    tokio::time::sleep(Duration::from_millis(200) * (attempt + 1)).await;
                }
            }
        }
    }

    /// One round of the watcher: fails tasks past their ttl, removes ended
    /// ones past retention, and takes over the tasks whose lease lapsed.
    /// `rerun` starts an idempotent task again (its cancellation, its
    /// record); others end `failed` naming the replica that stopped.
    pub(super) async fn watch_once(&self, rerun: &(dyn Fn(TaskRecord, CancellationToken) + Sync)) {
        if let Err(error) = self.store.sweep().await {
            tracing::warn!(target: "toolbox::mcp", %error, "the task store could not be swept");
        }
        // In batches until none is left, so a stopped replica's many tasks
        // end in one round (one batch a round left all but 32 `working`
        // for a third of a lease more each); a batch that took over none
        // (each still run here, or claimed by another) ends the round.
        loop {
            let lapsed = match self.store.lapsed_leases(LAPSED_BATCH).await {
                Ok(lapsed) => lapsed,
                Err(error) => {
                    tracing::warn!(target: "toolbox::mcp", %error, "the task store's lapsed leases could not be read");
                    return;
                }
            };
            let full = lapsed.len() >= LAPSED_BATCH;
            if self.take_over(lapsed, rerun).await == 0 || !full {
                return;
            }
        }
    }

    /// Takes over each of `lapsed` this server does not run and wins the
    /// claim of; returns how many.
    async fn take_over(
        &self,
        lapsed: Vec<TaskRecord>,
        rerun: &(dyn Fn(TaskRecord, CancellationToken) + Sync),
    ) -> usize {
        let mut taken = 0;
        for task in lapsed {
            if self.running_here().contains(&task.id) {
                continue;
            }
            let claimed = match self
                .store
                .claim_lapsed(&task.id, &self.replica, self.lease)
                .await
            {
                Ok(Some(claimed)) => claimed,
                Ok(None) => continue,
                Err(error) => {
                    tracing::warn!(target: "toolbox::mcp", task = %task.id, %error, "a lapsed task could not be claimed");
                    continue;
                }
            };
            taken += 1;
            let stopped = claimed.lapsed.holder;
            let task = claimed.task;
            let tool = toolbox_core::args::echo(&task.tool).to_string();
            if task.cancel_requested {
                // The client cancelled it before its runner stopped: it
                // ends as the cancel asked, and is not run again.
                tracing::warn!(target: "toolbox::mcp", task = %task.id, %tool, %stopped, replica = %self.replica, "the replica running a cancelled task stopped: the task ends cancelled");
                self.finish(&task.id, TaskOutcome::Cancelled).await;
                continue;
            }
            if task.idempotent && task.attempts <= MAX_ATTEMPTS {
                tracing::warn!(target: "toolbox::mcp", task = %task.id, %tool, %stopped, replica = %self.replica, attempt = task.attempts, "the replica running a task stopped: its idempotent tool runs again here");
                let cancel = CancellationToken::new();
                rerun(task, cancel);
                continue;
            }
            let message = if task.idempotent {
                format!(
                    "the server running this task (replica `{stopped}`) stopped before it finished, \
                     and so did the servers before it: the tool `{tool}` ran {} times and is not run again",
                    task.attempts - 1
                )
            } else {
                format!(
                    "the server running this task (replica `{stopped}`) stopped before it finished; \
                     the tool `{tool}` is not marked idempotent, so it was not run again: call it again if that is safe"
                )
            };
            tracing::warn!(target: "toolbox::mcp", task = %task.id, %tool, %stopped, replica = %self.replica, "the replica running a task stopped: the task fails");
            self.finish(&task.id, TaskOutcome::failed(message)).await;
        }
        taken
    }
}

/// A task this server runs, while its runner lives.
struct Here(Tasks, String);

impl Drop for Here {
    fn drop(&mut self) {
        self.0.running_here().remove(&self.1);
    }
}

/// A call's answer as a task's end.
fn outcome_of(answer: Result<CallToolResponse, ErrorData>) -> TaskOutcome {
    match answer {
        Ok(CallToolResponse::Complete(result)) => TaskOutcome::Completed {
            result: serde_json::to_value(&result).unwrap_or_else(|_| Value::Object(Map::new())),
        },
        Ok(_) => TaskOutcome::failed(
            "the tool asked the client for input, which this server does not carry inside a task",
        ),
        Err(error) => TaskOutcome::Failed {
            error: serde_json::to_value(&error).unwrap_or_else(|_| Value::Object(Map::new())),
        },
    }
}

/// The caller as a task's record keeps it, to run the task again elsewhere.
fn caller_json(caller: &McpCaller) -> Value {
    serde_json::json!({
        "subject": caller.subject,
        "scopes": caller.scopes,
        "claims": caller.claims,
    })
}

/// The caller a task's record kept.
pub(super) fn caller_from(json: &Value) -> Option<McpCaller> {
    Some(McpCaller {
        subject: json.get("subject")?.as_str()?.to_owned(),
        scopes: json
            .get("scopes")
            .and_then(Value::as_array)
            .map(|scopes| {
                scopes
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        claims: json
            .get("claims")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    })
}

/// A store's refusal as the JSON-RPC error a client reads: an unknown (or
/// another principal's) task is invalid params, as rmcp answered it.
pub(super) fn store_error(error: TaskStoreError) -> ErrorData {
    match error {
        TaskStoreError::NotFound { .. } => ErrorData::invalid_params(error.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// Milliseconds since the epoch as ISO 8601.
fn timestamp(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::<chrono::Utc>::from_timestamp_millis)
        .unwrap_or_default()
        .to_rfc3339()
}

/// A record as the protocol's `Task`.
pub(super) fn wire_task(record: &TaskRecord) -> Task {
    let status = match record.status {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(
        record.id.clone(),
        status,
        timestamp(record.created_at_ms),
        timestamp(record.updated_at_ms),
    );
    task.status_message = record.status_message.clone();
    task.ttl_ms = record.ttl_ms;
    task.poll_interval_ms = record.poll_interval_ms;
    task
}

/// A record as `tasks/get` answers it: the result or error inline once
/// ended, the outstanding input requests while some are.
pub(super) fn detailed(record: &TaskRecord) -> DetailedTask {
    let object = |value: &Value| match value {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let payload = match &record.outcome {
        Some(TaskOutcome::Completed { result }) => TaskPayload::Completed {
            result: object(result),
        },
        Some(TaskOutcome::Failed { error }) => TaskPayload::Failed {
            error: object(error),
        },
        Some(TaskOutcome::Cancelled) => TaskPayload::Cancelled,
        None => match serde_json::from_value::<InputRequests>(Value::Object(
            record.input_requests.clone(),
        )) {
            Ok(input_requests) if !input_requests.is_empty() => {
                TaskPayload::InputRequired { input_requests }
            }
            _ => TaskPayload::Working,
        },
    };
    DetailedTask::new(wire_task(record), payload)
}

impl<B: toolbox_core::ToolBox + 'static> super::McpServer<B> {
    /// Stores a task for a call of `tool` (holding `slot`, its place
    /// among the calls in flight) and starts its run; the client's answer
    /// is the task, once the store holds it.
    pub(super) async fn create_task(
        &self,
        tool: &str,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
        meta: Map<String, Value>,
        slot: super::sessions::CallSlot,
        span: &tracing::Span,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        use tracing::Instrument as _;
        // The task is in the store before the client hears of it.
        let arguments = request
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or(Value::Null);
        let idempotent = self
            .toolbox
            .catalog()
            .iter()
            .find(|spec| spec.name == tool)
            .and_then(|spec| spec.annotations.as_ref())
            .and_then(|annotations| annotations.idempotent)
            == Some(true);
        let record = self
            .tasks
            .create(
                tool,
                arguments,
                super::caller_of(&context).as_ref(),
                idempotent,
            )
            .await?;
        // The task's call is cancelled by `tasks/cancel` (through
        // the store), not by the `tools/call` request that
        // created it (already answered).
        let mut context = context;
        let cancel = tokio_util::sync::CancellationToken::new();
        context.ct = cancel.clone();
        let server = self.clone();
        let call = async move {
            server
                .call_tool_inner(request, context, meta, Some(slot))
                .await
        }
        .instrument(span.clone());
        self.tasks.run(record.id.clone(), cancel, call);
        Ok(rmcp::model::CallToolResponse::Task(
            rmcp::model::CreateTaskResult::new(wire_task(&record)),
        ))
    }
}
