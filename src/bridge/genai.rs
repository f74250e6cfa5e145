//! genai's chat types (feature `genai`; tested with genai 0.7 built
//! without its TLS features).
//!
//! genai fronts several providers, and each reads a tool's schema in its
//! own dialect, so the definitions are the ones toolbox lowered for the
//! provider behind the model ([`Provider::definitions`](crate::provider::Provider::definitions), or
//! [`TurnRunner::definitions`](crate::turn::TurnRunner::definitions)):
//! [`tools`] turns them into genai [`Tool`]s, strict where they are.
//! [`calls`] reads a [`ChatResponse`]'s tool calls for the turn runner, and
//! [`responses`] builds the [`ToolResponse`]s that carry the results back
//! (a `Vec<ToolResponse>` is a genai `ChatMessage`).
//!
//! ```
//! use toolbox::bridge::genai as bridge;
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
//! let ctx = Context::new();
//! // The model is Claude: Anthropic's dialect, strict.
//! let runner = TurnRunner::new(&tools).provider(Provider::Anthropic { strict: true });
//! let definitions = bridge::tools(&runner.definitions(&ctx)?)?;
//! assert_eq!(definitions[0].name.as_ref(), "add");
//! assert_eq!(definitions[0].strict, Some(true));
//!
//! // A tool call as genai hands it over.
//! let call = genai::chat::ToolCall {
//!     call_id: "toolu_1".into(),
//!     fn_name: "add".into(),
//!     fn_arguments: serde_json::json!({"a": 2, "b": 3}),
//!     thought_signatures: None,
//! };
//! let outcomes = runner.run(vec![bridge::call(&call)], &ctx).await;
//! let results = bridge::responses(&outcomes);
//! assert_eq!((results[0].call_id.as_str(), results[0].content.as_str()), ("toolu_1", "5"));
//! let _message = genai::chat::ChatMessage::from(results);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use crate::provider::Answered;
use genai::chat::{ChatResponse, Tool, ToolResponse};
use toolbox_core::args::ToolCall;
use toolbox_core::serde_json::{json, Map, Value};

use super::BridgeError;

/// Where each provider's definition holds the schema.
const SCHEMA_KEYS: [&str; 4] = [
    "parameters",
    "input_schema",
    "parametersJsonSchema",
    "inputSchema",
];

/// genai [`Tool`]s from the definitions toolbox lowered for a provider:
/// OpenAI Chat Completions or Responses (namespaces flattened), Anthropic
/// (its `input_examples` left out: genai's `Tool` has no field for them),
/// Gemini (`functionDeclarations` too) or MCP. Each keeps its name,
/// description, lowered schema and `strict` flag.
///
/// # Errors
/// [`BridgeError::Convert`] naming the first definition that is not a
/// function tool (a provider's hosted search tool, say: genai cannot send it).
pub fn tools(definitions: &Value) -> Result<Vec<Tool>, BridgeError> {
    let mut tools = Vec::new();
    let items = match definitions {
        Value::Array(items) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    for (i, item) in items.iter().enumerate() {
        collect(item, &format!("tools[{i}]"), &mut tools)?;
    }
    Ok(tools)
}

fn collect(item: &Value, path: &str, tools: &mut Vec<Tool>) -> Result<(), BridgeError> {
    let refused = |message: &str| BridgeError::Convert {
        path: path.to_owned(),
        target: "genai::chat::Tool",
        message: message.to_owned(),
    };
    let Value::Object(object) = item else {
        return Err(refused("a definition is an object"));
    };
    // Groups: a Responses namespace, a Gemini `functionDeclarations` list.
    let group = match object.get("type").and_then(Value::as_str) {
        Some("namespace") => object.get("tools").map(|tools| ("tools", tools)),
        _ => object
            .get("functionDeclarations")
            .map(|tools| ("functionDeclarations", tools)),
    };
    if let Some((key, Value::Array(members))) = group {
        for (i, member) in members.iter().enumerate() {
            collect(member, &format!("{path}.{key}[{i}]"), tools)?;
        }
        return Ok(());
    }
    // Chat Completions nests the function.
    let (function, strict_holder) = match object.get("function") {
        Some(Value::Object(function)) => (function, function),
        _ => (object, object),
    };
    let Some(name) = function.get("name").and_then(Value::as_str) else {
        return Err(refused("it has no `name`"));
    };
    let schema = SCHEMA_KEYS.iter().find_map(|key| function.get(*key));
    let kind = object.get("type").and_then(Value::as_str);
    if schema.is_none() && kind.is_some_and(|kind| kind != "function") {
        return Err(refused(&format!(
            "`{name}` is a provider tool of type `{}`, not a function genai can send",
            kind.unwrap_or_default()
        )));
    }
    let mut tool = Tool::new(name).with_schema(schema.cloned().unwrap_or_else(empty_object));
    if let Some(description) = function.get("description").and_then(Value::as_str) {
        tool = tool.with_description(description);
    }
    if let Some(strict) = strict_holder.get("strict").and_then(Value::as_bool) {
        tool = tool.with_strict(strict);
    }
    tools.push(tool);
    Ok(())
}

fn empty_object() -> Value {
    json!({"type": "object", "properties": Map::new()})
}

/// One genai tool call as toolbox's: its id, name and arguments (a value
/// genai already parsed), and Gemini's thought signature where genai kept
/// one, so [`gemini_model_turn`](crate::provider::gemini_model_turn)
/// echoes it.
pub fn call(call: &genai::chat::ToolCall) -> ToolCall {
    let mut ours = ToolCall::new(call.fn_name.as_str(), call.fn_arguments.clone())
        .with_id(call.call_id.as_str());
    if let Some(signature) = call.thought_signatures.as_ref().and_then(|s| s.first()) {
        ours.extra = Some(json!({ "thoughtSignature": signature }));
    }
    ours
}

/// The tool calls of a genai [`ChatResponse`], in order.
pub fn calls(response: &ChatResponse) -> Vec<ToolCall> {
    response.tool_calls().into_iter().map(call).collect()
}

/// genai [`ToolResponse`]s for the results, one per call in the order
/// given, each with its call's id (`call_{i}` where the call had none, as
/// [`Provider::result_messages`](crate::provider::Provider::result_messages)
/// does) and name, and the text the model reads. A failed call's text is
/// its error, as toolbox wrote it for the model.
pub fn responses<R: Answered>(results: &[R]) -> Vec<ToolResponse> {
    results
        .iter()
        .enumerate()
        .map(|(i, result)| {
            let (call, response) = result.parts();
            let id = call.id.clone().unwrap_or_else(|| format!("call_{i}"));
            ToolResponse::new(id, response.content.as_str()).with_fn_name(call.name.as_str())
        })
        .collect()
}
