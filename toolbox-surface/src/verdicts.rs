//! The surface check refuses what the request refuses: one row for each
//! refusal [`Provider::definitions`] can make (each `ProviderError` it
//! returns, each provider that returns it), run through `definitions` and
//! [`check_surface`] alike, and rows both accept.

use serde_json::{json, Value};

use super::check_surface;
use toolbox_core::args::Arguments;
use toolbox_core::dispatch::DispatchFuture;
use toolbox_core::spec::Callers;
use toolbox_core::spec::{Namespace, ToolUi};
use toolbox_core::Context;
use toolbox_core::ToolBox;
use toolbox_core::ToolError;
use toolbox_core::ToolSpecification;
use toolbox_provider::{Provider, ProviderError, ANTHROPIC_STRICT_LIMITS};

/// A box of these specifications, as a remote server's could be (no
/// constructor stands between a schema and the check).
struct Specs(Vec<ToolSpecification>);

impl ToolBox for Specs {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.0.clone()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::ready(Err(ToolError::unknown_tool(name, [] as [&str; 0])))
    }
}

/// What `definitions` answers: accepted, or refused with this variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Caller,
    Lower,
    Request,
}

fn verdict(answer: &Result<Value, ProviderError>) -> Verdict {
    match answer {
        Ok(_) => Verdict::Accepted,
        Err(ProviderError::Caller { .. }) => Verdict::Caller,
        Err(ProviderError::Lower { .. }) => Verdict::Lower,
        Err(ProviderError::Request { .. }) => Verdict::Request,
        Err(other) => panic!("definitions made no such refusal: {other}"),
    }
}

const OPENAI_CHAT: Provider = Provider::OpenAiChat { strict: true };
const OPENAI_CHAT_LOOSE: Provider = Provider::OpenAiChat { strict: false };
const RESPONSES: Provider = Provider::OpenAiResponses { strict: true };
const RESPONSES_LOOSE: Provider = Provider::OpenAiResponses { strict: false };
const ANTHROPIC_STRICT: Provider = Provider::Anthropic { strict: true };
const ANTHROPIC: Provider = Provider::Anthropic { strict: false };

const EVERY_PROVIDER: [Provider; 9] = [
    OPENAI_CHAT,
    OPENAI_CHAT_LOOSE,
    RESPONSES,
    RESPONSES_LOOSE,
    ANTHROPIC_STRICT,
    ANTHROPIC,
    Provider::Gemini,
    Provider::GeminiLegacy,
    Provider::Mcp,
];

/// A clean tool with these arguments.
fn tool(name: &str, parameters: Value) -> ToolSpecification {
    ToolSpecification::new(name, "Does one thing").with_parameters(parameters)
}

fn city() -> ToolSpecification {
    tool(
        "weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

fn named(mut spec: ToolSpecification, name: &str) -> ToolSpecification {
    spec.name = name.to_owned();
    spec
}

fn code_only() -> ToolSpecification {
    city().with_callers(Callers::CODE)
}

fn view_only(spec: ToolSpecification) -> ToolSpecification {
    spec.with_ui(ToolUi::new("ui://weather/view").with_visibility(["app"]))
}

/// Arguments that are not an object: no dialect takes them.
fn not_an_object() -> ToolSpecification {
    tool("report", json!({"type": "string"}))
}

/// A tree of itself: Anthropic strict and Gemini `parameters` cannot say it.
fn recursive() -> ToolSpecification {
    tool(
        "tree",
        json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "$defs": {"Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["children"]
            }}
        }),
    )
}

/// An argument that may be any value: the strict dialects and Gemini
/// `parameters` cannot say it.
fn untyped() -> ToolSpecification {
    tool(
        "store",
        json!({"type": "object", "properties": {"value": {}}, "required": ["value"]}),
    )
}

fn namespaced(spec: ToolSpecification) -> ToolSpecification {
    spec.with_namespace(Namespace::new("forecasts", "Weather forecasts"))
}

/// `count` tools with one required string each.
fn many(count: usize) -> Vec<ToolSpecification> {
    (0..count)
        .map(|i| {
            tool(
                &format!("tool_{i}"),
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            )
        })
        .collect()
}

/// One tool with `count` optional string arguments.
fn optional(count: usize) -> Vec<ToolSpecification> {
    let properties: serde_json::Map<String, Value> = (0..count)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    vec![tool(
        "search",
        json!({"type": "object", "properties": properties}),
    )]
}

/// One tool with `count` required arguments that are each a string or a number.
fn unions(count: usize) -> Vec<ToolSpecification> {
    let names: Vec<String> = (0..count).map(|i| format!("p{i}")).collect();
    let properties: serde_json::Map<String, Value> = names
        .iter()
        .map(|name| (name.clone(), json!({"type": ["string", "number"]})))
        .collect();
    vec![tool(
        "search",
        json!({"type": "object", "properties": properties, "required": names}),
    )]
}

/// Every row: what it shows, the provider, the tools, the verdict
/// `definitions` must give (and the check with it).
fn rows() -> Vec<(String, Provider, Vec<ToolSpecification>, Verdict)> {
    use Verdict::*;
    let mut rows = Vec::new();
    let mut row = |what: &str, provider: Provider, specs: Vec<ToolSpecification>, v: Verdict| {
        rows.push((format!("{what} for {provider:?}"), provider, specs, v));
    };
    for provider in EVERY_PROVIDER {
        row("a clean tool", provider, vec![city()], Accepted);
        row(
            "a schema that is not an object",
            provider,
            vec![not_an_object()],
            Lower,
        );
        // Only where a model could call it: the view's own tool is MCP's.
        let view_only_refused = if provider == Provider::Mcp {
            Lower
        } else {
            Accepted
        };
        row(
            "a view-only tool whose schema is not an object",
            provider,
            vec![city(), view_only(not_an_object())],
            view_only_refused,
        );
        // Code may call it: refused where the provider runs no code (MCP
        // serves every tool; its client decides).
        let runs_code = toolbox_provider::hosted(provider) || provider == Provider::Mcp;
        row(
            "a tool only code may call",
            provider,
            vec![city(), named(code_only(), "forecast")],
            if runs_code { Accepted } else { Caller },
        );
        row(
            "a view-only tool only code may call",
            provider,
            vec![city(), view_only(named(code_only(), "forecast"))],
            Accepted,
        );
        row(
            "a tool code or the model may call",
            provider,
            vec![city().with_callers(Callers::ANY)],
            Accepted,
        );
        let cannot_recurse = matches!(provider, ANTHROPIC_STRICT | Provider::GeminiLegacy);
        row(
            "a recursive schema",
            provider,
            vec![recursive()],
            if cannot_recurse { Lower } else { Accepted },
        );
        let needs_types = matches!(
            provider,
            OPENAI_CHAT | RESPONSES | ANTHROPIC_STRICT | Provider::GeminiLegacy
        );
        row(
            "an argument of any type",
            provider,
            vec![untyped()],
            if needs_types { Lower } else { Accepted },
        );
        row(
            "a namespaced tool whose schema is not an object",
            provider,
            vec![city(), namespaced(named(not_an_object(), "daily"))],
            Lower,
        );
        row(
            "a namespaced tool",
            provider,
            vec![namespaced(city())],
            Accepted,
        );
        // The limits on one request: Anthropic strict's only.
        let limited = |over: bool| {
            if over && provider == ANTHROPIC_STRICT {
                Request
            } else {
                Accepted
            }
        };
        let limits = ANTHROPIC_STRICT_LIMITS;
        row(
            "tools at the limit",
            provider,
            many(limits.tools),
            limited(false),
        );
        row(
            "tools past the limit",
            provider,
            many(limits.tools + 1),
            limited(true),
        );
        row(
            "optional arguments at the limit",
            provider,
            optional(limits.optional),
            limited(false),
        );
        row(
            "optional arguments past the limit",
            provider,
            optional(limits.optional + 1),
            limited(true),
        );
        row(
            "unions at the limit",
            provider,
            unions(limits.unions),
            limited(false),
        );
        row(
            "unions past the limit",
            provider,
            unions(limits.unions + 1),
            limited(true),
        );
        // A view-only tool is not offered, so it does not count.
        let mut with_view = many(limits.tools);
        with_view.push(view_only(city()));
        row(
            "tools at the limit and a view-only one",
            provider,
            with_view,
            Accepted,
        );
    }
    rows
}

#[test]
fn the_surface_check_refuses_exactly_what_definitions_refuses() {
    let mut refusals = std::collections::BTreeSet::new();
    for (what, provider, specs, expected) in rows() {
        let answer = provider.definitions(&specs);
        assert_eq!(
            verdict(&answer),
            expected,
            "definitions: {what}: {answer:?}"
        );
        let report = check_surface(&Specs(specs), provider);
        match answer {
            Ok(_) => assert!(report.is_clean(), "{what}: {report}"),
            Err(refusal) => {
                // Refused for the same reason, told the same way.
                for violation in refusal.violations() {
                    assert!(
                        report.violations().contains(&violation),
                        "{what}: the check lacks {violation:?}:\n{report}"
                    );
                }
                refusals.insert((format!("{expected:?}"), format!("{provider:?}")));
            }
        }
    }
    // Every refusal `definitions` makes, each provider that makes it.
    let made = |variant: &str| {
        refusals
            .iter()
            .filter(|(v, _)| v == variant)
            .map(|(_, p)| p.as_str())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        made("Caller"),
        [
            "Gemini",
            "GeminiLegacy",
            "OpenAiChat { strict: false }",
            "OpenAiChat { strict: true }"
        ]
    );
    assert_eq!(made("Lower").len(), EVERY_PROVIDER.len());
    assert_eq!(made("Request"), ["Anthropic { strict: true }"]);
}

#[test]
fn the_check_words_a_code_only_tool_as_definitions_does() {
    let report = check_surface(&Specs(vec![code_only()]), Provider::Gemini);
    assert_eq!(
        report.to_string(),
        "1 problem(s) in 1 tools for Gemini `parametersJsonSchema`:\n  - tool `weather`: may be called only from code, and Gemini runs no code the model writes: offer it through a local code mode, or let the model call it directly (callers `direct` and `code`)\n"
    );
    assert_eq!(
        Provider::Gemini
            .definitions(&[code_only()])
            .unwrap_err()
            .to_string(),
        "tool `weather` may be called only from code, and Gemini runs no code the model writes: offer it through a local code mode, or let the model call it directly (callers `direct` and `code`)"
    );
}
