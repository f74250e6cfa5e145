//! Any box as an MCP server.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use toolbox_core::{Context, FromContext, ToolBox, ToolBoxExt, ToolError, ToolHandler};

use crate::convert::{to_result, to_tool};

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

/// A box served over MCP. Tools are listed per request context, so a
/// condition's hidden tool is neither listed nor callable (an unknown tool,
/// as the protocol requires); every call passes toolbox's lifecycle under
/// the server's handler; bad arguments and tool errors are `isError`
/// results the model can act on.
pub struct McpServer<B> {
    toolbox: Arc<B>,
    handler: ToolHandler,
    name: String,
}

impl<B: ToolBox + 'static> McpServer<B> {
    /// Serves `toolbox`, announcing itself as `name`.
    pub fn new(toolbox: B, name: impl Into<String>) -> Self {
        McpServer {
            toolbox: Arc::new(toolbox),
            handler: ToolHandler::empty(),
            name: name.into(),
        }
    }

    /// Observes every served call with `handler`.
    pub fn handler(mut self, handler: ToolHandler) -> Self {
        self.handler = handler;
        self
    }

    /// The context of one request: its `_meta` as [`McpMeta`].
    fn context(meta: Map<String, Value>) -> Context {
        Context::new().with_extension(McpMeta(meta))
    }
}

impl<B: ToolBox + 'static> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            toolbox: self.toolbox.clone(),
            handler: self.handler.clone(),
            name: self.name.clone(),
        }
    }
}

impl<B: ToolBox + 'static> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info.name = self.name.clone();
        info.server_info.version = env!("CARGO_PKG_VERSION").to_owned();
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = Self::context(context.meta.0 .0.clone());
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
        let progress = meta.get("progressToken").cloned();
        let mut ctx = Self::context(meta);
        if let Some(token) = progress {
            ctx = ctx.with_request(serde_json::json!({"progressToken": token}));
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
                format!("Unknown tool: {}", toolbox_core::echo(name)),
                None,
            ));
        };
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let call = self.toolbox.call(name, &arguments, &ctx, &self.handler);
        let response = tokio::select! {
            response = call => response,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
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
