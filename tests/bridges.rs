//! The bridges into async-openai, genai and rig, against the real crates'
//! types: definitions read as their tool types and lose nothing, a recorded
//! response read as their response type yields the calls
//! `Provider::parse_response` reads from its bytes, results build their
//! messages, and rig runs a `#[tool_box]` tool through toolbox's lifecycle.
#![cfg(any(feature = "async-openai", feature = "genai", feature = "rig"))]

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolbox::prelude::*;
use toolbox::ToolSpecification;

/// Temperature units.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Units {
    Celsius,
    Fahrenheit,
}

/// The tools every bridge is tried with.
#[derive(Default)]
struct Tools;

#[tool_box]
impl Tools {
    /// Gets the current weather in a city.
    #[tool(read_only)]
    fn get_weather(
        &self,
        /// The city, e.g. "Paris, France".
        city: String,
        /// Celsius when absent.
        units: Option<Units>,
    ) -> String {
        let units = match units {
            Some(Units::Fahrenheit) => "F",
            _ => "C",
        };
        format!("{city}: 15 {units}")
    }

    /// Adds two integers.
    #[tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Always fails.
    #[tool]
    fn broken(&self) -> Result<String, String> {
        Err("the backend is down; try `add` instead".to_owned())
    }

    /// Sleeps longer than any limit.
    #[tool]
    async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "late".to_owned()
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/bridges/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

fn specs() -> Vec<ToolSpecification> {
    Tools.specifications(&Context::new())
}

/// A call's id, name and arguments as a value: what two readings of one
/// response must agree on.
fn seen(calls: &[ToolCall]) -> Vec<(Option<String>, String, Value)> {
    calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.value().clone()))
        .collect()
}

#[cfg(feature = "async-openai")]
mod with_async_openai {
    use super::*;
    use async_openai::types::chat::{
        ChatCompletionRequestMessage, ChatCompletionRequestToolMessageContent, ChatCompletionTools,
        CreateChatCompletionResponse,
    };
    use async_openai::types::responses::{InputItem, Item, Response, Tool};
    use toolbox::bridge::async_openai as bridge;
    use toolbox::catalog::Catalog;
    use toolbox::provider::Provider;
    use toolbox::turn::TurnRunner;
    use toolbox::Namespace;

    #[test]
    fn chat_definitions_read_as_chat_completion_tools_and_lose_nothing() {
        for strict in [true, false] {
            let definitions = Provider::OpenAiChat { strict }
                .definitions(&specs())
                .unwrap();
            let tools = bridge::chat_tools(&definitions).unwrap();
            assert_eq!(tools.len(), 4);
            let ChatCompletionTools::Function(weather) = &tools[0] else {
                panic!("not a function: {:?}", tools[0]);
            };
            assert_eq!(weather.function.name, "get_weather");
            assert_eq!(weather.function.strict, Some(strict));
            assert_eq!(
                weather.function.parameters.as_ref(),
                definitions.pointer("/0/function/parameters")
            );
            // Written back, the typed tools are the definitions.
            assert_eq!(serde_json::to_value(&tools).unwrap(), definitions);
        }
    }

    #[test]
    fn response_definitions_keep_namespaces_deferred_tools_and_the_search_tool() {
        let mut specs = specs();
        specs[0].namespace = Some(Namespace::new("weather", "Weather lookups."));
        specs[0].deferred = true;
        let provider = Provider::OpenAiResponses { strict: true };
        for hosted in [true, false] {
            let catalog = Catalog::new(specs.clone()).unwrap().hosted_search(hosted);
            let definitions = catalog.definitions(provider, &Default::default()).unwrap();
            let tools = bridge::response_tools(&definitions).unwrap();
            // Hosted search: the deferred tool is sent, in its namespace,
            // `defer_loading`; a client search loads it when asked.
            let namespace = tools.iter().find_map(|t| match t {
                Tool::Namespace(ns) => Some(ns),
                _ => None,
            });
            assert_eq!(namespace.is_some(), hosted, "{tools:?}");
            if let Some(namespace) = namespace {
                assert_eq!(
                    (namespace.name.as_str(), namespace.tools.len()),
                    ("weather", 1)
                );
            }
            assert!(
                matches!(tools.last(), Some(Tool::ToolSearch(_))),
                "{tools:?}"
            );
            assert_eq!(serde_json::to_value(&tools).unwrap(), definitions);
        }

        // Not Responses definitions: refused with the index and the type.
        let chat = Provider::OpenAiChat { strict: true }
            .definitions(&super::specs())
            .unwrap();
        let error = bridge::response_tools(&chat).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "`tools[0]` does not read as `async_openai::types::responses::Tool`: "
            ),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_typed_chat_completion_runs_through_the_turn_and_its_results_are_tool_messages() {
        let body = fixture("openai_chat_completion.json");
        let provider = Provider::OpenAiChat { strict: true };
        let response: CreateChatCompletionResponse = serde_json::from_slice(&body).unwrap();
        let calls = bridge::chat_calls(&response);
        assert_eq!(seen(&calls), seen(&provider.parse_response(&body).unwrap()));
        assert_eq!(calls.len(), 2);

        let ctx = Context::new();
        let runner = TurnRunner::new(&Tools).provider(provider);
        let outcomes = runner.run(calls, &ctx).await;
        let messages = bridge::chat_messages(&outcomes).unwrap();
        assert_eq!(
            serde_json::to_value(&messages).unwrap(),
            Value::Array(provider.result_messages(&outcomes))
        );
        let contents: Vec<(&str, &str)> = messages
            .iter()
            .map(|m| match m {
                ChatCompletionRequestMessage::Tool(m) => match &m.content {
                    ChatCompletionRequestToolMessageContent::Text(text) => {
                        (m.tool_call_id.as_str(), text.as_str())
                    }
                    other => panic!("not text: {other:?}"),
                },
                other => panic!("not a tool message: {other:?}"),
            })
            .collect();
        // The strict `null` for the absent `units` was undone by the runner.
        assert_eq!(
            contents,
            [("call_abc", "Paris, France: 15 C"), ("call_def", "42")]
        );
    }

    #[tokio::test]
    async fn a_typed_response_yields_its_function_calls_and_client_search_and_the_outputs_read_back(
    ) {
        let body = fixture("openai_response.json");
        let provider = Provider::OpenAiResponses { strict: true };
        let response: Response = serde_json::from_slice(&body).unwrap();
        let calls = bridge::response_calls(&response);
        assert_eq!(seen(&calls), seen(&provider.parse_response(&body).unwrap()));
        assert_eq!(calls.len(), 3);
        assert_eq!(
            calls[0].extra,
            provider.parse_response(&body).unwrap()[0].extra
        );

        let mut specs = specs();
        specs[0].namespace = Some(Namespace::new("weather", "Weather lookups."));
        specs[0].deferred = true;
        let catalog = Catalog::new(specs).unwrap();
        let ctx = Context::new();
        let runner = TurnRunner::new(&Tools).provider(provider).catalog(&catalog);
        let outcomes = runner.run(calls, &ctx).await;
        let items = bridge::response_items(&outcomes).unwrap();
        assert_eq!(
            serde_json::to_value(&items).unwrap(),
            Value::Array(provider.result_messages(&outcomes))
        );
        assert!(
            matches!(&items[0], InputItem::Item(Item::ToolSearchOutput(_))),
            "{:?}",
            items[0]
        );
        assert!(
            matches!(&items[2], InputItem::Item(Item::FunctionCallOutput(o)) if o.call_id.as_deref() == Some("call_67890abc"))
        );
        assert!(runner.revealed().contains("get_weather"));
    }

    #[test]
    fn programmatic_tool_calling_reads_and_writes_through_async_openai() {
        use toolbox::program::{Caller, Callers, ProgramState};
        let provider = Provider::OpenAiResponses { strict: true };
        let mut specs = specs();
        specs[0].callers = Callers::CODE;
        specs[1].callers = Callers::ANY;
        let tools = bridge::response_tools(&provider.definitions(&specs).unwrap()).unwrap();
        // async-openai reads the callers and the hosted tool.
        let typed = serde_json::to_value(&tools).unwrap();
        assert_eq!(
            typed[0]["allowed_callers"],
            serde_json::json!(["programmatic"])
        );
        assert_eq!(
            typed[1]["allowed_callers"],
            serde_json::json!(["direct", "programmatic"])
        );
        assert!(matches!(tools.last(), Some(Tool::ProgrammaticToolCalling)));

        let read = |name: &str| {
            let path = format!(
                "{}/tests/fixtures/programmatic/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            std::fs::read(path).unwrap()
        };
        let first = read("responses.1.json");
        let response: Response = serde_json::from_slice(&first).unwrap();
        let calls = bridge::response_calls(&response);
        assert_eq!(calls, provider.parse_response(&first).unwrap());
        assert_eq!(
            calls[0].caller,
            Some(Caller::Code {
                runtime: "program".into(),
                id: "call_Program01".into()
            })
        );
        let mut state = ProgramState::default();
        bridge::update_program_state(&mut state, &response);
        let items = bridge::program_items(&state).unwrap();
        assert_eq!(items.len(), 1);
        let item = serde_json::to_value(&items[0]).unwrap();
        assert_eq!(item["type"], "program");
        assert_eq!(
            item["fingerprint"],
            "gAAAAABqYUXys6PFDtT1FnhMGvWYXprIat7-SDXMjz0lviu6Fnjl"
        );
        let last: Response = serde_json::from_slice(&read("responses.3.json")).unwrap();
        bridge::update_program_state(&mut state, &last);
        assert!(state.is_empty());
    }
}

#[cfg(feature = "genai")]
mod with_genai {
    use std::sync::{Arc, Mutex};

    use super::*;
    use axum::{extract::State, routing::post, Router};
    use genai::chat::{ChatMessage, ChatRequest};
    use genai::resolver::{AuthData, Endpoint};
    use genai::{Client, ServiceTarget};
    use toolbox::bridge::genai as bridge;
    use toolbox::provider::Provider;
    use toolbox::turn::TurnRunner;

    #[test]
    fn definitions_for_each_provider_keep_name_description_schema_and_strict() {
        for provider in [
            Provider::OpenAiChat { strict: true },
            Provider::OpenAiResponses { strict: false },
            Provider::Anthropic { strict: true },
            Provider::Gemini,
            Provider::GeminiLegacy,
            Provider::Mcp,
        ] {
            let specs = specs();
            let tools = bridge::tools(&provider.definitions(&specs).unwrap()).unwrap();
            assert_eq!(tools.len(), specs.len(), "{provider:?}");
            for (tool, spec) in tools.iter().zip(&specs) {
                let lowered = provider.definition(spec).unwrap();
                let schema = [
                    "parameters",
                    "input_schema",
                    "parametersJsonSchema",
                    "inputSchema",
                ]
                .iter()
                .find_map(|k| lowered.get(*k).or_else(|| lowered["function"].get(*k)))
                .unwrap();
                assert_eq!(tool.name.as_ref(), spec.name);
                assert_eq!(tool.description.as_deref(), Some(spec.description.as_str()));
                assert_eq!(tool.schema.as_ref(), Some(schema), "{provider:?}");
            }
            let strict = match provider {
                Provider::OpenAiChat { strict }
                | Provider::OpenAiResponses { strict }
                | Provider::Anthropic { strict } => Some(strict),
                _ => None,
            };
            assert_eq!(tools[0].strict, strict, "{provider:?}");
        }
        let error = bridge::tools(&serde_json::json!([{"type": "tool_search"}]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "`tools[0]` does not read as `genai::chat::Tool`: it has no `name`"
        );
    }

    /// A stand-in for the OpenAI API on 127.0.0.1: answers every request
    /// with the recorded completion and keeps each request's body.
    async fn server(reply: Vec<u8>) -> (String, Arc<Mutex<Vec<Value>>>) {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let state = (requests.clone(), Arc::new(reply));
        type Shared = (Arc<Mutex<Vec<Value>>>, Arc<Vec<u8>>);
        async fn answer(
            State((requests, body)): State<Shared>,
            request: String,
        ) -> ([(&'static str, &'static str); 1], Vec<u8>) {
            requests
                .lock()
                .unwrap()
                .push(serde_json::from_str(&request).unwrap());
            ([("content-type", "application/json")], body.to_vec())
        }
        let app = Router::new()
            .route("/v1/chat/completions", post(answer))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (url, requests)
    }

    #[tokio::test]
    async fn genai_sends_our_definitions_reads_the_calls_and_sends_the_results_back() {
        // reqwest is built here with rustls and no provider of its own
        // (rmcp's choice): genai's client needs one installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let body = fixture("openai_chat_completion.json");
        let (url, requests) = server(body.clone()).await;
        let client = Client::builder()
            .with_service_target_resolver_fn(move |mut target: ServiceTarget| {
                target.endpoint = Endpoint::from_owned(url.clone());
                target.auth = AuthData::from_single("test-key");
                Ok(target)
            })
            .build()
            .unwrap();
        let provider = Provider::OpenAiChat { strict: true };
        let ctx = Context::new();
        let runner = TurnRunner::new(&Tools).provider(provider);
        let definitions = runner.definitions(&ctx).unwrap();
        let request = ChatRequest::from_user("Weather in Paris, and 40 + 2?")
            .with_tools(bridge::tools(&definitions).unwrap());

        let response = client
            .exec_chat("gpt-4o-mini", request.clone(), None)
            .await
            .unwrap();
        // What genai sent: our lowered definitions, strict.
        let sent = requests.lock().unwrap()[0]["tools"].clone();
        assert_eq!(sent.pointer("/0/function/name").unwrap(), "get_weather");
        assert_eq!(
            sent.pointer("/0/function/parameters"),
            definitions.pointer("/0/function/parameters")
        );
        assert_eq!(sent.pointer("/0/function/strict"), Some(&Value::Bool(true)));

        // genai's reading of the response is toolbox's reading of the bytes.
        let calls = bridge::calls(&response);
        assert_eq!(seen(&calls), seen(&provider.parse_response(&body).unwrap()));

        let outcomes = runner.run(calls, &ctx).await;
        let results = bridge::responses(&outcomes);
        let request = request
            .append_message(ChatMessage::from(
                response
                    .tool_calls()
                    .into_iter()
                    .cloned()
                    .collect::<Vec<_>>(),
            ))
            .append_message(ChatMessage::from(results));
        client
            .exec_chat("gpt-4o-mini", request, None)
            .await
            .unwrap();
        let messages = requests.lock().unwrap()[1]["messages"].clone();
        let tool_messages: Vec<Value> = messages
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .cloned()
            .collect();
        assert_eq!(tool_messages, provider.result_messages(&outcomes));
    }
}

#[cfg(feature = "rig")]
mod with_rig {
    use std::sync::{Arc, Mutex};

    use super::*;
    use rig_core::tool::ToolErrorKind;
    use toolbox::bridge::rig::RigTools;
    use toolbox::provider::Provider;

    fn observed() -> (ToolHandler, Arc<Mutex<Vec<String>>>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let (a, b, c) = (events.clone(), events.clone(), events.clone());
        let handler = ToolHandler::empty()
            .on_start(move |e| a.lock().unwrap().push(format!("start {}", e.name)))
            .on_success(move |e| b.lock().unwrap().push(format!("success {}", e.name)))
            .on_error(move |e| {
                c.lock()
                    .unwrap()
                    .push(format!("error {} {}", e.name, e.error.kind()))
            });
        (handler, events)
    }

    #[tokio::test]
    async fn rig_runs_a_tool_box_tool_through_the_lifecycle() {
        let (handler, events) = observed();
        let tools = RigTools::new(Arc::new(Tools))
            .handler(&handler)
            .build()
            .unwrap();
        let names: Vec<String> = tools.iter().map(|t| t.name().to_string()).collect();
        assert_eq!(names, ["get_weather", "add", "broken", "slow"]);
        let definition = tools[0].definition();
        assert_eq!(
            definition.description,
            "Gets the current weather in a city."
        );
        assert_eq!(definition.parameters, specs()[0].parameters);

        let output = tools[1]
            .execute(serde_json::json!({"a": 40, "b": 2}))
            .await
            .unwrap();
        assert_eq!(output.as_text(), Some("42"));
        assert_eq!(*events.lock().unwrap(), ["start add", "success add"]);
    }

    #[tokio::test]
    async fn failures_reach_rig_with_their_kind_and_toolbox_text() {
        let (handler, events) = observed();
        let tools = RigTools::new(Arc::new(Tools.with_timeout(Duration::from_millis(50))))
            .handler(&handler)
            .build()
            .unwrap();

        let error = tools[1]
            .execute(serde_json::json!({"a": "forty", "b": 2}))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::InvalidArgs);
        assert!(error.message().contains("at `a`"), "{}", error.message());

        let error = tools[3].execute(serde_json::json!({})).await.unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Timeout);

        let error = tools[2].execute(serde_json::json!({})).await.unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Other);
        assert!(
            error.message().contains("the backend is down"),
            "{}",
            error.message()
        );

        assert_eq!(
            *events.lock().unwrap(),
            [
                "start add",
                "error add invalid_arguments",
                "start slow",
                "error slow timed_out",
                "start broken",
                "error broken tool_failed",
            ]
        );
    }

    #[tokio::test]
    async fn a_provider_lowers_the_schemas_and_normalizes_the_calls() {
        let tools = RigTools::new(Arc::new(Tools))
            .provider(Provider::OpenAiChat { strict: true })
            .build()
            .unwrap();
        let parameters = tools[0].definition().parameters;
        assert_eq!(parameters["additionalProperties"], false);
        assert_eq!(parameters["required"], serde_json::json!(["city", "units"]));
        // Strict mode's `null` for the absent units is undone before the call.
        let output = tools[0]
            .execute(serde_json::json!({"city": "Oslo", "units": null}))
            .await
            .unwrap();
        assert_eq!(output.as_text(), Some("Oslo: 15 C"));
    }
}
