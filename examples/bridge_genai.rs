//! toolbox with genai: the definitions lowered for the model's provider as
//! genai `Tool`s, genai's `ChatResponse` calls run through the turn runner,
//! the results sent back as genai `ToolResponse`s. The "model" is a stand-in
//! on 127.0.0.1 that answers with a recorded OpenAI completion.
//!
//! Run it with `cargo run --example bridge_genai --features genai`.

use axum::{routing::post, Router};
use genai::chat::{ChatMessage, ChatRequest};
use genai::resolver::{AuthData, Endpoint};
use genai::{Client, ServiceTarget};
use toolbox::bridge::genai as bridge;
use toolbox::prelude::*;
use toolbox::provider::Provider;
use toolbox::turn::TurnRunner;

/// Weather and arithmetic.
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
        /// `celsius` or `fahrenheit`; celsius when absent.
        units: Option<String>,
    ) -> String {
        match units.as_deref() {
            Some("fahrenheit") => format!("{city}: 59 F, light rain"),
            _ => format!("{city}: 15 C, light rain"),
        }
    }

    /// Adds two integers.
    #[tool(read_only)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// What the model answers, as the API sent it.
const RECORDED: &str = include_str!("../tests/fixtures/bridges/openai_chat_completion.json");

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // With toolbox's `mcp` feature too, reqwest has rustls without a
    // default provider: genai's client needs one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let model = Router::new().route(
        "/v1/chat/completions",
        post(|| async { ([("content-type", "application/json")], RECORDED) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1/", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, model).await });
    let client = Client::builder()
        .with_service_target_resolver_fn(move |mut target: ServiceTarget| {
            target.endpoint = Endpoint::from_owned(url.clone());
            target.auth = AuthData::from_single("not-needed");
            Ok(target)
        })
        .build()?;

    let ctx = Context::new();
    let runner = TurnRunner::new(&Tools).provider(Provider::OpenAiChat { strict: true });
    let tools = bridge::tools(&runner.definitions(&ctx)?)?;
    println!("tools: {}", tools.len());
    let request = ChatRequest::from_user("Weather in Paris, and 40 + 2?").with_tools(tools);
    let response = client
        .exec_chat("gpt-4o-mini", request.clone(), None)
        .await?;

    let outcomes = runner.run(bridge::calls(&response), &ctx).await;
    let results = bridge::responses(&outcomes);
    for result in &results {
        println!("{} -> {}", result.call_id, result.content);
    }
    let _next = request
        .append_message(ChatMessage::from(response.into_tool_calls()))
        .append_message(ChatMessage::from(results));
    Ok(())
}
