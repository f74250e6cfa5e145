//! Provider definitions, parsing and result messages against the recorded
//! payloads in tests/fixtures/providers (copied from the providers'
//! documentation; sources in their README).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use toolbox::provider::{gemini_model_turn, lower, Dialect, Provider, ProviderError};
use toolbox::{args::ToolCall, ToolAnnotations, ToolResponse, ToolSpecification};

use crate::common;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/providers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect(&path)
}

/// Search flights
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SearchArgs {
    /// Origin IATA code
    origin: String,
    /// Max results
    limit: Option<u32>,
    /// Cabin class
    cabin: Cabin,
    filter: Option<Filter>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Cabin {
    Economy,
    Business,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Filter {
    nonstop: bool,
}

#[test]
fn the_worked_example_lowers_to_the_documented_shapes() {
    let schemars_default = schemars::schema_for!(SearchArgs).to_value();
    assert_eq!(
        schemars_default,
        fixture("schemars_search_args_default.json")
    );
    let parameters = toolbox::schema::arguments_schema::<SearchArgs>().unwrap();
    assert_eq!(
        lower(&parameters, Dialect::OpenAiStrict).unwrap(),
        fixture("search_args_openai_strict.json")
    );
    assert_eq!(
        lower(&parameters, Dialect::GeminiParameters).unwrap(),
        fixture("search_args_gemini_parameters.json")
    );
    // Lowering is idempotent: a strict schema stays as it is.
    let strict = fixture("search_args_openai_strict.json");
    assert_eq!(lower(&strict, Dialect::OpenAiStrict).unwrap(), strict);
}

fn spec_from(name: &str, description: &str, parameters: &Value) -> ToolSpecification {
    ToolSpecification::new(name, description).with_parameters(parameters.clone())
}

#[test]
fn definitions_have_each_providers_shape() {
    let chat = fixture("openai_chat_tool_definition_strict.json");
    let spec = spec_from(
        "get_weather",
        "Fetches the weather in the given location",
        &chat["function"]["parameters"],
    );
    assert_eq!(
        Provider::OpenAiChat { strict: true }
            .definition(&spec)
            .unwrap(),
        chat
    );

    let responses = fixture("openai_responses_tool_definition.json");
    let spec = spec_from(
        "get_weather",
        "Retrieves current weather for the given location.",
        &responses["parameters"],
    );
    assert_eq!(
        Provider::OpenAiResponses { strict: true }
            .definition(&spec)
            .unwrap(),
        responses
    );

    let anthropic = fixture("anthropic_tool_definition_strict.json");
    let spec = spec_from(
        "get_weather",
        "Get the current weather",
        &anthropic["input_schema"],
    );
    assert_eq!(
        Provider::Anthropic { strict: true }
            .definition(&spec)
            .unwrap(),
        anthropic
    );

    let gemini = fixture("gemini_request_tools.json");
    let declared = &gemini["tools"][0]["functionDeclarations"][0];
    let spec = spec_from(
        "get_weather",
        "Get weather",
        &declared["parametersJsonSchema"],
    );
    assert_eq!(
        Provider::Gemini.definitions(&[spec]).unwrap(),
        gemini["tools"]
    );

    let mcp = fixture("mcp_tools_list_result.json");
    let listed = &mcp["result"]["tools"][0];
    let mut spec = spec_from("get_weather", "Get current weather", &listed["inputSchema"]);
    spec.title = Some("Weather".into());
    spec.annotations = Some(ToolAnnotations {
        read_only: Some(true),
        open_world: Some(true),
        ..ToolAnnotations::default()
    });
    assert_eq!(Provider::Mcp.definition(&spec).unwrap(), *listed);
}

#[test]
fn strict_is_always_sent_explicitly() {
    let spec = ToolSpecification::new("ping", "Pings");
    for provider in [
        Provider::OpenAiChat { strict: false },
        Provider::OpenAiResponses { strict: false },
        Provider::Anthropic { strict: false },
    ] {
        let definition = provider.definition(&spec).unwrap();
        let strict = definition
            .get("function")
            .unwrap_or(&definition)
            .get("strict");
        assert_eq!(strict, Some(&Value::Bool(false)), "{provider:?}");
    }
}

#[test]
fn openai_chat_parallel_calls_parse_and_results_match() {
    let transcript = fixture("openai_chat_parallel_tool_calls_and_results.json");
    let provider = Provider::OpenAiChat { strict: true };
    let calls = provider.parse_calls(&transcript[0]).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id.as_deref(), Some("call_abc"));
    assert_eq!(calls[1].arguments, json!({"location": "Bogotá, Colombia"}));
    // The whole completion body parses too.
    let body = json!({"choices": [{"message": transcript[0].clone()}]});
    assert_eq!(provider.parse_calls(&body).unwrap(), calls);
    let results = vec![
        (calls[0].clone(), ToolResponse::text("{\"temp_c\":15}")),
        (calls[1].clone(), ToolResponse::text("{\"temp_c\":18}")),
    ];
    assert_eq!(
        provider.result_messages(&results),
        transcript.as_array().unwrap()[1..]
    );
}

#[test]
fn openai_responses_calls_parse_and_outputs_match() {
    let provider = Provider::OpenAiResponses { strict: true };
    let calls = provider
        .parse_calls(&fixture("openai_responses_function_calls.json"))
        .unwrap();
    assert_eq!(
        calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["get_weather", "send_email"]
    );
    assert_eq!(
        calls[1].id.as_deref(),
        Some("call_67890abc"),
        "the call_id, not the item id"
    );
    let body = json!({"output": fixture("openai_responses_function_calls.json")});
    assert_eq!(provider.parse_calls(&body).unwrap(), calls);
    let messages =
        provider.result_messages(&[(calls[0].clone(), ToolResponse::text("{\"temp_c\":15}"))]);
    assert_eq!(
        messages,
        [fixture("openai_responses_function_call_output.json")]
    );
}

#[test]
fn anthropic_tool_use_parses_and_results_come_first_in_one_user_turn() {
    let provider = Provider::Anthropic { strict: true };
    let calls = provider
        .parse_calls(&fixture("anthropic_assistant_tool_use.json"))
        .unwrap();
    assert_eq!(calls.len(), 2, "the text block is not a call");
    assert_eq!(calls[1].arguments, json!({"location": "Bogotá"}));
    let results = vec![
        (calls[0].clone(), ToolResponse::text("15 degrees")),
        (
            calls[1].clone(),
            ToolResponse::error("ConnectionError: the weather service API is not available"),
        ),
    ];
    assert_eq!(
        provider.result_messages(&results),
        [fixture("anthropic_user_tool_results.json")]
    );
}

#[test]
fn gemini_calls_keep_their_id_and_thought_signature() {
    let provider = Provider::Gemini;
    let model_turn = fixture("gemini_model_function_call.json");
    let calls = provider.parse_calls(&model_turn).unwrap();
    assert_eq!(calls[0].id.as_deref(), Some("fc1"));
    assert_eq!(
        gemini_model_turn(&calls),
        model_turn,
        "the thoughtSignature goes back unchanged"
    );
    let body = json!({"candidates": [{"content": model_turn.clone()}]});
    assert_eq!(provider.parse_calls(&body).unwrap(), calls);
    let messages =
        provider.result_messages(&[(calls[0].clone(), ToolResponse::text("{\"temp_c\":15}"))]);
    assert_eq!(messages, [fixture("gemini_user_function_response.json")]);
    let failed =
        provider.result_messages(&[(calls[0].clone(), ToolResponse::error("service unavailable"))]);
    assert_eq!(
        failed[0]["parts"][0]["functionResponse"]["response"],
        json!({"error": "service unavailable"})
    );
}

#[test]
fn mcp_results_carry_structured_content_and_is_error() {
    let call = ToolCall::new("get_weather", json!({}));
    let structured = fixture("mcp_tools_call_structured_result.json");
    let text = structured["result"]["content"][0]["text"].as_str().unwrap();
    let messages = Provider::Mcp.result_messages(&[(call.clone(), ToolResponse::text(text))]);
    assert_eq!(messages, [structured["result"].clone()]);
    let failed = fixture("mcp_tools_call_is_error_result.json");
    let text = failed["result"]["content"][0]["text"].as_str().unwrap();
    let messages = Provider::Mcp.result_messages(&[(call, ToolResponse::error(text))]);
    assert_eq!(messages, [failed["result"].clone()]);
    let parsed = Provider::Mcp
        .parse_calls(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_weather", "arguments": {"location": "Oslo"}}}))
        .unwrap();
    assert_eq!(parsed[0].id.as_deref(), Some("3"));
    assert_eq!(parsed[0].arguments, json!({"location": "Oslo"}));
}

#[test]
fn arguments_arrive_as_string_object_or_double_encoded() {
    let provider = Provider::OpenAiChat { strict: false };
    let message = json!({"tool_calls": [
        {"id": "a", "function": {"name": "f", "arguments": "{\"x\":1}"}},
        {"id": "b", "function": {"name": "f", "arguments": {"x": 2}}},
        {"id": "c", "function": {"name": "f", "arguments": "\"{\\\"x\\\":3}\""}},
        {"id": "d", "function": {"name": "f", "arguments": "{\"x\":"}},
        {"id": "e", "function": {"name": "f", "arguments": ""}}
    ]});
    let calls = provider.parse_calls(&message).unwrap();
    let arguments: Vec<&Value> = calls.iter().map(|c| c.arguments.value()).collect();
    assert_eq!(
        arguments,
        [
            &json!({"x": 1}),
            &json!({"x": 2}),
            &json!({"x": 3}),
            &json!("{\"x\":"),
            &json!({})
        ]
    );
}

#[test]
fn malformed_payloads_are_clear_errors_not_panics() {
    let cases = [
        (Provider::OpenAiChat { strict: true }, json!({"tool_calls": "nope"}), "malformed OpenAI Chat Completions payload at `tool_calls`: expected an array"),
        (Provider::OpenAiChat { strict: true }, json!({"tool_calls": [{"id": "a"}]}), "malformed OpenAI Chat Completions payload at `tool_calls[0]`: expected an object with `function`"),
        (Provider::OpenAiChat { strict: true }, json!({"tool_calls": [{"function": {"name": 7}}]}), "malformed OpenAI Chat Completions payload at `tool_calls[0].function.name`: expected a string"),
        (Provider::OpenAiResponses { strict: true }, json!({"output": {}}), "malformed OpenAI Responses payload at `output`: expected an array"),
        (Provider::Anthropic { strict: true }, json!({"role": "assistant"}), "malformed Anthropic Messages payload at `(root)`: expected an object with `content`"),
        (Provider::Anthropic { strict: true }, json!({"content": [{"type": "tool_use", "name": "x"}]}), "malformed Anthropic Messages payload at `content[0]`: expected an object with `id`"),
        (Provider::Gemini, json!({"candidates": [{"content": {"parts": 1}}]}), "malformed Gemini payload at `candidates[0].content.parts`: expected an array"),
        (Provider::Mcp, json!({"params": {}}), "malformed MCP payload at `params`: expected an object with `name`"),
    ];
    for (provider, payload, expected) in cases {
        let error: ProviderError = provider.parse_calls(&payload).unwrap_err();
        assert_eq!(error.to_string(), expected);
    }
    assert!(Provider::OpenAiChat { strict: true }
        .parse_calls(&json!({"role": "assistant", "content": "hi"}))
        .unwrap()
        .is_empty());
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tagged {
    counts: std::collections::HashMap<String, u32>,
}

#[test]
fn what_a_dialect_cannot_express_is_refused_naming_the_field() {
    let spec = ToolSpecification::new("tally", "Tallies")
        .with_parameters(toolbox::schema::arguments_schema::<Tagged>().unwrap());
    let error = Provider::OpenAiChat { strict: true }
        .definition(&spec)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `tally` cannot be offered to OpenAI strict mode: `counts`: a map (an object with arbitrary keys) cannot be expressed in OpenAI strict mode; use a list of key/value structs"
    );
    assert!(Provider::Anthropic { strict: true }
        .definition(&spec)
        .is_err());
    // Non-strict dialects take maps.
    assert!(Provider::OpenAiChat { strict: false }
        .definition(&spec)
        .is_ok());
    assert!(Provider::Mcp.definition(&spec).is_ok());
}

/// An image a tool returns reaches each provider as that provider takes
/// it: a block for Anthropic and OpenAI Responses, the model's text (which
/// names the image) for Chat Completions and Gemini, a block for MCP.
#[test]
fn an_image_result_lowers_to_what_each_provider_takes() {
    use toolbox::Content;
    let response = ToolResponse::from_parts([
        Content::text("The chart:"),
        Content::image([1u8, 2, 3], "image/png"),
    ]);
    let call = toolbox::args::ToolCall::new("chart", json!({})).with_id("c1");
    let pair = [(call, response)];
    let anthropic = Provider::Anthropic { strict: false }.result_messages(&pair);
    assert_eq!(
        anthropic[0]["content"][0]["content"],
        json!([{"type": "text", "text": "The chart:"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AQID"}}])
    );
    let responses = Provider::OpenAiResponses { strict: true }.result_messages(&pair);
    assert_eq!(
        responses[0]["output"],
        json!([{"type": "input_text", "text": "The chart:"},
               {"type": "input_image", "image_url": "data:image/png;base64,AQID"}])
    );
    let chat = Provider::OpenAiChat { strict: true }.result_messages(&pair);
    assert_eq!(chat[0]["content"], "The chart:\n[image/png image]");
    let gemini = Provider::Gemini.result_messages(&pair);
    assert_eq!(
        gemini[0]["parts"][0]["functionResponse"]["response"]["output"],
        "The chart:\n[image/png image]"
    );
    let mcp = Provider::Mcp.result_messages(&pair);
    assert_eq!(
        mcp[0]["content"][1],
        json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
    );
}

/// `result_messages_json` writes, in one pass, the messages
/// `result_messages` builds as values: for every provider, text, JSON,
/// errors, images, escapes and calls without ids.
#[test]
fn result_messages_json_is_result_messages_as_text() {
    let results = vec![
        (
            ToolCall::new("add", json!({"a": 1, "b": 2})).with_id("call_1"),
            ToolResponse::text("3"),
        ),
        (
            ToolCall::new("lookup", r#"{"q": "x"}"#),
            ToolResponse::text(r#"{"name": "Ada", "tags": ["a", "b"], "n": 1.5}"#),
        ),
        (
            ToolCall::new("fail", json!({})).with_id("call_3"),
            ToolResponse::error("no customer 7; \"ids\" are 42\n"),
        ),
        (
            ToolCall::new("picture", json!({})).with_id("call_4"),
            ToolResponse::image([137, 80, 78, 71], "image/png"),
        ),
        (
            ToolCall::new("say", json!({})).with_id("call_5"),
            ToolResponse::text("plain text, not JSON: ünïcode \u{1F600}"),
        ),
    ];
    for provider in common::PROVIDERS {
        let text = provider.result_messages_json(&results);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            parsed,
            Value::Array(provider.result_messages(&results)),
            "{provider:?}: {text}"
        );
    }
}

/// Provider payloads a careless or hostile peer sends: no tool calls at
/// all, schemas that loop or explode.
mod hostile_payloads {

    use crate::common::{self};

    use serde_json::json;

    use toolbox::ToolSpecification;

    use toolbox::provider::Provider;

    #[test]
    fn no_tool_call_responses_are_empty_not_errors() {
        let openai = json!({"choices": [{"message": {"role": "assistant", "content": "Hi", "tool_calls": null}}]});
        assert_eq!(
            Provider::OpenAiChat { strict: false }
                .parse_calls(&openai)
                .unwrap(),
            vec![]
        );
        for gemini in [
            json!({"candidates": [{"finishReason": "SAFETY"}]}),
            json!({"candidates": [{"content": {"role": "model"}}]}),
            json!({"candidates": []}),
            json!({"promptFeedback": {"blockReason": "SAFETY"}}),
        ] {
            assert_eq!(
                Provider::Gemini.parse_calls(&gemini).unwrap(),
                vec![],
                "{gemini}"
            );
        }
        let numeric = json!({"choices": [{"message": {"tool_calls": [
            {"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]}}]});
        let calls = Provider::OpenAiChat { strict: false }
            .parse_calls(&numeric)
            .unwrap();
        assert_eq!(calls[0].id.as_deref(), Some("7"));
    }

    #[test]
    fn lowering_refuses_cycles_and_explosions_instead_of_aborting() {
        // A `$ref` with a sibling that points back at itself, nested in `$defs`.
        let cyclic = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A", "description": "a"}},
            "$defs": {
                "A": {"$ref": "#/$defs/A", "description": "again",
                      "$defs": {"A": {"$ref": "#/$defs/A", "description": "inner"}}}
            }
        });
        // A chain whose every link references the next twice, with descriptions.
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/D{}", i + 1);
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {
                    "l": {"$ref": next, "description": "left"},
                    "r": {"$ref": next, "description": "right"}
                }, "required": ["l", "r"], "additionalProperties": false}),
            );
        }
        defs.insert("D40".into(), json!({"type": "string"}));
        let exploding = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/D0", "description": "root"}},
            "required": ["root"],
            "additionalProperties": false,
            "$defs": defs
        });
        for schema in [cyclic, exploding] {
            for provider in common::PROVIDERS {
                let spec = ToolSpecification::new("t", "A tool").with_parameters(schema.clone());
                // An error or a bounded result; never an abort or a hang.
                if let Ok(definition) = provider.definition(&spec) {
                    assert!(definition.to_string().len() < 10_000_000);
                }
            }
        }
    }
}

/// A `#[serde(flatten)]`ed enum beside fields of its own: under a strict
/// dialect every object is closed, so the fields and the variant could
/// never be sent together. The lowering refuses it by name instead of
/// offering a tool nobody can call; dialects with open objects take it.
#[test]
fn a_flattened_enum_under_strict_is_refused_by_name() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Step {
        Move { x: i64 },
        Turn { degrees: i64 },
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Plan {
        robot: String,
        #[serde(flatten)]
        step: Step,
    }
    let tools = toolbox::FnToolBox::new([toolbox::tool_fn(
        "plan",
        "Plans a step",
        |p: Plan| async move { p.robot },
    )])
    .unwrap();
    let spec = toolbox::ToolBox::specifications(&tools, &toolbox::Context::new()).remove(0);
    for provider in [
        Provider::OpenAiChat { strict: true },
        Provider::OpenAiResponses { strict: true },
        Provider::Anthropic { strict: true },
    ] {
        let error = provider.definition(&spec).expect_err("refused").to_string();
        assert!(
            error.contains("its fields and its choice of objects (a `#[serde(flatten)]`ed enum) can never be sent together"),
            "{provider:?}: {error}"
        );
    }
    for provider in [
        Provider::OpenAiChat { strict: false },
        Provider::Anthropic { strict: false },
        Provider::Gemini,
        Provider::Mcp,
    ] {
        assert!(provider.definition(&spec).is_ok(), "{provider:?}");
    }
}

/// OpenAI strict makes an optional property nullable by the one nullable
/// rule: a property whose `type` names `null` but whose `enum` leaves it
/// out does not accept `null`, so `null` joins the enum (once, never
/// twice); one that accepts `null` through its reference is left as it is.
#[test]
fn optional_properties_become_nullable_by_what_they_accept() {
    let schema = json!({
        "type": "object",
        "properties": {
            "mode": {"type": ["string", "null"], "enum": ["fast", "slow"]},
            "label": {"$ref": "#/$defs/Label"},
            "count": {"type": "integer"}
        },
        "required": [],
        "$defs": {"Label": {"type": ["string", "null"]}}
    });
    let lowered = lower(&schema, Dialect::OpenAiStrict).unwrap();
    assert_eq!(
        lowered["properties"]["mode"],
        json!({"type": ["string", "null"], "enum": ["fast", "slow", null]})
    );
    assert_eq!(
        lowered["properties"]["count"],
        json!({"type": ["integer", "null"]})
    );
    assert_eq!(
        lowered["properties"]["label"],
        json!({"$ref": "#/$defs/Label"}),
        "{lowered}"
    );
}

#[test]
fn a_view_only_mcp_apps_tool_is_offered_to_no_model_and_served_over_mcp() {
    use toolbox::catalog::Catalog;
    use toolbox::{ToolSpecification, ToolUi};
    let specs = vec![
        ToolSpecification::new("weather", "The weather, with a card.")
            .with_ui(ToolUi::new("ui://weather/card")),
        ToolSpecification::new("refresh_card", "Refreshes the card.")
            .with_ui(ToolUi::new("ui://weather/card").with_visibility(["app"])),
    ];
    for provider in [
        Provider::OpenAiChat { strict: true },
        Provider::OpenAiResponses { strict: false },
        Provider::Anthropic { strict: true },
        Provider::Gemini,
    ] {
        let offered = provider.definitions(&specs).unwrap().to_string();
        assert!(offered.contains("weather"), "{provider:?}");
        assert!(!offered.contains("refresh_card"), "{provider:?}: {offered}");
        assert!(!offered.contains("ui://"), "{provider:?}: {offered}");
    }
    let served = Provider::Mcp.definitions(&specs).unwrap();
    assert_eq!(served[1]["name"], "refresh_card");
    assert_eq!(
        served[1]["_meta"],
        serde_json::json!({"ui": {"resourceUri": "ui://weather/card", "visibility": ["app"]}})
    );
    let catalog = Catalog::new(specs).unwrap();
    assert!(catalog.specification("refresh_card").is_none());
    assert!(catalog.specification("weather").is_some());
}
