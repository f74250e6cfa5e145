//! Any box as an MCP server.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use toolbox_core::{
    CancellationToken, Context, FromContext, ToolBox, ToolBoxExt, ToolError, ToolHandler,
};

use crate::convert::{to_result, to_tool};
use crate::progress::{McpProgress, Progress};

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

/// The MCP client of a served call: its name and version, the protocol
/// version it negotiated, its Streamable HTTP session, and its rmcp
/// [`Peer`] for requests back to it (roots, sampling, elicitation, where the
/// protocol era allows them). Injectable into a tool (`#[inject] client:
/// McpClient`); a call that did not come over MCP has none, and the tool is
/// told so.
#[derive(Clone)]
pub struct McpClient {
    peer: Peer<RoleServer>,
    session: Option<String>,
}

impl McpClient {
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
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name())
            .field("protocol_version", &self.protocol_version())
            .field("session_id", &self.session)
            .finish()
    }
}

impl FromContext for McpClient {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<McpClient>()
            .cloned()
            .ok_or_else(|| ToolError::Failed {
                message: "this tool can only be called over MCP".to_owned(),
                retryable: false,
                source: Some(
                    "the context has no `McpClient`: the call did not come from an MCP client"
                        .into(),
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
    /// The clients that completed the handshake, for `list_changed`.
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
}

impl<B: ToolBox + 'static> McpServer<B> {
    /// Serves `toolbox`, announcing itself as `name`.
    pub fn new(toolbox: B, name: impl Into<String>) -> Self {
        McpServer {
            toolbox: Arc::new(toolbox),
            handler: ToolHandler::empty(),
            name: name.into(),
            peers: Arc::default(),
        }
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
    /// as [`McpClient`].
    fn context(meta: Map<String, Value>, request: &RequestContext<RoleServer>) -> Context {
        let session = request
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        Context::new()
            .with_extension(McpMeta(meta))
            .with_extension(McpClient {
                peer: request.peer.clone(),
                session,
            })
    }
}

/// Progress reports of one served call, sent to its client in order as
/// `notifications/progress` under the client's token.
enum Report {
    Progress(Progress),
    /// Answered once every earlier report is on its way: the call's result
    /// never overtakes its progress.
    Flush(tokio::sync::oneshot::Sender<()>),
}

type Reports = tokio::sync::mpsc::UnboundedSender<Report>;

fn progress_to(peer: Peer<RoleServer>, token: ProgressToken) -> (McpProgress, Reports) {
    let (send, mut receive) = tokio::sync::mpsc::unbounded_channel::<Report>();
    tokio::spawn(async move {
        while let Some(report) = receive.recv().await {
            match report {
                Report::Progress(report) => {
                    let mut param = ProgressNotificationParam::new(token.clone(), report.progress);
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
    let reports = send.clone();
    let progress = McpProgress::new(move |report| {
        let _ = send.send(Report::Progress(report));
    });
    (progress, reports)
}

/// Waits until the call's progress reports have been sent.
async fn flush(reports: Option<Reports>) {
    if let Some(reports) = reports {
        let (done, sent) = tokio::sync::oneshot::channel();
        if reports.send(Report::Flush(done)).is_ok() {
            let _ = sent.await;
        }
    }
}

impl<B: ToolBox + 'static> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            toolbox: self.toolbox.clone(),
            handler: self.handler.clone(),
            name: self.name.clone(),
            peers: self.peers.clone(),
        }
    }
}

impl<B: ToolBox + 'static> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        info.server_info.name = self.name.clone();
        info.server_info.version = env!("CARGO_PKG_VERSION").to_owned();
        info
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
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
        let ctx = Self::context(context.meta.0 .0.clone(), &context);
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
        let mut meta = context.meta.0 .0.clone();
        if let Some(own) = &request.meta {
            meta.extend(own.0 .0.clone());
        }
        let progress = meta
            .get("progressToken")
            .and_then(|token| serde_json::from_value::<ProgressToken>(token.clone()).ok());
        // The client's cancellation (`notifications/cancelled`) cancels the
        // tool's Context, then ends the call.
        let cancel = CancellationToken::new();
        let mut ctx = Self::context(meta, &context).with_cancellation(cancel.clone());
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
                format!("Unknown tool: {}", toolbox_core::arguments::echo(name)),
                None,
            ));
        };
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
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
        };
        flush(reports).await;
        Ok(to_result(response, structured).into())
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

/// A box served over Streamable HTTP at `/mcp`; stops when dropped or
/// [`shutdown`](HttpServer::shutdown).
pub struct HttpServer {
    address: std::net::SocketAddr,
    stop: tokio_util::sync::CancellationToken,
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

    /// Stops accepting, ends the sessions, and waits for the server task.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves `toolbox` over Streamable HTTP on `address` (use `127.0.0.1:0`
/// for a free local port). Sessions, both protocol eras and the `Host`
/// check against DNS rebinding (localhost names only) come from rmcp.
pub async fn serve_http<B: ToolBox + 'static>(
    server: McpServer<B>,
    address: impl tokio::net::ToSocketAddrs,
) -> std::io::Result<HttpServer> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let service: StreamableHttpService<McpServer<B>, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Default::default(),
            StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
            .await;
    });
    Ok(HttpServer {
        address: local,
        stop,
        task: Some(task),
    })
}
