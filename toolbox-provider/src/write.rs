//! Result messages written straight to JSON text: borrowing structs in the
//! shape [`Provider::result_messages`] builds as values, serialized once.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{Answered, Provider};
use toolbox_core::args::ToolCall;
use toolbox_core::Content;
use toolbox_core::ToolResponse;

/// A text, or the value a response with images becomes.
#[derive(Serialize)]
#[serde(untagged)]
enum Text<'a> {
    Plain(&'a str),
    Parts(Value),
}

#[derive(Serialize)]
struct ChatResult<'a> {
    role: &'static str,
    tool_call_id: Cow<'a, str>,
    content: &'a str,
}

#[derive(Serialize)]
struct ResponsesResult<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    call_id: Cow<'a, str>,
    output: Text<'a>,
}

#[derive(Serialize)]
struct Turn<T> {
    role: &'static str,
    #[serde(rename = "content")]
    items: Vec<T>,
}

#[derive(Serialize)]
struct GeminiTurn<'a> {
    role: &'static str,
    parts: Vec<GeminiPart<'a>>,
}

#[derive(Serialize)]
struct AnthropicResult<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    tool_use_id: Cow<'a, str>,
    content: Text<'a>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiPart<'a> {
    function_response: GeminiResponse<'a>,
}

#[derive(Serialize)]
struct GeminiResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    response: GeminiBody<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum GeminiBody<'a> {
    Error { error: &'a str },
    Json { output: &'a RawValue },
    Text { output: &'a str },
}

fn id(i: usize, call: &ToolCall) -> Cow<'_, str> {
    match &call.id {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(format!("call_{i}")),
    }
}

fn text<'a>(response: &'a ToolResponse, parts: fn(&ToolResponse) -> Value) -> Text<'a> {
    if has_image(response) {
        Text::Parts(parts(response))
    } else {
        Text::Plain(&response.content)
    }
}

/// Room for the messages of `results`: their texts (a quarter more for
/// escapes), ids and names, and each message's own keys, so the text is
/// written into one allocation where serde_json's would grow it several
/// times.
fn room<R: Answered>(results: &[R]) -> usize {
    let each = |result: &R| {
        let (call, response) = result.parts();
        let content = response.content.len();
        content + content / 4 + call.name.len() + call.id.as_ref().map_or(8, String::len) + 80
    };
    results.iter().map(each).sum::<usize>() + 32
}

/// The result messages as JSON text (an array, as `result_messages`).
pub(super) fn messages<R: Answered>(
    provider: Provider,
    results: &[R],
) -> Result<String, serde_json::Error> {
    let mut buffer = Vec::with_capacity(room(results));
    write(provider, results, &mut buffer)?;
    Ok(toolbox_core::internal::json_string(buffer))
}

/// Writes the result messages of `results` to `out`.
fn write<R: Answered>(
    provider: Provider,
    results: &[R],
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let indexed = results.iter().map(Answered::parts).enumerate();
    match provider {
        Provider::OpenAiChat { .. } => serde_json::to_writer(
            out,
            &indexed
                .map(|(i, (call, response))| ChatResult {
                    role: "tool",
                    tool_call_id: id(i, call),
                    content: &response.content,
                })
                .collect::<Vec<_>>(),
        ),
        Provider::OpenAiResponses { .. } => serde_json::to_writer(
            out,
            &indexed
                .map(|(i, (call, response))| ResponsesResult {
                    kind: "function_call_output",
                    call_id: id(i, call),
                    output: text(response, responses_output),
                })
                .collect::<Vec<_>>(),
        ),
        Provider::Anthropic { .. } => serde_json::to_writer(
            out,
            &[Turn {
                role: "user",
                items: indexed
                    .map(|(i, (call, response))| AnthropicResult {
                        kind: "tool_result",
                        tool_use_id: id(i, call),
                        content: text(response, anthropic_content),
                        is_error: response.is_error,
                    })
                    .collect(),
            }],
        ),
        Provider::Gemini | Provider::GeminiLegacy => {
            // Output that is JSON goes in as it is (the value
            // `result_messages` parses it into), anything else as a string.
            let raws: Vec<Option<&RawValue>> = results
                .iter()
                .map(|result| result.response())
                .map(|response| serde_json::from_str(&response.content).ok())
                .collect();
            serde_json::to_writer(
                out,
                &[GeminiTurn {
                    role: "user",
                    parts: results
                        .iter()
                        .map(Answered::parts)
                        .zip(&raws)
                        .map(|((call, response), raw)| GeminiPart {
                            function_response: GeminiResponse {
                                id: call.id.as_deref(),
                                name: &call.name,
                                response: match (response.is_error, raw) {
                                    (true, _) => GeminiBody::Error {
                                        error: &response.content,
                                    },
                                    (false, Some(raw)) => GeminiBody::Json { output: raw },
                                    (false, None) => GeminiBody::Text {
                                        output: &response.content,
                                    },
                                },
                            },
                        })
                        .collect(),
                }],
            )
        }
        Provider::Mcp => serde_json::to_writer(out, &provider.result_messages(results)),
    }
}

/// Whether a response has an image among its parts (what Anthropic and
/// OpenAI Responses can show a model).
fn has_image(response: &ToolResponse) -> bool {
    response.content_blocks().is_some_and(|blocks| {
        blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("image"))
    })
}

pub(super) fn anthropic_content(response: &ToolResponse) -> Value {
    if !has_image(response) {
        return Value::String(response.content.clone());
    }
    let blocks: Vec<Value> = response
        .parts()
        .into_iter()
        .map(|part| match part {
            Content::Image { data, mime_type } => json!({"type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data}}),
            other => json!({"type": "text", "text": other.as_model_text()}),
        })
        .collect();
    Value::Array(blocks)
}

/// An OpenAI Responses `function_call_output`'s output: the text, or with
/// images `input_text` and `input_image` items in order.
pub(super) fn responses_output(response: &ToolResponse) -> Value {
    if !has_image(response) {
        return Value::String(response.content.clone());
    }
    let items: Vec<Value> = response
        .parts()
        .into_iter()
        .map(|part| match part {
            Content::Image { data, mime_type } => {
                json!({"type": "input_image", "image_url": format!("data:{mime_type};base64,{data}")})
            }
            other => json!({"type": "input_text", "text": other.as_model_text()}),
        })
        .collect();
    Value::Array(items)
}
