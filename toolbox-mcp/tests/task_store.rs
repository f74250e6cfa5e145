//! Served MCP tasks kept in a `TaskStore`: the store contract's suite on
//! the in-memory store, and replicas sharing one store over HTTP on
//! 127.0.0.1 — each answers the others' tasks, a cancel through one
//! reaches the call another runs, and a replica that stops (its runtime
//! shut down mid-task) leaves no task `working`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, GetTaskResult, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, RoleClient};
use serde_json::{Map, Value};
use toolbox_core::spec::TaskSupport;
use toolbox_core::{tool_fn, Context, FnToolBox, FromContext};
use toolbox_mcp::auth::{BearerAuth, McpCaller, Rejected};
use toolbox_mcp::server::store::suite;
use toolbox_mcp::server::{
    serve_http, serve_http_with, Claimed, HttpOptions, HttpServer, McpServer, MemoryTaskStore,
    StoreResult, Swept, TaskOutcome, TaskProgress, TaskRecord, TaskState, TaskStore,
    TaskStoreError,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_passes_the_store_suite() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    suite::run_all(store.clone(), store).await;
}

/// What the served tools saw.
#[derive(Default)]
struct Seen {
    /// Calls of `hold` and `again` started.
    starts: AtomicUsize,
    /// Calls that saw their Context cancelled.
    cancelled: AtomicUsize,
}

/// Counts, when dropped, whether its Context was cancelled.
struct Watch(Context, Arc<Seen>);

impl Drop for Watch {
    fn drop(&mut self) {
        if self.0.is_cancelled() {
            self.1.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// `quick` ends after 50 ms; `hold` runs until cancelled; `again`
/// (idempotent) hangs on its first start and answers on any later one.
fn tools(seen: Arc<Seen>) -> FnToolBox {
    let held = seen.clone();
    FnToolBox::new([
        tool_fn("quick", "Ends soon", |_: ()| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            "quick done"
        })
        .task(TaskSupport::Optional),
        tool_fn(
            "hold",
            "Runs until cancelled",
            move |_: (), ctx: Context| {
                let seen = held.clone();
                async move {
                    seen.starts.fetch_add(1, Ordering::SeqCst);
                    let _watch = Watch(ctx, seen);
                    std::future::pending::<()>().await;
                    "never"
                }
            },
        )
        .task(TaskSupport::Optional),
        tool_fn("again", "Safe to run twice", move |_: (), ctx: Context| {
            let seen = seen.clone();
            async move {
                let start = seen.starts.fetch_add(1, Ordering::SeqCst) + 1;
                if start == 1 {
                    std::future::pending::<()>().await;
                }
                // A run on another replica reports to the task's pollers.
                if let Ok(progress) = toolbox_mcp::McpProgress::from_context(&ctx) {
                    progress.report(1.0, Some(1.0), Some("second run"));
                }
                format!("ran again (start {start})")
            }
        })
        .idempotent()
        .task(TaskSupport::Optional),
    ])
    .unwrap()
}

/// The lease of a replica the test stops: its tasks are taken over soon.
const SHORT_LEASE: Duration = Duration::from_millis(300);

/// The lease of a replica that stays: long enough that a loaded machine's
/// pauses do not make it look stopped.
const LEASE: Duration = Duration::from_secs(3);

/// A replica named `id` on `store`.
fn replica(store: Arc<dyn TaskStore>, id: &str, seen: Arc<Seen>) -> McpServer<FnToolBox> {
    McpServer::new(tools(seen), "replica")
        .task_store(store)
        .replica_id(id)
        .task_lease(LEASE)
}

/// A replica named `id` on `store`, served over HTTP on 127.0.0.1.
async fn serve_replica(store: Arc<dyn TaskStore>, id: &str, seen: Arc<Seen>) -> HttpServer {
    serve_http(replica(store, id, seen), "127.0.0.1:0")
        .await
        .unwrap()
}

type Client = RunningService<RoleClient, ClientConfig>;

/// A `2026-07-28` client (no session: every request stands alone, as
/// behind a round-robin balancer) that declared the Tasks extension,
/// sending `token` as its bearer token.
async fn client(url: &str, token: Option<&str>) -> Client {
    use rmcp::ClientServiceExt as _;
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("poller", "1"),
    )
    .serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap()
}

/// Calls `tool` and returns the task id it was answered with.
async fn create(client: &Client, tool: &str) -> String {
    match client
        .call_tool_once(CallToolRequestParams::new(tool.to_owned()))
        .await
        .unwrap()
    {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("a declaring client gets a task, got {other:?}"),
    }
}

/// Polls the task until it ends (10 s at most).
async fn until_terminal(client: &Client, id: &str) -> GetTaskResult {
    for _ in 0..1_000 {
        let polled = client
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap();
        if polled.task.status().is_terminal() {
            return polled;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task {id} did not end within 10 s");
}

/// Serves `server` on a runtime of its own, which the test shuts down to
/// stop the replica mid-task (nothing of it finishes).
async fn on_own_runtime(server: McpServer<FnToolBox>) -> (tokio::runtime::Runtime, HttpServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let served = runtime
        .spawn(async move { serve_http(server, "127.0.0.1:0").await.unwrap() })
        .await
        .unwrap();
    (runtime, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_store_answer_each_others_tasks() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let a = serve_replica(store.clone(), "replica-a", seen.clone()).await;
    let b = serve_replica(store.clone(), "replica-b", seen.clone()).await;
    let (to_a, to_b) = (client(&a.url(), None).await, client(&b.url(), None).await);
    let id = create(&to_a, "quick").await;
    // B knows the task from its first poll: the record was stored before
    // A answered.
    let first = to_b
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .expect("the other replica answers tasks/get");
    assert_eq!(first.task.task.task_id, id);
    let done = serde_json::to_value(until_terminal(&to_b, &id).await).unwrap();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "quick done");
    assert_eq!(done["pollIntervalMs"], 100);
    assert_eq!(done["ttlMs"], 300_000);
    let record = store.get_any(&id).await.unwrap();
    assert_eq!(record.tool, "quick");
    assert_eq!(record.lease, None, "an ended task holds no lease");
    // A reads the same end.
    let from_a = serde_json::to_value(until_terminal(&to_a, &id).await).unwrap();
    assert_eq!(from_a["result"], done["result"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_through_the_other_server_reaches_the_running_call() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let a = serve_replica(store.clone(), "replica-a", seen.clone()).await;
    let b = serve_replica(store.clone(), "replica-b", seen.clone()).await;
    let (to_a, to_b) = (client(&a.url(), None).await, client(&b.url(), None).await);
    let id = create(&to_a, "hold").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(seen.starts.load(Ordering::SeqCst), 1);
    to_b.cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("the other replica records the cancel");
    let ended = until_terminal(&to_a, &id).await;
    assert_eq!(
        serde_json::to_value(ended.task.task.status).unwrap(),
        "cancelled",
        "{ended:?}"
    );
    assert_eq!(
        seen.cancelled.load(Ordering::SeqCst),
        1,
        "the tool on replica A saw its Context cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_server_stopped_fails_naming_it() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let (runtime, a) =
        on_own_runtime(replica(store.clone(), "replica-a", seen.clone()).task_lease(SHORT_LEASE))
            .await;
    let b = serve_replica(store.clone(), "replica-b", seen.clone()).await;
    let to_a = client(&a.url(), None).await;
    let id = create(&to_a, "hold").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(seen.starts.load(Ordering::SeqCst), 1);
    // Replica A dies: its runner, its lease renewal and its listener stop.
    runtime.shutdown_background();
    let to_b = client(&b.url(), None).await;
    let working = status_now(&to_b, &id).await;
    assert_eq!(
        working, "working",
        "the task is working until its lease lapses"
    );
    let ended = serde_json::to_value(until_terminal(&to_b, &id).await).unwrap();
    assert_eq!(ended["status"], "failed");
    let message = ended["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the server running this task (replica `replica-a`) stopped")
            && message.contains("`hold` is not marked idempotent"),
        "{message}"
    );
    assert_eq!(
        seen.starts.load(Ordering::SeqCst),
        1,
        "a tool not marked idempotent is not run again"
    );
    drop(a);
}

/// The task's status now.
async fn status_now(client: &Client, id: &str) -> String {
    let polled = client
        .get_task(GetTaskParams::new(id.to_owned()))
        .await
        .unwrap();
    serde_json::to_value(polled.task.task.status)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_task_whose_server_stopped_runs_again_elsewhere() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let (runtime, a) =
        on_own_runtime(replica(store.clone(), "replica-a", seen.clone()).task_lease(SHORT_LEASE))
            .await;
    let b = serve_replica(store.clone(), "replica-b", seen.clone()).await;
    let to_a = client(&a.url(), None).await;
    let id = create(&to_a, "again").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(seen.starts.load(Ordering::SeqCst), 1);
    assert!(store.get_any(&id).await.unwrap().idempotent);
    runtime.shutdown_background();
    let to_b = client(&b.url(), None).await;
    let ended = serde_json::to_value(until_terminal(&to_b, &id).await).unwrap();
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(ended["result"]["content"][0]["text"], "ran again (start 2)");
    assert_eq!(
        ended["statusMessage"], "second run",
        "the run's progress reaches the task's status message"
    );
    let record = store.get_any(&id).await.unwrap();
    assert_eq!(record.attempts, 2, "run twice: once on A, once on B");
    drop(a);
}

/// Bearer tokens `alice-token` and `bob-token`.
fn two_callers() -> HttpOptions {
    HttpOptions::default().bearer_auth(BearerAuth::verify_with(|token| match token {
        "alice-token" => Ok(McpCaller {
            subject: "alice".into(),
            ..McpCaller::default()
        }),
        "bob-token" => Ok(McpCaller {
            subject: "bob".into(),
            ..McpCaller::default()
        }),
        _ => Err(Rejected("unknown token".into())),
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principal_is_told_a_task_does_not_exist() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let a = serve_http_with(
        replica(store.clone(), "replica-a", seen.clone()),
        "127.0.0.1:0",
        two_callers(),
    )
    .await
    .unwrap();
    let b = serve_http_with(
        replica(store.clone(), "replica-b", seen.clone()),
        "127.0.0.1:0",
        two_callers(),
    )
    .await
    .unwrap();
    let alice = client(&a.url(), Some("alice-token")).await;
    let bob = client(&b.url(), Some("bob-token")).await;
    let id = create(&alice, "hold").await;
    assert_eq!(
        store.get_any(&id).await.unwrap().owner.as_deref(),
        Some("alice")
    );
    let refused = bob
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(&format!(
            "no task `{id}`: it is unknown, expired, or not yours"
        )),
        "{refused}"
    );
    let unknown = bob
        .get_task(GetTaskParams::new("no-such-task".to_owned()))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        refused.replace(&id, "ID"),
        unknown.replace("no-such-task", "ID"),
        "another's task reads exactly as an unknown one"
    );
    let cancel = bob
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(cancel.contains("not yours"), "{cancel}");
    let answer = bob
        .update_task(rmcp::model::UpdateTaskParams::new(
            id.clone(),
            Default::default(),
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(answer.contains("not yours"), "{answer}");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        store.get_any(&id).await.unwrap().status,
        TaskState::Working,
        "bob's cancel changed nothing"
    );
    assert_eq!(seen.cancelled.load(Ordering::SeqCst), 0);
    // Alice, through the other replica, may.
    let alice_b = client(&b.url(), Some("alice-token")).await;
    alice_b
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let ended = until_terminal(&alice_b, &id).await;
    assert_eq!(
        serde_json::to_value(ended.task.task.status).unwrap(),
        "cancelled"
    );
}

/// A store whose `create` takes 300 ms before it stores, or fails; and
/// whose leases, once frozen, answer renewals without extending them (a
/// runner's renewals lost in a pause).
/// A gate every waiter sees open in the same instant: one `Notify`, whose
/// `notify_waiters` marks each registered waiter notified at once. (A
/// `watch` channel is not that: its receivers wait on one of several
/// `Notify`s, woken one after another, so a task could be polled with its
/// cancel's waiter woken and its tool's not yet.)
#[derive(Default)]
struct Gate {
    open: AtomicBool,
    opened: tokio::sync::Notify,
}

impl Gate {
    async fn wait(&self) {
        loop {
            let opened = self.opened.notified();
            tokio::pin!(opened);
            // Registered before the flag is read: an opening after the
            // read wakes it.
            opened.as_mut().enable();
            if self.open.load(Ordering::SeqCst) {
                return;
            }
            opened.await;
        }
    }

    fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.opened.notify_waiters();
    }
}

struct SlowStore {
    inner: MemoryTaskStore,
    fail: AtomicBool,
    frozen: AtomicBool,
    /// When set, `wait_cancel` answers once it opens (a cancel's
    /// notification arriving as the gate opens).
    cancel_gate: Option<Arc<Gate>>,
    /// When set, the reads a client's requests make fail.
    fail_reads: AtomicBool,
}

impl SlowStore {
    fn failing(&self, what: &str) -> StoreResult<()> {
        if self.fail_reads.load(Ordering::SeqCst) {
            return Err(TaskStoreError::Backend {
                store: "slow",
                message: format!("{what}: the backend is unreachable"),
                source: None,
            });
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl TaskStore for SlowStore {
    fn name(&self) -> &'static str {
        "slow"
    }
    async fn create(&self, task: &TaskRecord) -> StoreResult<()> {
        tokio::time::sleep(Duration::from_millis(300)).await;
        if self.fail.load(Ordering::SeqCst) {
            return Err(TaskStoreError::Backend {
                store: "slow",
                message: "the backend is unreachable".into(),
                source: None,
            });
        }
        self.inner.create(task).await
    }
    async fn get(&self, id: &str, owner: Option<&str>) -> StoreResult<TaskRecord> {
        self.failing(&format!("reading task {id}"))?;
        self.inner.get(id, owner).await
    }
    async fn get_any(&self, id: &str) -> StoreResult<TaskRecord> {
        self.inner.get_any(id).await
    }
    async fn set_status_message(&self, id: &str, message: &str) -> StoreResult<()> {
        self.inner.set_status_message(id, message).await
    }
    async fn set_progress(
        &self,
        id: &str,
        progress: TaskProgress,
        message: Option<&str>,
    ) -> StoreResult<()> {
        self.inner.set_progress(id, progress, message).await
    }
    async fn finish(&self, id: &str, outcome: TaskOutcome) -> StoreResult<bool> {
        self.inner.finish(id, outcome).await
    }
    async fn request_input(&self, id: &str, key: &str, request: Value) -> StoreResult<()> {
        self.inner.request_input(id, key, request).await
    }
    async fn answer_inputs(
        &self,
        id: &str,
        owner: Option<&str>,
        answers: Map<String, Value>,
    ) -> StoreResult<Vec<String>> {
        self.inner.answer_inputs(id, owner, answers).await
    }
    async fn take_answer(&self, id: &str, key: &str) -> StoreResult<Option<Value>> {
        self.inner.take_answer(id, key).await
    }
    async fn request_cancel(&self, id: &str, owner: Option<&str>) -> StoreResult<()> {
        self.failing(&format!("recording the cancel of task {id}"))?;
        self.inner.request_cancel(id, owner).await
    }
    async fn cancel_requested(&self, id: &str) -> StoreResult<bool> {
        self.inner.cancel_requested(id).await
    }
    async fn wait_cancel(&self, id: &str, poll: Duration) -> StoreResult<()> {
        match &self.cancel_gate {
            Some(gate) => {
                gate.wait().await;
                Ok(())
            }
            None => self.inner.wait_cancel(id, poll).await,
        }
    }
    async fn list(&self, owner: Option<&str>) -> StoreResult<Vec<TaskRecord>> {
        self.inner.list(owner).await
    }
    async fn renew_lease(&self, id: &str, holder: &str, duration: Duration) -> StoreResult<bool> {
        if self.frozen.load(Ordering::SeqCst) {
            return Ok(true);
        }
        self.inner.renew_lease(id, holder, duration).await
    }
    async fn lapsed_leases(&self, limit: usize) -> StoreResult<Vec<TaskRecord>> {
        self.inner.lapsed_leases(limit).await
    }
    async fn claim_lapsed(
        &self,
        id: &str,
        holder: &str,
        duration: Duration,
    ) -> StoreResult<Option<Claimed>> {
        self.inner.claim_lapsed(id, holder, duration).await
    }
    async fn sweep(&self) -> StoreResult<Swept> {
        self.inner.sweep().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_task_result_goes_out_only_once_the_task_is_stored() {
    let slow = Arc::new(SlowStore {
        inner: MemoryTaskStore::new(),
        fail: AtomicBool::new(false),
        frozen: AtomicBool::new(false),
        cancel_gate: None,
        fail_reads: AtomicBool::new(false),
    });
    let store: Arc<dyn TaskStore> = slow.clone();
    let seen = Arc::new(Seen::default());
    let a = serve_replica(store.clone(), "replica-a", seen.clone()).await;
    let to_a = client(&a.url(), None).await;
    let started = std::time::Instant::now();
    let id = create(&to_a, "quick").await;
    // Read at once, with no other await between: the answer waited for
    // the store.
    let stored = slow.inner.get_any(&id).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(stored.expect("stored before the answer").tool, "quick");
    // A store that fails: the call fails, saying so, and nothing runs.
    slow.fail.store(true, Ordering::SeqCst);
    let refused = to_a
        .call_tool_once(CallToolRequestParams::new("hold"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(
            "the task could not be stored: the task store `slow` failed: the backend is unreachable"
        ),
        "{refused}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(seen.starts.load(Ordering::SeqCst), 0, "no call ran");
    assert_eq!(slow.inner.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_never_takes_over_a_task_it_still_runs() {
    let slow = Arc::new(SlowStore {
        inner: MemoryTaskStore::new(),
        fail: AtomicBool::new(false),
        frozen: AtomicBool::new(true),
        cancel_gate: None,
        fail_reads: AtomicBool::new(false),
    });
    let store: Arc<dyn TaskStore> = slow.clone();
    let seen = Arc::new(Seen::default());
    let a = serve_http(
        replica(store, "replica-a", seen.clone()).task_lease(SHORT_LEASE),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    let to_a = client(&a.url(), None).await;
    let id = create(&to_a, "again").await;
    // The lease lapses (its renewals are lost) while the call still runs
    // here: the server's own watcher, three ticks a lease, leaves it alone.
    tokio::time::sleep(SHORT_LEASE * 4).await;
    let record = slow.inner.get_any(&id).await.unwrap();
    assert!(record
        .lease
        .unwrap()
        .lapsed_at(toolbox_mcp::server::store::now_ms()));
    assert_eq!(record.status, TaskState::Working);
    assert_eq!(record.attempts, 1, "not claimed");
    assert_eq!(
        seen.starts.load(Ordering::SeqCst),
        1,
        "the idempotent tool was not started a second time beside its run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_of_zero_or_of_any_length_still_runs_the_task() {
    // Zero is read as 30 ms; Duration::MAX must not overflow the runner's
    // renewal clock or the lease's expiry.
    for lease in [Duration::ZERO, Duration::MAX] {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
        let server = replica(store, "replica-a", Arc::default()).task_lease(lease);
        let served = serve_http(server, "127.0.0.1:0").await.unwrap();
        let to = client(&served.url(), None).await;
        let id = create(&to, "quick").await;
        let done = serde_json::to_value(until_terminal(&to, &id).await).unwrap();
        assert_eq!(done["status"], "completed", "lease {lease:?}: {done}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_task_id_is_echoed_bounded_and_escaped() {
    // An unknown id came back whole in the error: 1 MB of it, CR/LF and all.
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let served = serve_http(
        replica(store.clone(), "replica-a", Arc::default()),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    let to = client(&served.url(), None).await;
    let id = format!("evil\r\nSet-Cookie: x={}", "a".repeat(1 << 20));
    let direct = store.get(&id, None).await.unwrap_err().to_string();
    // Over HTTP the id travels in Mcp-Name too: 1 MB is refused (431)
    // before it reaches the server, 16 KB reaches it.
    let id = format!("evil\r\nSet-Cookie: x={}", "a".repeat(16 << 10));
    let error = to
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    for text in [&direct, &error] {
        assert!(text.len() < 2_000, "{} bytes echoed", text.len());
        assert!(
            text.contains("no task `evil\\r\\nSet-Cookie: x=aaa"),
            "{}",
            &text[..text.len().min(300)]
        );
        assert!(!text.contains('\n'), "{}", &text[..text.len().min(300)]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_replicas_many_tasks_end_in_one_round() {
    // The watcher took over 32 lapsed tasks a round: of a stopped
    // replica's 100, 68 stayed `working` for another third of a lease
    // (10 s with the default lease), and so on.
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let mut ids = Vec::new();
    for _ in 0..100 {
        let lapsed = toolbox_mcp::server::Lease {
            holder: "replica-gone".into(),
            expires_at_ms: toolbox_mcp::server::store::now_ms() - 1,
        };
        let record = TaskRecord::new("hold", Value::Null, None).with_lease(lapsed);
        store.create(&record).await.unwrap();
        ids.push(record.id);
    }
    let server = McpServer::new(tools(Arc::default()), "replica")
        .task_store(store.clone())
        .replica_id("replica-b");
    let _served = serve_http(server, "127.0.0.1:0").await.unwrap();
    let mut working = ids.len();
    for _ in 0..500 {
        working = 0;
        for id in &ids {
            if !store.get_any(id).await.unwrap().status.is_terminal() {
                working += 1;
            }
        }
        if working == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(working, 0, "tasks still working 5 s after the first round");
    let record = store.get_any(&ids[99]).await.unwrap();
    assert_eq!(record.status, TaskState::Failed);
    let error = serde_json::to_string(&record.outcome).unwrap();
    assert!(error.contains("replica `replica-gone`"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_past_its_ttl_fails_and_its_call_is_cancelled() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let server = replica(store.clone(), "replica-a", seen.clone())
        .task_lease(Duration::from_millis(600))
        .task_ttl(Some(Duration::from_millis(1_500)));
    let served = serve_http(server, "127.0.0.1:0").await.unwrap();
    let to = client(&served.url(), None).await;
    let id = create(&to, "hold").await;
    let ended = serde_json::to_value(until_terminal(&to, &id).await).unwrap();
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(
        ended["error"]["message"],
        "task expired: its ttl of 1500 ms elapsed before it finished"
    );
    // The call saw its Context cancelled; the first end (the expiry) stays.
    for _ in 0..500 {
        if seen.cancelled.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen.cancelled.load(Ordering::SeqCst), 1);
    assert_eq!(
        store.get_any(&id).await.unwrap().status,
        TaskState::Failed,
        "the cancelled call does not end it a second time"
    );
    // A cancel of the ended task changes nothing (it is kept one ttl
    // after its end); an unknown id is not found.
    to.cancel_task(rmcp::model::CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(status_now(&to, &id).await, "failed");
    let unknown = to
        .cancel_task(rmcp::model::CancelTaskParams::new(
            "no-such-task".to_owned(),
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("no task `no-such-task`: it is unknown, expired, or not yours"),
        "{unknown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_whose_server_stopped_ends_cancelled_and_is_not_run_again() {
    // Cancelled, then its replica stopped before the runner saw the flag:
    // an idempotent tool was started again (only to be cancelled), any
    // other ended `failed` saying its server stopped, not `cancelled`.
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let mut ids = Vec::new();
    for (tool, idempotent) in [("again", true), ("hold", false)] {
        let lapsed = toolbox_mcp::server::Lease {
            holder: "replica-gone".into(),
            expires_at_ms: toolbox_mcp::server::store::now_ms() - 1,
        };
        let mut record = TaskRecord::new(tool, Value::Null, None).with_lease(lapsed);
        record.idempotent = idempotent;
        store.create(&record).await.unwrap();
        store.request_cancel(&record.id, None).await.unwrap();
        ids.push(record.id);
    }
    let seen = Arc::new(Seen::default());
    let _served = serve_replica(store.clone(), "replica-b", seen.clone()).await;
    for id in &ids {
        let mut record = store.get_any(id).await.unwrap();
        for _ in 0..500 {
            if record.status.is_terminal() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            record = store.get_any(id).await.unwrap();
        }
        assert_eq!(
            record.status,
            TaskState::Cancelled,
            "{}: {record:?}",
            record.tool
        );
    }
    assert_eq!(seen.starts.load(Ordering::SeqCst), 0, "no tool ran again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_ended_as_the_cancel_came_keeps_its_result() {
    // The runner's select! took its branches in random order: a call that
    // had ended with its result when the cancel's notification came in
    // the same wake-up ended the task `cancelled` half the time, its
    // result lost.
    let gate = Arc::new(Gate::default());
    let store = Arc::new(SlowStore {
        inner: MemoryTaskStore::new(),
        fail: AtomicBool::new(false),
        frozen: AtomicBool::new(false),
        cancel_gate: Some(gate.clone()),
        fail_reads: AtomicBool::new(false),
    });
    let opens = gate.clone();
    let tools = FnToolBox::new([tool_fn("gated", "Ends when the gate opens", move |_: ()| {
        let gate = opens.clone();
        async move {
            gate.wait().await;
            "gated done"
        }
    })
    .task(TaskSupport::Optional)])
    .unwrap();
    let served = serve_http(
        McpServer::new(tools, "replica")
            .task_store(store.clone())
            .task_lease(LEASE),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    let to = client(&served.url(), None).await;
    let mut ids = Vec::new();
    for _ in 0..12 {
        ids.push(create(&to, "gated").await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    for id in &ids {
        store.request_cancel(id, None).await.unwrap();
    }
    // One wake-up: each tool ends and each runner hears of the cancel.
    gate.open();
    for id in &ids {
        let ended = serde_json::to_value(until_terminal(&to, id).await).unwrap();
        assert_eq!(ended["status"], "completed", "{ended}");
        assert_eq!(ended["result"]["content"][0]["text"], "gated done");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_fails_mid_task_is_named_to_the_client() {
    let slow = Arc::new(SlowStore {
        inner: MemoryTaskStore::new(),
        fail: AtomicBool::new(false),
        frozen: AtomicBool::new(false),
        cancel_gate: None,
        fail_reads: AtomicBool::new(false),
    });
    let store: Arc<dyn TaskStore> = slow.clone();
    let served = serve_http(replica(store, "replica-a", Arc::default()), "127.0.0.1:0")
        .await
        .unwrap();
    let to = client(&served.url(), None).await;
    let id = create(&to, "quick").await;
    slow.fail_reads.store(true, Ordering::SeqCst);
    let read = to
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        read.contains(&format!(
            "the task store `slow` failed: reading task {id}: the backend is unreachable"
        )),
        "{read}"
    );
    let cancel = to
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        cancel.contains("the task store `slow` failed: recording the cancel of task"),
        "{cancel}"
    );
    // The store back: the task ran on, and ended with its result.
    slow.fail_reads.store(false, Ordering::SeqCst);
    let done = serde_json::to_value(until_terminal(&to, &id).await).unwrap();
    assert_eq!(done["status"], "completed", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_past_the_calls_in_flight_are_refused_before_they_are_stored() {
    // Each task holds its place among the calls in flight from its
    // creation: a client could store tasks (and their arguments) without
    // bound, each past the limit told `working`, then failed.
    let store = Arc::new(MemoryTaskStore::new());
    let seen = Arc::new(Seen::default());
    let served = serve_http(
        // Its clients have no session (every request stands alone): the
        // server's limit is the one they meet.
        replica(store.clone(), "replica-a", seen.clone()).max_calls_in_flight(100, 3),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    let to = client(&served.url(), None).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create(&to, "hold").await);
    }
    let refused = to
        .call_tool_once(CallToolRequestParams::new("hold"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(
            "-32000: too many calls in flight: the server already runs 3, its limit; try again shortly"
        ),
        "{refused}"
    );
    assert_eq!(store.list(None).await.unwrap().len(), 3, "nothing stored");
    // A cancelled task gives its place back.
    to.cancel_task(CancelTaskParams::new(ids[0].clone()))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(until_terminal(&to, &ids[0]).await).unwrap()["status"],
        "cancelled"
    );
    let mut again = None;
    for _ in 0..100 {
        match to.call_tool_once(CallToolRequestParams::new("hold")).await {
            Ok(CallToolResponse::Task(created)) => {
                again = Some(created.task.task_id);
                break;
            }
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    assert!(again.is_some(), "the place was given back");
    // An ended task's record keeps its outcome, not its call's arguments.
    let ended = store.get_any(&ids[0]).await.unwrap();
    assert_eq!(ended.arguments, Value::Null);
}
