//! An MCP server as a tool box.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

// Roots and sampling are deprecated by SEP-2577 (the stateless era), but
// initialize-era servers still send them: they are delegated, not dropped.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientConfig, ClientRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData, ListRootsResult, MetaObject, NumberOrString,
    ProgressNotificationParam, ProgressToken, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{
    DynService, NotificationContext, PeerRequestOptions, RequestContext, RunningService,
    ServiceError,
};
use rmcp::transport::{IntoTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use toolbox_core::args::normalize;
use toolbox_core::provider::Dialect;
use toolbox_core::{
    Arguments, BoxFuture, Context, DispatchFuture, ToolBox, ToolError, ToolSpecification,
};

use crate::convert::{from_result, from_tool};
use crate::progress::{McpProgress, Progress};

/// The tools of one MCP server as a box. Each server tool is a tool with its
/// `inputSchema`, `outputSchema`, title, description and annotations (the
/// hints become toolbox's effects, so the turn runner's rules apply to
/// remote tools too); tools a plain call cannot use (`taskSupport:
/// "required"`) are not offered. Arguments are checked against the tool's
/// `inputSchema` before they are sent, so a model's mistake is answered at
/// once with its JSON path.
pub struct McpToolBox {
    peer: Peer<RoleClient>,
    service: Mutex<Option<Session>>,
    tools: Tools,
    progress: Listeners,
    child: Option<u32>,
    meta: Option<MetaFn>,
}

type Tools = Arc<RwLock<Arc<Vec<Remote>>>>;

/// The running client session, whatever the application's handler.
type Session = RunningService<RoleClient, Box<dyn DynService<RoleClient>>>;

/// The calls waiting for progress, by the token rmcp sent with them.
type Listeners = Arc<Mutex<Routes>>;

/// Where progress goes. rmcp picks each request's token and the server may
/// report before the caller has learnt it, so reports for a token nobody
/// listens to yet wait in a small stash (the oldest go first when full).
/// rmcp also hands each notification to a task of its own, so a call's last
/// report can be handled after its result: the listeners of calls that just
/// finished are kept a while, and late reports still reach them.
#[derive(Default)]
struct Routes {
    listeners: HashMap<String, McpProgress>,
    finished: std::collections::VecDeque<(String, McpProgress)>,
    early: std::collections::VecDeque<(String, Progress)>,
}

/// How many early reports wait for their listener, and how many finished
/// calls' listeners still take late reports.
const EARLY_REPORTS: usize = 256;
const FINISHED_LISTENERS: usize = 64;

impl Routes {
    fn deliver(&mut self, key: String, report: Progress) -> Option<(McpProgress, Progress)> {
        let finished = self
            .finished
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, listener)| listener);
        match self.listeners.get(&key).or(finished) {
            Some(listener) => Some((listener.clone(), report)),
            None => {
                if self.early.len() == EARLY_REPORTS {
                    self.early.pop_front();
                }
                self.early.push_back((key, report));
                None
            }
        }
    }

    /// The call under `key` has its result; late reports still reach it.
    fn finish(&mut self, key: String) {
        if let Some(listener) = self.listeners.remove(&key) {
            if self.finished.len() == FINISHED_LISTENERS {
                self.finished.pop_front();
            }
            self.finished.push_back((key, listener));
        }
    }

    fn listen(&mut self, key: &str, listener: McpProgress) -> Vec<Progress> {
        self.listeners.insert(key.to_owned(), listener);
        let mut early = Vec::new();
        self.early.retain(|(k, report)| {
            if k == key {
                early.push(report.clone());
                false
            } else {
                true
            }
        });
        early
    }
}

/// How [`McpToolBox::connect_http_using`] reaches an endpoint: extra
/// headers, and roots to trust beside the system's.
#[derive(Clone, Debug, Default)]
pub struct HttpConnection {
    headers: Vec<(String, String)>,
    roots: Vec<Vec<u8>>,
    reuse: bool,
}

impl HttpConnection {
    /// Sends `name: value` with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer {token}`.
    pub fn bearer(self, token: impl std::fmt::Display) -> Self {
        self.header("Authorization", format!("Bearer {token}"))
    }

    /// Keeps connections open between requests (off by default, as in
    /// rmcp's own client). A server that does not set `TCP_NODELAY` (a
    /// plain `axum::serve`, rmcp's examples) answers a kept connection
    /// only after the client's delayed ACK, ~40 ms a call; a new
    /// connection per request costs ~0.2 ms on loopback. Turn it on for
    /// servers that set it (toolbox's `serve_http` does): a call then
    /// takes ~25% less than on a new connection, and an https one skips
    /// the TLS handshake.
    pub fn reuse_connections(mut self, reuse: bool) -> Self {
        self.reuse = reuse;
        self
    }

    /// Trusts the root certificate(s) in `pem` beside the system's.
    pub fn trust_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots.push(pem.into());
        self
    }

    /// The headers, checked.
    pub(crate) fn header_map(
        &self,
    ) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, ToolError> {
        let mut map = HashMap::new();
        for (name, value) in &self.headers {
            let bad = |what: &str| ToolError::Transport {
                message: format!("the header `{name}` has an invalid {what}"),
                source: None,
            };
            let header_name: reqwest::header::HeaderName = name.parse().map_err(|_| bad("name"))?;
            let header_value: reqwest::header::HeaderValue =
                value.parse().map_err(|_| bad("value"))?;
            map.insert(header_name, header_value);
        }
        Ok(map)
    }

    /// The HTTP client: rustls with the ring provider (unless the program
    /// installed one), the system's roots and these.
    pub(crate) fn client(&self) -> Result<reqwest::Client, ToolError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut client = reqwest::Client::builder();
        if !self.reuse {
            client = client.pool_max_idle_per_host(0);
        }
        for pem in &self.roots {
            use rustls::pki_types::pem::PemObject;
            let not_pem =
                |source: Option<Box<dyn std::error::Error + Send + Sync>>| ToolError::Transport {
                    message: "a trusted root is not a PEM certificate".to_owned(),
                    source,
                };
            let certificates = rustls::pki_types::CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| not_pem(Some(Box::new(e))))?;
            if certificates.is_empty() {
                return Err(not_pem(None));
            }
            for der in certificates {
                let certificate = reqwest::Certificate::from_der(der.as_ref())
                    .map_err(|e| not_pem(Some(Box::new(e))))?;
                client = client.add_root_certificate(certificate);
            }
        }
        client.build().map_err(|e| ToolError::Transport {
            message: "the HTTP client could not be built".to_owned(),
            source: Some(Box::new(e)),
        })
    }
}

/// One server tool: its specification and the validator of its
/// `inputSchema` (none when the schema does not compile: the server checks).
struct Remote {
    spec: ToolSpecification,
    validator: Option<jsonschema::Validator>,
}
type MetaFn = Arc<dyn Fn(&Context) -> Map<String, Value> + Send + Sync>;

/// The client side's handler: refreshes the tool list when the server says
/// it changed, forwards progress to the call that asked for it, and hands
/// server→client requests (roots, sampling, elicitation) to the
/// application's rmcp [`ClientHandler`] (`()` by default: no roots, an
/// error for sampling, a declined elicitation), so none is left hanging.
struct Watcher<H> {
    tools: Tools,
    progress: Listeners,
    app: H,
}

#[allow(deprecated)]
impl<H: ClientHandler> ClientHandler for Watcher<H> {
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        match context.peer.list_all_tools().await {
            Ok(tools) => store(&self.tools, &tools),
            Err(error) => tracing_warn(&error),
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let report = Progress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        let delivery = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .deliver(token_key(&params.progress_token), report);
        if let Some((listener, report)) = delivery {
            listener.send(report);
        }
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.app.list_roots(context).await
    }

    /// The server's log messages go to `tracing` (target
    /// `toolbox::mcp::server_log`, at the message's level) and to the
    /// application's handler.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        use rmcp::model::LoggingLevel;
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        match params.level {
            LoggingLevel::Debug => {
                tracing::debug!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
            LoggingLevel::Warning => {
                tracing::warn!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
            _ => {
                tracing::error!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
        }
        self.app.on_logging_message(params, context).await;
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.app.create_message(params, context).await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let defaults = schema_defaults(&request);
        let mut result = self.app.create_elicitation(request, context).await?;
        // SEP-1034: an accepted form's omitted fields take the requested
        // schema's defaults.
        if result.action == rmcp::model::ElicitationAction::Accept && !defaults.is_empty() {
            let mut content = match result.content.take() {
                Some(Value::Object(content)) => content,
                _ => Map::new(),
            };
            for (name, default) in defaults {
                content.entry(name).or_insert(default);
            }
            result.content = Some(Value::Object(content));
        }
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = self.app.get_info();
        // rmcp's defaults name the client `rmcp` and ask for a version that
        // has no `initialize`: this handshake is `initialize`, so it asks
        // for the newest version that has one, and the client is toolbox
        // unless the application named it.
        if !info.protocol_version.has_initialize() {
            info.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        }
        if info.client_info.name == "rmcp" {
            info.client_info.name = "toolbox".to_owned();
            info.client_info.version = env!("CARGO_PKG_VERSION").to_owned();
        }
        info
    }
}

/// The `default` of each property of an elicitation's form.
fn schema_defaults(request: &ElicitRequestParams) -> Map<String, Value> {
    let Ok(request) = serde_json::to_value(request) else {
        return Map::new();
    };
    request
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// A call listening for its progress: unregisters when the call ends, and
/// tells the server a call dropped before its answer is abandoned
/// (`notifications/cancelled`), as rmcp's own `call_tool` does.
struct Listening<'a> {
    progress: &'a Listeners,
    key: String,
    peer: &'a Peer<RoleClient>,
    pending: Option<RequestId>,
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finish(std::mem::take(&mut self.key));
        if let (Some(id), Ok(runtime)) =
            (self.pending.take(), tokio::runtime::Handle::try_current())
        {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let param = CancelledNotificationParam::new(
                    Some(id),
                    Some("request abandoned by the caller".to_owned()),
                );
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

fn tracing_warn(error: &ServiceError) {
    tracing::warn!(%error, "could not refresh the MCP tool list");
}

fn store(tools: &Tools, listed: &[rmcp::model::Tool]) {
    let remotes: Vec<Remote> = listed
        .iter()
        .map(|tool| {
            let spec = from_tool(tool);
            let validator = jsonschema::validator_for(&spec.parameters).ok();
            Remote { spec, validator }
        })
        .collect();
    *tools.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(remotes);
}

/// Checks arguments against a tool's `inputSchema` with `jsonschema`,
/// naming the JSON path of the first value that does not fit.
fn check(remote: &Remote, arguments: &Value) -> Result<(), ToolError> {
    let Some(validator) = &remote.validator else {
        return Ok(());
    };
    match validator.validate(arguments) {
        Ok(()) => Ok(()),
        Err(error) => {
            let pointer = error.instance_path().to_string();
            Err(ToolError::invalid_arguments(
                toolbox_core::args::JsonPath::from_pointer(&pointer).to_string(),
                toolbox_core::args::echo(&error.to_string()).into_owned(),
            ))
        }
    }
}

impl McpToolBox {
    /// Connects over any rmcp client transport (a child process, a stream
    /// pair, Streamable HTTP) and lists the server's tools.
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, ToolError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        McpToolBox::connect_with(transport, ()).await
    }

    /// Connects like [`connect`](McpToolBox::connect), answering the
    /// server's requests to the client (`roots/list`, sampling,
    /// elicitation) with the application's rmcp [`ClientHandler`], whose
    /// `get_info` also announces the client's name and capabilities.
    pub async fn connect_with<T, E, A>(
        transport: T,
        handler: impl ClientHandler,
    ) -> Result<Self, ToolError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let tools: Tools = Arc::default();
        let progress: Listeners = Arc::default();
        let watcher = Watcher {
            tools: tools.clone(),
            progress: progress.clone(),
            app: handler,
        };
        let service = watcher
            .into_dyn()
            .serve(transport)
            .await
            .map_err(handshake_error)?;
        let peer = service.peer().clone();
        let toolbox = McpToolBox {
            peer,
            service: Mutex::new(Some(service)),
            tools,
            progress,
            child: None,
            meta: None,
        };
        toolbox.refresh().await?;
        Ok(toolbox)
    }

    /// Starts `command` as a child process speaking MCP over stdio and
    /// connects to it. [`close`](ToolBox::close) ends the session and the
    /// child.
    pub async fn spawn(command: tokio::process::Command) -> Result<Self, ToolError> {
        let transport = TokioChildProcess::new(command).map_err(|e| ToolError::Transport {
            message: "the MCP server could not be started".to_owned(),
            source: Some(Box::new(e)),
        })?;
        let child = transport.id();
        let mut toolbox = McpToolBox::connect(transport).await?;
        toolbox.child = child;
        Ok(toolbox)
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

    /// The process id of the server's child process, when this box started it.
    pub fn child_id(&self) -> Option<u32> {
        self.child
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`),
    /// with extra headers (a bearer token: `("Authorization", "Bearer …")`).
    pub async fn connect_http(
        url: &str,
        headers: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ToolError> {
        McpToolBox::connect_http_with(url, headers, ()).await
    }

    /// Connects like [`connect_http`](McpToolBox::connect_http), answering
    /// the server's requests to the client with the application's rmcp
    /// [`ClientHandler`], as [`connect_with`](McpToolBox::connect_with) does.
    pub async fn connect_http_with(
        url: &str,
        headers: impl IntoIterator<Item = (String, String)>,
        handler: impl ClientHandler,
    ) -> Result<Self, ToolError> {
        let mut connection = HttpConnection::default();
        for (name, value) in headers {
            connection = connection.header(name, value);
        }
        McpToolBox::connect_http_using(url, connection, handler).await
    }

    /// Connects to a Streamable HTTP endpoint, `http://` or `https://`, as
    /// `connection` says: extra headers, and roots to trust beside the
    /// system's (a private CA). TLS is rustls; a certificate that is not
    /// trusted ends the handshake with a transport error.
    pub async fn connect_http_using(
        url: &str,
        connection: HttpConnection,
        handler: impl ClientHandler,
    ) -> Result<Self, ToolError> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        use rmcp::transport::StreamableHttpClientTransport;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        config.custom_headers = connection.header_map()?;
        let client = connection.client()?;
        McpToolBox::connect_with(
            StreamableHttpClientTransport::with_client(client, config),
            handler,
        )
        .await
    }

    /// Lists the server's tools again (after `notifications/tools/list_changed`).
    pub async fn refresh(&self) -> Result<(), ToolError> {
        let tools = self.peer.list_all_tools().await.map_err(service_error)?;
        store(&self.tools, &tools);
        Ok(())
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
        params: CallToolRequestParams,
        listener: McpProgress,
    ) -> Result<CallToolResult, ToolError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_error)?;
        let key = token_key(&handle.progress_token);
        let early = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .listen(&key, listener.clone());
        for report in early {
            listener.send(report);
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
            _ => Err(ToolError::Transport {
                message: "the MCP server answered a tool call with something else".to_owned(),
                source: None,
            }),
        }
    }

    fn snapshot(&self) -> Arc<Vec<Remote>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A failed handshake; a server that asks for authorization is named with
/// what it asked for (its `WWW-Authenticate` challenge: the metadata URL,
/// the scopes), never a generic transport error.
fn handshake_error(error: rmcp::service::ClientInitializeError) -> ToolError {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    let mut asked = None;
    while let Some(current) = cause {
        if let Some(required) = current.downcast_ref::<AuthRequiredError>() {
            asked = Some((
                "requires authorization",
                required.www_authenticate_header.clone(),
            ));
            break;
        }
        if let Some(scope) = current.downcast_ref::<InsufficientScopeError>() {
            asked = Some((
                "requires more scopes",
                scope.www_authenticate_header.clone(),
            ));
            break;
        }
        cause = current.source();
    }
    let message = match asked {
        Some((what, challenge)) => format!(
            "the MCP server {what} (`WWW-Authenticate: {}`); connect with `McpToolBox::connect_oauth` or a bearer token",
            toolbox_core::args::echo(&challenge)
        ),
        None => "the MCP handshake failed".to_owned(),
    };
    ToolError::Transport {
        message,
        source: Some(Box::new(error)),
    }
}

fn service_error(error: ServiceError) -> ToolError {
    match error {
        ServiceError::McpError(error) => {
            ToolError::failed(format!("MCP error {}: {}", error.code.0, error.message))
        }
        other => ToolError::Transport {
            message: "the MCP server is gone or did not answer".to_owned(),
            source: Some(Box::new(other)),
        },
    }
}

impl ToolBox for McpToolBox {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.snapshot().iter().map(|r| r.spec.clone()).collect()
    }

    fn specification(
        &self,
        name: &str,
        _: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        self.snapshot()
            .iter()
            .find(|r| r.spec.name == name)
            .map(|r| std::borrow::Cow::Owned(r.spec.clone()))
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        let tools = self.snapshot();
        let Some(index) = tools.iter().position(|r| r.spec.name == name) else {
            return DispatchFuture::ready(Err(ToolError::unknown_tool(
                name,
                tools.iter().map(|r| r.spec.name.as_str()),
            )));
        };
        DispatchFuture::new(async move {
            // A `null` for an optional property the server's schema does
            // not let be `null` (OpenAI strict mode's "absent") is not sent.
            let mut arguments = arguments.to_value()?.into_owned();
            for change in normalize(&tools[index].spec.parameters, Dialect::Mcp, &mut arguments) {
                tracing::debug!(target: "toolbox::mcp", tool = name, %change, "argument normalized");
            }
            check(&tools[index], &arguments)?;
            let map = match arguments {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            let mut params = CallToolRequestParams::new(name.to_owned());
            params.arguments = Some(map);
            let meta = match &self.meta {
                Some(choose) => choose(ctx),
                None => Map::new(),
            };
            if !meta.is_empty() {
                params.meta = Some(RequestMetaObject(MetaObject(meta)));
            }
            // A caller that listens for progress gets the server's reports.
            let result = match ctx.extension::<McpProgress>() {
                Some(listener) if listener.is_wanted() => {
                    self.call_listening(params, listener.clone()).await?
                }
                _ => self.peer.call_tool(params).await.map_err(service_error)?,
            };
            from_result(&result)
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::{Progress, Routes, EARLY_REPORTS, FINISHED_LISTENERS};
    use crate::McpProgress;

    fn report(n: f64) -> Progress {
        Progress {
            progress: n,
            total: None,
            message: None,
        }
    }

    #[test]
    fn reports_reach_their_call_early_on_time_and_late() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let listener = McpProgress::new(move |p| sink.lock().unwrap().push(p.progress));
        let mut routes = Routes::default();
        // Before the caller learnt its token: stashed, then handed over.
        assert!(routes.deliver("7".into(), report(1.0)).is_none());
        let early = routes.listen("7", listener.clone());
        assert_eq!(early, [report(1.0)]);
        // While the call runs.
        let (to, r) = routes.deliver("7".into(), report(2.0)).unwrap();
        to.send(r);
        // After its result: rmcp's notification task ran late.
        routes.finish("7".into());
        let (to, r) = routes.deliver("7".into(), report(3.0)).unwrap();
        to.send(r);
        assert_eq!(*seen.lock().unwrap(), [2.0, 3.0]);
        // Bounded: old finished calls and unclaimed reports are forgotten.
        for i in 0..FINISHED_LISTENERS + 1 {
            routes.listen(&format!("f{i}"), listener.clone());
            routes.finish(format!("f{i}"));
        }
        assert!(routes.deliver("7".into(), report(4.0)).is_none());
        for i in 0..EARLY_REPORTS + 10 {
            routes.deliver(format!("nobody{i}"), report(0.0));
        }
        assert_eq!(routes.early.len(), EARLY_REPORTS);
    }
}
