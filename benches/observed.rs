//! The observed call: `#[tool]` through `ToolBoxExt::call` with no
//! subscriber (the quiet path), under `tracing_subscriber::fmt` at INFO
//! writing to a sink, and under an exporter-like layer that keeps every
//! span's fields until it closes (what `tracing-opentelemetry` does), in one
//! run. The subscribers are set per bench with `with_default` (the quiet
//! rows run first, before any is set).
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use toolbox::prelude::*;
use tracing_subscriber::layer::SubscriberExt;

mod tools;
use tools::{add_arguments, ready, search_arguments, MacroTools};

/// Keeps each span's fields (name and formatted value) in its extensions,
/// adds recorded ones, drops them when it closes: an exporter's work
/// without the export.
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

fn fmt_subscriber() -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::sink)
        .finish()
}

fn bench_observed(c: &mut Criterion) {
    let ctx = Context::new().with_call_id("call_1");
    let handler = ToolHandler::empty();
    for (tool, arguments) in [("add", add_arguments()), ("search", search_arguments())] {
        let text = arguments.to_string();
        let mut group = c.benchmark_group(format!("observed_{tool}"));
        group.bench_function("quiet_text", |b| {
            b.iter(|| {
                ready(MacroTools.call(tool, black_box(text.as_str()), &ctx, &handler)).content
            })
        });
        group.bench_function("fmt_info_text", |b| {
            tracing::subscriber::with_default(fmt_subscriber(), || {
                b.iter(|| {
                    ready(MacroTools.call(tool, black_box(text.as_str()), &ctx, &handler)).content
                })
            })
        });
        group.bench_function("exporter_layer_text", |b| {
            let subscriber = tracing_subscriber::registry().with(KeepFields);
            tracing::subscriber::with_default(subscriber, || {
                b.iter(|| {
                    ready(MacroTools.call(tool, black_box(text.as_str()), &ctx, &handler)).content
                })
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench_observed);
criterion_main!(benches);
