//! The lifecycle's spans, exported through tracing-opentelemetry to an
//! in-memory OpenTelemetry exporter: the test reads the exported spans
//! (not log text) and checks the GenAI attributes and the status, for a
//! success and an error.

use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
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

#[tokio::test]
async fn exported_spans_carry_the_gen_ai_attributes() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _guard = tracing::subscriber::set_default(subscriber);

    let tools = FnToolBox::new([
        tool_fn("add", "Adds", |p: Pair| async move { p.a + p.b }),
        try_tool_fn("divide", "Divides", |p: Pair| async move {
            if p.b == 0 {
                Err("cannot divide by zero".to_owned())
            } else {
                Ok(p.a / p.b)
            }
        }),
    ])
    .unwrap();
    let handler = ToolHandler::empty();
    let ok = tools
        .call(
            "add",
            &json!({"a": 1, "b": 2}),
            &Context::new().with_call_id("call_ok"),
            &handler,
        )
        .await;
    assert_eq!(ok.content, "3");
    let failed = tools
        .call(
            "divide",
            &json!({"a": 1, "b": 0}),
            &Context::new().with_call_id("call_err"),
            &handler,
        )
        .await;
    assert!(failed.is_error);
    let bad = tools
        .call("add", &json!({"a": "x"}), &Context::new(), &handler)
        .await;
    assert!(bad.is_error);
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    assert_eq!(spans.len(), 3, "one span per call");
    let (success, error, invalid) = (&spans[0], &spans[1], &spans[2]);

    assert_eq!(success.name, "execute_tool add");
    assert_eq!(success.span_kind, SpanKind::Internal);
    assert_eq!(success.status, Status::Unset);
    assert_eq!(
        attribute(success, "gen_ai.operation.name"),
        Some(&Value::from("execute_tool"))
    );
    assert_eq!(
        attribute(success, "gen_ai.tool.name"),
        Some(&Value::from("add"))
    );
    assert_eq!(
        attribute(success, "gen_ai.tool.type"),
        Some(&Value::from("function"))
    );
    assert_eq!(
        attribute(success, "gen_ai.tool.call.id"),
        Some(&Value::from("call_ok"))
    );
    assert_eq!(attribute(success, "error.type"), None);

    assert_eq!(error.name, "execute_tool divide");
    assert!(
        matches!(error.status, Status::Error { .. }),
        "{:?}",
        error.status
    );
    assert_eq!(
        attribute(error, "error.type"),
        Some(&Value::from("tool_failed"))
    );
    assert_eq!(
        attribute(error, "gen_ai.tool.call.id"),
        Some(&Value::from("call_err"))
    );

    assert_eq!(
        attribute(invalid, "error.type"),
        Some(&Value::from("invalid_arguments"))
    );
    assert_eq!(
        attribute(invalid, "gen_ai.tool.call.id"),
        None,
        "no call id, no attribute"
    );
    provider.shutdown().unwrap();
}
