//! A real agent loop over HTTP, OpenAI-compatible Chat Completions with
//! tools: the definitions go in the request, the model's tool calls are
//! parsed from the response, run through the turn runner (in parallel), and
//! their results sent back as messages, until the model answers.
//!
//! With `OPENAI_BASE_URL` set (and `OPENAI_API_KEY`, `OPENAI_MODEL`) it talks
//! to that server: OpenAI itself, or a local Ollama / llama.cpp server
//! (`OPENAI_BASE_URL=http://127.0.0.1:11434/v1`). Without it, it starts an
//! in-process server on 127.0.0.1 that answers like a model would, in the
//! documented response format, so the example runs offline.
//!
//! Run it with `cargo run --example model_loop`.

use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::{provider::Provider, turn::TurnRunner};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    /// The city's name in English, e.g. "Prague".
    city: String,
}

fn weather_tools() -> Result<FnToolBox, toolbox::DefinitionError> {
    FnToolBox::new([try_tool_fn(
        "get_weather",
        "Gets the current weather for a city, in degrees Celsius.",
        |c: City| async move {
            match c.city.as_str() {
                "Prague" => Ok(json!({"city": "Prague", "celsius": 4, "sky": "overcast"})),
                "Brno" => Ok(json!({"city": "Brno", "celsius": 6, "sky": "clear"})),
                other => Err(format!(
                    "no city `{other}`; known cities are Prague and Brno"
                )),
            }
        },
    )
    .read_only()])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (base, key, model, local) = match std::env::var("OPENAI_BASE_URL") {
        Ok(base) => (
            base,
            std::env::var("OPENAI_API_KEY").unwrap_or_default(),
            std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned()),
            None,
        ),
        Err(_) => {
            let server = recorded_model::start().await?;
            (
                format!("http://{}/v1", server.address),
                "offline".to_owned(),
                "recorded".to_owned(),
                Some(server),
            )
        }
    };
    println!("model `{model}` at {base}");

    let tools = weather_tools()?;
    let openai = Provider::OpenAiChat { strict: true };
    let definitions = openai.definitions(&tools.specifications(&Context::new()))?;
    let client = reqwest::Client::new();
    let runner = TurnRunner::new(&tools).handler(
        ToolHandler::empty()
            .on_success(|e| println!("  ok    {} in {:?}", e.name, e.elapsed))
            .on_error(|e| println!("  error {}: {}", e.name, e.error)),
    );
    let mut messages = vec![
        json!({"role": "system", "content": "You answer weather questions with the tools."}),
        json!({"role": "user", "content": "How warm is it in Prague and in Brno right now?"}),
    ];
    for step in 1..=8 {
        let request = json!({
            "model": model,
            "messages": messages,
            "tools": definitions,
            "parallel_tool_calls": true,
        });
        let response: Value = client
            .post(format!("{base}/chat/completions"))
            .bearer_auth(&key)
            .json(&request)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let message = response["choices"][0]["message"].clone();
        messages.push(message.clone());
        let calls = openai.parse_calls(&response)?;
        if calls.is_empty() {
            println!("step {step}: the model answers");
            println!(
                "assistant: {}",
                message["content"].as_str().unwrap_or_default()
            );
            break;
        }
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        println!(
            "step {step}: {} tool call(s): {}",
            calls.len(),
            names.join(", ")
        );
        let outcomes = runner.run(calls, &Context::new()).await;
        let pairs: Vec<_> = outcomes.iter().map(|o| o.pair()).collect();
        for (call, response) in &pairs {
            let marker = if response.is_error { "error" } else { "ok" };
            println!(
                "  {} {} -> [{marker}] {}",
                call.name, call.arguments, response.content
            );
        }
        messages.extend(openai.result_messages(&pairs));
    }
    if let Some(server) = local {
        server.stop().await;
    }
    Ok(())
}

/// An in-process stand-in for a model: answers Chat Completions requests on
/// 127.0.0.1 in the documented format, deciding from the conversation so far
/// (like a model, but the same every time).
mod recorded_model {
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::post;
    use axum::{Json, Router};
    use serde_json::{json, Value};

    pub(crate) struct Server {
        pub(crate) address: std::net::SocketAddr,
        stop: tokio::sync::oneshot::Sender<()>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Server {
        pub(crate) async fn stop(self) {
            let _ = self.stop.send(());
            let _ = self.task.await;
        }
    }

    pub(crate) async fn start() -> std::io::Result<Server> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new().route("/v1/chat/completions", post(complete));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Server {
            address,
            stop,
            task,
        })
    }

    fn call(id: &str, city: &str) -> Value {
        json!({"id": id, "type": "function",
               "function": {"name": "get_weather", "arguments": json!({"city": city}).to_string()}})
    }

    fn reply(message: Value, finish: &str) -> Json<Value> {
        Json(json!({
            "id": "chatcmpl-recorded",
            "object": "chat.completion",
            "created": 1764547200,
            "model": "recorded",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        }))
    }

    async fn complete(
        headers: HeaderMap,
        Json(request): Json<Value>,
    ) -> Result<Json<Value>, (StatusCode, String)> {
        if !headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("Bearer "))
        {
            return Err((StatusCode::UNAUTHORIZED, "no bearer token".to_owned()));
        }
        let tools = request["tools"].as_array().cloned().unwrap_or_default();
        if tools
            .iter()
            .any(|t| t["type"] != "function" || t["function"]["name"].as_str().is_none())
            || tools.is_empty()
        {
            return Err((
                StatusCode::BAD_REQUEST,
                "`tools` must be function definitions".to_owned(),
            ));
        }
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
        if results.is_empty() {
            // First step: both cities at once; the first with a typo.
            return Ok(reply(
                json!({"role": "assistant", "content": null,
                       "tool_calls": [call("call_1", "Prag"), call("call_2", "Brno")]}),
                "tool_calls",
            ));
        }
        let failed = results.iter().any(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("no city `Prag`"))
        });
        let retried = results.iter().any(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("\"Prague\""))
        });
        if failed && !retried {
            // The tool said which cities it knows: the model corrects itself.
            return Ok(reply(
                json!({"role": "assistant", "content": null,
                       "tool_calls": [call("call_3", "Prague")]}),
                "tool_calls",
            ));
        }
        let readings: Vec<Value> = results
            .iter()
            .filter_map(|m| serde_json::from_str::<Value>(m["content"].as_str()?).ok())
            .filter(|v| v.get("celsius").is_some())
            .collect();
        let text = readings
            .iter()
            .map(|r| {
                format!(
                    "{} is {} °C and {}",
                    r["city"].as_str().unwrap_or("?"),
                    r["celsius"],
                    r["sky"].as_str().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Ok(reply(
            json!({"role": "assistant", "content": format!("{text}.")}),
            "stop",
        ))
    }
}
