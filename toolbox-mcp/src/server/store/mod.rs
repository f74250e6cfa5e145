//! Where served MCP tasks live: the [`TaskStore`] contract, so that a task
//! outlives the request that created it, the process that runs it and the
//! replica that received it.
//!
//! A server writes a task's record before it answers `tools/call` with the
//! task (SEP-2663: a server "MUST NOT return `CreateTaskResult` until the
//! task is durably created"), answers `tasks/get`, `tasks/update` and
//! `tasks/cancel` from the store, and its runner reports progress, polls
//! the cancel flag, renews its lease and writes the outcome there. Any
//! server sharing the store answers any task: behind a round-robin load
//! balancer a follow-up may reach a replica other than the creator's.
//!
//! [`MemoryTaskStore`] (the default) keeps tasks in the process: one
//! server, or several servers of one process sharing an `Arc`.
//!
//! # Durable
//!
//! When a call returns `Ok`, what it wrote is read back by every later call
//! on any handle of the same store, in any process (read-your-writes across
//! replicas: an eventually consistent backend waits for consistency before
//! it returns). A store that cannot promise that returns an error rather
//! than `Ok`.
//!
//! # Tenancy
//!
//! The calls a client drives (`get`, `result`, `request_cancel`,
//! `answer_inputs`, `list`) take the caller's `owner` (the authenticated
//! principal, `None` on an endpoint without authorization) and see a task
//! only when it equals the task's [`owner`](TaskRecord::owner): another
//! caller's task is [`TaskStoreError::NotFound`], with the same text as an
//! unknown id, so nothing tells one client that another's task exists.
//! The runner's calls (by id alone) are the server's own.
//!
//! # Leases
//!
//! The replica that runs a task holds its [`Lease`] (its replica id and an
//! expiry) and renews it well before it lapses. A lease that lapsed on a
//! live task means the runner stopped (its replica died): another replica
//! finds it with [`lapsed_leases`](TaskStore::lapsed_leases), takes it over
//! with [`claim_lapsed`](TaskStore::claim_lapsed) (only one claimer wins),
//! and either runs it again (an idempotent tool) or ends it `failed`,
//! naming the replica that stopped.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use toolbox_mcp::server::{MemoryTaskStore, TaskOutcome, TaskRecord, TaskState, TaskStore};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
//! let record = TaskRecord::new("search", serde_json::json!({"q": "rust"}), Some("alice".into()));
//! store.create(&record).await.unwrap();
//! // Another principal does not see it.
//! assert!(store.get(&record.id, Some("bob")).await.is_err());
//! store
//!     .finish(&record.id, TaskOutcome::Completed { result: serde_json::json!({"content": []}) })
//!     .await
//!     .unwrap();
//! let read = store.get(&record.id, Some("alice")).await.unwrap();
//! assert_eq!(read.status, TaskState::Completed);
//! # });
//! ```

mod memory;
#[cfg(feature = "task-postgres")]
mod postgres;
#[cfg(feature = "task-redis")]
mod redis;
#[doc(hidden)]
pub mod suite;
#[cfg(any(feature = "task-redis", feature = "task-postgres"))]
mod versioned;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolbox_core::args::echo;

pub use memory::MemoryTaskStore;
#[cfg(feature = "task-postgres")]
pub use postgres::PostgresTaskStore;
#[cfg(feature = "task-redis")]
pub use redis::RedisTaskStore;

/// Where a task is in its life. The first three end it ([`is_terminal`](TaskState::is_terminal)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Running (or waiting to be run again after its runner stopped).
    Working,
    /// Waiting for the client's answers to its input requests.
    InputRequired,
    /// Ended with the call's result (an `isError` result included).
    Completed,
    /// Ended with a JSON-RPC error: the call failed, its ttl elapsed, or the
    /// server running it stopped.
    Failed,
    /// Ended by a cancellation the tool honoured.
    Cancelled,
}

impl TaskState {
    /// Whether the task has ended.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Cancelled
        )
    }

    /// The state as the protocol writes it (`working`, `input_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Working => "working",
            TaskState::InputRequired => "input_required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// The state written as [`as_str`](TaskState::as_str) writes it, for a
    /// store that keeps it as text.
    pub fn parse(text: &str) -> Option<TaskState> {
        [
            TaskState::Working,
            TaskState::InputRequired,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Cancelled,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TaskOutcome {
    /// The call's `CallToolResult`, as JSON.
    Completed {
        /// The result object (`content`, `structuredContent`, `isError`).
        result: Value,
    },
    /// The JSON-RPC error object (`code`, `message`, `data`).
    Failed {
        /// The error object.
        error: Value,
    },
    /// The tool stopped on a cancellation.
    Cancelled,
}

impl TaskOutcome {
    /// The state this outcome ends a task in.
    pub fn state(&self) -> TaskState {
        match self {
            TaskOutcome::Completed { .. } => TaskState::Completed,
            TaskOutcome::Failed { .. } => TaskState::Failed,
            TaskOutcome::Cancelled => TaskState::Cancelled,
        }
    }

    /// A failure with JSON-RPC code `-32603` (internal error) and `message`.
    pub fn failed(message: impl Into<String>) -> TaskOutcome {
        TaskOutcome::Failed {
            error: serde_json::json!({"code": -32603, "message": message.into()}),
        }
    }
}

/// A tool's progress as the task's record keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// How far the work is.
    pub progress: f64,
    /// Out of how much, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

/// The runner's hold on a live task: the replica running it and until when
/// (milliseconds since the Unix epoch) the hold lasts without a renewal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The replica id of the server running the task.
    pub holder: String,
    /// When the lease lapses, in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
}

impl Lease {
    /// A lease for `holder` that lasts `duration` from now.
    pub fn new(holder: impl Into<String>, duration: Duration) -> Lease {
        Lease {
            holder: holder.into(),
            expires_at_ms: now_ms().saturating_add(duration_ms(duration)),
        }
    }

    /// Whether the lease has lapsed at `now_ms`.
    pub fn lapsed_at(&self, now_ms: u64) -> bool {
        now_ms >= self.expires_at_ms
    }
}

/// One served task, as the store keeps it. Timestamps are milliseconds
/// since the Unix epoch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task id the client polls (`taskId`), unique in the store.
    pub id: String,
    /// The principal that created it (the bearer token's subject), `None`
    /// on an endpoint without authorization.
    pub owner: Option<String>,
    /// The tool called.
    pub tool: String,
    /// The call's arguments, for a run again elsewhere.
    pub arguments: Value,
    /// The authenticated caller (`subject`, `scopes`, `claims`), for a run
    /// again elsewhere; `None` without authorization.
    #[serde(default)]
    pub caller: Option<Value>,
    /// Whether the tool says it is idempotent (`idempotentHint`): a task
    /// whose runner stopped is run again rather than failed.
    pub idempotent: bool,
    /// Where the task is.
    pub status: TaskState,
    /// The latest human-readable status (`statusMessage`).
    #[serde(default)]
    pub status_message: Option<String>,
    /// The latest progress report.
    #[serde(default)]
    pub progress: Option<TaskProgress>,
    /// When the task was created.
    pub created_at_ms: u64,
    /// When the record last changed.
    pub updated_at_ms: u64,
    /// The task's time to live from creation (`ttlMs`), `None` for no limit.
    pub ttl_ms: Option<u64>,
    /// While live, when it fails for its ttl (created + ttl); once ended,
    /// when [`sweep`](TaskStore::sweep) removes it (ended + ttl).
    pub expires_at_ms: Option<u64>,
    /// How often clients are told to poll (`pollIntervalMs`).
    #[serde(default)]
    pub poll_interval_ms: Option<u64>,
    /// The runner's hold on a live task; `None` once ended.
    #[serde(default)]
    pub lease: Option<Lease>,
    /// How many times a runner started it (1 for a task run once).
    pub attempts: u32,
    /// Whether `tasks/cancel` was received.
    pub cancel_requested: bool,
    /// The outstanding input requests (elicitation, sampling) by key.
    #[serde(default)]
    pub input_requests: Map<String, Value>,
    /// The client's answers not yet taken by the runner, by key.
    #[serde(default)]
    pub input_answers: Map<String, Value>,
    /// Every input request key the task used (a key is used once).
    #[serde(default)]
    pub input_keys: Vec<String>,
    /// How it ended; `None` while live.
    #[serde(default)]
    pub outcome: Option<TaskOutcome>,
}

impl TaskRecord {
    /// A new live task with a fresh id (a UUID v4), created now, run once,
    /// no ttl, no lease.
    pub fn new(tool: impl Into<String>, arguments: Value, owner: Option<String>) -> TaskRecord {
        let now = now_ms();
        TaskRecord {
            id: uuid::Uuid::new_v4().to_string(),
            owner,
            tool: tool.into(),
            arguments,
            caller: None,
            idempotent: false,
            status: TaskState::Working,
            status_message: None,
            progress: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: None,
            expires_at_ms: None,
            poll_interval_ms: None,
            lease: None,
            attempts: 1,
            cancel_requested: false,
            input_requests: Map::new(),
            input_answers: Map::new(),
            input_keys: Vec::new(),
            outcome: None,
        }
    }

    /// With a time to live from creation: a live task past it fails, an
    /// ended one is removed a ttl after it ended.
    pub fn with_ttl(mut self, ttl: Duration) -> TaskRecord {
        let ttl = duration_ms(ttl);
        self.ttl_ms = Some(ttl);
        self.expires_at_ms = Some(self.created_at_ms.saturating_add(ttl));
        self
    }

    /// Held by `lease` from the start.
    pub fn with_lease(mut self, lease: Lease) -> TaskRecord {
        self.lease = Some(lease);
        self
    }

    /// Whether `owner` may see this task.
    pub fn visible_to(&self, owner: Option<&str>) -> bool {
        self.owner.as_deref() == owner
    }
}

/// What went wrong in a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// No such task for this caller: unknown, removed after its ttl, or
    /// another principal's.
    #[error("no task `{}`: it is unknown, expired, or not yours", echo(id))]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// `create` with an id the store already holds.
    #[error("a task `{}` already exists in the store", echo(id))]
    AlreadyExists {
        /// The id given.
        id: String,
    },
    /// A change to a task that has ended.
    #[error("task `{}` has already ended ({status}): {change} refused", echo(id))]
    Ended {
        /// The task.
        id: String,
        /// How it ended.
        status: TaskState,
        /// The change refused (`status message`, `input request`, …).
        change: &'static str,
    },
    /// An input request key the task already used.
    #[error(
        "task `{}` already used the input request key `{}`: keys are unique over a task's life",
        echo(id),
        echo(key)
    )]
    InputKeyUsed {
        /// The task.
        id: String,
        /// The key.
        key: String,
    },
    /// A record the store cannot read back.
    #[error("task `{}` in the store cannot be read: {message}", echo(id))]
    Corrupt {
        /// The task.
        id: String,
        /// What is wrong with it.
        message: String,
    },
    /// The backend failed or is unreachable.
    #[error("the task store `{store}` failed: {message}")]
    Backend {
        /// Which store (`memory`, `redis`, `postgres`).
        store: &'static str,
        /// What failed.
        message: String,
        /// The backend's own error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

/// What a [`sweep`](TaskStore::sweep) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Live tasks past their ttl, now `failed`.
    pub expired: Vec<String>,
    /// Ended tasks past their retention, now removed.
    pub removed: Vec<String>,
}

/// A live task whose runner's lease lapsed, taken over by a
/// [`claim_lapsed`](TaskStore::claim_lapsed).
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    /// The record as it is now: held by the claimer, `attempts` one more.
    pub task: TaskRecord,
    /// The lease that lapsed: its holder is the replica that stopped.
    pub lapsed: Lease,
}

/// Result of a store call.
pub type StoreResult<T> = Result<T, TaskStoreError>;

/// Where served tasks are kept (see the [module](self) for what durable,
/// tenancy and leases mean). Every call is atomic on one task; a call that
/// returns `Ok` is visible to every later call on any handle.
///
/// Object safe: a server holds an `Arc<dyn TaskStore>`.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// A short name for errors and logs (`memory`, `redis`, `postgres`).
    fn name(&self) -> &'static str;

    /// Stores a new task. When it returns `Ok`, [`get`](TaskStore::get) on
    /// any handle reads it (the server sends `CreateTaskResult` only then).
    /// [`AlreadyExists`](TaskStoreError::AlreadyExists) when the id is
    /// taken; concurrent creates of distinct ids all succeed.
    async fn create(&self, task: &TaskRecord) -> StoreResult<()>;

    /// The task `id` as `owner` sees it: [`NotFound`](TaskStoreError::NotFound)
    /// when unknown, removed, or another owner's.
    async fn get(&self, id: &str, owner: Option<&str>) -> StoreResult<TaskRecord>;

    /// The task `id` whoever owns it: for the runner and the replicas that
    /// take over a stopped runner's tasks, never for a client's request.
    async fn get_any(&self, id: &str) -> StoreResult<TaskRecord>;

    /// Sets a live task's status message; [`Ended`](TaskStoreError::Ended)
    /// once it ended.
    async fn set_status_message(&self, id: &str, message: &str) -> StoreResult<()>;

    /// Records a live task's progress (and its message, when `message` is
    /// given); [`Ended`](TaskStoreError::Ended) once it ended.
    async fn set_progress(
        &self,
        id: &str,
        progress: TaskProgress,
        message: Option<&str>,
    ) -> StoreResult<()>;

    /// Ends the task with `outcome` (its result or error), drops its lease
    /// and outstanding input requests, and starts its retention (ended +
    /// ttl). Returns whether this call ended it: `false`, and nothing
    /// changes, when it had already ended (the first end wins).
    async fn finish(&self, id: &str, outcome: TaskOutcome) -> StoreResult<bool>;

    /// How the task ended, as `owner` sees it: `None` while it is live.
    async fn result(&self, id: &str, owner: Option<&str>) -> StoreResult<Option<TaskOutcome>> {
        Ok(self.get(id, owner).await?.outcome)
    }

    /// Adds an outstanding input request under `key` (the task reads
    /// `input_required` while one is outstanding);
    /// [`InputKeyUsed`](TaskStoreError::InputKeyUsed) for a key used before,
    /// [`Ended`](TaskStoreError::Ended) once it ended.
    async fn request_input(&self, id: &str, key: &str, request: Value) -> StoreResult<()>;

    /// The client's answers (`tasks/update`): each outstanding key's
    /// answer is kept for the runner and the request no longer outstanding;
    /// unknown or already answered keys are ignored. Returns the keys
    /// accepted. The task reads `working` again once none is outstanding.
    async fn answer_inputs(
        &self,
        id: &str,
        owner: Option<&str>,
        answers: Map<String, Value>,
    ) -> StoreResult<Vec<String>>;

    /// Takes the answer to `key`, once: `None` while unanswered.
    async fn take_answer(&self, id: &str, key: &str) -> StoreResult<Option<Value>>;

    /// Records `tasks/cancel` (cooperative: the runner sees the flag and
    /// cancels the tool, which decides how it ends). Idempotent; a no-op on
    /// an ended task.
    async fn request_cancel(&self, id: &str, owner: Option<&str>) -> StoreResult<()>;

    /// Whether `tasks/cancel` was recorded for the task.
    async fn cancel_requested(&self, id: &str) -> StoreResult<bool>;

    /// Resolves once a cancel is recorded for the task (or the task is gone
    /// or ended). The default polls [`cancel_requested`](TaskStore::cancel_requested)
    /// every `poll`; a store with notifications (pub/sub, `LISTEN`) may
    /// answer sooner.
    async fn wait_cancel(&self, id: &str, poll: Duration) -> StoreResult<()> {
        loop {
            match self.get_any(id).await {
                Ok(task) if task.cancel_requested || task.status.is_terminal() => return Ok(()),
                Ok(_) => {}
                Err(TaskStoreError::NotFound { .. }) => return Ok(()),
                Err(error) => return Err(error),
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// `owner`'s tasks, oldest first.
    async fn list(&self, owner: Option<&str>) -> StoreResult<Vec<TaskRecord>>;

    /// Extends the lease `holder` holds on a live task to `duration` from
    /// now. `false`, and nothing changes, when the task ended or another
    /// replica holds it (the runner then stops running it).
    async fn renew_lease(&self, id: &str, holder: &str, duration: Duration) -> StoreResult<bool>;

    /// Live tasks whose lease lapsed (their runner stopped), at most `limit`.
    async fn lapsed_leases(&self, limit: usize) -> StoreResult<Vec<TaskRecord>>;

    /// Takes over a live task whose lease lapsed: the lease becomes
    /// `holder`'s for `duration`, `attempts` grows by one. `None` when the
    /// lease has not lapsed, the task ended, or another claimer was first
    /// (exactly one concurrent claim wins).
    async fn claim_lapsed(
        &self,
        id: &str,
        holder: &str,
        duration: Duration,
    ) -> StoreResult<Option<Claimed>>;

    /// Fails each live task past its ttl (`failed`, "its ttl of … elapsed")
    /// and removes each ended task past its retention.
    async fn sweep(&self) -> StoreResult<Swept>;
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `duration` in whole milliseconds, saturating.
pub(crate) fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The failure a live task past its ttl ends with.
pub fn expired_outcome(ttl_ms: u64) -> TaskOutcome {
    TaskOutcome::failed(format!(
        "task expired: its ttl of {ttl_ms} ms elapsed before it finished"
    ))
}
