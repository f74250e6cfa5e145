//! Any box as an MCP server: the handler ([`McpServer`]) that lists and
//! calls a box's tools for a client, over stdio or Streamable HTTP.
//!
//! The family: [`peer`](McpPeer) (the client as a tool sees it), progress
//! forwarding, logging to the client ([`McpLog`]), the session table and
//! call limits, the HTTP endpoint ([`HttpServer`], [`HttpOptions`]) and the
//! gate in front of it (bearer check, session caps, readiness).

mod apps;
mod forwarded;
mod gate;
mod http;
mod log;
mod malformed;
mod peer;
mod progress;
mod sessions;
pub mod store;
mod tasks;

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ProgressToken, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use toolbox_core::{
    CancellationToken, Context, ToolBox, ToolBoxExt, ToolError, ToolHandler, ToolResponse,
};

use crate::auth::McpCaller;
use crate::convert::{to_result, to_tool};
use log::Threshold;
use peer::InputRound;
use progress::{flush, progress_to};
use sessions::{CallLimits, CallSlot, ServeState};

pub use crate::progress::{McpProgress, Progress};
pub use http::{serve_http, serve_http_with, HttpOptions, HttpServer};
pub use log::{LogLevel, McpLog};
pub use peer::{Elicitation, McpMeta, McpPeer, Sample};
#[cfg(feature = "task-postgres")]
pub use store::PostgresTaskStore;
#[cfg(feature = "task-redis")]
pub use store::RedisTaskStore;
pub use store::{
    Claimed, Lease, MemoryTaskStore, StoreResult, Swept, TaskOutcome, TaskProgress, TaskRecord,
    TaskState, TaskStore, TaskStoreError,
};

/// A box served over MCP. Tools are listed per request context, so a
/// condition's hidden tool is neither listed nor callable (an unknown tool,
/// as the protocol requires); every call passes toolbox's lifecycle under
/// the server's handler; bad arguments and tool errors are `isError`
/// results the model can act on.
pub struct McpServer<B> {
    toolbox: Arc<B>,
    handler: ToolHandler,
    name: String,
    /// What the server tells clients in `initialize` (`instructions`).
    instructions: Option<Arc<str>>,
    /// The clients that completed the handshake, for `list_changed`.
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    /// The log level this server's client set (each HTTP session has a
    /// server of its own).
    threshold: Threshold,
    /// How calls are bounded.
    limits: CallLimits,
    /// What every clone shares: calls in flight, the shutdown deadline.
    state: Arc<ServeState>,
    /// This clone's calls in flight (its session's, over stdio or a
    /// transport without a session table).
    own_calls: Arc<std::sync::atomic::AtomicUsize>,
    /// This clone's session, for `mcp.server.session.duration`.
    clock: Arc<SessionClock>,
    /// The MCP Apps views served as `ui://` resources.
    views: Arc<Vec<crate::apps::UiResource>>,
    /// The tools served as MCP tasks, and the tasks running.
    tasks: tasks::Tasks,
}

/// When a served session began; its duration is recorded when the session
/// (the clone of the server that serves it) ends.
#[derive(Default)]
struct SessionClock {
    began: Mutex<Option<(std::time::Instant, Option<String>, &'static str)>>,
}

impl Drop for SessionClock {
    fn drop(&mut self) {
        if let Some((began, protocol, transport)) = self
            .began
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            crate::telemetry::server_session(began.elapsed(), protocol.as_deref(), transport);
        }
    }
}

impl<B: ToolBox + 'static> McpServer<B> {
    /// Serves `toolbox`, announcing itself as `name`.
    pub fn new(toolbox: B, name: impl Into<String>) -> Self {
        // Tools marked to run as tasks (`#[tool(task)]`, `FnTool::task`).
        let tasks = tasks::Tasks::marked(&toolbox.catalog());
        McpServer {
            toolbox: Arc::new(toolbox),
            handler: ToolHandler::empty(),
            name: name.into(),
            instructions: None,
            peers: Arc::default(),
            threshold: Threshold::default(),
            limits: CallLimits::default(),
            state: Arc::default(),
            own_calls: Arc::default(),
            clock: Arc::default(),
            views: Arc::default(),
            tasks,
        }
    }

    /// Serves the tool `tool` as an MCP task (`io.modelcontextprotocol/tasks`)
    /// to clients that declared the extension: the call is answered at
    /// once with a task the client polls (`tasks/get`, the result inline
    /// once done) and may cancel (`tasks/cancel` cancels the tool's
    /// `Context`). Clients without the extension get a plain call. The
    /// extension is advertised once a tool is served this way. A tool
    /// marked `#[tool(task)]` (or `FnTool::task`) is served so without it.
    pub fn task(mut self, tool: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.tasks.tools).insert(tool.into());
        self
    }

    /// Serves the tool `tool` only as an MCP task, as [`task`](McpServer::task)
    /// does; a client that did not declare the extension is refused with
    /// `-32021` (missing required client capability) naming it.
    pub fn task_required(mut self, tool: impl Into<String>) -> Self {
        let tool = tool.into();
        Arc::make_mut(&mut self.tasks.required).insert(tool.clone());
        self.task(tool)
    }

    /// Keeps this server's tasks in `store` ([`MemoryTaskStore`], in this
    /// process, by default): servers sharing a store (replicas behind a
    /// load balancer, given one Redis or PostgreSQL store) answer each
    /// other's tasks, and a cancel any of them receives reaches the running
    /// call. Give each replica its own [`replica_id`](McpServer::replica_id).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.tasks.store = store;
        self
    }

    /// This server's name among the replicas sharing its task store (the
    /// host name, process id and a random suffix by default): the holder
    /// of its running tasks' leases, named by a task that fails because
    /// this server stopped.
    pub fn replica_id(mut self, id: impl Into<String>) -> Self {
        self.tasks.replica = id.into().into();
        self
    }

    /// How long a running task's lease lasts without renewal (30 s by
    /// default; renewed every third of it): once it lapses, another server
    /// sharing the store takes the task over, running it again where the
    /// tool is idempotent (`idempotentHint`) and failing it otherwise.
    /// A lease shorter than 30 ms is read as 30 ms.
    pub fn task_lease(mut self, lease: std::time::Duration) -> Self {
        self.tasks.lease = lease.max(std::time::Duration::from_millis(30));
        self
    }

    /// A task's time to live from its creation (5 minutes by default,
    /// `None` for no limit): a task still running past it fails ("task
    /// expired") and its call is cancelled; an ended one is kept one more
    /// ttl for its pollers, then removed. With `None` no task is ever
    /// removed: the store (the process's memory, by default) keeps every
    /// task the server ran.
    pub fn task_ttl(mut self, ttl: Option<std::time::Duration>) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// Serves `view` as a `ui://` resource (`resources/list`,
    /// `resources/read`) for the MCP Apps hosts that render the tools
    /// naming it (`#[tool(ui = "ui://…")]`, `FnTool::ui`), and advertises
    /// the extension. Serving refuses to start while a tool names a view
    /// that was not registered.
    pub fn ui_resource(mut self, view: crate::apps::UiResource) -> Self {
        let views = Arc::make_mut(&mut self.views);
        views.retain(|known| known.uri != view.uri);
        views.push(view);
        self
    }

    /// Serves each of `views`, as [`ui_resource`](McpServer::ui_resource)
    /// does.
    pub fn ui_resources(self, views: impl IntoIterator<Item = crate::apps::UiResource>) -> Self {
        views.into_iter().fold(self, McpServer::ui_resource)
    }

    /// Whether every UI tool's view is registered (and every view is a
    /// `ui://` URI): the check serving starts with.
    pub fn check_views(&self) -> Result<(), String> {
        apps::check(&*self.toolbox, &self.views)
    }

    /// Ends a call that runs longer than `limit` (300 s by default): the
    /// tool's `Context` is cancelled, its future dropped, and the client
    /// reads "the tool did not finish within …" as the call's error.
    pub fn call_timeout(mut self, limit: std::time::Duration) -> Self {
        self.limits.call_timeout = limit;
        self
    }

    /// `tool`'s own limit, in place of [`call_timeout`](McpServer::call_timeout).
    pub fn tool_timeout(mut self, tool: impl Into<String>, limit: std::time::Duration) -> Self {
        Arc::make_mut(&mut self.limits.tool_timeouts).insert(tool.into(), limit);
        self
    }

    /// At most `per_session` calls in flight in one session (32 by
    /// default) and `total` in all (512): a call past either is refused
    /// at once with JSON-RPC error -32000 saying which limit, and runs
    /// nothing.
    pub fn max_calls_in_flight(mut self, per_session: usize, total: usize) -> Self {
        self.limits.per_session = per_session.max(1);
        self.limits.total = total.max(1);
        self
    }

    /// Sends `text` as the initialize result's `instructions`: how to use
    /// this server's tools, for the client's system prompt.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into().into());
        self
    }

    /// Observes every served call with `handler`.
    pub fn handler(mut self, handler: ToolHandler) -> Self {
        self.handler = handler;
        self
    }

    /// Tells every connected client that the served tools changed
    /// (`notifications/tools/list_changed`), so it lists them again; call it
    /// after the box's tools change (a registry re-resolved, a condition's
    /// input flipped). Returns how many clients were told.
    pub async fn tools_changed(&self) -> usize {
        let peers = {
            let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        let mut told = 0;
        for peer in peers {
            if peer.notify_tool_list_changed().await.is_ok() {
                told += 1;
            }
        }
        told
    }

    /// The context of one request: its `_meta` as [`McpMeta`], the client
    /// as [`McpPeer`].
    fn context(
        &self,
        meta: Map<String, Value>,
        request: &RequestContext<RoleServer>,
        round: Option<Arc<InputRound>>,
    ) -> Context {
        let session = session_id(request).map(str::to_owned);
        // In `2026-07-28` the log level comes with each request, and no
        // level means no logging.
        let log = if stateless(&meta) {
            McpLog::per_request(
                request.peer.clone(),
                meta.get(LOG_LEVEL).and_then(Value::as_str),
            )
        } else {
            McpLog::to(request.peer.clone(), self.threshold.clone())
        };
        let caller = request
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<McpCaller>())
            .cloned();
        let ctx = match caller {
            Some(caller) => Context::new().with_extension(caller),
            None => Context::new(),
        };
        ctx.with_extension(McpMeta(meta))
            .with_extension(log)
            .with_extension(McpPeer {
                peer: request.peer.clone(),
                session,
                round,
                key: None,
            })
    }
}

/// The authenticated caller of a request, on an endpoint with bearer auth.
fn caller_of(request: &RequestContext<RoleServer>) -> Option<McpCaller> {
    request
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<McpCaller>())
        .cloned()
}

/// The request's `mcp-session-id`, over HTTP.
fn session_id(request: &RequestContext<RoleServer>) -> Option<&str> {
    request
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|value| value.to_str().ok())
}

/// The `_meta` keys of the `2026-07-28` era.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Whether a request is of the stateless `2026-07-28` era (its version in
/// `_meta`, a version without `initialize`).
fn stateless(meta: &Map<String, Value>) -> bool {
    meta.get(PROTOCOL_VERSION)
        .and_then(Value::as_str)
        .is_some_and(|version| version >= rmcp::model::ProtocolVersion::NO_INITIALIZE.as_str())
}

impl McpServer<crate::client::ProxyTools> {
    /// Serves `remote` again, announcing itself as `name`: every tool its
    /// server lists, the model's and its MCP Apps views' alike, with
    /// `_meta.ui` unchanged ([`ProxyTools`](crate::client::ProxyTools)),
    /// and every view those tools name, read from the server now and
    /// served as it sent them ([`McpToolBox::ui_resources`]). A view the
    /// server cannot serve is an error naming it. Views are read once: a
    /// view the server changes later is served as it was read.
    ///
    /// [`McpToolBox::ui_resources`]: crate::client::McpToolBox::ui_resources
    pub async fn proxy(
        remote: crate::client::McpToolBox,
        name: impl Into<String>,
    ) -> Result<Self, toolbox_core::ToolError> {
        let views = remote.ui_resources().await?;
        Ok(McpServer::new(remote.for_proxy(), name).ui_resources(views))
    }
}

impl<B: ToolBox + 'static> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            toolbox: self.toolbox.clone(),
            handler: self.handler.clone(),
            name: self.name.clone(),
            instructions: self.instructions.clone(),
            peers: self.peers.clone(),
            // A clone serves another client (an HTTP session): its own level
            // and its own calls.
            threshold: Threshold::default(),
            limits: self.limits.clone(),
            state: self.state.clone(),
            own_calls: Arc::default(),
            clock: Arc::default(),
            views: self.views.clone(),
            tasks: self.tasks.clone(),
        }
    }
}

impl<B: ToolBox + 'static> ServerHandler for McpServer<B> {
    // Logging is announced for `2025-11-25` clients (deprecated by rmcp
    // for `2026-07-28`, SEP-2577).
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        apps::advertise(&mut info.capabilities, &self.views);
        if !self.tasks.tools.is_empty() {
            info.capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Map::new());
        }
        info.server_info.name = self.name.clone();
        info.server_info.version = env!("CARGO_PKG_VERSION").to_owned();
        info.instructions = self.instructions.as_deref().map(str::to_owned);
        info
    }

    /// A request rmcp could not read: a method it knows with params of
    /// the wrong shape, or one it does not know.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        Err(malformed::answer(&request.method, request.params.as_ref()))
    }

    // Logging is deprecated from `2026-07-28` on (SEP-2577); in
    // `2025-11-25` a client sets its level this way.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.threshold.set(request.level);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let over_http = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some();
        *self.clock.began.lock().unwrap_or_else(|p| p.into_inner()) = Some((
            std::time::Instant::now(),
            context
                .peer
                .peer_info()
                .map(|info| info.protocol_version.to_string()),
            crate::telemetry::transport(over_http),
        ));
        self.peers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = self.context(context.meta.0 .0.clone(), &context, None);
        let mut tools = Vec::new();
        for spec in self.toolbox.specifications(&ctx) {
            tools.push(to_tool(&spec).map_err(|e| ErrorData::internal_error(e, None))?);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Ok(apps::list(&self.views))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        apps::read(&self.views, &request.uri).map(Into::into)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.watch_tasks();
        let owner = caller_of(&context).map(|caller| caller.subject);
        let record = self
            .tasks
            .store
            .get(&request.task_id, owner.as_deref())
            .await
            .map_err(tasks::store_error)?;
        Ok(rmcp::model::GetTaskResult::new(tasks::detailed(&record)))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.watch_tasks();
        let owner = caller_of(&context).map(|caller| caller.subject);
        self.tasks
            .store
            .answer_inputs(
                &request.task_id,
                owner.as_deref(),
                request.input_responses.into_iter().collect(),
            )
            .await
            .map(drop)
            .map_err(tasks::store_error)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.watch_tasks();
        let owner = caller_of(&context).map(|caller| caller.subject);
        self.tasks
            .store
            .request_cancel(&request.task_id, owner.as_deref())
            .await
            .map_err(tasks::store_error)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use tracing::Instrument as _;
        let started = std::time::Instant::now();
        let tool = request.name.to_string();
        let over_http = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some();
        let transport = crate::telemetry::transport(over_http);
        let mut meta = context.meta.0 .0.clone();
        if let Some(own) = &request.meta {
            meta.extend(own.0 .0.clone());
        }
        let protocol = meta
            .get(PROTOCOL_VERSION)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                context
                    .peer
                    .peer_info()
                    .map(|info| info.protocol_version.to_string())
            });
        let span = crate::telemetry::server_span(
            &tool,
            &request_id(&context.id),
            session_id(&context),
            protocol.as_deref(),
            transport,
        );
        crate::telemetry::continue_trace(&span, &meta);
        // Whether the client declared the Tasks extension, asked only for a
        // tool served as a task (the capabilities are a copy).
        let declared = self.tasks.serves(&tool).then(|| {
            context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks())
        });
        let refused = (declared == Some(false))
            .then(|| self.tasks.refusal(&tool))
            .flatten();
        let result = if let Some(refusal) = refused {
            Err(refusal)
        } else if declared == Some(true) {
            self.watch_tasks();
            // The task's place among the calls in flight is taken before
            // it is stored: a call past the limits is refused as a direct
            // one is, and stores nothing.
            match self.call_slot(&tool, &context) {
                Err(busy) => Err(busy),
                Ok(slot) => {
                    self.create_task(&tool, request, context, meta, slot, &span)
                        .await
                }
            }
        } else {
            self.call_tool_inner(request, context, meta, None)
                .instrument(span.clone())
                .await
        };
        let code;
        let error = match &result {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                Some("tool_error")
            }
            Ok(_) => None,
            Err(e) => {
                code = e.code.0.to_string();
                Some(code.as_str())
            }
        };
        if let Some(kind) = error {
            crate::telemetry::failed(&span, kind);
        }
        crate::telemetry::server_operation(
            started.elapsed(),
            &tool,
            error,
            protocol.as_deref(),
            transport,
        );
        result
    }
}

impl<B: ToolBox + 'static> McpServer<B> {
    /// Starts, once per server (and its clones), the watcher of its task
    /// store: every third of the lease it sweeps expired tasks and takes
    /// over the tasks whose lease lapsed. It ends with the server.
    pub(super) fn watch_tasks(&self) {
        if self.tasks.tools.is_empty() || self.tasks.watching.set(()).is_err() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let toolbox = Arc::downgrade(&self.toolbox);
        let handler = self.handler.clone();
        let limits = self.limits.clone();
        let tasks = self.tasks.clone();
        runtime.spawn(async move {
            let every = (tasks.lease / 3).max(std::time::Duration::from_millis(10));
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(toolbox) = toolbox.upgrade() else {
                    return;
                };
                let rerun = |task: TaskRecord, stop: tokio_util::sync::CancellationToken| {
                    let call = rerun(
                        toolbox.clone(),
                        handler.clone(),
                        limits.clone(),
                        task.clone(),
                        stop.clone(),
                    );
                    tasks.run(task.id, stop, call);
                };
                tasks.watch_once(&rerun).await;
            }
        });
    }

    /// One `tools/call`, with `meta` the request's `_meta` merged over the
    /// context's (as [`call_tool`](ServerHandler::call_tool) made it).
    /// A place among the calls in flight for a call of `tool`, within the
    /// session's and the server's limits; refused with the text a client
    /// reads.
    fn call_slot(
        &self,
        tool: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallSlot, ErrorData> {
        let session_calls = match (self.state.sessions.get(), session_id(context)) {
            (Some(sessions), Some(id)) => sessions.calls(id),
            _ => self.own_calls.clone(),
        };
        CallSlot::take(&self.state, session_calls, &self.limits).map_err(|busy| {
            tracing::warn!(target: "toolbox::mcp", tool = %toolbox_core::args::echo(tool), reason = %busy.message(), "a call was refused");
            ErrorData::new(
                rmcp::model::ErrorCode(-32000),
                busy.message(),
                Some(busy.data()),
            )
        })
    }

    /// Runs a call of a tool: `slot`, its place among the calls in flight
    /// when it was taken already (a task's, at its creation).
    async fn call_tool_inner(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        meta: Map<String, Value>,
        slot: Option<CallSlot>,
    ) -> Result<CallToolResponse, ErrorData> {
        let progress = meta
            .get("progressToken")
            .and_then(|token| serde_json::from_value::<ProgressToken>(token.clone()).ok());
        // The client's cancellation (`notifications/cancelled`) cancels the
        // tool's Context, then ends the call.
        let cancel = CancellationToken::new();
        // `2026-07-28`: questions to the client go out as this call's
        // `InputRequiredResult`; the answers come with the next call.
        if let Some((key, _)) = request
            .input_responses
            .iter()
            .flatten()
            .find(|(_, answer)| !answer.is_object())
        {
            return Err(ErrorData::invalid_params(
                format!(
                    "inputResponses.{}: an answer must be an object (an elicitation's or a sampling's result)",
                    toolbox_core::args::echo(key)
                ),
                None,
            ));
        }
        let round = stateless(&meta).then(|| {
            Arc::new(InputRound {
                answers: request
                    .input_responses
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .collect(),
                capabilities: meta
                    .get(CLIENT_CAPABILITIES)
                    .cloned()
                    .unwrap_or(Value::Null),
                ..InputRound::default()
            })
        });
        let mut ctx = self
            .context(meta, &context, round.clone())
            .with_cancellation(cancel.clone());
        let mut reports = None;
        if let Some(token) = progress {
            let (progress, sender) = progress_to(context.peer.clone(), token);
            ctx = ctx.with_extension(progress);
            reports = Some(sender);
        }
        let name = request.name.as_ref();
        // A tool not offered in this context is unknown, hidden or not:
        // nothing tells a client about a tool it may not see.
        let Some(structured) = self
            .toolbox
            .specification(name, &ctx)
            .map(|spec| spec.output_schema.is_some())
        else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", toolbox_core::args::echo(name)),
                None,
            ));
        };
        let _slot = match slot {
            Some(slot) => slot,
            None => self.call_slot(name, &context)?,
        };
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let limit = self.limits.timeout_for(name);
        let call = self.toolbox.call(name, &arguments, &ctx, &self.handler);
        tokio::pin!(call);
        let response = tokio::select! {
            response = &mut call => response,
            () = context.ct.cancelled() => {
                // The lifecycle sees the cancelled Context and ends the call
                // as `Cancelled` at its next poll.
                cancel.cancel();
                let _ = call.await;
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
            () = tokio::time::sleep(limit) => {
                // The server's limit: the tool is told (its Context) and
                // has the token's grace to clean up before the lifecycle
                // ends it as cancelled; the client reads why.
                cancel.cancel();
                let _ = (&mut call).await;
                tracing::warn!(target: "toolbox::mcp", tool = %toolbox_core::args::echo(name), ?limit, "a call passed the server's limit");
                ToolResponse::error(ToolError::TimedOut { after: limit }.model_message())
            }
            () = self.state.deadline.cancelled() => {
                cancel.cancel();
                let _ = (&mut call).await;
                return Err(ErrorData::internal_error(
                    "the server is shutting down: the call was cancelled before it finished; call again",
                    None,
                ));
            }
        };
        flush(reports).await;
        if let Some(capability) = round.as_ref().and_then(|r| r.missing()) {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode(-32021),
                "MissingRequiredClientCapabilityError",
                Some(serde_json::json!({"requiredCapabilities": {capability: {}}})),
            ));
        }
        if let Some(questions) = round.map(|r| r.questions()).filter(|q| !q.is_empty()) {
            let result: rmcp::model::InputRequiredResult =
                serde_json::from_value(serde_json::json!({
                    "resultType": "input_required",
                    "inputRequests": questions,
                }))
                .map_err(|e| {
                    ErrorData::internal_error(
                        format!("the input requests cannot be sent: {e}"),
                        None,
                    )
                })?;
            return Ok(result.into());
        }
        Ok(to_result(response, structured).into())
    }
}

/// A task's call run again on this replica after the one running it
/// stopped: through the lifecycle and the server's limit, with the caller
/// the task recorded; no client is reachable (no peer, no progress token).
async fn rerun<B: ToolBox + 'static>(
    toolbox: Arc<B>,
    handler: ToolHandler,
    limits: CallLimits,
    task: TaskRecord,
    stop: tokio_util::sync::CancellationToken,
) -> Result<CallToolResponse, ErrorData> {
    let cancel = CancellationToken::new();
    let mut ctx = Context::new()
        .with_cancellation(cancel.clone())
        .with_extension(McpMeta(Map::new()));
    if let Some(caller) = task.caller.as_ref().and_then(tasks::caller_from) {
        ctx = ctx.with_extension(caller);
    }
    if let Some(progress) = progress::to_running_task() {
        ctx = ctx.with_extension(progress);
    }
    let name = task.tool.as_str();
    let Some(structured) = toolbox
        .specification(name, &ctx)
        .map(|spec| spec.output_schema.is_some())
    else {
        return Err(ErrorData::invalid_params(
            format!("Unknown tool: {}", toolbox_core::args::echo(name)),
            None,
        ));
    };
    let limit = limits.timeout_for(name);
    let call = toolbox.call(name, &task.arguments, &ctx, &handler);
    tokio::pin!(call);
    let response = tokio::select! {
        response = &mut call => response,
        () = stop.cancelled() => {
            cancel.cancel();
            let _ = call.await;
            return Err(ErrorData::internal_error("the call was cancelled", None));
        }
        () = tokio::time::sleep(limit) => {
            cancel.cancel();
            let _ = (&mut call).await;
            ToolResponse::error(ToolError::TimedOut { after: limit }.model_message())
        }
    };
    Ok(to_result(response, structured).into())
}

/// A JSON-RPC request id as the conventions write it.
fn request_id(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}

/// Serves `toolbox` over stdio (newline-delimited JSON-RPC on stdin and
/// stdout) until the client closes the stream.
pub async fn serve_stdio<B: ToolBox + 'static>(
    toolbox: B,
    name: &str,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    McpServer::new(toolbox, name).serve_stdio().await
}

impl<B: ToolBox + 'static> McpServer<B> {
    /// Serves this server over stdio until the client closes the stream.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        self.check_views()?;
        self.watch_tasks();
        let service = self.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok(())
    }
}
