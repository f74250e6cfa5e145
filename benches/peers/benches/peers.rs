//! `add` and `search` through each SDK's own call path, against serde
//! floors, in one run (criterion medians; read the ratios, not the ns):
//!
//! - floor, cloned: `serde_json::from_value(args.clone())` → fn → `to_string`;
//! - floor, borrowed: `T::deserialize(&args)` → fn → `to_string`;
//! - floor, borrowed, in a span: the same inside a span like toolbox's
//!   `execute_tool` (name, target, level, fields), entered while it runs:
//!   under a subscriber, the least an observed call can cost;
//! - toolbox: `#[tool_box]` through `ToolBoxExt::call` (borrowed `&Value`);
//! - rmcp: `#[tool_router]` through `ToolRouter::call` (the arguments map is
//!   the request's, cloned per call as a server would receive it);
//! - rig 0.44 (the newest that builds on this machine's rustc 1.95; 0.45+
//!   need 1.97): a `DynamicTool` through `execute(Value)` (owned arguments,
//!   so its floor is the cloned one).
//!
//! `PEERS_SUBSCRIBER` installs a global `tracing` subscriber first, as a
//! production process does: `fmt` (`tracing_subscriber::fmt` at INFO,
//! writing to a sink) or `exporter` (a layer that keeps every span's fields
//! until it closes, as an OpenTelemetry exporter does); unset, none.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rig_core::completion::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router, Peer, ServerHandler, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Filters {
    tags: Vec<String>,
    since: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    query: String,
    limit: Option<u32>,
    filters: Filters,
}

#[derive(Serialize, schemars::JsonSchema)]
struct SearchResult {
    query: String,
    limit: u32,
    tags: Vec<String>,
    since: Option<String>,
    total: u64,
}

fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn search(query: String, limit: Option<u32>, filters: Filters) -> SearchResult {
    SearchResult {
        total: query.len() as u64 * 7,
        query,
        limit: limit.unwrap_or(10),
        tags: filters.tags,
        since: filters.since,
    }
}

// ---- toolbox ----

#[derive(Default)]
struct ToolboxTools;

#[tool_box]
impl ToolboxTools {
    /// Adds two integers.
    #[tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        add(a, b)
    }

    /// Searches.
    #[tool]
    fn search(&self, query: String, limit: Option<u32>, filters: Filters) -> SearchResult {
        search(query, limit, filters)
    }
}

// ---- rmcp ----

#[derive(Clone)]
struct RmcpTools {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpTools {
    #[tool(description = "Adds two integers")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        add(a, b).to_string()
    }

    #[tool(description = "Searches")]
    fn search(&self, Parameters(args): Parameters<SearchArgs>) -> String {
        serde_json::to_string(&search(args.query, args.limit, args.filters)).unwrap()
    }
}

impl ServerHandler for RmcpTools {}

// ---- rig ----

/// rig 0.44 calls a runtime-defined tool through `DynamicTool::execute`
/// (its typed tools dispatch through a private object-safe boundary): the
/// arguments are an owned `Value`, deserialized by the callback.
fn rig_tool(tool: &str) -> DynamicTool {
    let error = |e: serde_json::Error| ToolExecutionError::other(e.to_string());
    match tool {
        "add" => DynamicTool::new(
            ToolName::new("add").unwrap(),
            "Adds two integers",
            serde_json::to_value(schemars::schema_for!(AddArgs)).unwrap(),
            move |arguments: Value| {
                Box::pin(async move {
                    let x: AddArgs = serde_json::from_value(arguments).map_err(error)?;
                    Ok(ToolOutput::text(
                        serde_json::to_string(&add(x.a, x.b)).map_err(error)?,
                    ))
                })
            },
        ),
        _ => DynamicTool::new(
            ToolName::new("search").unwrap(),
            "Searches",
            serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap(),
            move |arguments: Value| {
                Box::pin(async move {
                    let x: SearchArgs = serde_json::from_value(arguments).map_err(error)?;
                    let result = search(x.query, x.limit, x.filters);
                    Ok(ToolOutput::text(
                        serde_json::to_string(&result).map_err(error)?,
                    ))
                })
            },
        ),
    }
}

// ---- the run ----

fn arguments(tool: &str) -> Value {
    match tool {
        "add" => json!({"a": 40, "b": 2}),
        _ => {
            json!({"query": "rust tool calling", "limit": 5, "filters": {"tags": ["mcp", "agents"], "since": "2025-01-01"}})
        }
    }
}

/// A server-side peer for rmcp's request contexts: a server over an
/// in-memory pipe, with a client on the other end.
async fn rmcp_peer(runtime_tools: RmcpTools) -> Peer<RoleServer> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move { runtime_tools.serve(server_io).await.unwrap() });
    let client = ().serve(client_io).await.unwrap();
    let server = server.await.unwrap();
    let peer = server.peer().clone();
    std::mem::forget(client);
    std::mem::forget(server);
    peer
}

/// Runs a future the cheapest way it allows: one poll with a no-op waker
/// (the tools here never wait), else the runtime. Every SDK row goes
/// through this, so none pays an executor the floors do not.
fn run<F: std::future::Future>(runtime: &tokio::runtime::Runtime, future: F) -> F::Output {
    let _entered = runtime.enter();
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => runtime.block_on(future),
    }
}

/// The least an observed call can cost: a span with the name, target,
/// level and fields of toolbox's `execute_tool` span (the GenAI
/// attributes set when it opens, the two recorded on failure declared),
/// made with `tracing`'s own macro and entered while the floor's work
/// runs. Under a subscriber, `floor_borrowed_span` less `floor_borrowed`
/// is what the span itself costs there.
macro_rules! execute_tool_span {
    ($span:literal, $tool:literal) => {
        tracing::info_span!(
            target: "toolbox_core::lifecycle",
            $span,
            gen_ai.operation.name = %"execute_tool",
            gen_ai.tool.name = %$tool,
            gen_ai.tool.type = %"function",
            gen_ai.tool.call.id = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    };
}

fn floors(c: &mut Criterion, tool: &str) {
    let args = arguments(tool);
    let text = args.to_string();
    let mut group = c.benchmark_group(tool);
    match tool {
        "add" => {
            group.bench_function("floor_cloned", |b| {
                b.iter(|| {
                    let x: AddArgs = serde_json::from_value(black_box(&args).clone()).unwrap();
                    serde_json::to_string(&add(x.a, x.b)).unwrap()
                })
            });
            group.bench_function("floor_borrowed", |b| {
                b.iter(|| {
                    let x = AddArgs::deserialize(black_box(&args)).unwrap();
                    serde_json::to_string(&add(x.a, x.b)).unwrap()
                })
            });
            group.bench_function("floor_text", |b| {
                b.iter(|| {
                    let x: AddArgs = serde_json::from_str(black_box(&text)).unwrap();
                    serde_json::to_string(&add(x.a, x.b)).unwrap()
                })
            });
            group.bench_function("floor_borrowed_span", |b| {
                b.iter(|| {
                    let span = execute_tool_span!("execute_tool add", "add");
                    let _entered = span.enter();
                    let x = AddArgs::deserialize(black_box(&args)).unwrap();
                    serde_json::to_string(&add(x.a, x.b)).unwrap()
                })
            });
        }
        _ => {
            group.bench_function("floor_cloned", |b| {
                b.iter(|| {
                    let x: SearchArgs = serde_json::from_value(black_box(&args).clone()).unwrap();
                    serde_json::to_string(&search(x.query, x.limit, x.filters)).unwrap()
                })
            });
            group.bench_function("floor_borrowed", |b| {
                b.iter(|| {
                    let x = SearchArgs::deserialize(black_box(&args)).unwrap();
                    serde_json::to_string(&search(x.query, x.limit, x.filters)).unwrap()
                })
            });
            group.bench_function("floor_text", |b| {
                b.iter(|| {
                    let x: SearchArgs = serde_json::from_str(black_box(&text)).unwrap();
                    serde_json::to_string(&search(x.query, x.limit, x.filters)).unwrap()
                })
            });
            group.bench_function("floor_borrowed_span", |b| {
                b.iter(|| {
                    let span = execute_tool_span!("execute_tool search", "search");
                    let _entered = span.enter();
                    let x = SearchArgs::deserialize(black_box(&args)).unwrap();
                    serde_json::to_string(&search(x.query, x.limit, x.filters)).unwrap()
                })
            });
        }
    }
    group.finish();
}

fn sdks(c: &mut Criterion, tool: &'static str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = arguments(tool);
    let text = args.to_string();
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    let toolbox_tools = ToolboxTools;

    let rmcp_tools = RmcpTools {
        tool_router: RmcpTools::tool_router(),
    };
    let peer = runtime.block_on(rmcp_peer(rmcp_tools.clone()));
    let map = args.as_object().cloned().unwrap();

    let rig_tool = rig_tool(tool);

    let mut group = c.benchmark_group(tool);
    group.bench_function("toolbox_borrowed", |b| {
        b.iter(|| {
            run(
                &runtime,
                toolbox_tools.call(tool, black_box(&args), &ctx, &handler),
            )
        })
    });
    group.bench_function("toolbox_text", |b| {
        b.iter(|| {
            run(
                &runtime,
                toolbox_tools.call(tool, black_box(text.as_str()), &ctx, &handler),
            )
        })
    });
    group.bench_function("rmcp_router", |b| {
        b.iter(|| {
            run(&runtime, async {
                let mut params = CallToolRequestParams::new(tool);
                params.arguments = Some(black_box(&map).clone());
                let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
                rmcp_tools
                    .tool_router
                    .call(ToolCallContext::new(&rmcp_tools, params, context))
                    .await
                    .unwrap()
            })
        })
    });
    group.bench_function("rig_dynamic_tool", |b| {
        b.iter(|| run(&runtime, rig_tool.execute(black_box(&args).clone())).unwrap())
    });
    group.finish();
}

/// A layer that does what an exporter does with a span: keeps its fields
/// (name and formatted value) in the span's extensions, adds recorded ones,
/// and drops them when the span closes.
struct KeepFields;

#[derive(Default)]
struct Fields(Vec<(&'static str, String)>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name(), value.to_owned()));
    }
}

impl<S> tracing_subscriber::Layer<S> for KeepFields
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }
    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<Fields>() {
                values.record(fields);
            }
        }
    }
}

fn install_subscriber() {
    use tracing_subscriber::layer::SubscriberExt;
    match std::env::var("PEERS_SUBSCRIBER").as_deref() {
        Ok("fmt") => {
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::INFO)
                .with_writer(std::io::sink)
                .finish();
            tracing::subscriber::set_global_default(subscriber).unwrap();
        }
        Ok("exporter") => {
            let subscriber = tracing_subscriber::registry().with(KeepFields);
            tracing::subscriber::set_global_default(subscriber).unwrap();
        }
        Ok("") | Ok("none") | Err(_) => {}
        Ok(other) => panic!("PEERS_SUBSCRIBER: `{other}` is none of fmt, exporter, none"),
    }
}

fn bench(c: &mut Criterion) {
    install_subscriber();
    for tool in ["add", "search"] {
        floors(c, tool);
        sdks(c, tool);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
