//! A conversation's reveals within each provider's limits, deferred tools
//! without a catalogue, the search named as each provider calls it, a
//! refused search's reason reaching the model, and suggestions that name
//! only what the model can call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolbox::catalog::SEARCH_TOOL;
use toolbox::provider::Provider;
use toolbox::turn::TurnRunner;
use toolbox::{
    Arguments, Context, DispatchFuture, Namespace, ToolBox, ToolResponse, ToolSpecification,
};

/// Twelve topics of five deferred tools each, one eager tool, counting the
/// calls that run.
struct Many {
    specs: Vec<ToolSpecification>,
    runs: Arc<AtomicUsize>,
}

const TOPICS: [&str; 12] = [
    "invoice",
    "shipment",
    "ticket",
    "calendar",
    "repository",
    "contract",
    "warehouse",
    "payroll",
    "campaign",
    "forecast",
    "playlist",
    "vaccine",
];
const ACTIONS: [&str; 5] = ["create", "read", "update", "archive", "export"];

impl Many {
    fn new() -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The record's id."}},
            "required": ["id"],
            "additionalProperties": false
        });
        let mut specs = vec![ToolSpecification::new("now", "The current time.")];
        for topic in TOPICS {
            let namespace = Namespace::new(topic, format!("Everything about {topic}s."));
            for action in ACTIONS {
                specs.push(
                    ToolSpecification::new(
                        format!("{action}_{topic}"),
                        format!("Does {action} on one {topic} record, by its id."),
                    )
                    .with_parameters(parameters.clone())
                    .with_namespace(namespace.clone())
                    .with_deferred(true),
                );
            }
        }
        Many {
            specs,
            runs: Arc::default(),
        }
    }
}

impl ToolBox for Many {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.specs.clone()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        DispatchFuture::ready(Ok(ToolResponse::text(format!("{name} done"))))
    }
}

fn names(definitions: &Value) -> Vec<String> {
    let list = match definitions.pointer("/0/functionDeclarations") {
        Some(list) => list.as_array().unwrap(),
        None => definitions.as_array().unwrap(),
    };
    list.iter()
        .map(|d| {
            d.pointer("/function/name")
                .or_else(|| d.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_else(|| d["type"].as_str().unwrap())
                .to_owned()
        })
        .collect()
}

async fn step<B: ToolBox>(
    runner: &TurnRunner<'_, B>,
    provider: Provider,
    body: Value,
) -> Vec<Value> {
    let calls = provider
        .parse_response(body.to_string().as_bytes())
        .unwrap();
    let outcomes = runner.run(calls, &Context::new()).await;
    provider.result_messages(&outcomes)
}

#[tokio::test]
async fn ten_anthropic_strict_searches_stay_within_the_limits_and_say_what_left() {
    let tools = Many::new();
    let provider = Provider::Anthropic { strict: true };
    // No catalogue given: the runner builds one for the deferred tools.
    let runner = TurnRunner::new(&tools).provider(provider);
    assert_eq!(
        names(&runner.definitions(&Context::new()).unwrap()),
        ["now", SEARCH_TOOL]
    );
    let mut told_unloaded = Vec::new();
    for (round, topic) in TOPICS.iter().take(10).enumerate() {
        let search = json!({"content": [{"type": "tool_use", "id": format!("toolu_s{round}"),
            "name": "search_tools", "input": {"query": format!("{topic} record")}}]});
        let messages = step(&runner, provider, search).await;
        let blocks = messages[0]["content"][0]["content"]
            .as_array()
            .unwrap()
            .clone();
        let loaded: Vec<&str> = blocks
            .iter()
            .filter_map(|b| b["tool_name"].as_str())
            .collect();
        assert!(
            loaded.iter().any(|name| name.ends_with(topic)),
            "round {round}: {loaded:?}"
        );
        if let Some(note) = blocks.iter().find(|b| b["type"] == "text") {
            let note = note["text"].as_str().unwrap();
            assert!(
                note.starts_with("to make room, these tools were unloaded: `"),
                "{note}"
            );
            assert!(
                note.ends_with("find them with `search_tools` again before calling them"),
                "{note}"
            );
            told_unloaded.push(round);
        }
        // Every request of the conversation can be sent.
        let definitions = runner
            .definitions(&Context::new())
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let offered = names(&definitions);
        assert!(
            offered.len() <= 20,
            "round {round}: {} tools",
            offered.len()
        );
        // What the model was told is loaded is in the request.
        for name in &loaded {
            assert!(offered.iter().any(|o| o == name), "round {round}: {name}");
        }
    }
    assert!(
        !told_unloaded.is_empty(),
        "the reveals never exceeded the limit"
    );
    let revealed = runner.revealed();
    assert!(revealed.len() < 20, "{}", revealed.len());
    // The first topic's tools left first; calling one asks for a search.
    assert!(!revealed.contains("read_invoice"));
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_x", "name": "read_invoice", "input": {"id": "7"}}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(
        messages[0]["content"][0]["content"],
        "the tool `read_invoice` is not loaded yet, so it did not run: find it with `search_tools` first, then call it"
    );
    assert_eq!(tools.runs.load(Ordering::SeqCst), 0);
    // A revealed tool runs, and stays: it is the most recently used.
    let recent = revealed.iter().next().unwrap().to_owned();
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_y", "name": recent, "input": {"id": "7"}}]});
    step(&runner, provider, call).await;
    assert_eq!(tools.runs.load(Ordering::SeqCst), 1);
    assert_eq!(runner.revealed().iter().last(), Some(recent.as_str()));
}

#[tokio::test]
async fn deferred_tools_without_a_catalogue_are_searched_not_sent_in_full() {
    let tools = Many::new();
    for provider in [Provider::Gemini, Provider::OpenAiChat { strict: true }] {
        let runner = TurnRunner::new(&tools).provider(provider);
        let offered = names(&runner.definitions(&Context::new()).unwrap());
        assert_eq!(offered, ["now", SEARCH_TOOL], "{provider:?}");
    }
    let provider = Provider::OpenAiChat { strict: false };
    let runner = TurnRunner::new(&tools).provider(provider);
    let call = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "read_ticket", "arguments": "{\"id\":\"1\"}"}}]}}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(
        messages[0]["content"],
        "the tool `read_ticket` is not loaded yet, so it did not run: find it with `search_tools` first, then call it"
    );
    assert_eq!(tools.runs.load(Ordering::SeqCst), 0);
}

#[test]
fn openai_responses_keeps_namespaces_without_a_catalogue() {
    let tools = Many::new();
    let specs: Vec<ToolSpecification> = tools
        .specifications(&Context::new())
        .into_iter()
        .map(|s| s.with_deferred(false))
        .collect();
    let definitions = Provider::OpenAiResponses { strict: true }
        .definitions(&specs)
        .unwrap();
    let items = definitions.as_array().unwrap();
    assert_eq!(items.len(), 1 + TOPICS.len());
    assert_eq!(items[0]["name"], "now");
    assert_eq!(items[1]["type"], "namespace");
    assert_eq!(items[1]["name"], "invoice");
    assert_eq!(items[1]["description"], "Everything about invoices.");
    assert_eq!(items[1]["tools"].as_array().unwrap().len(), ACTIONS.len());
    assert_eq!(items[1]["tools"][0]["name"], "create_invoice");
}

#[tokio::test]
async fn openai_responses_is_told_why_a_search_loaded_nothing() {
    let tools = Many::new();
    let provider = Provider::OpenAiResponses { strict: true };
    let runner = TurnRunner::new(&tools).provider(provider);
    let search = json!({"output": [{"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s1",
        "execution": "client", "status": "completed", "arguments": {"query": "  "}}]});
    let messages = step(&runner, provider, search).await;
    assert_eq!(messages[0]["type"], "tool_search_output");
    assert_eq!(messages[0]["tools"], json!([]));
    assert_eq!(
        messages[1],
        json!({"type": "message", "role": "developer",
            "content": "The tool search loaded no tool: invalid arguments at `query`: the query is empty; say what the tool should do"})
    );
    // The refusal of an unloaded tool names this provider's search.
    let call = json!({"output": [{"type": "function_call", "call_id": "call_2", "name": "read_ticket",
        "arguments": "{\"id\":\"1\"}"}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(
        messages[0]["output"],
        "the tool `read_ticket` is not loaded yet, so it did not run: find it with `tool_search` first, then call it"
    );
}

#[tokio::test]
async fn an_unknown_tools_suggestions_name_only_callable_tools() {
    let tools = Many::new();
    let provider = Provider::Anthropic { strict: false };
    let runner = TurnRunner::new(&tools).provider(provider);
    // `read_invoices` is close to the deferred `read_invoice`, never revealed.
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": "read_invoices", "input": {}}]});
    let messages = step(&runner, provider, call).await;
    let text = messages[0]["content"][0]["content"].as_str().unwrap();
    assert_eq!(
        text,
        "unknown tool `read_invoices`; more tools can be found with `search_tools`."
    );
    assert!(!text.contains("`read_invoice`"), "{text}");
    // Once revealed, it is suggested.
    let search = json!({"content": [{"type": "tool_use", "id": "toolu_s", "name": "search_tools",
        "input": {"query": "invoice record"}}]});
    step(&runner, provider, search).await;
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_2", "name": "read_invoices", "input": {}}]});
    let messages = step(&runner, provider, call).await;
    let text = messages[0]["content"][0]["content"].as_str().unwrap();
    assert!(
        text.starts_with("unknown tool `read_invoices`; did you mean `read_invoice`"),
        "{text}"
    );
}

#[tokio::test]
async fn a_hostile_query_is_refused_with_a_text_and_costs_no_more_than_a_short_one() {
    use toolbox::catalog::{ToolIndex, ToolSearch};
    let tools = Many::new();
    let provider = Provider::OpenAiChat { strict: false };
    let runner = TurnRunner::new(&tools).provider(provider);
    let long_word = "x".repeat(400_000);
    let many_words = "ab ".repeat(1_000_000);
    let mut odd = String::new();
    for i in 0..20_000u32 {
        odd.push(char::from_u32(0x4e00 + i % 2000).unwrap());
        odd.push_str("é\u{301}");
    }
    let expected = [
        (
            long_word.as_str(),
            "the query is 400000 bytes; a search reads at most 1024",
        ),
        (
            many_words.as_str(),
            "the query is 3000000 bytes; a search reads at most 1024",
        ),
        (odd.as_str(), "bytes; a search reads at most 1024"),
        (
            &*"a ".repeat(80),
            "the query has 80 words; a search reads at most 64",
        ),
    ];
    for (query, said) in expected {
        let body = json!({"choices": [{"message": {"tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": SEARCH_TOOL, "arguments": json!({"query": query}).to_string()}}]}}]});
        let messages = step(&runner, provider, body).await;
        let content = messages[0]["content"].as_str().unwrap();
        assert!(content.contains(said), "{content}");
        assert!(content.len() < 300, "{content}");
    }
    // Whoever calls the index directly: the query is read up to the bound,
    // so the worst query costs about what a short one does (this bound is
    // far above it; the quadratic split took 30 s).
    let specs: Vec<ToolSpecification> = tools.specs.clone();
    let index = ToolIndex::new(&specs);
    for query in [long_word.as_str(), many_words.as_str(), odd.as_str()] {
        let started = std::time::Instant::now();
        let _ = index.search(query, 5);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
    assert_eq!(
        index.search(&format!("invoice {long_word}"), 1)[0]
            .name
            .split('_')
            .nth(1),
        Some("invoice")
    );
}
