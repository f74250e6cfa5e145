//! The lifecycle's `execute_tool` spans exported through OpenTelemetry:
//! `tracing-opentelemetry` turns each call's span into an OTel span with the
//! GenAI attributes (`gen_ai.operation.name`, `gen_ai.tool.name`,
//! `gen_ai.tool.type`, `gen_ai.tool.call.id`, and `error.type` on failure).
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans also go to that collector
//! over OTLP/HTTP; they always go to an in-memory exporter, printed at the
//! end.
//!
//! With the feature `mcp-otel`, the same tools are also called through an
//! MCP proxy (`McpToolBox` → `McpServer` over a stream pair): the client's
//! `tools/call add` span, the server's `tools/call add` span (continuing the
//! trace from `_meta.traceparent`) and the served `execute_tool add` span
//! print with one trace id.
//!
//! Run it with `cargo run --example otel` (`--features mcp-otel` for the proxy).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
#[cfg(feature = "mcp-otel")]
use toolbox::mcp::McpServer;
use toolbox::prelude::*;
use tracing_subscriber::layer::SubscriberExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let memory = InMemorySpanExporter::default();
    let mut provider = SdkTracerProvider::builder().with_simple_exporter(memory.clone());
    if std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() {
        // Endpoint, headers and timeout come from the standard OTEL_* variables.
        let otlp = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()?;
        provider = provider.with_batch_exporter(otlp);
        println!("exporting to the OTLP endpoint too");
    }
    let provider = provider.build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("toolbox-example")));
    tracing::subscriber::set_global_default(subscriber)?;

    let tools = FnToolBox::new([
        tool_fn(
            "add",
            "Adds two integers",
            |p: Pair| async move { p.a + p.b },
        )
        .read_only(),
        try_tool_fn("divide", "Divides a by b", |p: Pair| async move {
            if p.b == 0 {
                Err("cannot divide by zero".to_owned())
            } else {
                Ok(p.a / p.b)
            }
        }),
    ])?;
    let handler = ToolHandler::empty();
    for (id, name, arguments) in [
        ("call_1", "add", json!({"a": 40, "b": 2})),
        ("call_2", "divide", json!({"a": 1, "b": 0})),
    ] {
        let ctx = Context::new().with_call_id(id);
        let response = tools.call(name, &arguments, &ctx, &handler).await;
        println!("{name} -> {}", response.content);
    }

    #[cfg(feature = "mcp-otel")]
    {
        use toolbox::mcp::rmcp::ServiceExt as _;
        let (server_side, client_side) = tokio::io::duplex(64 * 1024);
        let served = McpServer::new(tools, "calculator");
        tokio::spawn(async move {
            if let Ok(service) = served.serve(server_side).await {
                let _ = service.waiting().await;
            }
        });
        let proxy = toolbox::mcp::McpToolBox::transport(client_side)
            .connect()
            .await?;
        let ctx = Context::new().with_call_id("call_3");
        let response = proxy
            .call("add", &json!({"a": 1, "b": 2}), &ctx, &handler)
            .await;
        println!("add through the MCP proxy -> {}", response.content);
        proxy.close().await?;
    }

    provider.force_flush()?;
    #[cfg(feature = "mcp-otel")]
    {
        // The proxied call's spans, both sides: one trace.
        let mut traces: Vec<String> = memory
            .get_finished_spans()?
            .iter()
            .filter(|s| s.name == "tools/call add")
            .map(|s| s.span_context.trace_id().to_string())
            .collect();
        traces.dedup();
        println!("the proxied call's client and server spans share trace(s): {traces:?}");
    }
    for span in memory.get_finished_spans()? {
        // The GenAI attributes (tracing-opentelemetry adds code and thread
        // locations too, left out here).
        let mut attributes: Vec<String> = span
            .attributes
            .iter()
            .filter(|kv| {
                let key = kv.key.as_str();
                key.starts_with("gen_ai.") || key.starts_with("error.") || key.starts_with("mcp.")
            })
            .map(|kv| format!("{}={}", kv.key, kv.value))
            .collect();
        attributes.sort();
        println!(
            "span `{}` ({:?}, status {:?}): {}",
            span.name,
            span.span_kind,
            span.status,
            attributes.join(" ")
        );
    }
    provider.shutdown()?;
    Ok(())
}
