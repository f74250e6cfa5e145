//! MCP over Streamable HTTP on 127.0.0.1, in one run:
//! - a box served by `McpServer` against rmcp's own `#[tool_router]` server
//!   with the same two tools, with 1 and 32 concurrent clients (bare rmcp
//!   clients, so only the servers differ);
//! - the proxy: `McpToolBox::call` against a bare rmcp client calling the
//!   same server.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{schemars, tool, tool_handler, tool_router, RoleClient, ServerHandler, ServiceExt};
use serde_json::json;
use toolbox_core::{tool_fn, Context, FnToolBox, ToolBoxExt, ToolHandler};
use toolbox_mcp::{serve_http, McpServer, McpToolBox};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

#[derive(Clone)]
struct RmcpTools {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpTools {
    #[tool(description = "Adds two integers")]
    fn add(&self, Parameters(Pair { a, b }): Parameters<Pair>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Repeats the text")]
    fn echo(&self, Parameters(Text { text }): Parameters<Text>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn toolbox_tools() -> FnToolBox {
    FnToolBox::new([
        tool_fn(
            "add",
            "Adds two integers",
            |p: Pair| async move { p.a + p.b },
        ),
        tool_fn("echo", "Repeats the text", |t: Text| async move { t.text }),
    ])
    .unwrap()
}

async fn serve_rmcp() -> String {
    let service: StreamableHttpService<RmcpTools, LocalSessionManager> = StreamableHttpService::new(
        || {
            Ok(RmcpTools {
                tool_router: RmcpTools::tool_router(),
            })
        },
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{address}/mcp")
}

async fn client(url: &str) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    ().serve(transport).await.unwrap()
}

fn params() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("add");
    params.arguments = Some(json!({"a": 40, "b": 2}).as_object().unwrap().clone());
    params
}

/// Time for `iterations` calls spread over `clients` concurrent clients.
async fn run(clients: &[Arc<RunningService<RoleClient, ()>>], iterations: u64) -> Duration {
    let per_client = iterations.div_ceil(clients.len() as u64);
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .iter()
        .map(|client| {
            let client = client.clone();
            tokio::spawn(async move {
                for _ in 0..per_client {
                    client.call_tool(params()).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    started.elapsed()
}

fn bench_servers(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (ours, theirs) = runtime.block_on(async {
        let ours = serve_http(McpServer::new(toolbox_tools(), "bench"), "127.0.0.1:0")
            .await
            .unwrap();
        (ours, serve_rmcp().await)
    });
    let ours_url = ours.url();
    for clients in [1usize, 32] {
        let mut group = c.benchmark_group(format!("serve_http_{clients}_clients"));
        for (label, url) in [
            ("rmcp_tool_router", theirs.clone()),
            ("toolbox_mcp_server", ours_url.clone()),
        ] {
            let connected: Vec<Arc<RunningService<RoleClient, ()>>> = runtime.block_on(async {
                let mut all = Vec::new();
                for _ in 0..clients {
                    all.push(Arc::new(client(&url).await));
                }
                all
            });
            group.bench_function(label, |b| {
                b.iter_custom(|iterations| runtime.block_on(run(&connected, iterations)))
            });
        }
        group.finish();
    }

    // The proxy's added cost over a bare rmcp client, same server.
    let mut group = c.benchmark_group("proxy_http");
    let bare = runtime.block_on(client(&theirs));
    group.bench_function("bare_rmcp_client", |b| {
        b.iter(|| runtime.block_on(bare.call_tool(params())).unwrap())
    });
    let proxy = runtime
        .block_on(McpToolBox::connect_http(&theirs, []))
        .unwrap();
    let (ctx, handler, arguments) = (
        Context::new(),
        ToolHandler::empty(),
        json!({"a": 40, "b": 2}),
    );
    group.bench_function("mcp_tool_box", |b| {
        b.iter(|| runtime.block_on(proxy.call("add", &arguments, &ctx, &handler)))
    });
    group.finish();
}

criterion_group!(benches, bench_servers);
criterion_main!(benches);
