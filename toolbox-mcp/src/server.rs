//! Any box as an MCP server.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolbox_core::{
    CancellationToken, Context, FromContext, ToolBox, ToolBoxExt, ToolError, ToolHandler,
    ToolResponse,
};

use crate::convert::{to_result, to_tool};
use crate::http::{HttpOptions, McpCaller};
use crate::log::{McpLog, Threshold};
use crate::progress::{McpProgress, Progress};
use crate::service::{CallLimits, CallSlot, ServeState, Sessions};

/// A served call's MCP `_meta` (the request's metadata object: a progress
/// token, a trace id, whatever the client sent), injectable into a tool
/// (`#[inject] meta: McpMeta`) or read from its `Context`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpMeta(pub Map<String, Value>);

impl FromContext for McpMeta {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(ctx.extension::<McpMeta>().cloned().unwrap_or_default())
    }
}

/// The peer at the other end of a served call (the MCP client that made
/// it; [`McpToolBox`](crate::McpToolBox) is toolbox's own client): its name and version, the protocol
/// version it negotiated, its Streamable HTTP session, and its rmcp
/// [`Peer`] for requests back to it (roots, sampling, elicitation, where the
/// protocol era allows them). Injectable into a tool (`#[inject] client:
/// McpPeer`); a call that did not come over MCP has none, and the tool is
/// told so.
#[derive(Clone)]
pub struct McpPeer {
    peer: Peer<RoleServer>,
    session: Option<String>,
    /// In the `2026-07-28` era, the call's round of input requests
    /// (`InputRequiredResult`) instead of requests back to the client.
    round: Option<Arc<InputRound>>,
    /// The key the next input request goes under.
    key: Option<String>,
}

/// One round of a `2026-07-28` call: the client's answers it came with, and
/// the questions the tool asked that have none yet.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    answers: std::collections::BTreeMap<String, Value>,
    questions: Mutex<std::collections::BTreeMap<String, Value>>,
    asked: std::sync::atomic::AtomicUsize,
    /// The client's capabilities, from the request's `_meta`.
    capabilities: Value,
    /// A capability the tool needed and the client did not declare: the
    /// call is answered with the protocol's error for it (-32021).
    missing: Mutex<Option<String>>,
}

impl InputRound {
    /// The questions asked without an answer, as `inputRequests`.
    pub(crate) fn questions(&self) -> std::collections::BTreeMap<String, Value> {
        self.questions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl McpPeer {
    /// The client's name, as it announced itself (none in the stateless era,
    /// where clients do not introduce themselves).
    pub fn name(&self) -> Option<String> {
        Some(self.peer.peer_info()?.client_info.name.clone())
    }

    /// The client's version, as it announced itself.
    pub fn version(&self) -> Option<String> {
        Some(self.peer.peer_info()?.client_info.version.clone())
    }

    /// The protocol version negotiated with the client.
    pub fn protocol_version(&self) -> Option<String> {
        Some(self.peer.peer_info()?.protocol_version.to_string())
    }

    /// The Streamable HTTP session (`Mcp-Session-Id`), when there is one.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The client as an rmcp peer, for requests back to it.
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// The same client, whose next question (elicitation or sampling) goes
    /// under `key` in a `2026-07-28` round of input requests (by default,
    /// `elicitation-1`, `sampling-2`, … in the order the tool asks).
    pub fn keyed(&self, key: impl Into<String>) -> Self {
        McpPeer {
            key: Some(key.into()),
            ..self.clone()
        }
    }

    /// Whether the client declared `capability` (`elicitation`, `sampling`).
    fn declares(&self, capability: &str) -> bool {
        match &self.round {
            Some(round) => round.capabilities.get(capability).is_some(),
            None => self.peer.peer_info().is_some_and(|info| {
                serde_json::to_value(&info.capabilities)
                    .ok()
                    .and_then(|c| c.get(capability).cloned())
                    .is_some()
            }),
        }
    }

    /// Says the tool needs the client's `capability` (`sampling`,
    /// `elicitation`, `roots`): an error the tool passes on with `?` when
    /// the client did not declare it; in `2026-07-28` the call is then
    /// answered with the protocol's `MissingRequiredClientCapabilityError`
    /// (-32021) naming it.
    pub fn require(&self, capability: &str) -> Result<(), ToolError> {
        if self.declares(capability) {
            return Ok(());
        }
        if let Some(round) = &self.round {
            *round.missing.lock().unwrap_or_else(|p| p.into_inner()) = Some(capability.to_owned());
        }
        Err(unsupported(capability))
    }

    /// Asks the client `method` with `params`: a request back to it in
    /// `2025-11-25`; in `2026-07-28`, its answer from the call's
    /// `inputResponses`, or else a question for this round's
    /// `InputRequiredResult` (the tool then ends, and runs again with the
    /// answer).
    async fn ask(&self, method: &str, params: Value) -> Result<Value, ToolError> {
        let capability = method.split('/').next().unwrap_or(method);
        self.require(capability)?;
        let Some(round) = &self.round else {
            let request: rmcp::model::ServerRequest =
                serde_json::from_value(serde_json::json!({"method": method, "params": params}))
                    .map_err(|e| {
                        ToolError::failed(format!("the {capability} request cannot be built: {e}"))
                    })?;
            let answer = self
                .peer
                .send_request(request)
                .await
                .map_err(|e| transport(capability, e))?;
            return Ok(serde_json::to_value(answer).unwrap_or(Value::Null));
        };
        let index = round
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let key = self
            .key
            .clone()
            .unwrap_or_else(|| format!("{capability}-{index}"));
        if let Some(answer) = round.answers.get(&key) {
            return Ok(answer.clone());
        }
        round
            .questions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, serde_json::json!({"method": method, "params": params}));
        Err(ToolError::Failed {
            message: "this call needs the client's input; it runs again with the answer".to_owned(),
            retryable: true,
            source: None,
        })
    }

    /// Asks the client's user for a `T` (`elicitation/create`, form mode),
    /// with `T`'s schema as the form: a struct of strings, numbers, booleans
    /// and string enums, as the protocol allows. A client that did not
    /// declare elicitation gets no request: the tool gets an error it can
    /// report.
    ///
    /// Both protocol eras: in `2025-11-25` a request to the client; in
    /// `2026-07-28` the question goes out as the call's
    /// `InputRequiredResult` (this returns an error the tool passes on with
    /// `?`), and the client calls again with the answer, which this then
    /// returns — so a tool asks before it changes anything.
    ///
    /// ```no_run
    /// # use toolbox_mcp::{Elicitation, McpPeer};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Confirm { proceed: bool }
    /// # async fn tool(client: McpPeer) -> Result<String, toolbox_core::ToolError> {
    /// match client.elicit::<Confirm>("Delete the file?").await? {
    ///     Elicitation::Accept(Confirm { proceed: true }) => Ok("deleted".into()),
    ///     _ => Ok("kept".into()),
    /// }
    /// # }
    /// ```
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        let schema = toolbox_core::schema::arguments_schema::<T>().map_err(ToolError::failed)?;
        match self.elicit_with_schema(message, schema).await? {
            Elicitation::Accept(content) => serde_json::from_value(content.clone())
                .map(Elicitation::Accept)
                .map_err(|e| {
                    ToolError::failed(format!(
                        "the client's answer does not fit the form: {e}; got {}",
                        toolbox_core::args::echo(&content.to_string())
                    ))
                }),
            Elicitation::Decline => Ok(Elicitation::Decline),
            Elicitation::Cancel => Ok(Elicitation::Cancel),
        }
    }

    /// Asks the client's user to fill `schema` (an object of primitive
    /// properties), returning the answer as JSON.
    pub async fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicitation<Value>, ToolError> {
        let mut schema = schema;
        if let Some(object) = schema.as_object_mut() {
            object.remove("title");
        }
        let answer = self
            .ask(
                "elicitation/create",
                serde_json::json!({"mode": "form", "message": message.into(), "requestedSchema": schema}),
            )
            .await?;
        Ok(match answer.get("action").and_then(Value::as_str) {
            Some("accept") => Elicitation::Accept(
                answer
                    .get("content")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            ),
            Some("decline") => Elicitation::Decline,
            _ => Elicitation::Cancel,
        })
    }

    /// Asks the client's model for a completion of `prompt`
    /// (`sampling/createMessage`), at most `max_tokens` long, and returns
    /// its text. A client that did not declare sampling gets no request.
    ///
    /// In `2026-07-28` (where server→client requests are gone) the
    /// question goes out as the call's `InputRequiredResult` and the tool
    /// runs again with the answer, as [`elicit`](Self::elicit) does.
    pub async fn sample(
        &self,
        prompt: impl Into<String>,
        max_tokens: u32,
    ) -> Result<Sample, ToolError> {
        let answer = self
            .ask(
                "sampling/createMessage",
                serde_json::json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt.into()}}],
                    "maxTokens": max_tokens,
                }),
            )
            .await?;
        let text = match answer.get("content") {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Some(block) => block
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            None => String::new(),
        };
        let field = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
        Ok(Sample {
            text,
            model: field("model").unwrap_or_default(),
            stop_reason: field("stopReason"),
        })
    }
}

/// The user's answer to [`McpPeer::elicit`].
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// The user filled the form.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the form.
    Cancel,
}

/// The client model's answer to [`McpPeer::sample`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The completion's text.
    pub text: String,
    /// The model that wrote it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, …).
    pub stop_reason: Option<String>,
}

fn unsupported(capability: &str) -> ToolError {
    ToolError::Failed {
        message: format!("the MCP client does not support {capability}, which this tool needs"),
        retryable: false,
        source: Some(format!("the client did not declare the `{capability}` capability").into()),
    }
}

fn transport(what: &str, error: rmcp::service::ServiceError) -> ToolError {
    ToolError::Transport {
        message: format!("the MCP client did not answer the {what} request"),
        source: Some(Box::new(error)),
    }
}

impl std::fmt::Debug for McpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPeer")
            .field("name", &self.name())
            .field("protocol_version", &self.protocol_version())
            .field("session_id", &self.session)
            .finish()
    }
}

impl FromContext for McpPeer {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<McpPeer>()
            .cloned()
            .ok_or_else(|| ToolError::Failed {
                message: "this tool can only be called over MCP".to_owned(),
                retryable: false,
                source: Some(
                    "the context has no `McpPeer`: the call did not come from an MCP client".into(),
                ),
            })
    }
}

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
        }
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

/// Progress reports of one served call, sent to its client in order as
/// `notifications/progress` under the client's token.
enum Report {
    Progress(Progress),
    /// Answered once every earlier report is on its way: the call's result
    /// never overtakes its progress.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Where one call's progress reports go. Clients attach a progress token
/// to most calls (rmcp's does to every one) and most tools report nothing,
/// so the task that forwards reports starts with the first report, not
/// with the call.
struct Reports {
    send: tokio::sync::mpsc::UnboundedSender<Report>,
    /// The forwarding task's parts until the first report starts it.
    idle: Mutex<Option<Forwarder>>,
}

struct Forwarder {
    receive: tokio::sync::mpsc::UnboundedReceiver<Report>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
    runtime: tokio::runtime::Handle,
}

impl Reports {
    fn report(&self, report: Report) {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(Forwarder {
            mut receive,
            peer,
            token,
            runtime,
        }) = idle
        {
            runtime.spawn(async move {
                while let Some(report) = receive.recv().await {
                    match report {
                        Report::Progress(report) => {
                            let mut param =
                                ProgressNotificationParam::new(token.clone(), report.progress);
                            param.total = report.total;
                            param.message = report.message;
                            let _ = peer.notify_progress(param).await;
                        }
                        Report::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
        }
        let _ = self.send.send(report);
    }

    /// Whether no report was made (so there is nothing to wait for).
    fn unused(&self) -> bool {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

fn progress_to(peer: Peer<RoleServer>, token: ProgressToken) -> (McpProgress, Arc<Reports>) {
    let (send, receive) = tokio::sync::mpsc::unbounded_channel::<Report>();
    let reports = Arc::new(Reports {
        send,
        idle: Mutex::new(Some(Forwarder {
            receive,
            peer,
            token,
            runtime: tokio::runtime::Handle::current(),
        })),
    });
    let sink = reports.clone();
    let progress = McpProgress::new(move |report| sink.report(Report::Progress(report)));
    (progress, reports)
}

/// Waits until the call's progress reports, if it made any, have been sent.
async fn flush(reports: Option<Arc<Reports>>) {
    if let Some(reports) = reports.filter(|r| !r.unused()) {
        let (done, sent) = tokio::sync::oneshot::channel();
        reports.report(Report::Flush(done));
        let _ = sent.await;
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
        info.server_info.name = self.name.clone();
        info.server_info.version = env!("CARGO_PKG_VERSION").to_owned();
        info.instructions = self.instructions.as_deref().map(str::to_owned);
        info
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
        let result = self
            .call_tool_inner(request, context, meta)
            .instrument(span.clone())
            .await;
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
    /// One `tools/call`, with `meta` the request's `_meta` merged over the
    /// context's (as [`call_tool`](ServerHandler::call_tool) made it).
    async fn call_tool_inner(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        meta: Map<String, Value>,
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
        let session_calls = match (self.state.sessions.get(), session_id(&context)) {
            (Some(sessions), Some(id)) => sessions.calls(id),
            _ => self.own_calls.clone(),
        };
        let _slot = CallSlot::take(&self.state, session_calls, &self.limits).map_err(|busy| {
            tracing::warn!(target: "toolbox::mcp", tool = %toolbox_core::args::echo(name), reason = %busy.message(), "a call was refused");
            ErrorData::new(
                rmcp::model::ErrorCode(-32000),
                busy.message(),
                Some(busy.data()),
            )
        })?;
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
                // The server's limit: the tool is told (its Context), its
                // future dropped (the lifecycle ends it as cancelled), the
                // client reads why.
                cancel.cancel();
                tracing::warn!(target: "toolbox::mcp", tool = %toolbox_core::args::echo(name), ?limit, "a call passed the server's limit");
                ToolResponse::error(ToolError::TimedOut { after: limit }.model_message())
            }
            () = self.state.deadline.cancelled() => {
                cancel.cancel();
                return Err(ErrorData::internal_error(
                    "the server is shutting down: the call was cancelled before it finished; call again",
                    None,
                ));
            }
        };
        flush(reports).await;
        if let Some(capability) = round
            .as_ref()
            .and_then(|r| r.missing.lock().unwrap_or_else(|p| p.into_inner()).clone())
        {
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
        let service = self.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok(())
    }
}

/// A box served over Streamable HTTP at `/mcp`; stops when dropped, or
/// gracefully with [`shutdown`](HttpServer::shutdown) or
/// [`run_until`](HttpServer::run_until).
pub struct HttpServer {
    address: std::net::SocketAddr,
    /// Ends rmcp's sessions and streams.
    stop: tokio_util::sync::CancellationToken,
    /// Stops accepting connections.
    accepting: tokio_util::sync::CancellationToken,
    state: Arc<ServeState>,
    sessions: Arc<Sessions>,
    manager: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    drain_delay: std::time::Duration,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// Where the server listens; the endpoint is `http://{address}/mcp`.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.address
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// How many sessions the endpoint holds now (never more than
    /// [`HttpOptions::max_sessions`]).
    pub async fn session_count(&self) -> usize {
        self.manager.sessions.read().await.len()
    }

    /// How many calls are in flight now.
    pub fn calls_in_flight(&self) -> usize {
        self.state.calls.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Shuts down gracefully within `deadline`: readiness turns "not
    /// ready" and new sessions are refused (503) at once; after the
    /// [drain delay](HttpOptions::drain_delay) new connections are refused;
    /// calls in flight finish, or at the deadline are cancelled with an
    /// error their clients read ("the server is shutting down …"), never a
    /// dropped connection; then the sessions end and the server task is
    /// awaited.
    pub async fn shutdown(mut self, deadline: std::time::Duration) {
        use std::sync::atomic::Ordering;
        let started = tokio::time::Instant::now();
        self.sessions.draining.store(true, Ordering::SeqCst);
        tracing::info!(target: "toolbox::mcp", ?deadline, calls = self.calls_in_flight(), "shutting down: not ready");
        tokio::time::sleep(self.drain_delay.min(deadline)).await;
        self.accepting.cancel();
        let state = self.state.clone();
        let drained = async move {
            loop {
                let idle = state.idle.notified();
                if state.calls.load(Ordering::SeqCst) == 0 {
                    break;
                }
                idle.await;
            }
        };
        tokio::pin!(drained);
        if tokio::time::timeout_at(started + deadline, &mut drained)
            .await
            .is_err()
        {
            tracing::warn!(target: "toolbox::mcp", calls = self.calls_in_flight(), "shutdown deadline: cancelling the calls in flight");
            self.state.deadline.cancel();
            // The cancelled calls answer their clients before the sessions end.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), &mut drained).await;
        }
        // Let the last answers leave before their streams close.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(std::time::Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        tracing::info!(target: "toolbox::mcp", "shut down");
    }

    /// Serves until `signal` resolves (`tokio::signal::ctrl_c()`, a
    /// SIGTERM stream's `recv()`), then [shuts down](HttpServer::shutdown)
    /// within `deadline`; resolves when the server is down.
    ///
    /// ```no_run
    /// # async fn run(server: toolbox_mcp::HttpServer) {
    /// server
    ///     .run_until(tokio::signal::ctrl_c(), std::time::Duration::from_secs(30))
    ///     .await;
    /// # }
    /// ```
    pub async fn run_until<F: std::future::Future>(self, signal: F, deadline: std::time::Duration) {
        let _ = signal.await;
        self.shutdown(deadline).await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.accepting.cancel();
        self.stop.cancel();
    }
}

/// Serves `toolbox` over Streamable HTTP on `address` (use `127.0.0.1:0`
/// for a free local port), as [`serve_http_with`] does with
/// [`HttpOptions::default`]: loopback `Host`s and `Origin`s only, at most
/// 1,000 sessions (100 per client; an idle one makes room), each ended
/// after 5 minutes without a request, readiness at `/healthz`. Sessions and
/// both protocol eras come from rmcp.
pub async fn serve_http<B: ToolBox + 'static>(
    server: McpServer<B>,
    address: impl tokio::net::ToSocketAddrs,
) -> std::io::Result<HttpServer> {
    serve_http_with(server, address, HttpOptions::default()).await
}

/// Serves `toolbox` over Streamable HTTP on `address`, admitting what
/// `options` say: the `Host`s and browser `Origin`s allowed (403 for
/// others), how many sessions in all and per client and for how long (an
/// idle session makes room at the cap; 429 past a client's share), and
/// with [`HttpOptions::bearer_auth`] only callers whose bearer token the
/// verifier accepts (401 with a `WWW-Authenticate` challenge naming the
/// protected-resource metadata, which is served at
/// `/.well-known/oauth-protected-resource[/mcp]`; 403 `insufficient_scope`).
/// The verified caller is in each call's `Context` as [`McpCaller`].
pub async fn serve_http_with<B: ToolBox + 'static>(
    mut server: McpServer<B>,
    address: impl tokio::net::ToSocketAddrs,
    options: HttpOptions,
) -> std::io::Result<HttpServer> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let accepting = tokio_util::sync::CancellationToken::new();
    let sessions = Arc::new(Sessions::default());
    // This endpoint's own counts and deadline (a server served twice
    // counts each endpoint apart).
    let state = Arc::new(ServeState::default());
    let _ = state.sessions.set(sessions.clone());
    server.state = state.clone();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.idle_timeout);
    let manager = Arc::new(manager);
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(options.max_body_bytes);
    if let Some(hosts) = &options.allowed_hosts {
        config.allowed_hosts = hosts.clone();
    }
    config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let service: StreamableHttpService<McpServer<B>, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), manager.clone(), config);
    let listener = tokio::net::TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    let mut options = options;
    if let Some(auth) = options.auth.as_mut().filter(|a| a.resource.is_empty()) {
        auth.resource = format!("http://{local}/mcp");
    }
    let metadata_url = options
        .auth
        .as_ref()
        .map(|auth| metadata_url(&auth.resource))
        .unwrap_or_default();
    let guard = Arc::new(Guard {
        manager: manager.clone(),
        max_sessions: options.max_sessions,
        max_per_client: options
            .max_sessions_per_client
            .unwrap_or((options.max_sessions / 10).max(options.max_sessions.min(16))),
        opening: std::sync::atomic::AtomicUsize::new(0),
        auth: options.auth.clone(),
        metadata_url,
        sessions: sessions.clone(),
        readiness: options.readiness_path.clone(),
    });
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(auth) = options.auth {
        let document = Arc::new(auth.metadata());
        let serve = move || {
            let document = document.clone();
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    document.to_string(),
                )
            }
        };
        router = router
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(serve.clone()),
            )
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                axum::routing::get(serve),
            );
    }
    let shutdown = accepting.clone();
    // Answers go out as soon as they are written: without TCP_NODELAY a
    // client that keeps its connection (httpx, reqwest's pool) waits for
    // its own delayed ACK (~40 ms) between the response's head and body.
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let admitted = Admitted { router, guard };
        let _ = axum::serve(
            listener,
            axum::ServiceExt::into_make_service_with_connect_info::<std::net::SocketAddr>(admitted),
        )
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await;
    });
    Ok(HttpServer {
        address: local,
        stop,
        accepting,
        state,
        sessions,
        manager,
        drain_delay: options.drain_delay,
        task: Some(task),
    })
}

/// What the endpoint checks before rmcp sees a request: the bearer token,
/// the session caps (all clients', each client's), readiness.
struct Guard {
    manager: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    max_sessions: usize,
    max_per_client: usize,
    /// Requests that may open a session and have not been answered yet:
    /// counted with the sessions, so concurrent ones cannot pass the cap.
    opening: std::sync::atomic::AtomicUsize,
    auth: Option<crate::http::BearerAuth>,
    metadata_url: String,
    sessions: Arc<Sessions>,
    readiness: Option<String>,
}

/// Where the protected-resource metadata of `resource` is (RFC 9728: the
/// well-known path inserted before the resource's path).
fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("http", resource));
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource")
    } else {
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource/{path}")
    }
}

/// The router behind the admission checks. A request that needs none
/// (no bearer tokens asked for, and not one that may open a session) goes
/// to the router as it is, with no box and no middleware; the others are
/// checked first ([`admit`]).
#[derive(Clone)]
struct Admitted {
    router: axum::Router,
    guard: Arc<Guard>,
}

/// An admitted request's answer: the router's own future, or the checks
/// and then the router's. (The router's future stays inline: boxing it is
/// what this type saves the common request.)
#[allow(clippy::large_enum_variant)]
enum Admission {
    Direct(axum::routing::future::RouteFuture<std::convert::Infallible>),
    Checked(
        std::pin::Pin<
            Box<
                dyn std::future::Future<
                        Output = Result<axum::response::Response, std::convert::Infallible>,
                    > + Send,
            >,
        >,
    ),
    Ready(Option<axum::response::Response>),
}

impl std::future::Future for Admission {
    type Output = Result<axum::response::Response, std::convert::Infallible>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        // Every variant is `Unpin` (the router's future is, the other is a box).
        match self.get_mut() {
            Admission::Direct(future) => std::pin::Pin::new(future).poll(cx),
            Admission::Checked(future) => future.as_mut().poll(cx),
            Admission::Ready(response) => std::task::Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(|| crate::http::refusal(500, None, "polled twice")))),
        }
    }
}

impl tower_service::Service<axum::extract::Request> for Admitted {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Admission;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // A router is always ready.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> Admission {
        use std::sync::atomic::Ordering;
        let path = request.uri().path();
        if self.guard.readiness.as_deref() == Some(path)
            && request.method() == axum::http::Method::GET
        {
            return Admission::Ready(Some(readiness(
                !self.guard.sessions.draining.load(Ordering::SeqCst),
            )));
        }
        let session = request.headers().get("mcp-session-id");
        if let Some(id) = session.and_then(|v| v.to_str().ok()) {
            self.guard.sessions.touch(id);
        }
        let opens_session = request.method() == axum::http::Method::POST && session.is_none();
        // The protected-resource metadata is public: it is how a client
        // learns where to get a token.
        let public = path.starts_with("/.well-known/");
        if public || (self.guard.auth.is_none() && !opens_session) {
            return Admission::Direct(self.router.call(request));
        }
        let (guard, router) = (self.guard.clone(), self.router.clone());
        Admission::Checked(Box::pin(async move {
            Ok(admit(guard, router, request, opens_session).await)
        }))
    }
}

/// The readiness route's answer.
fn readiness(ready: bool) -> axum::response::Response {
    let (status, text) = if ready {
        (axum::http::StatusCode::OK, r#"{"status":"ready"}"#)
    } else {
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            r#"{"status":"shutting down"}"#,
        )
    };
    let mut response = axum::response::Response::new(axum::body::Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Who a request is from, for the per-client cap: the verified subject,
/// else the peer's IP address.
fn client_of(request: &axum::extract::Request) -> String {
    if let Some(caller) = request.extensions().get::<McpCaller>() {
        return format!("subject:{}", caller.subject);
    }
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| format!("address:{}", info.0.ip()))
        .unwrap_or_default()
}

async fn admit(
    guard: Arc<Guard>,
    mut router: axum::Router,
    mut request: axum::extract::Request,
    opens_session: bool,
) -> axum::response::Response {
    use rmcp::transport::streamable_http_server::session::SessionManager as _;
    use std::sync::atomic::Ordering;
    use tower_service::Service as _;
    let mut next = |request| {
        let answer = router.call(request);
        async move {
            match answer.await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        }
    };
    if let Some(auth) = &guard.auth {
        let authorization = request
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match crate::http::authenticate(auth, &guard.metadata_url, authorization.as_deref()).await {
            Ok(caller) => {
                request.extensions_mut().insert(caller);
            }
            Err(refused) => return refused,
        }
    }
    if !opens_session {
        return next(request).await;
    }
    if guard.sessions.draining.load(Ordering::SeqCst) {
        return crate::http::refusal_after(
            503,
            1,
            "the server is shutting down; connect again (another instance will answer)",
        );
    }
    let client = client_of(&request);
    {
        let live = guard.manager.sessions.read().await;
        guard.sessions.retain_live(|id| live.contains_key(id));
    }
    if guard.sessions.held_by(&client) >= guard.max_per_client {
        tracing::warn!(target: "toolbox::mcp", client = %toolbox_core::args::echo(&client), max = guard.max_per_client, "a new session was refused: the client holds its share");
        return crate::http::refusal_after(
            429,
            30,
            &format!(
                "this client holds {} sessions, its share of this server; end one (DELETE) or reuse it",
                guard.max_per_client
            ),
        );
    }
    let opening = guard.opening.fetch_add(1, Ordering::SeqCst);
    while guard.manager.sessions.read().await.len() + opening >= guard.max_sessions {
        // Room is made: the idle session used longest ago ends (its next
        // request is answered 404, and its client opens a new one).
        let Some(id) = guard.sessions.evict_idle() else {
            guard.opening.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(target: "toolbox::mcp", max = guard.max_sessions, "a new session was refused: every session has a call in flight");
            return crate::http::refusal_after(
                503,
                5,
                "the server holds as many sessions as it may, each with a call in flight; try again shortly",
            );
        };
        tracing::info!(target: "toolbox::mcp", max = guard.max_sessions, "the idle session used longest ago was ended to make room");
        let _ = guard.manager.close_session(&Arc::from(id.as_str())).await;
    }
    let response = next(request).await;
    guard.opening.fetch_sub(1, Ordering::SeqCst);
    if let Some(id) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        guard.sessions.opened(id.to_owned(), client);
    }
    response
}
