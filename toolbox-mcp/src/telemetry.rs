//! The OpenTelemetry semantic conventions for MCP, through `tracing`: the
//! `tools/call {tool}` spans of both sides (the lifecycle's `execute_tool`
//! span is the server span's child), W3C trace context carried in the
//! request's `_meta.traceparent`, and the `mcp.server.operation.duration`,
//! `mcp.server.session.duration` and `mcp.client.operation.duration`
//! histograms as `tracing` events that tracing-opentelemetry's
//! `MetricsLayer` records (fields named `histogram.…`). With the feature
//! `otel`, the trace context is read and written; without it the spans
//! and metrics are the same and a trace starts at each side.

use std::time::Duration;

use serde_json::{Map, Value};
use toolbox_core::args::echo;
use tracing::Span;

/// Where the events and spans go: `toolbox::mcp`.
const TARGET: &str = "toolbox::mcp";

/// What the conventions name a transport: `tcp` for HTTP, `pipe` for
/// stdio and stream pairs.
pub(crate) fn transport(over_http: bool) -> &'static str {
    if over_http {
        "tcp"
    } else {
        "pipe"
    }
}

/// The server span of one `tools/call`.
pub(crate) fn server_span(
    tool: &str,
    request_id: &str,
    session: Option<&str>,
    protocol: Option<&str>,
    transport: &'static str,
) -> Span {
    let tool = echo(tool);
    tracing::info_span!(
        target: TARGET,
        "tools/call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = &*tool,
        jsonrpc.request.id = request_id,
        mcp.session.id = session,
        mcp.protocol.version = protocol,
        network.transport = transport,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// The client span of one `tools/call`.
pub(crate) fn client_span(tool: &str, server: &str) -> Span {
    let tool = echo(tool);
    tracing::info_span!(
        target: TARGET,
        "tools/call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "client",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = &*tool,
        server.address = server,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// Marks `span` failed with `kind` (`tool_error` for an `isError`
/// result, the JSON-RPC code otherwise).
pub(crate) fn failed(span: &Span, kind: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

/// `mcp.server.operation.duration` of one call.
pub(crate) fn server_operation(
    elapsed: Duration,
    tool: &str,
    error: Option<&str>,
    protocol: Option<&str>,
    transport: &'static str,
) {
    tracing::event!(
        target: "toolbox::mcp::metrics",
        tracing::Level::INFO,
        histogram.mcp.server.operation.duration = elapsed.as_secs_f64(),
        "mcp.method.name" = "tools/call",
        "gen_ai.tool.name" = &*echo(tool),
        "error.type" = error,
        "mcp.protocol.version" = protocol,
        "network.transport" = transport,
        "mcp.server.operation.duration"
    );
}

/// `mcp.server.session.duration` of one session that ended.
pub(crate) fn server_session(elapsed: Duration, protocol: Option<&str>, transport: &'static str) {
    tracing::event!(
        target: "toolbox::mcp::metrics",
        tracing::Level::INFO,
        histogram.mcp.server.session.duration = elapsed.as_secs_f64(),
        "mcp.protocol.version" = protocol,
        "network.transport" = transport,
        "mcp.server.session.duration"
    );
}

/// `mcp.client.operation.duration` of one call.
pub(crate) fn client_operation(elapsed: Duration, tool: &str, error: Option<&str>, server: &str) {
    tracing::event!(
        target: "toolbox::mcp::metrics",
        tracing::Level::INFO,
        histogram.mcp.client.operation.duration = elapsed.as_secs_f64(),
        "mcp.method.name" = "tools/call",
        "gen_ai.tool.name" = &*echo(tool),
        "error.type" = error,
        "server.address" = server,
        "mcp.client.operation.duration"
    );
}

/// Continues the client's trace: the server span's parent is the span
/// named by the request's `_meta.traceparent` (W3C trace context).
#[cfg(feature = "otel")]
pub(crate) fn continue_trace(span: &Span, meta: &Map<String, Value>) {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let Some(parent) = meta.get("traceparent").and_then(Value::as_str) else {
        return;
    };
    let parts: Vec<&str> = parent.trim().split('-').collect();
    let [version, trace, span_id, flags] = parts.as_slice() else {
        return;
    };
    if version.len() != 2 || *version == "ff" || trace.len() != 32 || span_id.len() != 16 {
        return;
    }
    let (Ok(trace), Ok(span_id), Ok(flags)) = (
        TraceId::from_hex(trace),
        SpanId::from_hex(span_id),
        u8::from_str_radix(flags, 16),
    ) else {
        return;
    };
    let context = SpanContext::new(
        trace,
        span_id,
        TraceFlags::new(flags),
        true,
        TraceState::default(),
    );
    if context.is_valid() {
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(context));
    }
}

#[cfg(not(feature = "otel"))]
pub(crate) fn continue_trace(_: &Span, _: &Map<String, Value>) {}

/// The W3C `traceparent` of `span`, to send in the request's `_meta`.
#[cfg(feature = "otel")]
pub(crate) fn traceparent(span: &Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            span_context.trace_id(),
            span_context.span_id(),
            span_context.trace_flags().to_u8()
        )
    })
}

#[cfg(not(feature = "otel"))]
pub(crate) fn traceparent(_: &Span) -> Option<String> {
    None
}
