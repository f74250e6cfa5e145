//! An MCP server as a tool box.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

// Roots and sampling are deprecated by SEP-2577 (the stateless era), but
// initialize-era servers still send them: they are delegated, not dropped.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest,
    MetaObject, RequestMetaObject, ServerResult,
};
use rmcp::service::{DynService, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use toolbox_core::args::normalize;
use toolbox_core::dispatch::{BoxFuture, DispatchFuture};
use toolbox_core::schema::Dialect;
use toolbox_core::spec::TaskSupport;
use toolbox_core::{Arguments, Context, ToolBox, ToolError, ToolSpecification};

use crate::convert::{from_result, from_tool, server_tasks};
use crate::progress::McpProgress;

mod apps;
mod cause;
mod connect;
mod handler;
mod journal;
mod pin;
mod resume;
mod servers;
mod shown;
mod tasks;

use cause::{handshake_error, service_error};
use handler::{token_key, Listeners, Listening, Watcher};

pub use crate::connection::HttpConnection;
pub use apps::ProxyTools;
pub(crate) use connect::Reconnects;
pub use connect::{McpConnect, Timeouts};
pub use journal::{FileTaskJournal, JournaledTask, TaskJournal};
use pin::Pins;
pub use pin::{fingerprint, Pin, PinChangeKind, PinEvent};
pub use servers::{
    system_message, Connected, McpServers, RemoteServer, ServerFailure, ServerSummary,
    INSTRUCTIONS_LIMIT,
};
pub use shown::shown_url;

/// The tools of one MCP server as a box. Each server tool is a tool with its
/// `inputSchema`, `outputSchema`, title, description and annotations (the
/// hints become toolbox's effects, so the turn runner's rules apply to
/// remote tools too), and its `task` the server's declared task support
/// ([`TaskSupport::Optional`] where the server declared the Tasks
/// extension, whose calls this box drives to their end). Arguments are
/// checked against the tool's
/// `inputSchema` before they are sent, so a model's mistake is answered at
/// once with its JSON path.
pub struct McpToolBox {
    peer: Peer<RoleClient>,
    service: Mutex<Option<Session>>,
    shared: Arc<Shared>,
    progress: Listeners,
    child: Option<u32>,
    meta: Option<MetaFn>,
    call_timeout: Duration,
    origin: String,
    name: String,
    watch: Option<tokio::task::AbortHandle>,
    /// The application's handler, answering a task's input requests.
    answer: handler::Answerer,
    /// Where the tasks of this box's calls are kept until their calls end.
    journal: Option<Arc<dyn TaskJournal>>,
}

impl std::fmt::Debug for McpToolBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolBox")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .field("child", &self.child)
            .finish_non_exhaustive()
    }
}

/// What the box, its handler and its reconnect watch share: the offered
/// tools and the pins they pass through.
pub(crate) struct Shared {
    tools: RwLock<Arc<Vec<Remote>>>,
    pins: Mutex<Pins>,
    list_timeout: Duration,
    /// When the listing goes stale: the server's `ttlMs` hint (the
    /// `2026-07-28` era's caching), at least [`MIN_TTL`] away.
    expires: Mutex<Option<tokio::time::Instant>>,
    /// The transport's sessions: which one the stored listing is of.
    reconnects: Reconnects,
}

/// The shortest time a listing is kept, whatever `ttlMs` says: a server
/// cannot make its clients list in a loop.
const MIN_TTL: Duration = Duration::from_secs(1);

/// How often the reconnect watch looks at a listing's expiry when it has
/// none to wait for.
const EXPIRY_CHECK: Duration = Duration::from_secs(30);

/// What [`McpConnect`] hands the box it makes.
pub(crate) struct Settings {
    pub(crate) pins: Pins,
    pub(crate) timeouts: Timeouts,
    pub(crate) origin: String,
    pub(crate) name: Option<String>,
    pub(crate) meta: Option<MetaFn>,
    pub(crate) child: Option<u32>,
    pub(crate) reconnects: Reconnects,
    /// Whether the client declares MCP Apps' extension.
    pub(crate) renders_apps: bool,
    pub(crate) journal: Option<Arc<dyn TaskJournal>>,
}

/// The running client session, whatever the application's handler.
pub(crate) type Session = RunningService<RoleClient, Box<dyn DynService<RoleClient>>>;

/// One server tool: its specification and the validator of its
/// `inputSchema` (none when the schema does not compile: the server checks),
/// shared so a new offer keeps the validators it already compiled.
#[derive(Clone)]
struct Remote {
    spec: ToolSpecification,
    validator: Option<Arc<jsonschema::Validator>>,
}
pub(crate) type MetaFn = Arc<dyn Fn(&Context) -> Map<String, Value> + Send + Sync>;

impl Shared {
    /// Lists the tools again, within the listing limit, through the pins.
    async fn relist(&self, peer: &Peer<RoleClient>) -> Result<(), ToolError> {
        let limit = self.list_timeout;
        let session = self.reconnects.session();
        let listed = tokio::time::timeout(limit, peer.list_all_tools_with_cache_hint())
            .await
            .map_err(|_| ToolError::Transport {
                message: format!("the MCP server did not list its tools within {limit:?}"),
                source: None,
            })?
            .map_err(service_error)?;
        let task = peer
            .peer_info()
            .map_or(TaskSupport::Never, |info| server_tasks(&info.capabilities));
        let saved = self.store(&listed.items, task);
        self.reconnects.listed(session);
        *self.expires.lock().unwrap_or_else(|p| p.into_inner()) = listed
            .ttl_ms
            .map(|ttl| tokio::time::Instant::now() + Duration::from_millis(ttl).max(MIN_TTL));
        saved
    }

    fn expires(&self) -> Option<tokio::time::Instant> {
        *self.expires.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A listing (each tool's task support `task`, its server's), through
    /// the pins, as the offered tools; the pins' events handed to the
    /// application once no lock is held. The listing is offered even when
    /// the pin file could not be written; that error is returned.
    fn store(&self, listed: &[rmcp::model::Tool], task: TaskSupport) -> Result<(), ToolError> {
        let specs: Vec<ToolSpecification> =
            listed.iter().map(|tool| from_tool(tool, task)).collect();
        let (offered, events, listener, saved) = {
            let mut pins = self.pins.lock().unwrap_or_else(|p| p.into_inner());
            let (offered, events) = pins.apply(specs);
            (offered, events, pins.listener(), pins.take_save_error())
        };
        let remotes: Vec<Remote> = offered.into_iter().map(Remote::new).collect();
        *self.tools.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(remotes);
        if let Some(listener) = listener {
            for event in &events {
                // The application's code: a panic there is its own, not
                // the listing's.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| listener(event)));
            }
        }
        saved
    }

    fn snapshot(&self) -> Arc<Vec<Remote>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Remote {
    fn new(spec: ToolSpecification) -> Self {
        let validator = jsonschema::validator_for(&spec.parameters)
            .ok()
            .map(Arc::new);
        Remote { spec, validator }
    }
}

/// Checks arguments against a tool's `inputSchema` with `jsonschema` (the
/// verdict), and says what is wrong in the words and path format of a
/// local tool: toolbox's own checker's reason where it sees the same
/// fault, else the validator's, at the JSON path of the first value that
/// does not fit.
fn check(remote: &Remote, arguments: &Value) -> Result<(), ToolError> {
    let Some(validator) = &remote.validator else {
        return Ok(());
    };
    let Err(error) = validator.validate(arguments) else {
        return Ok(());
    };
    toolbox_core::schema::check_arguments(&remote.spec.parameters, arguments)?;
    let pointer = error.instance_path().to_string();
    let reason = match error.kind() {
        jsonschema::error::ValidationErrorKind::Required { property } => format!(
            "missing field `{}`",
            toolbox_core::args::echo(property.as_str().unwrap_or_default())
        ),
        _ => toolbox_core::args::echo(&error.to_string()).into_owned(),
    };
    Err(ToolError::invalid_arguments(
        toolbox_core::args::JsonPath::from_pointer(&pointer).to_string(),
        reason,
    ))
}

impl McpToolBox {
    /// Runs the handshake over `open`, lists the tools through the pins,
    /// and watches for reconnects.
    pub(crate) async fn start<H: ClientHandler>(
        open: impl FnOnce(Box<dyn DynService<RoleClient>>) -> connect::Opened,
        handler: H,
        settings: Settings,
    ) -> Result<Self, ToolError> {
        let Settings {
            mut pins,
            timeouts,
            origin,
            name,
            meta,
            child,
            reconnects,
            renders_apps,
            journal,
        } = settings;
        let progress: Listeners = Arc::default();
        // The server's name is known after the handshake; the pins name it
        // in their events from the first listing on.
        pins.server = name.clone().unwrap_or_default();
        let shared = Arc::new(Shared {
            tools: RwLock::default(),
            pins: Mutex::new(pins),
            list_timeout: timeouts.list,
            expires: Mutex::new(None),
            reconnects: reconnects.clone(),
        });
        let app = Arc::new(handler);
        let answer = handler::answerer(app.clone());
        let watcher = Watcher {
            shared: shared.clone(),
            progress: progress.clone(),
            app,
            renders_apps,
        };
        let service = open(watcher.into_dyn())
            .await
            .map_err(|e| handshake_error(e, &origin))?;
        let peer = service.peer().clone();
        let announced = peer
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()))
            .unwrap_or_default();
        let name = name.unwrap_or(announced);
        {
            let mut pins = shared.pins.lock().unwrap_or_else(|p| p.into_inner());
            pins.server = name.clone();
        }
        shared.relist(&peer).await?;
        let watch = {
            let shared = Arc::downgrade(&shared);
            let peer = peer.clone();
            let signal = reconnects.signal.clone();
            tokio::spawn(async move {
                loop {
                    let expires = match shared.upgrade() {
                        Some(shared) => shared.expires(),
                        None => break,
                    };
                    let wake = expires
                        .unwrap_or_else(|| tokio::time::Instant::now() + EXPIRY_CHECK);
                    tokio::select! {
                        _ = signal.notified() => {}
                        _ = tokio::time::sleep_until(wake) => {
                            if expires.is_none() {
                                continue;
                            }
                        }
                    }
                    let Some(shared) = shared.upgrade() else { break };
                    match shared.relist(&peer).await {
                        Ok(()) => tracing::info!(target: "toolbox::mcp", "MCP tools listed again (a reconnect, or the listing expired)"),
                        Err(error) => tracing::warn!(target: "toolbox::mcp", error = %error.report(), "could not list the MCP tools again after a reconnect"),
                    }
                }
            })
            .abort_handle()
        };
        Ok(McpToolBox {
            peer,
            service: Mutex::new(Some(service)),
            shared,
            progress,
            child,
            meta,
            call_timeout: timeouts.call,
            origin,
            name,
            watch: Some(watch),
            answer,
            journal,
        })
    }

    /// The protocol version negotiated with the server, and the server's
    /// name, as it announced them.
    pub fn server_info(&self) -> Option<(String, String)> {
        let info = self.peer.peer_info()?;
        let value = serde_json::to_value(&*info).ok()?;
        let version = value.get("protocolVersion")?.as_str()?.to_owned();
        let name = value
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Some((version, name))
    }

    /// The server's name in this program: the one given to
    /// [`McpConnect::name`], else the one it announced.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version the server announced (`serverInfo.version`).
    pub fn version(&self) -> Option<String> {
        Some(self.peer.peer_info()?.server_info.as_ref()?.version.clone())
    }

    /// Where the server is: its URL as texts show it (scheme, host, port
    /// and path: no credentials, no query), or the command that started
    /// it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The server's instructions (the initialize result's
    /// `instructions`), meant for the model's system prompt. They are the
    /// server's words, not the application's: see
    /// [`McpServers::system_message`](crate::McpServers::system_message)
    /// for a bounded, marked text.
    pub fn instructions(&self) -> Option<String> {
        self.peer.peer_info()?.instructions.clone()
    }

    /// The process id of the server's child process, when this box started it.
    pub fn child_id(&self) -> Option<u32> {
        self.child
    }

    /// Lists the server's tools again, through the pins.
    pub async fn refresh(&self) -> Result<(), ToolError> {
        self.shared.relist(&self.peer).await
    }

    /// The tools held by the pins (changed or new since they were
    /// approved), each with what changed. Held tools are neither listed
    /// nor callable.
    pub fn held(&self) -> Vec<PinEvent> {
        self.shared
            .pins
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .held()
    }

    /// Approves a held tool as the server lists it now: it becomes the
    /// baseline (written to the pin file, when there is one) and is
    /// offered. Returns the change approved; an error naming the held
    /// tools when `tool` is not one of them, or naming the pin file when
    /// it cannot be written (the tool stays held).
    pub fn approve(&self, tool: &str) -> Result<PinEvent, ToolError> {
        let approved = self
            .shared
            .pins
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .approve(tool);
        let (spec, event) = match approved {
            Some(result) => result?,
            None => return Err(not_held(tool, &self.held(), "")),
        };
        let mut tools = self.shared.tools.write().unwrap_or_else(|p| p.into_inner());
        let mut next: Vec<Remote> = tools.iter().cloned().collect();
        next.retain(|r| r.spec.name != spec.name);
        next.push(Remote::new(spec));
        *tools = Arc::new(next);
        Ok(event)
    }

    /// Approves every held tool; the changes approved.
    pub fn approve_all(&self) -> Result<Vec<PinEvent>, ToolError> {
        self.held()
            .into_iter()
            .map(|event| self.approve(&event.tool))
            .collect()
    }

    /// The approved surface (the pins' baseline), sorted by name, in the
    /// form a surface lock keeps.
    pub fn pinned(&self) -> Vec<ToolSpecification> {
        self.shared
            .pins
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .baseline()
    }

    /// Sends chosen values of each call's [`Context`] to the server in the
    /// request's `_meta` (a user id, a trace id: the application decides).
    pub fn forward_meta(
        mut self,
        choose: impl Fn(&Context) -> Map<String, Value> + Send + Sync + 'static,
    ) -> Self {
        self.meta = Some(Arc::new(choose));
        self
    }

    /// Calls a tool with its progress routed to `listener`.
    async fn call_listening(
        &self,
        tool: &str,
        params: CallToolRequestParams,
        ctx: &Context,
        listener: McpProgress,
    ) -> Result<CallToolResult, ToolError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_error)?;
        let key = token_key(&handle.progress_token);
        // The server's notifications reach the listener through
        // `CallProgress`, where a task's status messages join them.
        let progress = tasks::CallProgress::new(listener);
        let notifications = progress.notifications();
        let early = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .listen(&key, notifications.clone());
        for report in early {
            notifications.send(report);
        }
        let mut listening = Listening {
            progress: &self.progress,
            key,
            peer: &self.peer,
            pending: Some(handle.id.clone()),
        };
        let answer = handle.await_response().await;
        listening.pending = None;
        // Let rmcp's notification tasks queued before the answer run first,
        // so reports usually arrive before the result.
        tokio::task::yield_now().await;
        match answer.map_err(service_error)? {
            ServerResult::CallToolResult(result) => Ok(result),
            ServerResult::CreateTaskResult(created) => {
                let tracking = self.track(tool, ctx, &created.task).await;
                tasks::drive(
                    &self.peer,
                    &self.answer,
                    tool,
                    created.task,
                    Some(&progress),
                    tracking,
                )
                .await
            }
            _ => Err(ToolError::Transport {
                message: "the MCP server answered a tool call with something else".to_owned(),
                source: None,
            }),
        }
    }

    fn snapshot(&self) -> Arc<Vec<Remote>> {
        self.shared.snapshot()
    }
}

impl Drop for McpToolBox {
    fn drop(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.abort();
        }
    }
}

/// The error of an approval of a tool that is not held: what is held
/// (under `prefix`, the name the caller uses).
pub(crate) fn not_held(tool: &str, held: &[PinEvent], prefix: &str) -> ToolError {
    let list: Vec<String> = held
        .iter()
        .map(|e| format!("`{prefix}{}`", e.tool))
        .collect();
    ToolError::configuration(format!(
        "no held tool is named `{}`; {}",
        toolbox_core::args::echo(tool),
        if list.is_empty() {
            "nothing is held".to_owned()
        } else {
            format!("held: {}", list.join(", "))
        }
    ))
}

/// A call to a held tool, named as the caller called it: the model reads
/// which kind of change, never the server's new text; the operator's
/// report has the whole event.
pub(crate) fn held_error(called: &str, event: &PinEvent) -> ToolError {
    ToolError::Failed {
        message: format!(
            "the tool `{}` is held: {}, and the application has not approved the change; do not retry it",
            called,
            event.reason()
        ),
        retryable: false,
        source: Some(event.to_string().into()),
    }
}

impl ToolBox for McpToolBox {
    /// The tools a model may be offered: an MCP Apps tool whose
    /// visibility leaves the model out is for its view only
    /// ([`app_tools`](McpToolBox::app_tools)).
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.snapshot()
            .iter()
            .filter(|r| r.spec.for_model())
            .map(|r| r.spec.clone())
            .collect()
    }

    fn specification(
        &self,
        name: &str,
        _: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        self.snapshot()
            .iter()
            .find(|r| r.spec.name == name && r.spec.for_model())
            .map(|r| std::borrow::Cow::Owned(r.spec.clone()))
    }

    /// The arguments as the call will send them ("absent" `null`s
    /// dropped), checked by the `jsonschema` validator the box holds for
    /// the tool's `inputSchema`: the approval hook sees the verdict the
    /// call would get.
    fn check(&self, name: &str, arguments: Arguments<'_>, _: &Context) -> Result<(), ToolError> {
        let tools = self.snapshot();
        let index = self.find(name, &tools, apps::Caller::Model)?;
        prepared(&tools[index], name, arguments).map(drop)
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        self.dispatch_as(name, arguments, ctx, apps::Caller::Model)
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            if let Some(watch) = &self.watch {
                watch.abort();
            }
            let service = self
                .service
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(service) = service {
                service.cancel().await.map_err(|e| ToolError::Transport {
                    message: "the MCP session did not end cleanly".to_owned(),
                    source: Some(Box::new(e)),
                })?;
            }
            Ok(())
        })
    }
}

impl McpToolBox {
    /// The index of `name` among `tools` if `caller` may call it; else why
    /// not (held, unknown, or not visible to that caller).
    fn find(&self, name: &str, tools: &[Remote], caller: apps::Caller) -> Result<usize, ToolError> {
        let Some(index) = tools.iter().position(|r| r.spec.name == name) else {
            return Err(self.not_offered(name, tools));
        };
        match apps::refusal(&tools[index].spec, caller, tools.iter().map(|r| &r.spec)) {
            Some(refused) => Err(refused),
            None => Ok(index),
        }
    }

    /// A call by the model or by an MCP Apps view.
    fn dispatch_as<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
        caller: apps::Caller,
    ) -> DispatchFuture<'a> {
        let tools = self.snapshot();
        let index = match self.find(name, &tools, caller) {
            Ok(index) => index,
            Err(error) => return DispatchFuture::ready(Err(error)),
        };
        let span = crate::telemetry::client_span(name, &self.origin);
        let started = std::time::Instant::now();
        let call = self.remote_call(name, arguments, ctx, tools, index, span.clone());
        DispatchFuture::new(async move {
            use tracing::Instrument as _;
            let result = call.instrument(span.clone()).await;
            let error = match &result {
                Ok(response) if response.is_error => Some("tool_error"),
                Ok(_) => None,
                Err(error) => Some(error.kind().as_str()),
            };
            if let Some(kind) = error {
                crate::telemetry::failed(&span, kind);
            }
            crate::telemetry::client_operation(started.elapsed(), name, error, &self.origin);
            result
        })
    }
}

/// The arguments as they are sent: a `null` for an optional property the
/// server's schema does not let be `null` (OpenAI strict mode's "absent")
/// dropped, then checked against the tool's `inputSchema`.
fn prepared(remote: &Remote, name: &str, arguments: Arguments<'_>) -> Result<Value, ToolError> {
    let mut arguments = arguments.to_value()?.into_owned();
    for change in normalize(&remote.spec.parameters, Dialect::Mcp, &mut arguments) {
        tracing::debug!(target: "toolbox::mcp", tool = name, %change, "argument normalized");
    }
    check(remote, &arguments)?;
    Ok(arguments)
}

impl McpToolBox {
    /// Why `name` is not among the offered tools: held by a pin until the
    /// application approves its change, or unknown (the closest names
    /// suggested).
    fn not_offered(&self, name: &str, tools: &[Remote]) -> ToolError {
        let pins = self.shared.pins.lock().unwrap_or_else(|p| p.into_inner());
        match pins.held_reason(name) {
            Some(event) => held_error(name, event),
            None => ToolError::unknown_tool(
                name,
                tools
                    .iter()
                    .filter(|r| r.spec.for_model())
                    .map(|r| r.spec.name.as_str()),
            ),
        }
    }

    /// One `tools/call` to the server, its arguments checked first. A call
    /// the transport kept because the session was made again (a restart)
    /// waits for the new listing to pass the pins, then goes out once more
    /// only if the tool is still offered unchanged; a held tool is answered
    /// as held.
    async fn remote_call(
        &self,
        name: &str,
        arguments: Arguments<'_>,
        ctx: &Context,
        tools: Arc<Vec<Remote>>,
        index: usize,
        span: tracing::Span,
    ) -> Result<toolbox_core::ToolResponse, ToolError> {
        let arguments = prepared(&tools[index], name, arguments)?;
        let limit = self.call_timeout;
        let reconnects = &self.shared.reconnects;
        let call = async {
            let session = reconnects.session();
            let first = self.send(name, arguments.clone(), ctx, &span).await;
            // Kept by the transport (a new session not listed yet), or lost
            // to a new session: listed again, then sent again. Another
            // task may have listed meanwhile; listing twice is harmless.
            let kept = matches!(&first, Err(ToolError::Transport { message, .. }) if message.contains(connect::KEPT));
            if !kept
                && (!matches!(first, Err(ToolError::Transport { .. }))
                    || (reconnects.session() == session && !reconnects.stale()))
            {
                return first;
            }
            if let Err(error) = self.shared.relist(&self.peer).await {
                if error.kind() != toolbox_core::ToolErrorKind::Configuration {
                    return Err(error);
                }
                tracing::warn!(target: "toolbox::mcp", error = %error.report(), "the pin file was not written");
            }
            let tools = self.snapshot();
            // Offered now means the new session's listing passed the pins;
            // its schema may have changed (where the pins let it), so the
            // arguments are checked again.
            match tools.iter().find(|r| r.spec.name == name) {
                Some(remote) => {
                    check(remote, &arguments)?;
                    self.send(name, arguments, ctx, &span).await
                }
                None => Err(self.not_offered(name, &tools)),
            }
        };
        tokio::time::timeout(limit, call)
            .await
            .map_err(|_| ToolError::TimedOut { after: limit })?
    }

    /// Sends one `tools/call` with `arguments`, already checked.
    async fn send(
        &self,
        name: &str,
        arguments: Value,
        ctx: &Context,
        span: &tracing::Span,
    ) -> Result<toolbox_core::ToolResponse, ToolError> {
        let map = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = Some(map);
        let mut meta = match &self.meta {
            Some(choose) => choose(ctx),
            None => Map::new(),
        };
        // The server continues this call's trace (W3C trace context).
        if let Some(parent) = crate::telemetry::traceparent(span) {
            meta.entry("traceparent").or_insert(Value::String(parent));
        }
        if !meta.is_empty() {
            params.meta = Some(RequestMetaObject(MetaObject(meta)));
        }
        // A caller that listens for progress gets the server's reports.
        // Past the limit the request's future is dropped, which tells the
        // server (`notifications/cancelled`); the session goes on.
        let result = match ctx.extension::<McpProgress>() {
            Some(listener) if listener.is_wanted() => {
                self.call_listening(name, params, ctx, listener.clone()).await
            }
            _ => match self.peer.call_tool_once(params).await.map_err(service_error)? {
                CallToolResponse::Complete(result) => Ok(result),
                CallToolResponse::Task(created) => {
                    let tracking = self.track(name, ctx, &created.task).await;
                    tasks::drive(&self.peer, &self.answer, name, created.task, None, tracking)
                        .await
                }
                // This client handshakes with `initialize`: a server of
                // that era asks for input with requests of its own.
                _ => Err(ToolError::failed(format!(
                    "the MCP server answered the call of `{name}` with a request for input (input_required), which this client does not answer in a call"
                ))),
            },
        }?;
        from_result(&result)
    }
}
