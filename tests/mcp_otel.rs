//! The OpenTelemetry MCP conventions, read from in-memory exporters: a
//! proxied call is one trace (the client's `tools/call` span, the server's
//! `tools/call` span continuing it through `_meta.traceparent`, the served
//! tool's `execute_tool` span under that), a `traceparent` the application
//! sends is the one continued, and the three duration histograms are
//! recorded with their attributes.
#![cfg(feature = "mcp-otel")]

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use toolbox::mcp::rmcp::ServiceExt as _;
use toolbox::mcp::{McpServer, McpToolBox};
use toolbox::prelude::*;
use tracing_subscriber::layer::SubscriberExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn named<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> Vec<&'a SpanData> {
    spans
        .iter()
        .filter(|s| s.name == name && s.span_kind == kind)
        .collect()
}

/// The histogram `name`'s data points' attributes, as `key=value` lines.
fn histogram(metrics: &InMemoryMetricExporter, name: &str) -> Vec<Vec<String>> {
    let mut points = Vec::new();
    for resource in metrics.get_finished_metrics().unwrap() {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                if let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() {
                    for point in h.data_points() {
                        let mut attributes: Vec<String> = point
                            .attributes()
                            .map(|kv| format!("{}={}", kv.key, kv.value))
                            .collect();
                        attributes.sort();
                        points.push(attributes);
                    }
                }
            }
        }
    }
    points
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_call_is_one_trace_and_the_durations_are_recorded() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("test")))
        .with(tracing_opentelemetry::MetricsLayer::new(meter.clone()));
    let _guard = tracing::subscriber::set_global_default(subscriber);

    let tools =
        FnToolBox::new([tool_fn("add", "Adds", |p: Pair| async move { p.a + p.b })]).unwrap();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(tools, "adder")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();
    let answer = remote
        .call(
            "add",
            &json!({"a": 1, "b": 2}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(answer.content, "3");
    // An application that sends its own trace context: that one is continued.
    let fixed = "4bf92f3577b34da6a3ce929d0e0e4736";
    let remote = remote.forward_meta(move |_| {
        let mut meta = serde_json::Map::new();
        meta.insert(
            "traceparent".into(),
            json!(format!("00-{fixed}-00f067aa0ba902b7-01")),
        );
        meta
    });
    let answer = remote
        .call(
            "add",
            &json!({"a": 2, "b": 2}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(answer.content, "4");
    remote.close().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    tracer.force_flush().unwrap();

    let spans = spans.get_finished_spans().unwrap();
    let clients = named(&spans, "tools/call add", SpanKind::Client);
    let servers = named(&spans, "tools/call add", SpanKind::Server);
    let tools: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "execute_tool add")
        .collect();
    assert_eq!((clients.len(), servers.len()), (2, 2), "{spans:#?}");
    assert_eq!(tools.len(), 4, "one on each side of each call");

    // The first call: client → server → the served tool's execute_tool.
    let (client, server) = (clients[0], servers[0]);
    assert_eq!(
        server.span_context.trace_id(),
        client.span_context.trace_id()
    );
    assert_eq!(server.parent_span_id, client.span_context.span_id());
    let served = tools
        .iter()
        .find(|t| t.parent_span_id == server.span_context.span_id())
        .expect("the served execute_tool is the server span's child");
    assert_eq!(
        served.span_context.trace_id(),
        client.span_context.trace_id()
    );
    // The client's own lifecycle span is the client span's parent.
    assert!(tools
        .iter()
        .any(|t| t.span_context.span_id() == client.parent_span_id));
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "add"),
        ("gen_ai.operation.name", "execute_tool"),
        ("network.transport", "pipe"),
        ("mcp.protocol.version", "2025-11-25"),
    ] {
        assert_eq!(
            attribute(server, key),
            Some(&Value::from(value)),
            "{key} of {server:#?}"
        );
    }
    assert!(attribute(server, "jsonrpc.request.id").is_some());
    assert_eq!(attribute(server, "error.type"), None);

    // The second: the application's traceparent is the server's parent.
    let server = servers[1];
    assert_eq!(server.span_context.trace_id().to_string(), fixed);
    assert_eq!(server.parent_span_id.to_string(), "00f067aa0ba902b7");

    meter.force_flush().unwrap();
    let operations = histogram(&metrics, "mcp.server.operation.duration");
    assert!(!operations.is_empty());
    assert!(
        operations[0].contains(&"mcp.method.name=tools/call".to_owned())
            && operations[0].contains(&"gen_ai.tool.name=add".to_owned())
            && operations[0].contains(&"network.transport=pipe".to_owned()),
        "{operations:?}"
    );
    let clients = histogram(&metrics, "mcp.client.operation.duration");
    assert!(
        clients
            .iter()
            .any(|a| a.contains(&"gen_ai.tool.name=add".to_owned())),
        "{clients:?}"
    );
    let sessions = histogram(&metrics, "mcp.server.session.duration");
    assert!(
        sessions
            .iter()
            .any(|a| a.contains(&"mcp.protocol.version=2025-11-25".to_owned())),
        "{sessions:?}"
    );
}
