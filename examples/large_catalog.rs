//! A large tool set, offered a few tools at a time: 516 real MCP tool
//! schemas in 54 namespaces, every tool deferred. For OpenAI Responses,
//! Anthropic and Gemini, one recorded (offline) conversation of three
//! requests: the model searches, toolbox answers and reveals the matches,
//! the model calls one; a call to a tool no search revealed is refused
//! without running.
//!
//! Run it with `cargo run --example large_catalog`.

#[path = "../tests/support/catalog.rs"]
mod fixture;

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};
use toolbox::catalog::Catalog;
use toolbox::provider::Provider;
use toolbox::turn::TurnRunner;
use toolbox::{
    Arguments, Context, DispatchFuture, ToolBox, ToolError, ToolResponse, ToolSpecification,
};

/// Stands in for the 516 tools' servers: every tool answers with what it
/// was asked, and the runs are counted.
struct Catalogue {
    specs: Vec<ToolSpecification>,
    runs: AtomicUsize,
}

impl ToolBox for Catalogue {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.specs.clone()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        if !self.specs.iter().any(|s| s.name == name) {
            return DispatchFuture::ready(Err(ToolError::unknown_tool(name, [])));
        }
        self.runs.fetch_add(1, Ordering::SeqCst);
        let arguments = arguments
            .to_value()
            .map(std::borrow::Cow::into_owned)
            .unwrap_or(Value::Null);
        DispatchFuture::ready(Ok(ToolResponse::text(format!(
            "{name} ran with {arguments}"
        ))))
    }
}

/// What a model sent, as the provider's response body.
fn recorded(provider: Provider, step: &str) -> Value {
    let issue = json!({"owner": "acme", "repo": "site", "title": "The logo is blurry"});
    let query = json!({"query": "open a new issue in an acme github repository"});
    match (provider, step) {
        (Provider::OpenAiResponses { .. }, "search") => {
            json!({"output": [{"type": "tool_search_call",
            "id": "tsc_1", "call_id": "call_search", "execution": "client", "status": "completed", "arguments": query}]})
        }
        (Provider::OpenAiResponses { .. }, "call") => {
            json!({"output": [{"type": "function_call", "id": "fc_1",
            "call_id": "call_issue", "namespace": "acme_github", "name": "acme_github_create_issue",
            "arguments": issue.to_string()}]})
        }
        (Provider::OpenAiResponses { .. }, _) => {
            json!({"output": [{"type": "function_call", "call_id": "call_merge",
            "name": "acme_github_merge_pull_request", "arguments": "{\"owner\":\"acme\",\"repo\":\"site\",\"pull_number\":7}"}]})
        }
        (Provider::Anthropic { .. }, "search") => {
            json!({"content": [{"type": "tool_use", "id": "toolu_search",
            "name": "search_tools", "input": query}]})
        }
        (Provider::Anthropic { .. }, "call") => {
            json!({"content": [{"type": "tool_use", "id": "toolu_issue",
            "name": "acme_github_create_issue", "input": issue}]})
        }
        (Provider::Anthropic { .. }, _) => {
            json!({"content": [{"type": "tool_use", "id": "toolu_merge",
            "name": "acme_github_merge_pull_request", "input": {"owner": "acme", "repo": "site", "pull_number": 7}}]})
        }
        (_, "search") => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "search_tools", "args": query}}]}}]}),
        (_, "call") => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "acme_github_create_issue", "args": issue}}]}}]}),
        _ => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "acme_github_merge_pull_request", "args": {"owner": "acme", "repo": "site", "pull_number": 7}}}]}}]}),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let specs = fixture::large(6);
    let eager_bytes = Provider::Gemini
        .definitions(
            &specs
                .iter()
                .filter(|s| Provider::Gemini.definition(s).is_ok())
                .cloned()
                .collect::<Vec<_>>(),
        )?
        .to_string()
        .len();
    let tools = Catalogue {
        specs,
        runs: AtomicUsize::new(0),
    };
    let ctx = Context::new();
    let catalog = Catalog::of(&tools, &ctx)?;
    println!(
        "{} tools in {} namespaces, all deferred; offered eagerly they would be {eager_bytes} bytes of Gemini definitions",
        catalog.specifications().len(),
        catalog.namespaces().len()
    );
    for provider in [
        Provider::OpenAiResponses { strict: false },
        Provider::Anthropic { strict: false },
        Provider::Gemini,
    ] {
        println!("\n== {provider:?}");
        let runner = TurnRunner::new(&tools).provider(provider).catalog(&catalog);
        let before = tools.runs.load(Ordering::SeqCst);
        for step in ["search", "call", "unrevealed"] {
            let definitions = runner.definitions(&ctx)?;
            println!(
                "request ({step}): {} bytes of tool definitions",
                definitions.to_string().len()
            );
            let body = recorded(provider, step).to_string();
            let calls = provider.parse_response(body.as_bytes())?;
            let outcomes = runner.run(calls, &ctx).await;
            for outcome in outcomes.iter().filter(|o| o.response.is_error) {
                println!("  refused: {}", outcome.response.content);
            }
            for message in provider.result_messages(&outcomes) {
                println!("  sent back: {}", short(&message));
            }
        }
        let revealed = runner.revealed();
        let revealed: Vec<&str> = revealed.iter().collect();
        println!("revealed: {revealed:?}");
        let ran = tools.runs.load(Ordering::SeqCst) - before;
        assert_eq!(ran, 1, "only the revealed tool ran");
        assert!(runner.revealed().contains("acme_github_create_issue"));
        assert!(!runner.revealed().contains("acme_github_merge_pull_request"));
    }
    Ok(())
}
