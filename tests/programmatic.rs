//! Tools a model calls from code: callers lowered to Anthropic's
//! `allowed_callers` and OpenAI's programmatic tool calling, calls parsed
//! with their callers, and whole turns (program → its calls → its output)
//! through `TurnRunner` carrying what the provider needs back
//! (`tests/fixtures/programmatic/`).

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::program::{Caller, Callers, ProgramState};
use toolbox::provider::{Provider, ProviderError};
use toolbox::turn::TurnRunner;
use toolbox::{Context, FnToolBox, ToolSpecification};

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/programmatic/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect(&path)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sku {
    /// The stock-keeping unit.
    sku: String,
}

/// `get_inventory` only code may call, `get_demand` the model or code,
/// `cancel_order` the model alone (the default).
fn shop() -> FnToolBox {
    FnToolBox::new([
        tool_fn(
            "get_inventory",
            "Units in stock for a SKU.",
            |args: Sku| async move { json!({"sku": args.sku, "availableUnits": 42}).to_string() },
        )
        .callers(Callers::CODE),
        tool_fn(
            "get_demand",
            "Units requested for a SKU.",
            |args: Sku| async move { json!({"sku": args.sku, "requestedUnits": 31}).to_string() },
        )
        .callers(Callers::ANY),
        tool_fn(
            "cancel_order",
            "Cancels an order.",
            |args: Sku| async move { format!("cancelled {}", args.sku) },
        ),
    ])
    .unwrap()
}

fn find<'v>(tools: &'v Value, name: &str) -> &'v Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name || t.pointer("/function/name") == Some(&json!(name)))
        .unwrap_or_else(|| panic!("no `{name}` in {tools}"))
}

#[test]
fn anthropic_definitions_say_who_may_call_each_tool() {
    let tools = Provider::Anthropic { strict: false }
        .definitions(&shop().specifications(&Context::new()))
        .unwrap();
    assert_eq!(
        find(&tools, "get_inventory")["allowed_callers"],
        json!(["code_execution_20260120"])
    );
    assert_eq!(
        find(&tools, "get_demand")["allowed_callers"],
        json!(["direct", "code_execution_20260120"])
    );
    // A direct-only tool is written as before: no `allowed_callers`.
    assert!(find(&tools, "cancel_order")
        .get("allowed_callers")
        .is_none());
    // The code execution tool, once, last.
    let list = tools.as_array().unwrap();
    assert_eq!(
        list.last().unwrap(),
        &json!({"type": "code_execution_20260120", "name": "code_execution"})
    );
    assert_eq!(
        list.iter()
            .filter(|t| t["name"] == "code_execution")
            .count(),
        1
    );
}

#[test]
fn responses_definitions_turn_on_programmatic_tool_calling() {
    let provider = Provider::OpenAiResponses { strict: true };
    let tools = provider
        .definitions(&shop().specifications(&Context::new()))
        .unwrap();
    assert_eq!(
        find(&tools, "get_inventory")["allowed_callers"],
        json!(["programmatic"])
    );
    assert_eq!(
        find(&tools, "get_demand")["allowed_callers"],
        json!(["direct", "programmatic"])
    );
    assert!(find(&tools, "cancel_order")
        .get("allowed_callers")
        .is_none());
    assert_eq!(
        tools.as_array().unwrap().last().unwrap(),
        &json!({"type": "programmatic_tool_calling"})
    );
    // The documented definition's fields, as the recorded request has them.
    let inventory = find(&tools, "get_inventory");
    for key in ["type", "name", "description", "parameters", "strict"] {
        assert!(inventory.get(key).is_some(), "`{key}` in {inventory}");
    }
    // Inside namespaces too, with the hosted tool beside them.
    let namespaced: Vec<ToolSpecification> = shop()
        .specifications(&Context::new())
        .into_iter()
        .map(|s| s.with_namespace(toolbox::Namespace::new("shop", "Stock and orders.")))
        .collect();
    let tools = provider.definitions(&namespaced).unwrap();
    assert_eq!(tools[0]["type"], "namespace");
    assert_eq!(
        tools[0]["tools"][0]["allowed_callers"],
        json!(["programmatic"])
    );
    assert_eq!(tools[1], json!({"type": "programmatic_tool_calling"}));
}

#[test]
fn a_provider_without_hosted_code_refuses_a_code_only_tool_by_name() {
    let specs = shop().specifications(&Context::new());
    for provider in [
        Provider::OpenAiChat { strict: true },
        Provider::Gemini,
        Provider::GeminiLegacy,
    ] {
        let error = provider.definitions(&specs).unwrap_err();
        assert!(matches!(error, ProviderError::Caller { ref tool, .. } if tool == "get_inventory"));
        let text = error.to_string();
        assert!(
            text.starts_with("tool `get_inventory` may be called only from code, and ")
                && text.contains("runs no code the model writes")
                && text.contains("local code mode"),
            "{text}"
        );
    }
    // Without it, the tools code may also call are offered as direct
    // tools, nothing added.
    let direct: Vec<ToolSpecification> = specs.into_iter().filter(|s| s.callers.direct()).collect();
    let tools = Provider::OpenAiChat { strict: true }
        .definitions(&direct)
        .unwrap();
    assert_eq!(tools.as_array().unwrap().len(), 2);
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.get("allowed_callers").is_none()
            && t["function"].get("allowed_callers").is_none()));
    // MCP serves every tool: its client decides who calls.
    let served = Provider::Mcp
        .definitions(&shop().specifications(&Context::new()))
        .unwrap();
    assert_eq!(served.as_array().unwrap().len(), 3);
}

#[test]
fn calls_are_read_with_their_callers_on_both_paths() {
    let anthropic = Provider::Anthropic { strict: false };
    let body = fixture("anthropic.1.json");
    let calls = anthropic.parse_calls(&body).unwrap();
    let fast = anthropic
        .parse_response(body.to_string().as_bytes())
        .unwrap();
    assert_eq!(calls, fast);
    assert_eq!(
        calls.len(),
        2,
        "the server_tool_use block is not ours to run"
    );
    assert_eq!(
        calls[0].caller,
        Some(Caller::Code {
            runtime: "code_execution_20260120".into(),
            id: "srvtoolu_01Code".into()
        })
    );
    assert_eq!(calls[1].caller, Some(Caller::Direct));

    let responses = Provider::OpenAiResponses { strict: true };
    let body = fixture("responses.1.json");
    let calls = responses.parse_calls(&body).unwrap();
    assert_eq!(
        calls,
        responses
            .parse_response(body.to_string().as_bytes())
            .unwrap()
    );
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "get_inventory");
    assert_eq!(
        calls[0].caller,
        Some(Caller::Code {
            runtime: "program".into(),
            id: "call_Program01".into()
        })
    );
    // A call that names no caller is a direct one, and stays without one.
    let plain =
        json!({"content": [{"type": "tool_use", "id": "t", "name": "cancel_order", "input": {}}]});
    assert_eq!(anthropic.parse_calls(&plain).unwrap()[0].caller, None);
    // The caller survives a round trip through a stored turn.
    let stored: toolbox::args::ToolCall =
        serde_json::from_str(&serde_json::to_string(&calls[0]).unwrap()).unwrap();
    assert_eq!(stored, calls[0]);
}

#[tokio::test]
async fn an_anthropic_turn_answers_the_code_and_sends_the_container_back() {
    let provider = Provider::Anthropic { strict: false };
    let tools = shop();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (started, ended) = (seen.clone(), seen.clone());
    let handler = toolbox::ToolHandler::empty()
        .on_start(move |e| started.lock().unwrap().push(format!("start {}", e.name)))
        .on_success(move |e| ended.lock().unwrap().push(format!("end {}", e.name)));
    let runner = TurnRunner::new(&tools).provider(provider).handler(handler);
    let ctx = Context::new();

    let response = fixture("anthropic.1.json");
    let mut state = ProgramState::default();
    state.update(provider, &response);
    let calls = provider.parse_calls(&response).unwrap();
    let outcomes = runner.run(calls, &ctx).await;
    assert!(
        outcomes.iter().all(|o| !o.response.is_error),
        "{outcomes:?}"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "start get_inventory",
            "end get_inventory",
            "start get_demand",
            "end get_demand"
        ]
    );
    // The next request: the assistant's content as it came, the results
    // (only `tool_result` blocks, as a paused container needs), and the
    // container.
    let mut request = json!({
        "model": "claude-opus-4-7",
        "messages": [
            {"role": "user", "content": "Is there enough sku_123?"},
            {"role": "assistant", "content": response["content"]}
        ]
    });
    request["messages"]
        .as_array_mut()
        .unwrap()
        .extend(provider.result_messages(&outcomes));
    state.carry(provider, &mut request);
    assert_eq!(request["container"], "container_011CVptc");
    let results = &request["messages"][2]["content"];
    assert_eq!(
        results,
        &json!([
            {"type": "tool_result", "tool_use_id": "toolu_01Inventory",
             "content": json!({"sku": "sku_123", "availableUnits": 42}).to_string()},
            {"type": "tool_result", "tool_use_id": "toolu_01Demand",
             "content": json!({"sku": "sku_123", "requestedUnits": 31}).to_string()}
        ])
    );
    // The code ended: no call left, the container kept for the next turn.
    let done = fixture("anthropic.2.json");
    assert!(provider.parse_calls(&done).unwrap().is_empty());
    state.update(provider, &done);
    assert_eq!(state.container.as_deref(), Some("container_011CVptc"));
    let stored: ProgramState =
        serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    assert_eq!(stored, state);
}

#[tokio::test]
async fn a_responses_turn_replays_the_program_until_its_output_comes() {
    let provider = Provider::OpenAiResponses { strict: true };
    let tools = shop();
    let runner = TurnRunner::new(&tools).provider(provider);
    let ctx = Context::new();
    let mut state = ProgramState::default();
    let mut input = vec![json!({"role": "user", "content": "Is there enough sku_123?"})];

    for (step, file) in ["responses.1.json", "responses.2.json"].iter().enumerate() {
        let response = fixture(file);
        state.update(provider, &response);
        assert_eq!(state.programs.len(), 1, "step {step}");
        let calls = provider.parse_calls(&response).unwrap();
        let outcomes = runner.run(calls, &ctx).await;
        assert!(
            outcomes.iter().all(|o| !o.response.is_error),
            "{outcomes:?}"
        );
        // An application that sends back only the calls it ran.
        input.extend(
            response["output"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|item| item["type"] == "function_call")
                .cloned(),
        );
        input.extend(provider.result_messages(&outcomes));
        let mut request = json!({"model": "gpt-5.6-sol", "store": false, "input": input});
        state.carry(provider, &mut request);
        let sent = request["input"].as_array().unwrap();
        // The program item, once, with its fingerprint, before its calls.
        let programs: Vec<usize> = (0..sent.len())
            .filter(|&i| sent[i]["type"] == "program")
            .collect();
        assert_eq!(programs.len(), 1, "step {step}: {sent:?}");
        assert_eq!(
            sent[programs[0]]["fingerprint"],
            "gAAAAABqYUXys6PFDtT1FnhMGvWYXprIat7-SDXMjz0lviu6Fnjl"
        );
        assert_eq!(
            sent[programs[0] + 1]["caller"]["caller_id"],
            "call_Program01"
        );
        let output = sent.last().unwrap();
        assert_eq!(output["type"], "function_call_output");
        assert_eq!(
            output["call_id"],
            if step == 0 {
                "call_Inventory01"
            } else {
                "call_Demand01"
            }
        );
        // Carrying again adds nothing.
        let again = {
            let mut twice = request.clone();
            state.carry(provider, &mut twice);
            twice
        };
        assert_eq!(again, request);
        input = sent.clone();
    }
    let done = fixture("responses.3.json");
    assert!(provider.parse_calls(&done).unwrap().is_empty());
    state.update(provider, &done);
    assert!(state.is_empty(), "the program ended: {state:?}");
}

#[tokio::test]
async fn a_call_from_a_caller_the_tool_does_not_allow_does_not_run() {
    let tools = shop();
    let runner = TurnRunner::new(&tools).provider(Provider::Anthropic { strict: false });
    let code = Caller::Code {
        runtime: "code_execution_20260120".into(),
        id: "srvtoolu_1".into(),
    };
    let calls = vec![
        toolbox::args::ToolCall::new("get_inventory", json!({"sku": "a"})).with_id("1"),
        toolbox::args::ToolCall::new("get_inventory", json!({"sku": "a"}))
            .with_id("2")
            .with_caller(Caller::Direct),
        toolbox::args::ToolCall::new("cancel_order", json!({"sku": "a"}))
            .with_id("3")
            .with_caller(code.clone()),
        toolbox::args::ToolCall::new("get_demand", json!({"sku": "a"}))
            .with_id("4")
            .with_caller(code),
    ];
    let outcomes = runner.run(calls, &Context::new()).await;
    let only_code =
        "tool `get_inventory` may be called only from code the model writes, not directly";
    assert!(outcomes[0].response.is_error);
    assert!(
        outcomes[0].response.content.contains(only_code),
        "{}",
        outcomes[0].response.content
    );
    assert!(outcomes[1].response.content.contains(only_code));
    assert!(outcomes[2].response.is_error);
    assert!(
        outcomes[2]
            .response
            .content
            .contains("tool `cancel_order` may not be called from code: call it directly"),
        "{}",
        outcomes[2].response.content
    );
    assert!(!outcomes[3].response.is_error, "{:?}", outcomes[3]);
}

#[test]
fn callers_are_a_list_of_names_and_bad_names_are_named() {
    let spec =
        ToolSpecification::new("get_inventory", "Units in stock.").with_callers(Callers::ANY);
    let text = serde_json::to_value(&spec).unwrap();
    assert_eq!(text["callers"], json!(["direct", "code"]));
    // The default is not written.
    let plain = serde_json::to_value(ToolSpecification::new("a", "b")).unwrap();
    assert!(plain.get("callers").is_none());
    let back: ToolSpecification = serde_json::from_value(text).unwrap();
    assert_eq!(back.callers, Callers::ANY);
    let error = serde_json::from_value::<ToolSpecification>(
        json!({"name": "a", "description": "b", "parameters": {}, "callers": ["model"]}),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("unknown caller `model`"), "{error}");
    let error = serde_json::from_value::<ToolSpecification>(
        json!({"name": "a", "description": "b", "parameters": {}, "callers": []}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("a tool needs at least one caller"),
        "{error}"
    );
}
