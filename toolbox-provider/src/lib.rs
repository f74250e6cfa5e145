//! What each provider is told and what it sends back, as plain
//! `serde_json::Value`s (no HTTP client): tool definitions with the schema
//! lowered to the provider's dialect, tool calls parsed out of responses,
//! and the tool-result messages to send back.
//!
//! ```
//! use serde_json::json;
//! use toolbox_provider::Provider;
//! use toolbox_core::{ToolResponse, ToolSpecification};
//!
//! let spec = ToolSpecification::new("get_weather", "Gets the weather").with_parameters(json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}, "days": {"type": "integer", "format": "uint8"}},
//!     "required": ["city"]
//! }));
//! let definition = Provider::OpenAiChat { strict: true }.definition(&spec).unwrap();
//! assert_eq!(definition["function"]["strict"], true);
//! assert_eq!(definition["function"]["parameters"]["required"], json!(["city", "days"]));
//!
//! let response = json!({"role": "assistant", "content": null, "tool_calls": [
//!     {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}
//! ]});
//! let calls = Provider::OpenAiChat { strict: true }.parse_calls(&response).unwrap();
//! assert_eq!(calls[0].arguments, json!({"city": "Oslo"}));
//! let messages = Provider::OpenAiChat { strict: true }
//!     .result_messages(&[(calls[0].clone(), ToolResponse::text("sunny"))]);
//! assert_eq!(messages, vec![json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny"})]);
//! ```

mod check;
mod code;
mod listing;
mod lower;
mod namespaces;
mod offer;
pub mod program;
mod read;
mod rules;
mod search;
mod tags;
mod tool_changes;
mod walk;
mod write;

use write::{anthropic_content, responses_output};

pub use check::{
    name_problem, request_limits, validate, validate_request, RequestLimits, Violation,
    ANTHROPIC_STRICT_LIMITS,
};
pub use code::{hosted, ANTHROPIC_CODE_EXECUTION};
pub use listing::McpToolListings;
pub use lower::{lower, LowerError, MAX_LOWERED_NODES, MAX_LOWERING_DEPTH};
pub use search::OPENAI_TOOL_SEARCH;
pub use tool_changes::ANTHROPIC_INLINE_TOOLS_BETA;
pub use toolbox_core::schema::Dialect;

use serde_json::{json, Map, Value};

use search::{is_tool_search_call, search_references, special_result};
use toolbox_core::internal::join;

use toolbox_core::args::CallArguments;
use toolbox_core::args::ToolCall;
use toolbox_core::ToolResponse;
use toolbox_core::ToolSpecification;

/// A provider API and its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI Chat Completions.
    OpenAiChat {
        /// Structured Outputs for arguments.
        strict: bool,
    },
    /// OpenAI Responses.
    OpenAiResponses {
        /// Structured Outputs for arguments (the API defaults to strict when omitted; always sent).
        strict: bool,
    },
    /// Anthropic Messages.
    Anthropic {
        /// Strict tool use.
        strict: bool,
    },
    /// Google Gemini `generateContent` with `parametersJsonSchema`.
    Gemini,
    /// Google Gemini with the legacy `parameters` field.
    GeminiLegacy,
    /// Model Context Protocol.
    Mcp,
}

/// A definition that cannot be lowered, or a provider payload that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// A tool's schema cannot be expressed in the provider's dialect.
    #[error("tool `{tool}` cannot be offered to {dialect}: {source}")]
    Lower {
        /// The tool.
        tool: String,
        /// The dialect's name.
        dialect: &'static str,
        /// What cannot be expressed, and where.
        source: LowerError,
    },
    /// The tools together break a limit the provider puts on one request.
    #[error("these tools cannot be offered together to {dialect}: {}", problems.join("; "))]
    Request {
        /// The dialect's name.
        dialect: &'static str,
        /// Each limit broken, with the counts.
        problems: Vec<String>,
    },
    /// A tool only code may call, offered to a provider that runs no code
    /// the model writes.
    #[error("tool `{tool}` {}", only_code(provider))]
    Caller {
        /// The tool.
        tool: String,
        /// The provider's name.
        provider: &'static str,
    },
    /// The payload does not have the provider's documented shape.
    #[error("malformed {provider} payload at `{path}`: {message}")]
    Malformed {
        /// The provider's name.
        provider: &'static str,
        /// Where in the payload.
        path: String,
        /// What was expected.
        message: String,
    },
}

/// Why a tool only code may call cannot be offered to `provider` (the
/// text after the tool's name).
fn only_code(provider: &str) -> String {
    format!("may be called only from code, and {provider} runs no code the model writes: offer it through a local code mode, or let the model call it directly (callers `direct` and `code`)")
}

impl Provider {
    /// The schema dialect of this provider.
    pub fn dialect(self) -> Dialect {
        match self {
            Provider::OpenAiChat { strict: true } | Provider::OpenAiResponses { strict: true } => {
                Dialect::OpenAiStrict
            }
            Provider::OpenAiChat { strict: false }
            | Provider::OpenAiResponses { strict: false } => Dialect::OpenAi,
            Provider::Anthropic { strict: true } => Dialect::AnthropicStrict,
            Provider::Anthropic { strict: false } => Dialect::Anthropic,
            Provider::Gemini => Dialect::GeminiJsonSchema,
            Provider::GeminiLegacy => Dialect::GeminiParameters,
            Provider::Mcp => Dialect::Mcp,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat { .. } => "OpenAI Chat Completions",
            Provider::OpenAiResponses { .. } => "OpenAI Responses",
            Provider::Anthropic { .. } => "Anthropic Messages",
            Provider::Gemini | Provider::GeminiLegacy => "Gemini",
            Provider::Mcp => "MCP",
        }
    }

    /// `spec`'s argument schema lowered for this provider, alone: what
    /// [`definition`](Self::definition) puts in the provider's shape, and
    /// what a client that builds its own tool objects (a bridge) sends.
    pub fn parameters(self, spec: &ToolSpecification) -> Result<Value, ProviderError> {
        let dialect = self.dialect();
        lower(&spec.parameters, dialect).map_err(|source| ProviderError::Lower {
            tool: spec.name.clone(),
            dialect: dialect.label(),
            source,
        })
    }

    /// The tool definition for one specification, its schema lowered.
    pub fn definition(self, spec: &ToolSpecification) -> Result<Value, ProviderError> {
        Ok(self.define(spec, self.parameters(spec)?))
    }

    /// The tool definition for one specification, with its schema lowered
    /// already.
    fn define(self, spec: &ToolSpecification, parameters: Value) -> Value {
        // Anthropic takes examples as `input_examples`; every other dialect
        // reads them in the description.
        let described;
        let (spec, examples) = match self {
            Provider::Anthropic { .. } => (spec, spec.examples.as_slice()),
            _ if spec.examples.is_empty() => (spec, &[][..]),
            _ => {
                let mut with_examples = spec.clone();
                with_examples.description = described_with_examples(spec);
                described = with_examples;
                (&described, &[][..])
            }
        };
        let mut definition = match self {
            Provider::OpenAiChat { strict } => json!({
                "type": "function",
                "function": {"name": spec.name, "description": spec.description, "parameters": parameters, "strict": strict}
            }),
            Provider::OpenAiResponses { strict } => json!({
                "type": "function", "name": spec.name, "description": spec.description,
                "parameters": parameters, "strict": strict
            }),
            Provider::Anthropic { strict } => json!({
                "name": spec.name, "description": spec.description, "input_schema": parameters, "strict": strict
            }),
            Provider::Gemini => json!({
                "name": spec.name, "description": spec.description, "parametersJsonSchema": parameters
            }),
            Provider::GeminiLegacy => json!({
                "name": spec.name, "description": spec.description, "parameters": parameters
            }),
            Provider::Mcp => mcp_tool(spec, parameters),
        };
        if !examples.is_empty() {
            definition["input_examples"] = Value::Array(examples.to_vec());
        }
        if let Some(callers) = code::allowed_callers(spec.callers, self) {
            definition["allowed_callers"] = callers;
        }
        if matches!(self, Provider::OpenAiResponses { .. }) && runs_async(spec) {
            definition["async"] = Value::Bool(true);
        }
        definition
    }

    /// The `tools` value of a request: a list of definitions, or for Gemini
    /// one `functionDeclarations` entry holding them all. Fails when a
    /// schema cannot be lowered, or when the tools together break a limit
    /// of the provider on one request (Anthropic strict:
    /// [`ANTHROPIC_STRICT_LIMITS`]). For OpenAI Responses a namespaced
    /// tool goes inside its `namespace` tool. Every tool is offered in
    /// full here, deferred ones too: deferral is a
    /// `Catalog`'s (the
    /// `TurnRunner` builds one for a box with
    /// deferred tools). An MCP Apps tool whose visibility leaves out the
    /// model is left out for every model provider (MCP serves it). Tools
    /// code may call carry the provider's `allowed_callers`, with its code
    /// execution tool added once (Anthropic, OpenAI Responses); a tool only
    /// code may call is [`ProviderError::Caller`] for a provider that runs
    /// no code (see [`program`]).
    /// `check_surface` reports every
    /// refusal this makes, found by the same code. For OpenAI Responses a
    /// tool that runs as a task (`#[tool(task)]`) and only the model calls
    /// is `"async": true`: its output may come in a later request (see
    /// `BackgroundCalls`); the other
    /// providers have no such field, and their calls block.
    pub fn definitions(self, specs: &[ToolSpecification]) -> Result<Value, ProviderError> {
        let specs = self.offered(specs);
        let parameters = self.screen(specs.iter()).parameters()?;
        let code = specs.iter().any(|s| s.callers.code()) && code::hosted(self);
        let defined = specs
            .iter()
            .zip(parameters)
            .map(|(spec, parameters)| (spec, self.define(spec, parameters)));
        let mut definitions: Vec<Value> = if matches!(self, Provider::OpenAiResponses { .. })
            && specs.iter().any(|s| s.namespace.is_some())
        {
            // Namespaced functions go inside their `namespace` tool.
            namespaces::place(defined)
        } else {
            defined.map(|(_, definition)| definition).collect()
        };
        if code {
            definitions.extend(code::hosted_tool(self));
        }
        Ok(match self {
            Provider::Gemini | Provider::GeminiLegacy => {
                json!([{"functionDeclarations": definitions}])
            }
            _ => Value::Array(definitions),
        })
    }

    /// Undoes, in `call`'s arguments, what lowering `spec`'s schema for this
    /// provider changed in meaning (see
    /// [`normalize`](toolbox_core::args::normalize)), and returns what it
    /// changed. `TurnRunner::provider` does it for every call it runs.
    pub fn normalize_call(
        self,
        call: &mut ToolCall,
        spec: &ToolSpecification,
    ) -> Vec<toolbox_core::args::Adjustment> {
        let dialect = self.dialect();
        // Under a dialect that closes objects the only thing to undo is a
        // `null` for an absent property: text without one stays text (the
        // fast path of the intake).
        if dialect.closes_objects()
            && call
                .arguments
                .as_text()
                .is_some_and(|text| !text.contains("null"))
        {
            return Vec::new();
        }
        let mut value = call.arguments.value().clone();
        let changes = toolbox_core::args::normalize(&spec.parameters, dialect, &mut value);
        if !changes.is_empty() {
            call.arguments = CallArguments::from(value);
        }
        changes
    }

    /// The tool calls in a provider's response body as it came over HTTP.
    /// A body of the provider's usual shape is read with typed structs
    /// that visit only what a call needs (no `Value` tree), and each
    /// call's arguments stay the JSON text they came as, so the tool reads
    /// them as text (the intake's text reader); any other body is
    /// read as [`parse_calls`](Provider::parse_calls) reads it, with the
    /// same calls and the same errors.
    ///
    /// ```
    /// use toolbox_provider::Provider;
    /// let body = br#"{"choices": [{"message": {"role": "assistant", "tool_calls": [
    ///     {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}
    /// ]}}]}"#;
    /// let calls = Provider::OpenAiChat { strict: true }.parse_response(body).unwrap();
    /// assert_eq!(calls[0].name, "get_weather");
    /// assert_eq!(calls[0].arguments.as_text(), Some(r#"{"city":"Oslo"}"#));
    /// assert_eq!(calls[0].arguments["city"], "Oslo");
    /// ```
    pub fn parse_response(self, body: &[u8]) -> Result<Vec<ToolCall>, ProviderError> {
        if let Some(calls) = read::calls(self, body) {
            return Ok(calls);
        }
        let payload: Value =
            serde_json::from_slice(body).map_err(|error| ProviderError::Malformed {
                provider: self.name(),
                path: String::new(),
                message: format!("the body is not JSON: {error}"),
            })?;
        self.parse_calls(&payload)
    }

    /// The tool calls in a provider response (the whole response body or
    /// just the assistant message / output items). Arguments stay as the
    /// provider sent them when they are not valid JSON, so the call still
    /// gets its result: an invalid-arguments error the model can act on.
    pub fn parse_calls(self, payload: &Value) -> Result<Vec<ToolCall>, ProviderError> {
        let reader = Reader {
            provider: self.name(),
        };
        match self {
            Provider::OpenAiChat { .. } => {
                let (message, base) = match payload.pointer("/choices/0/message") {
                    Some(message) => (message, "choices[0].message"),
                    None => (payload, ""),
                };
                // No calls: the field absent, or `null` as some servers send it.
                let calls = match message.get("tool_calls") {
                    None | Some(Value::Null) => return Ok(Vec::new()),
                    Some(calls) => calls,
                };
                let calls = reader.array(calls, &join(base, "tool_calls"))?;
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, call)| {
                        let path = format!("{}[{i}]", join(base, "tool_calls"));
                        let function = reader.field(call, "function", &path)?;
                        let name = reader.string(function, "name", &format!("{path}.function"))?;
                        Ok(ToolCall {
                            id: call_id(call.get("id")),
                            name,
                            arguments: take_arguments(function.get("arguments")),
                            extra: None,
                            caller: None,
                        })
                    })
                    .collect()
            }
            Provider::OpenAiResponses { .. } => {
                let items = match payload.get("output") {
                    Some(output) => reader.array(output, "output")?,
                    None => reader.array(payload, "")?,
                };
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, item)| {
                        let kind = item.get("type").and_then(Value::as_str);
                        kind == Some("function_call")
                            || (kind == Some("tool_search_call")
                                && item.get("execution").and_then(Value::as_str) == Some("client"))
                    })
                    .map(|(i, item)| {
                        let path = format!("output[{i}]");
                        if item.get("type").and_then(Value::as_str) == Some("tool_search_call") {
                            // A search the application answers, with a
                            // `tool_search_output` (see `Catalog`).
                            return Ok(ToolCall {
                                id: Some(reader.string(item, "call_id", &path)?),
                                name: OPENAI_TOOL_SEARCH.to_owned(),
                                arguments: take_arguments(item.get("arguments")),
                                extra: Some(
                                    json!({"type": "tool_search_call", "execution": "client"}),
                                ),
                                caller: None,
                            });
                        }
                        Ok(ToolCall {
                            id: Some(reader.string(item, "call_id", &path)?),
                            name: reader.string(item, "name", &path)?,
                            arguments: take_arguments(item.get("arguments")),
                            extra: async_extra(item.get("async") == Some(&Value::Bool(true))),
                            caller: item
                                .get("caller")
                                .and_then(toolbox_core::internal::caller_from_wire),
                        })
                    })
                    .collect()
            }
            Provider::Anthropic { .. } => {
                let content = reader.array(reader.field(payload, "content", "")?, "content")?;
                content
                    .iter()
                    .enumerate()
                    .filter(|(_, block)| {
                        block.get("type").and_then(Value::as_str) == Some("tool_use")
                    })
                    .map(|(i, block)| {
                        let path = format!("content[{i}]");
                        Ok(ToolCall {
                            id: Some(reader.string(block, "id", &path)?),
                            name: reader.string(block, "name", &path)?,
                            arguments: take_arguments(block.get("input")),
                            extra: None,
                            caller: block
                                .get("caller")
                                .and_then(toolbox_core::internal::caller_from_wire),
                        })
                    })
                    .collect()
            }
            Provider::Gemini | Provider::GeminiLegacy => {
                let (content, base) = if let Some(candidates) = payload.get("candidates") {
                    // A response: no candidate, or one without content or
                    // parts (blocked, cut short), holds no call.
                    match candidates.pointer("/0/content") {
                        Some(content) => (content, "candidates[0].content"),
                        None => return Ok(Vec::new()),
                    }
                } else if payload.get("promptFeedback").is_some() {
                    // The prompt was blocked: a response with no candidates.
                    return Ok(Vec::new());
                } else {
                    (payload, "")
                };
                let parts = match content.get("parts") {
                    None | Some(Value::Null) if !base.is_empty() => return Ok(Vec::new()),
                    _ => {
                        reader.array(reader.field(content, "parts", base)?, &join(base, "parts"))?
                    }
                };
                parts
                    .iter()
                    .enumerate()
                    .filter_map(|(i, part)| part.get("functionCall").map(|call| (i, part, call)))
                    .map(|(i, part, call)| {
                        let path = format!("{}[{i}].functionCall", join(base, "parts"));
                        Ok(ToolCall {
                            id: call_id(call.get("id")),
                            name: reader.string(call, "name", &path)?,
                            arguments: take_arguments(call.get("args")),
                            extra: part
                                .get("thoughtSignature")
                                .map(|s| json!({"thoughtSignature": s})),
                            caller: None,
                        })
                    })
                    .collect()
            }
            Provider::Mcp => {
                let params = payload.get("params").unwrap_or(payload);
                Ok(vec![ToolCall {
                    id: call_id(payload.get("id")),
                    name: reader.string(params, "name", "params")?,
                    arguments: take_arguments(params.get("arguments")),
                    extra: None,
                    caller: None,
                }])
            }
        }
    }

    /// The same messages as [`result_messages`](Provider::result_messages),
    /// as JSON text (an array) written in one pass, for a request body
    /// built as text.
    ///
    /// ```
    /// use toolbox_provider::Provider;
    /// use toolbox_core::args::ToolCall;
    /// use toolbox_core::ToolResponse;
    /// let results = [(ToolCall::new("add", r#"{"a":1,"b":2}"#).with_id("call_1"), ToolResponse::text("3"))];
    /// let provider = Provider::OpenAiChat { strict: true };
    /// assert_eq!(
    ///     provider.result_messages_json(&results),
    ///     r#"[{"role":"tool","tool_call_id":"call_1","content":"3"}]"#
    /// );
    /// ```
    pub fn result_messages_json<R: Answered>(self, results: &[R]) -> String {
        if results
            .iter()
            .any(|r| special_result(r.call()) || r.running())
        {
            return serde_json::to_string(&self.result_messages(results)).unwrap_or_default();
        }
        write::messages(self, results).unwrap_or_else(|_| {
            serde_json::to_string(&self.result_messages(results)).unwrap_or_default()
        })
    }

    /// The message(s) that carry results back, one result per call, in the
    /// order given. Anthropic's results come first in the next user turn,
    /// followed by a `system` message of the tool changes a catalogue's
    /// search made where it sends them inline
    /// (`Catalog::inline_tool_changes`);
    /// Gemini's call ids are echoed; OpenAI's `tool_call_id` / `call_id` set.
    ///
    /// `results` are `(ToolCall, ToolResponse)` pairs, or the
    /// `CallOutcome`s a `TurnRunner` returned.
    /// For OpenAI Responses an outcome still
    /// [running](Answered::running) in the background has no item: the
    /// API takes its `function_call_output` in a later request, once
    /// `BackgroundCalls` has it (pass the
    /// outcomes themselves, not their `pair`s,
    /// which forget it runs).
    pub fn result_messages<R: Answered>(self, results: &[R]) -> Vec<Value> {
        let id = |i: usize, call: &ToolCall| {
            Value::String(call.id.clone().unwrap_or_else(|| format!("call_{i}")))
        };
        match self {
            Provider::OpenAiChat { .. } => results
                .iter()
                .map(Answered::parts)
                .enumerate()
                .map(|(i, (call, response))| {
                    object([
                        ("role", Value::String("tool".into())),
                        ("tool_call_id", id(i, call)),
                        ("content", Value::String(response.content.clone())),
                    ])
                })
                .collect(),
            Provider::OpenAiResponses { .. } => results
                .iter()
                .enumerate()
                .filter(|(_, result)| !result.running())
                .map(|(i, result)| (i, result.parts()))
                .flat_map(|(i, (call, response))| {
                    if is_tool_search_call(call) {
                        // The loaded definitions, or none when the search
                        // found nothing or was refused.
                        let (tools, why) = match serde_json::from_str::<Value>(&response.content) {
                            Ok(tools @ Value::Array(_)) if !response.is_error => (tools, None),
                            _ => (Value::Array(Vec::new()), Some(&response.content)),
                        };
                        let output = object([
                            ("type", Value::String("tool_search_output".into())),
                            ("call_id", id(i, call)),
                            ("execution", Value::String("client".into())),
                            ("tools", tools),
                        ]);
                        // `tool_search_output` has no field for text: why
                        // nothing was loaded follows as a developer message.
                        return match why {
                            Some(why) => vec![
                                output,
                                object([
                                    ("type", Value::String("message".into())),
                                    ("role", Value::String("developer".into())),
                                    (
                                        "content",
                                        Value::String(format!(
                                            "The tool search loaded no tool: {why}"
                                        )),
                                    ),
                                ]),
                            ],
                            None => vec![output],
                        };
                    }
                    vec![object([
                        ("type", Value::String("function_call_output".into())),
                        ("call_id", id(i, call)),
                        ("output", responses_output(response)),
                    ])]
                })
                .collect(),
            Provider::Anthropic { .. } => {
                let blocks: Vec<Value> = results
                    .iter()
                    .map(Answered::parts)
                    .enumerate()
                    .map(|(i, (call, response))| {
                        let content = match search_references(call) {
                            Some(references) if !response.is_error => references,
                            _ => anthropic_content(response),
                        };
                        let mut block = object([
                            ("type", Value::String("tool_result".into())),
                            ("tool_use_id", id(i, call)),
                            ("content", content),
                        ]);
                        if response.is_error {
                            block["is_error"] = Value::Bool(true);
                        }
                        block
                    })
                    .collect();
                let turn = object([
                    ("role", Value::String("user".into())),
                    ("content", Value::Array(blocks)),
                ]);
                // The tools a search loaded or unloaded, after the results.
                std::iter::once(turn)
                    .chain(tool_changes::system_message(results))
                    .collect()
            }
            Provider::Gemini | Provider::GeminiLegacy => {
                let parts: Vec<Value> = results
                    .iter()
                    .map(Answered::parts)
                    .map(|(call, response)| {
                        let body = if response.is_error {
                            object([("error", Value::String(response.content.clone()))])
                        } else {
                            let output = serde_json::from_str::<Value>(&response.content)
                                .unwrap_or_else(|_| Value::String(response.content.clone()));
                            object([("output", output)])
                        };
                        let mut function_response = Map::new();
                        if let Some(id) = &call.id {
                            function_response.insert("id".into(), Value::String(id.clone()));
                        }
                        function_response.insert("name".into(), Value::String(call.name.clone()));
                        function_response.insert("response".into(), body);
                        object([("functionResponse", Value::Object(function_response))])
                    })
                    .collect();
                vec![object([
                    ("role", Value::String("user".into())),
                    ("parts", Value::Array(parts)),
                ])]
            }
            Provider::Mcp => results
                .iter()
                .map(Answered::parts)
                .map(|(_, response)| {
                    let content = match response.content_blocks() {
                        Some(blocks) => Value::Array(blocks.to_vec()),
                        None => json!([{"type": "text", "text": response.content}]),
                    };
                    let mut result = json!({"content": content});
                    if response.is_error {
                        result["isError"] = Value::Bool(true);
                    } else if let Ok(structured @ Value::Object(_)) =
                        serde_json::from_str::<Value>(&response.content)
                    {
                        result["structuredContent"] = structured;
                    }
                    result
                })
                .collect(),
        }
    }
}

/// Whether OpenAI Responses is told `spec`'s tool is `async` (its output
/// may come in a later request while the model works on): a tool that
/// runs as a task ([`TaskSupport`](toolbox_core::spec::TaskSupport), the same
/// "long call, answered later" mark MCP reads) and only the model calls
/// directly, as the async tool calling guide asks (no async tool for
/// programmatic tool calling).
pub(crate) fn runs_async(spec: &ToolSpecification) -> bool {
    !spec.task.is_never() && !spec.callers.code()
}

/// What an OpenAI Responses call item keeps in [`ToolCall::extra`]:
/// `{"async": true}` when the item says its output may come later (see
/// [`ToolCall::is_async`]).
pub(crate) fn async_extra(is_async: bool) -> Option<Value> {
    is_async.then(|| json!({"async": true}))
}

/// A description with the tool's examples, for a dialect with no field
/// for them.
fn described_with_examples(spec: &ToolSpecification) -> String {
    let mut description = spec.description.clone();
    description.push_str(if spec.examples.len() == 1 {
        "\n\nExample arguments: "
    } else {
        "\n\nExamples of arguments: "
    });
    let examples: Vec<String> = spec.examples.iter().map(Value::to_string).collect();
    description.push_str(&examples.join("; "));
    description
}

/// A call with its response, as result messages are built from: a
/// `(ToolCall, ToolResponse)` pair or a `CallOutcome`.
pub trait Answered {
    /// The call.
    fn call(&self) -> &ToolCall;
    /// Its response.
    fn response(&self) -> &ToolResponse;
    /// Both.
    fn parts(&self) -> (&ToolCall, &ToolResponse) {
        (self.call(), self.response())
    }
    /// Whether the call still runs in the background (an OpenAI Responses
    /// `async` call): no output item is written for it; its output is the
    /// one `BackgroundCalls` gives once it
    /// has ended. `false` unless said.
    fn running(&self) -> bool {
        false
    }
}

impl Answered for (ToolCall, ToolResponse) {
    fn call(&self) -> &ToolCall {
        &self.0
    }
    fn response(&self) -> &ToolResponse {
        &self.1
    }
}

/// A JSON object of these fields, in order (`json!` would serialize each
/// value again).
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in fields {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// Gemini's model turn for these calls, `thoughtSignature`s included: what
/// goes back into the history before the function responses.
pub fn gemini_model_turn(calls: &[ToolCall]) -> Value {
    let parts: Vec<Value> = calls
        .iter()
        .map(|call| {
            let mut function_call = Map::new();
            if let Some(id) = &call.id {
                function_call.insert("id".into(), Value::String(id.clone()));
            }
            function_call.insert("name".into(), Value::String(call.name.clone()));
            function_call.insert("args".into(), call.arguments.value().clone());
            let mut part = json!({"functionCall": function_call});
            if let Some(signature) = call.extra.as_ref().and_then(|e| e.get("thoughtSignature")) {
                part["thoughtSignature"] = signature.clone();
            }
            part
        })
        .collect();
    json!({"role": "model", "parts": parts})
}

fn mcp_tool(spec: &ToolSpecification, input_schema: Value) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), Value::String(spec.name.clone()));
    if let Some(title) = &spec.title {
        tool.insert("title".into(), Value::String(title.clone()));
    }
    tool.insert(
        "description".into(),
        Value::String(spec.description.clone()),
    );
    tool.insert("inputSchema".into(), input_schema);
    if let Some(output) = spec
        .output_schema
        .as_ref()
        .filter(|o| o.get("type").is_some_and(|t| t == "object"))
    {
        let mut output = output.clone();
        if let Some(object) = output.as_object_mut() {
            object.remove("$schema");
            object.remove("title");
        }
        tool.insert("outputSchema".into(), output);
    }
    if let Some(annotations) = &spec.annotations {
        let mut hints = Map::new();
        for (key, value) in [
            ("readOnlyHint", annotations.read_only),
            ("destructiveHint", annotations.destructive),
            ("idempotentHint", annotations.idempotent),
            ("openWorldHint", annotations.open_world),
        ] {
            if let Some(value) = value {
                hints.insert(key.into(), Value::Bool(value));
            }
        }
        if !hints.is_empty() {
            tool.insert("annotations".into(), Value::Object(hints));
        }
    }
    if let Some(ui) = spec
        .ui
        .as_ref()
        .and_then(|ui| serde_json::to_value(ui).ok())
    {
        tool.insert("_meta".into(), json!({ "ui": ui }));
    }
    Value::Object(tool)
}

/// Arguments as sent: objects as is, text parsed (double encoding too);
/// unparsable text is kept so the lifecycle can answer with the reason.
/// A call's arguments as they came: a string as its text, anything else
/// as a value (`null` when absent).
fn take_arguments(arguments: Option<&Value>) -> CallArguments {
    CallArguments::from(arguments.cloned().unwrap_or(Value::Null))
}

struct Reader {
    provider: &'static str,
}

impl Reader {
    fn malformed(&self, path: &str, message: impl Into<String>) -> ProviderError {
        ProviderError::Malformed {
            provider: self.provider,
            path: if path.is_empty() {
                "(root)".into()
            } else {
                path.to_owned()
            },
            message: message.into(),
        }
    }

    fn field<'v>(
        &self,
        value: &'v Value,
        key: &str,
        path: &str,
    ) -> Result<&'v Value, ProviderError> {
        value
            .get(key)
            .ok_or_else(|| self.malformed(path, format!("expected an object with `{key}`")))
    }

    fn string(&self, value: &Value, key: &str, path: &str) -> Result<String, ProviderError> {
        match value.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(self.malformed(&join(path, key), "expected a string")),
            None => Err(self.malformed(path, format!("expected an object with `{key}`"))),
        }
    }

    fn array<'v>(&self, value: &'v Value, path: &str) -> Result<&'v Vec<Value>, ProviderError> {
        value
            .as_array()
            .ok_or_else(|| self.malformed(path, "expected an array"))
    }
}

/// A provider's call id as text: a string as is, a number (or any other
/// JSON value) as its JSON text, so it is echoed back rather than dropped.
fn call_id(id: Option<&Value>) -> Option<String> {
    match id? {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// What the toolbox crates above this one build on beside the public API:
/// shared helpers, not a public API, no stability promise.
#[doc(hidden)]
pub mod internal {
    pub use crate::code::hosted_tool;
    pub use crate::namespaces::responses_tools;
    pub use crate::offer::Screen;
    pub use crate::offer::Screened;
    pub use crate::search::{is_tool_search_call, SEARCH_MARK, SEARCH_NOTE};

    /// Anthropic's inline tool changes (`tool_addition`, `tool_removal`).
    pub mod tool_changes {
        pub use crate::tool_changes::*;
    }

    /// The walk over a schema's nodes.
    pub mod walk {
        pub use crate::walk::*;
    }
}
