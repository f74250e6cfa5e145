//! The `execute_tool` span and its OpenTelemetry GenAI attributes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolbox::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Fields = BTreeMap<String, String>;

/// Records every span's name and fields.
#[derive(Clone, Default)]
struct Recorder {
    spans: Arc<Mutex<Vec<(String, Fields)>>>,
    next: Arc<AtomicU64>,
    events_inside: Arc<Mutex<Vec<u64>>>,
    current: Arc<Mutex<Vec<u64>>>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut fields = Fields::new();
        attributes.record(&mut Collect(&mut fields));
        let mut spans = self.spans.lock().unwrap();
        spans.push((attributes.metadata().name().to_owned(), fields));
        self.next.fetch_add(1, Ordering::SeqCst);
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        values.record(&mut Collect(&mut spans[span.into_u64() as usize - 1].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {
        if let Some(&span) = self.current.lock().unwrap().last() {
            self.events_inside.lock().unwrap().push(span);
        }
    }
    fn enter(&self, span: &Id) {
        self.current.lock().unwrap().push(span.into_u64());
    }
    fn exit(&self, _: &Id) {
        self.current.lock().unwrap().pop();
    }
}

/// Runs `calls` to their end with `recorder` as the thread's subscriber.
fn recorded(recorder: &Recorder, calls: impl std::future::Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tracing::subscriber::with_default(recorder.clone(), || runtime.block_on(calls));
}

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

#[test]
fn every_call_is_an_execute_tool_span_with_gen_ai_attributes() {
    let recorder = Recorder::default();
    let tools = FnToolBox::new([tool_fn("weather", "Weather", |c: City| async move {
        tracing::info!("looking up {}", c.city);
        if c.city == "Atlantis" {
            Err(format!("no weather for {}", c.city))
        } else {
            Ok("sunny")
        }
    })])
    .unwrap();
    recorded(&recorder, async {
        let handler = ToolHandler::empty();
        let ctx = Context::new().with_call_id("call_1");
        tools
            .call("weather", &json!({"city": "Prague"}), &ctx, &handler)
            .await;
        let ctx = Context::new().with_call_id("call_2");
        tools
            .call("weather", &json!({"city": "Atlantis"}), &ctx, &handler)
            .await;
        tools
            .call("weather", &json!({}), &Context::new(), &handler)
            .await;
    });
    let spans = recorder.spans.lock().unwrap();
    assert_eq!(spans.len(), 3);
    let (name, ok) = &spans[0];
    // The name is the callsite's, made once per tool: no `otel.name`.
    assert_eq!(name, "execute_tool weather");
    assert!(!ok.contains_key("otel.name"), "{ok:?}");
    assert_eq!(ok["gen_ai.operation.name"], "execute_tool");
    assert_eq!(ok["gen_ai.tool.name"], "weather");
    assert_eq!(ok["gen_ai.tool.type"], "function");
    assert_eq!(ok["gen_ai.tool.call.id"], "call_1");
    assert!(!ok.contains_key("error.type"), "{ok:?}");
    assert_eq!(spans[1].1["error.type"], "tool_failed");
    assert_eq!(spans[1].1["gen_ai.tool.call.id"], "call_2");
    assert_eq!(spans[2].1["error.type"], "invalid_arguments");
    assert!(!spans[2].1.contains_key("gen_ai.tool.call.id"));
    // The tool's own events happen inside its call's span.
    assert_eq!(*recorder.events_inside.lock().unwrap(), [1, 2]);
}

/// A name past the per-tool callsites' limit (or after 4,096 others) opens
/// its span on the shared callsite, named `execute_tool` with the name in
/// `otel.name` (which OpenTelemetry exporters take as the span's name);
/// either way the name is escaped as logs show it.
#[test]
fn a_name_past_the_limits_shares_one_callsite() {
    struct Any;
    impl ToolBox for Any {
        fn specifications(&self, _: &Context) -> Vec<toolbox::ToolSpecification> {
            Vec::new()
        }
        fn dispatch<'a>(
            &'a self,
            _: &'a str,
            _: toolbox::Arguments<'a>,
            _: &'a Context,
        ) -> toolbox::DispatchFuture<'a> {
            toolbox::DispatchFuture::ready(Ok(toolbox::ToolResponse::text("ok")))
        }
    }
    let recorder = Recorder::default();
    let long = format!("tool_{}\n", "x".repeat(150));
    recorded(&recorder, async {
        let handler = ToolHandler::empty();
        Any.call(&long, &json!({}), &Context::new(), &handler).await;
        Any.call("a\u{7}b", &json!({}), &Context::new(), &handler)
            .await;
    });
    let spans = recorder.spans.lock().unwrap();
    assert_eq!(spans.len(), 2);
    let shown = format!("tool_{}\\n", "x".repeat(150));
    assert_eq!(spans[0].0, "execute_tool");
    assert_eq!(spans[0].1["otel.name"], format!("execute_tool {shown}"));
    assert_eq!(spans[0].1["gen_ai.tool.name"], shown);
    // A short name has its own callsite, its name escaped once.
    assert_eq!(spans[1].0, "execute_tool a\\u0007b");
    assert_eq!(spans[1].1["gen_ai.tool.name"], "a\\u0007b");
    assert!(!spans[1].1.contains_key("otel.name"));
}
