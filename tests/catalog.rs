//! Large tool sets: namespaces, deferred tools, tool search per provider,
//! and the turn that searches, reveals and calls.

#[path = "support/catalog.rs"]
mod fixture;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use toolbox::catalog::{Catalog, CatalogError, Revealed, ToolIndex, ToolSearch, SEARCH_TOOL};
use toolbox::prelude::*;
use toolbox::provider::Provider;
use toolbox::turn::TurnRunner;
use toolbox::{Context, FnToolBox, Namespace, ToolSpecification};

fn fixture_file(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/providers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every key of `ours` is a key the documented `example` of the same kind
/// has (recursively through `tools`): our payload uses only documented
/// fields, and the ones the example requires are there.
fn assert_shape(ours: &Value, example: &Value, required: &[&str], at: &str) {
    let (ours, example) = (ours.as_object().unwrap(), example.as_object().unwrap());
    for key in ours.keys() {
        assert!(
            example.contains_key(key),
            "{at}: `{key}` is not in the documented shape {example:?}"
        );
    }
    for key in required {
        assert!(
            ours.contains_key(*key),
            "{at}: `{key}` is missing from {ours:?}"
        );
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

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CustomerArgs {
    /// The customer's id.
    customer_id: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PaymentArgs {
    /// The payment to refund.
    payment_id: String,
}

/// A small shop: `now` eager, the CRM and billing tools deferred, each
/// counting its runs.
fn shop(runs: &Arc<AtomicUsize>) -> FnToolBox {
    let crm = ("crm", "Customers and their orders.");
    let billing = ("billing", "Payments, refunds and invoices.");
    let counted = |runs: &Arc<AtomicUsize>| {
        let runs = runs.clone();
        move || {
            runs.fetch_add(1, Ordering::SeqCst);
        }
    };
    let (a, b, c) = (counted(runs), counted(runs), counted(runs));
    FnToolBox::new([
        tool_fn("now", "The current time.", |_: NoArgs| async {
            "2026-12-03T12:00:00Z"
        }),
        tool_fn(
            "get_customer",
            "A customer's name and address, by id.",
            move |args: CustomerArgs| {
                a();
                async move { format!("customer {}", args.customer_id) }
            },
        )
        .namespace(crm.0, crm.1)
        .defer(),
        tool_fn(
            "list_orders",
            "The open orders of a customer.",
            move |args: CustomerArgs| {
                b();
                async move { format!("2 open orders for {}", args.customer_id) }
            },
        )
        .namespace(crm.0, crm.1)
        .defer()
        .with_example(json!({"customer_id": "CUST-1"})),
        tool_fn(
            "refund_payment",
            "Refunds a card payment.",
            move |args: PaymentArgs| {
                c();
                async move { format!("refunded {}", args.payment_id) }
            },
        )
        .namespace(billing.0, billing.1)
        .defer()
        .destructive(),
    ])
    .unwrap()
}

#[test]
fn openai_responses_offers_namespaces_with_deferred_functions() {
    let fixture = fixture_file("openai_responses_tool_search.json");
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = shop(&runs);
    let provider = Provider::OpenAiResponses { strict: true };
    // Hosted: every function, deferred ones marked, grouped in namespaces.
    let catalog = Catalog::of(&tools, &Context::new())
        .unwrap()
        .hosted_search(true);
    let definitions = catalog.definitions(provider, &Revealed::new()).unwrap();
    let documented = &fixture["hosted_request_tools"];
    let items = definitions.as_array().unwrap();
    assert_eq!(
        names(&definitions),
        ["now", "crm", "billing", "tool_search"]
    );
    let crm = &items[1];
    assert_shape(
        crm,
        &documented[0],
        &["type", "name", "description", "tools"],
        "namespace",
    );
    assert_eq!(crm["description"], "Customers and their orders.");
    for function in crm["tools"].as_array().unwrap() {
        assert_shape(
            function,
            &documented[0]["tools"][0],
            &["type", "name", "parameters", "defer_loading"],
            "function",
        );
        assert_eq!(function["defer_loading"], true);
    }
    assert_eq!(items[3], documented[1]);
    // `now` is not deferred: no `defer_loading`.
    assert!(items[0].get("defer_loading").is_none());

    // Client search (the default): the deferred functions are not sent; the
    // search tool names the namespaces.
    let catalog = Catalog::of(&tools, &Context::new()).unwrap();
    let definitions = catalog.definitions(provider, &Revealed::new()).unwrap();
    assert_eq!(names(&definitions), ["now", "tool_search"]);
    let search = &definitions[1];
    assert_shape(
        search,
        &fixture["client_request_tools"][1],
        &["type", "execution", "description", "parameters"],
        "tool_search",
    );
    assert_eq!(search["execution"], "client");
    let description = search["description"].as_str().unwrap();
    assert!(
        description.contains("crm: Customers and their orders."),
        "{description}"
    );
    assert!(
        description.contains("billing: Payments, refunds and invoices; crm:"),
        "{description}"
    );
}

#[test]
fn anthropic_gemini_and_chat_offer_the_search_tool_and_what_was_revealed() {
    let fixture = fixture_file("anthropic_tool_search.json");
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = shop(&runs);
    let catalog = Catalog::of(&tools, &Context::new()).unwrap();
    let anthropic = Provider::Anthropic { strict: false };
    let mut revealed = Revealed::new();
    assert_eq!(
        names(&catalog.definitions(anthropic, &revealed).unwrap()),
        ["now", SEARCH_TOOL]
    );
    revealed.insert("list_orders");
    let definitions = catalog.definitions(anthropic, &revealed).unwrap();
    assert_eq!(names(&definitions), ["now", "list_orders", SEARCH_TOOL]);
    let list_orders = &definitions[1];
    assert_shape(
        list_orders,
        &fixture["custom_request_tools"][1],
        &["name", "input_schema", "defer_loading", "input_examples"],
        "tool",
    );
    assert_eq!(list_orders["defer_loading"], true);
    assert_eq!(
        list_orders["input_examples"],
        json!([{"customer_id": "CUST-1"}])
    );

    // Hosted: every tool, the deferred ones marked, and Anthropic's BM25 search.
    let hosted = catalog.clone().hosted_search(true);
    let definitions = hosted.definitions(anthropic, &Revealed::new()).unwrap();
    assert_eq!(
        names(&definitions),
        [
            "now",
            "get_customer",
            "list_orders",
            "refund_payment",
            "tool_search_tool_bm25"
        ]
    );
    assert_eq!(definitions[4], fixture["hosted_request_tools"][0]);
    assert!(definitions[0].get("defer_loading").is_none());
    assert_eq!(definitions[3]["defer_loading"], true);

    // Gemini and Chat Completions: the search tool and the revealed tools,
    // in full; examples in the description.
    for provider in [
        Provider::Gemini,
        Provider::GeminiLegacy,
        Provider::OpenAiChat { strict: true },
    ] {
        let definitions = catalog.definitions(provider, &Revealed::new()).unwrap();
        assert_eq!(names(&definitions), ["now", SEARCH_TOOL], "{provider:?}");
        let definitions = catalog.definitions(provider, &revealed).unwrap();
        assert_eq!(
            names(&definitions),
            ["now", "list_orders", SEARCH_TOOL],
            "{provider:?}"
        );
        let text = definitions.to_string();
        assert!(
            text.contains(r#"Example arguments: {\"customer_id\":\"CUST-1\"}"#),
            "{text}"
        );
        assert!(!text.contains("defer_loading"), "{text}");
    }
}

#[test]
fn a_catalogue_without_deferred_tools_offers_everything_and_no_search() {
    let catalog = Catalog::new(fixture::base()).unwrap();
    for provider in [Provider::Gemini, Provider::Anthropic { strict: false }] {
        let definitions = catalog.definitions(provider, &Revealed::new()).unwrap();
        assert_eq!(names(&definitions).len(), 86);
        assert!(!names(&definitions).iter().any(|n| n == SEARCH_TOOL));
    }
    // OpenAI Responses: the nine servers as namespaces.
    let definitions = catalog
        .definitions(
            Provider::OpenAiResponses { strict: false },
            &Revealed::new(),
        )
        .unwrap();
    assert_eq!(definitions.as_array().unwrap().len(), 9);
    assert!(definitions
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n["type"] == "namespace"));
}

#[test]
fn catalogue_errors_name_the_problem() {
    let deferred = ToolSpecification::new("a", "A.").with_deferred(true);
    let error = Catalog::new(vec![
        deferred.clone(),
        ToolSpecification::new(SEARCH_TOOL, "Mine."),
    ])
    .unwrap_err();
    assert_eq!(error, CatalogError::SearchToolName);
    assert_eq!(
        Catalog::new(vec![deferred.clone(), deferred.clone()])
            .unwrap_err()
            .to_string(),
        "two tools are named `a`; a catalogue needs one name per tool"
    );
    let empty = deferred.clone().with_namespace(Namespace::new("crm", " "));
    assert_eq!(
        Catalog::new(vec![empty]).unwrap_err().to_string(),
        "namespace `crm`: the description is empty; say what its tools are for"
    );
    let long = deferred.with_namespace(Namespace::new("crm", "x".repeat(2000)));
    assert_eq!(
        Catalog::new(vec![long]).unwrap_err().to_string(),
        "namespace `crm`: the description is 2000 bytes long; at most 1024 are sent"
    );
}

/// Runs one scripted model response through the runner and returns the
/// outcomes' result messages.
async fn step(runner: &TurnRunner<'_, FnToolBox>, provider: Provider, body: Value) -> Vec<Value> {
    let calls = provider
        .parse_response(body.to_string().as_bytes())
        .unwrap();
    let outcomes = runner.run(calls, &Context::new()).await;
    provider.result_messages(&outcomes)
}

#[tokio::test]
async fn openai_responses_turn_searches_reveals_and_calls() {
    let fixture = fixture_file("openai_responses_tool_search.json");
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = shop(&runs);
    let catalog = Catalog::of(&tools, &Context::new()).unwrap();
    let provider = Provider::OpenAiResponses { strict: true };
    let runner = TurnRunner::new(&tools).provider(provider).catalog(&catalog);
    // Request 1: `now` and the client search.
    assert_eq!(
        names(&runner.definitions(&Context::new()).unwrap()),
        ["now", "tool_search"]
    );
    // The model searches; toolbox answers with a `tool_search_output`.
    let search = json!({"output": [{"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s1",
        "execution": "client", "status": "completed", "arguments": {"query": "open orders of a customer"}}]});
    let messages = step(&runner, provider, search).await;
    let output = &messages[0];
    assert_shape(
        output,
        &fixture["client_search_output"],
        &["type", "call_id", "execution", "tools"],
        "tool_search_output",
    );
    assert_eq!(output["call_id"], "call_s1");
    let crm = &output["tools"][0];
    assert_eq!(crm["type"], "namespace");
    assert_eq!(crm["name"], "crm");
    let loaded: Vec<&str> = crm["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(loaded.contains(&"list_orders"), "{loaded:?}");
    assert!(crm["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["defer_loading"] == true));
    assert!(runner.revealed().contains("list_orders"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Request 2 (the revealed tools travel in the input, not in `tools`).
    assert_eq!(
        names(&runner.definitions(&Context::new()).unwrap()),
        ["now", "tool_search"]
    );
    // The model calls the loaded function, as the guide shows it.
    let call = json!({"output": [{"type": "function_call", "id": "fc_1", "call_id": "call_2", "namespace": "crm",
        "name": "list_orders", "arguments": "{\"customer_id\":\"CUST-9\"}", "status": "completed"}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(
        messages[0],
        json!({"type": "function_call_output", "call_id": "call_2", "output": "2 open orders for CUST-9"})
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // A deferred tool no search revealed does not run.
    let call = json!({"output": [{"type": "function_call", "call_id": "call_3", "name": "refund_payment",
        "arguments": "{\"payment_id\":\"p1\"}"}]});
    let messages = step(&runner, provider, call).await;
    let text = messages[0]["output"].as_str().unwrap();
    assert_eq!(
        text,
        "the tool `refund_payment` is not loaded yet, so it did not run: find it with `tool_search` first, then call it"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn anthropic_turn_searches_reveals_and_calls() {
    let fixture = fixture_file("anthropic_tool_search.json");
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = shop(&runs);
    let catalog = Catalog::of(&tools, &Context::new()).unwrap();
    let provider = Provider::Anthropic { strict: false };
    // Every call is observed, the searches the runner answers too.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (started, ended) = (seen.clone(), seen.clone());
    let handler = toolbox::ToolHandler::empty()
        .on_start(move |e| started.lock().unwrap().push(format!("start {}", e.name)))
        .on_success(move |e| ended.lock().unwrap().push(format!("success {}", e.name)));
    let runner = TurnRunner::new(&tools)
        .provider(provider)
        .catalog(&catalog)
        .handler(handler);
    assert_eq!(
        names(&runner.definitions(&Context::new()).unwrap()),
        ["now", SEARCH_TOOL]
    );
    let search = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_search_1",
        "name": "search_tools", "input": {"query": "open orders of a customer"}}]});
    let messages = step(&runner, provider, search).await;
    let result = &messages[0]["content"][0];
    assert_shape(
        result,
        &fixture["custom_search_result"]["content"][0],
        &["type", "tool_use_id", "content"],
        "tool_result",
    );
    let references = result["content"].as_array().unwrap();
    assert!(references.iter().all(|r| r["type"] == "tool_reference"));
    assert_eq!(
        *seen.lock().unwrap(),
        ["start search_tools", "success search_tools"]
    );
    assert!(references.contains(&json!({"type": "tool_reference", "tool_name": "list_orders"})));
    // Request 2 carries the revealed tools, `defer_loading` (the references
    // expand them).
    let definitions = runner.definitions(&Context::new()).unwrap();
    let offered = names(&definitions);
    assert!(offered.contains(&"list_orders".to_owned()), "{offered:?}");
    assert!(
        !offered.contains(&"refund_payment".to_owned()),
        "{offered:?}"
    );
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_2", "name": "list_orders", "input": {"customer_id": "C7"}}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(messages[0]["content"][0]["content"], "2 open orders for C7");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_3", "name": "refund_payment", "input": {"payment_id": "p1"}}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(messages[0]["content"][0]["is_error"], true);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn gemini_turn_searches_reveals_and_calls_across_runners() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = shop(&runs);
    let catalog = Catalog::of(&tools, &Context::new()).unwrap();
    let provider = Provider::Gemini;
    let runner = TurnRunner::new(&tools).provider(provider).catalog(&catalog);
    let search = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "search_tools", "args": {"query": "open orders of a customer"}}}]}}]});
    let messages = step(&runner, provider, search).await;
    let answer = &messages[0]["parts"][0]["functionResponse"]["response"]["output"];
    let loaded: Vec<&str> = answer["loaded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(loaded.contains(&"list_orders"), "{answer}");
    // Each hit says where it lives and what it does; the note says how to
    // search again.
    let hit = answer["loaded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "list_orders")
        .unwrap();
    assert_eq!(hit["namespace"], "crm", "{answer}");
    assert!(!hit["description"].as_str().unwrap().is_empty());
    assert_eq!(
        answer["note"],
        "these tools can be called from your next step; if none fits, call `search_tools` again with other words"
    );
    // The pending conversation is stored and picked up by another runner.
    let stored = serde_json::to_string(&runner.revealed()).unwrap();
    let restored: Revealed = serde_json::from_str(&stored).unwrap();
    let runner = TurnRunner::new(&tools)
        .provider(provider)
        .catalog(&catalog)
        .with_revealed(restored);
    let definitions = runner.definitions(&Context::new()).unwrap();
    assert!(names(&definitions).contains(&"list_orders".to_owned()));
    assert!(definitions.to_string().contains("customer_id"));
    let call = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "list_orders", "args": {"customer_id": "G1"}}}]}}]});
    let messages = step(&runner, provider, call).await;
    assert_eq!(
        messages[0]["parts"][0]["functionResponse"]["response"]["output"],
        "2 open orders for G1"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // A search with no query is refused with what to send.
    let bad = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "search_tools", "args": {}}}]}}]});
    let messages = step(&runner, provider, bad).await;
    assert_eq!(
        messages[0]["parts"][0]["functionResponse"]["response"]["error"],
        "invalid arguments: missing field `query`; say what the tool should do"
    );
}

#[test]
fn labelled_queries_find_their_tool() {
    let specs = fixture::base();
    let index = ToolIndex::new(&specs);
    let (mut at1, mut at5) = (0, 0);
    let mut misses = Vec::new();
    for (query, expected) in fixture::LABELLED {
        let hits: Vec<String> = index.search(query, 5).into_iter().map(|h| h.name).collect();
        if hits.first().map(String::as_str) == Some(*expected) {
            at1 += 1;
        }
        if hits.iter().any(|h| h == expected) {
            at5 += 1;
        } else {
            misses.push(format!("{query:?} → {hits:?}, wanted {expected}"));
        }
    }
    let n = fixture::LABELLED.len() as f64;
    let (recall1, recall5) = (at1 as f64 / n, at5 as f64 / n);
    println!(
        "{} labelled queries over {} tools: recall@1 {recall1:.3}, recall@5 {recall5:.3}",
        n,
        specs.len()
    );
    assert!(
        recall5 >= 0.9,
        "recall@5 {recall5:.3} < 0.9; missed:\n{}",
        misses.join("\n")
    );
    assert!(recall1 >= 0.7, "recall@1 {recall1:.3} < 0.7");
}

#[test]
fn the_large_catalogue_is_at_least_500_tools_in_40_namespaces() {
    let specs = fixture::large(6);
    let namespaces: BTreeSet<&str> = specs
        .iter()
        .map(|s| s.namespace.as_ref().unwrap().name.as_str())
        .collect();
    assert!(
        specs.len() >= 500 && namespaces.len() >= 40,
        "{} tools, {} namespaces",
        specs.len(),
        namespaces.len()
    );
    let catalog = Catalog::new(specs).unwrap();
    // A search in one organisation's copy finds that copy's tool.
    let hits = catalog.search("hooli github open a new issue", 3);
    assert_eq!(hits[0].name, "hooli_github_create_issue");
}

/// A tool box whose example does not fit its arguments.
mod examples {
    use toolbox::prelude::*;

    pub(crate) struct Weather;

    /// Weather lookups.
    #[tool_box(register = false)]
    impl Weather {
        /// The weather in a city.
        #[tool(example = r#"{"city": "Oslo"}"#, example = r#"{"city": 7}"#)]
        pub(crate) fn weather(&self, city: String) -> String {
            city
        }

        /// A forecast (deferred: offered once a search finds it).
        #[tool(defer, example = toolbox::serde_json::json!({"city": "Bergen", "days": 3}))]
        pub(crate) fn forecast(&self, city: String, days: u8) -> String {
            format!("{city} {days}")
        }
    }
}

#[test]
fn an_example_that_does_not_fit_fails_the_surface_check_with_its_path() {
    let report =
        toolbox::testing::check_surface(&examples::Weather, Provider::Anthropic { strict: false });
    assert_eq!(report.violations().len(), 1, "{report}");
    let violation = &report.violations()[0];
    assert_eq!(violation.tool, "weather");
    assert_eq!(violation.path, "examples[1].city");
    assert!(
        violation
            .rule
            .starts_with("the example does not fit the tool's arguments: "),
        "{}",
        violation.rule
    );
    // The macro's flags reach the specifications.
    let specs = examples::Weather.specifications(&Context::new());
    assert_eq!(
        specs[0].examples,
        [
            serde_json::json!({"city": "Oslo"}),
            serde_json::json!({"city": 7})
        ]
    );
    assert!(!specs[0].deferred && specs[1].deferred);
    // The generated check test runs the same check and fails with the path.
    let panic = std::panic::catch_unwind(|| {
        toolbox::macro_support::check_surfaces(&examples::Weather, &[Provider::Gemini]);
    })
    .unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(
        text.contains("tool `weather`, at `examples[1].city`"),
        "{text}"
    );
}
