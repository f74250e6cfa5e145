//! toolbox with async-openai's typed values: the request's `tools` as
//! `ChatCompletionTools`, a recorded `CreateChatCompletionResponse` run
//! through the turn runner, the results as typed `tool` messages.
//!
//! Run it with `cargo run --example bridge_async_openai --features async-openai`.

use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestToolMessageContent, ChatCompletionTools,
    CreateChatCompletionResponse,
};
use toolbox::bridge::async_openai as bridge;
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

/// What the model answered, as the API sent it.
const RECORDED: &str = include_str!("../tests/fixtures/bridges/openai_chat_completion.json");

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = Context::new();
    let runner = TurnRunner::new(&Tools).provider(Provider::OpenAiChat { strict: true });

    let tools: Vec<ChatCompletionTools> = bridge::chat_tools(&runner.definitions(&ctx)?)?;
    for tool in &tools {
        if let ChatCompletionTools::Function(tool) = tool {
            println!(
                "tool: {} (strict: {})",
                tool.function.name,
                tool.function.strict.unwrap_or(false)
            );
        }
    }

    let response: CreateChatCompletionResponse = serde_json::from_str(RECORDED)?;
    let calls = bridge::chat_calls(&response);
    println!("calls: {}", calls.len());
    let outcomes = runner.run(calls, &ctx).await;
    for message in bridge::chat_messages(&outcomes)? {
        if let ChatCompletionRequestMessage::Tool(message) = message {
            if let ChatCompletionRequestToolMessageContent::Text(text) = message.content {
                println!("{} -> {text}", message.tool_call_id);
            }
        }
    }
    Ok(())
}
