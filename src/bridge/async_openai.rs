//! async-openai's typed values (feature `async-openai`; tested with
//! async-openai 0.43 built with only `chat-completion-types` and
//! `response-types`, so no HTTP client comes with it).
//!
//! - Definitions: what toolbox lowered for OpenAI ([`Provider::definitions`],
//!   or [`TurnRunner::definitions`](crate::turn::TurnRunner::definitions)
//!   with a catalogue: namespaces, `defer_loading`, `tool_search`) as
//!   [`ChatCompletionTools`] or Responses [`Tool`]s: [`chat_tools`],
//!   [`response_tools`].
//! - Calls: read from the typed response, without writing it back to
//!   JSON: [`chat_calls`], [`response_calls`]. They are the calls
//!   [`Provider::parse_response`] reads from the response's bytes, so they
//!   go to [`TurnRunner::run`](crate::turn::TurnRunner::run) as they are.
//! - Results: the typed messages that carry them back: [`chat_messages`],
//!   [`response_items`].
//! - Programmatic tool calling: each call's caller is read
//!   ([`ToolCall::caller`]); [`update_program_state`] keeps the running
//!   programs of a typed response and [`program_items`] gives their
//!   `program` items (with their `fingerprint`) to send back.
//!
//! ```
//! use async_openai::types::chat::{ChatCompletionTools, CreateChatCompletionResponse};
//! use toolbox::bridge::async_openai as bridge;
//! use toolbox::prelude::*;
//! use toolbox::provider::Provider;
//! use toolbox::turn::TurnRunner;
//!
//! /// Adds two numbers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let tools = AddTool;
//! let provider = Provider::OpenAiChat { strict: true };
//! let ctx = Context::new();
//! let runner = TurnRunner::new(&tools).provider(provider);
//!
//! // The request's `tools`, typed.
//! let definitions: Vec<ChatCompletionTools> = bridge::chat_tools(&runner.definitions(&ctx)?)?;
//! assert!(matches!(&definitions[0], ChatCompletionTools::Function(f) if f.function.name == "add"));
//!
//! // The model's answer, as async-openai reads it.
//! let response: CreateChatCompletionResponse = serde_json::from_str(r#"{
//!     "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5",
//!     "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
//!         "role": "assistant", "content": null,
//!         "tool_calls": [{"id": "call_1", "type": "function",
//!                         "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]}}]
//! }"#)?;
//! let outcomes = runner.run(bridge::chat_calls(&response), &ctx).await;
//! let messages = bridge::chat_messages(&outcomes)?;
//! assert_eq!(serde_json::to_value(&messages)?[0]["content"], "5");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use crate::program::{Caller, ProgramState};
use crate::provider::{Answered, Provider};
use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestMessage, ChatCompletionTools,
    CreateChatCompletionResponse,
};
use async_openai::types::responses::{InputItem, OutputItem, Response, Tool, ToolCallCaller};
use toolbox_core::args::ToolCall;
use toolbox_core::serde_json::{self, Value};

use super::{each, BridgeError};

/// Chat Completions `tools`: each definition toolbox lowered for
/// [`Provider::OpenAiChat`] as async-openai's [`ChatCompletionTools`].
///
/// # Errors
/// [`BridgeError::Convert`] naming the first definition that is not a
/// Chat Completions tool (e.g. Responses definitions given by mistake).
pub fn chat_tools(definitions: &Value) -> Result<Vec<ChatCompletionTools>, BridgeError> {
    each(
        definitions,
        "tools",
        "async_openai::types::chat::ChatCompletionTools",
    )
}

/// Responses `tools`: each definition toolbox lowered for
/// [`Provider::OpenAiResponses`] (functions, `namespace` groups,
/// `defer_loading`, hosted or client `tool_search`) as async-openai's
/// Responses [`Tool`].
///
/// # Errors
/// [`BridgeError::Convert`] naming the first definition async-openai's
/// `Tool` cannot hold.
pub fn response_tools(definitions: &Value) -> Result<Vec<Tool>, BridgeError> {
    each(definitions, "tools", "async_openai::types::responses::Tool")
}

/// The tool calls of a Chat Completions response's first choice, as
/// [`Provider::parse_response`] reads them from its body: ids kept,
/// arguments the model's text as sent (a custom tool's input likewise, so
/// every call id gets its result).
pub fn chat_calls(response: &CreateChatCompletionResponse) -> Vec<ToolCall> {
    let Some(choice) = response.choices.first() else {
        return Vec::new();
    };
    choice
        .message
        .tool_calls
        .iter()
        .flatten()
        .map(|call| match call {
            ChatCompletionMessageToolCalls::Function(call) => ToolCall::new(
                call.function.name.as_str(),
                call.function.arguments.as_str(),
            )
            .with_id(call.id.as_str()),
            ChatCompletionMessageToolCalls::Custom(call) => ToolCall::new(
                call.custom_tool.name.as_str(),
                call.custom_tool.input.as_str(),
            )
            .with_id(call.id.as_str()),
        })
        .collect()
}

/// The calls of a Responses response, as [`Provider::parse_response`]
/// reads them from its body: each `function_call` (its namespace is not
/// part of toolbox's name) and each client-executed `tool_search_call`,
/// which a [`Catalog`](crate::catalog::Catalog) answers.
pub fn response_calls(response: &Response) -> Vec<ToolCall> {
    response
        .output
        .iter()
        .filter_map(|item| match item {
            OutputItem::FunctionCall(call) => {
                let mut read = ToolCall::new(call.name.as_str(), call.arguments.as_str())
                    .with_id(call.call_id.as_str());
                read.caller = call.caller.as_ref().map(|caller| match caller {
                    ToolCallCaller::Direct => Caller::Direct,
                    ToolCallCaller::Program(program) => Caller::Code {
                        runtime: "program".to_owned(),
                        id: program.caller_id.clone(),
                    },
                });
                Some(read)
            }
            // Rare and small: read as toolbox reads it, so it is marked
            // for the `tool_search_output` its answer goes back as.
            OutputItem::ToolSearchCall(_) => serde_json::to_value(item)
                .ok()
                .and_then(|item| {
                    Provider::OpenAiResponses { strict: true }
                        .parse_calls(&Value::Array(vec![item]))
                        .ok()
                })
                .and_then(|calls| calls.into_iter().next()),
            _ => None,
        })
        .collect()
}

/// The `tool` messages that carry results back to Chat Completions, one
/// per call in the order given, as [`Provider::result_messages`] builds them.
///
/// # Errors
/// [`BridgeError::Convert`] when a message does not read as async-openai's
/// [`ChatCompletionRequestMessage`] (not expected: a failure here is a bug).
pub fn chat_messages<R: Answered>(
    results: &[R],
) -> Result<Vec<ChatCompletionRequestMessage>, BridgeError> {
    let messages = Provider::OpenAiChat { strict: true }.result_messages(results);
    each(
        &Value::Array(messages),
        "messages",
        "async_openai::types::chat::ChatCompletionRequestMessage",
    )
}

/// The input items that carry results back to Responses, one per call in
/// the order given (`function_call_output`, or the `tool_search_output`
/// answering a client search), as [`Provider::result_messages`] builds them.
///
/// # Errors
/// [`BridgeError::Convert`] when an item does not read as async-openai's
/// [`InputItem`].
pub fn response_items<R: Answered>(results: &[R]) -> Result<Vec<InputItem>, BridgeError> {
    let items = Provider::OpenAiResponses { strict: true }.result_messages(results);
    each(
        &Value::Array(items),
        "input",
        "async_openai::types::responses::InputItem",
    )
}

/// Reads what a typed Responses response asks the next request to carry:
/// its new `program` items; a program whose `program_output` came has
/// ended (see [`ProgramState::update`]).
pub fn update_program_state(state: &mut ProgramState, response: &Response) {
    let items: Vec<Value> = response
        .output
        .iter()
        .filter(|item| matches!(item, OutputItem::Program(_) | OutputItem::ProgramOutput(_)))
        .filter_map(|item| serde_json::to_value(item).ok())
        .collect();
    state.update(
        Provider::OpenAiResponses { strict: true },
        &Value::Array(items),
    );
}

/// The `program` items of the programs still running, as input items to
/// send back before their calls (a request without them cannot go on with
/// the program: its `fingerprint` is what the provider replays).
///
/// # Errors
/// [`BridgeError::Convert`] when an item does not read as async-openai's
/// [`InputItem`].
pub fn program_items(state: &ProgramState) -> Result<Vec<InputItem>, BridgeError> {
    each(
        &Value::Array(state.programs.clone()),
        "programs",
        "async_openai::types::responses::InputItem",
    )
}
