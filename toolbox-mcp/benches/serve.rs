//! MCP over Streamable HTTP on 127.0.0.1, in one run:
//! - a box served by `McpServer` against rmcp's own `#[tool_router]` server
//!   with the same two tools, with 1, 8 and 32 concurrent clients (bare rmcp
//!   clients, so only the servers differ), and the same `McpServer` mounted
//!   on rmcp's service without `serve_http`'s admission layer (`Origin`,
//!   session cap, bearer tokens), to show what that layer costs:
//!   criterion's time per call, then
//!   a load table (calls/s, p50 and p99 latency) from rounds that alternate
//!   the two servers;
//! - the proxy: `McpToolBox::call` against a bare rmcp client calling the
//!   same server.
//!
//! `LOAD_SECONDS` (default 2) is the length of one load round, `LOAD_ROUNDS`
//! (default 3) how many each server gets; the table reports the median
//! round.
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
async fn run(clients: &Clients, iterations: u64) -> Duration {
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
    // toolbox-mcp builds rmcp's reqwest on rustls without a default
    // provider; the bare rmcp clients below need one installed.
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let _ = rustls::crypto::ring::default_provider().install_default();
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
    let bare_ours = runtime.block_on(async {
        let server = McpServer::new(toolbox_tools(), "bench");
        let service: StreamableHttpService<McpServer<FnToolBox>, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(server.clone()),
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
    });
    let ours_url = ours.url();
    let mut load = Vec::new();
    for clients in [1usize, 8, 32] {
        let mut group = c.benchmark_group(format!("serve_http_{clients}_clients"));
        for (label, url) in [
            ("rmcp_tool_router", theirs.clone()),
            ("toolbox_mcp_server", ours_url.clone()),
            ("toolbox_without_http_guard", bare_ours.clone()),
        ] {
            let connected: Clients = runtime.block_on(async {
                let mut all = Vec::new();
                for _ in 0..clients {
                    all.push(Arc::new(client(&url).await));
                }
                all
            });
            group.bench_function(label, |b| {
                b.iter_custom(|iterations| runtime.block_on(run(&connected, iterations)))
            });
            load.push((clients, label, connected));
        }
        group.finish();
    }
    report_load(&runtime, &load);

    // The proxy's added cost over a bare rmcp client, same server.
    let mut group = c.benchmark_group("proxy_http");
    let bare = runtime.block_on(client(&theirs));
    group.bench_function("bare_rmcp_client", |b| {
        b.iter(|| runtime.block_on(bare.call_tool(params())).unwrap())
    });
    let proxy = runtime
        .block_on(McpToolBox::http(&theirs).connect())
        .unwrap();
    let (ctx, handler, arguments) = (
        Context::new(),
        ToolHandler::empty(),
        json!({"a": 40, "b": 2}),
    );
    group.bench_function("mcp_tool_box", |b| {
        b.iter(|| runtime.block_on(proxy.call("add", &arguments, &ctx, &handler)))
    });
    // Against toolbox's own endpoint (TCP_NODELAY set), keeping its
    // connection.
    let to_ours = runtime
        .block_on(
            McpToolBox::http(&ours_url)
                .http_connection(
                    toolbox_mcp::client::HttpConnection::default().reuse_connections(true),
                )
                .connect(),
        )
        .unwrap();
    group.bench_function("mcp_tool_box_reusing_connections_to_toolbox_server", |b| {
        b.iter(|| runtime.block_on(to_ours.call("add", &arguments, &ctx, &handler)))
    });
    group.finish();
}

/// One load round: every client calls in a loop for `length`; the calls
/// made and each call's latency.
async fn round(clients: &[Arc<RunningService<RoleClient, ()>>], length: Duration) -> Round {
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .iter()
        .map(|client| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(4096);
                while started.elapsed() < length {
                    let call = Instant::now();
                    client.call_tool(params()).await.unwrap();
                    latencies.push(call.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    Round {
        calls_per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
    }
}

/// The connected clients of one server.
type Clients = Vec<Arc<RunningService<RoleClient, ()>>>;

#[derive(Clone, Copy)]
struct Round {
    calls_per_second: f64,
    p50: Duration,
    p99: Duration,
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The load table: for each client count, rounds alternate the two servers
/// (so drift on the machine falls on both), and the median round by
/// calls/s of each is reported with its ratio.
fn report_load(runtime: &tokio::runtime::Runtime, load: &[(usize, &str, Clients)]) {
    let length = Duration::from_secs(env_number("LOAD_SECONDS", 2).max(1));
    let rounds = env_number("LOAD_ROUNDS", 3).max(1) as usize;
    println!("\nload over Streamable HTTP: {rounds} rounds of {length:?} per server, median round");
    println!("| clients | server | calls/s | p50 | p99 | calls/s vs rmcp |");
    println!("|---:|---|---:|---:|---:|---:|");
    for pair in load.chunks(3) {
        let mut results: Vec<Vec<Round>> = vec![Vec::new(); pair.len()];
        for _ in 0..rounds {
            for (i, (_, _, clients)) in pair.iter().enumerate() {
                results[i].push(runtime.block_on(round(clients, length)));
            }
        }
        let medians: Vec<Round> = results
            .into_iter()
            .map(|mut r| {
                r.sort_by(|a, b| a.calls_per_second.total_cmp(&b.calls_per_second));
                r[r.len() / 2]
            })
            .collect();
        for ((clients, label, _), median) in pair.iter().zip(&medians) {
            println!(
                "| {clients} | {label} | {:.0} | {:.0} µs | {:.0} µs | {:.2}× |",
                median.calls_per_second,
                median.p50.as_secs_f64() * 1e6,
                median.p99.as_secs_f64() * 1e6,
                median.calls_per_second / medians[0].calls_per_second,
            );
        }
    }
}

criterion_group!(benches, bench_servers);
criterion_main!(benches);
