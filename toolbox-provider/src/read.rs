//! Reading a provider's response body straight from its bytes: typed,
//! borrowing structs that visit only the fields a tool call needs (no
//! `Value` tree for the response), each call's arguments kept as the JSON
//! text they came as. A body of any other shape is read by the general
//! path ([`Provider::parse_calls`]), which gives the same calls and names
//! what is wrong.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::Provider;
use toolbox_core::args::{CallArguments, ToolCall};
use toolbox_core::internal::string_text;
use toolbox_core::spec::Caller;

/// A call's arguments from their raw JSON: an object as its text (the
/// intake's fast path), a JSON string as the text it holds; anything else
/// as the value the general path would keep.
fn arguments(raw: Option<&RawValue>) -> Option<CallArguments> {
    let Some(raw) = raw else {
        return Some(CallArguments::from(Value::Null));
    };
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'{') => Some(CallArguments::text(text)),
        Some(b'"') => string_text(text).map(CallArguments::text),
        _ => serde_json::from_str::<Value>(text)
            .ok()
            .map(CallArguments::from),
    }
}

/// Arguments sent as a JSON string, as OpenAI sends them: the text it
/// holds (`null` or absent as no arguments); any other JSON is the general
/// path's to read.
fn text(arguments: Option<&RawValue>) -> Option<CallArguments> {
    match arguments {
        Some(raw) => string_text(raw.get()).map(CallArguments::text),
        None => Some(CallArguments::from(Value::Null)),
    }
}

/// A call id as the general path reads it: a string as is, `null` or absent
/// as none, anything else as its JSON text.
fn id(raw: Option<&RawValue>) -> Option<Option<String>> {
    let Some(raw) = raw else {
        return Some(None);
    };
    match serde_json::from_str::<Value>(raw.get()).ok()? {
        Value::Null => Some(None),
        Value::String(text) => Some(Some(text)),
        other => Some(Some(other.to_string())),
    }
}

/// A call's `caller` as the general path reads it (absent or `null` as
/// none); `None` when it is not JSON the general path can read.
fn caller(raw: Option<&RawValue>) -> Option<Option<Caller>> {
    let Some(raw) = raw else {
        return Some(None);
    };
    let value: Value = serde_json::from_str(raw.get()).ok()?;
    Some(toolbox_core::internal::caller_from_wire(&value))
}

/// A JSON object read as `T`: derived structs also take an array of their
/// fields, which the general path refuses.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Object<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Object(std::marker::PhantomData))
            .map(Obj)
    }
}

/// A string borrowed from the body when it has no escapes, for a field
/// that is only compared (`Option<Cow<str>>` alone always copies).
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Borrowing<'a>(std::marker::PhantomData<&'a str>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Borrowing<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(text.to_owned())))
            }
        }
        deserializer.deserialize_str(Borrowing(std::marker::PhantomData))
    }
}

impl Str<'_> {
    fn is(&self, text: &str) -> bool {
        self.0 == text
    }
}

/// A field that is present, `null` included (`Option` alone reads a
/// `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

#[derive(Deserialize)]
struct ChatBody<'a> {
    #[serde(borrow, default)]
    choices: Option<Vec<Obj<ChatChoice<'a>>>>,
}

#[derive(Deserialize)]
struct ChatChoice<'a> {
    #[serde(borrow)]
    message: Option<Obj<ChatMessage<'a>>>,
}

#[derive(Deserialize)]
struct ChatMessage<'a> {
    #[serde(borrow, default)]
    tool_calls: Option<Vec<Obj<ChatCall<'a>>>>,
}

/// A string id (another kind is the general path's to read).
#[derive(Deserialize)]
struct ChatCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Obj<ChatFunction<'a>>,
}

/// Arguments as a string, as OpenAI sends them (another kind is the
/// general path's to read).
#[derive(Deserialize)]
struct ChatFunction<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResponsesBody<'a> {
    #[serde(borrow)]
    output: Vec<Obj<ResponsesItem<'a>>>,
}

#[derive(Deserialize)]
struct ResponsesItem<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    caller: Option<&'a RawValue>,
    /// `true` for a call whose output may come later (another kind is
    /// the general path's to read).
    #[serde(rename = "async", default)]
    is_async: Option<bool>,
}

#[derive(Deserialize)]
struct AnthropicBody<'a> {
    #[serde(borrow)]
    content: Vec<Obj<AnthropicBlock<'a>>>,
}

#[derive(Deserialize)]
struct AnthropicBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    caller: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GeminiBody<'a> {
    #[serde(borrow)]
    candidates: Vec<Obj<GeminiCandidate<'a>>>,
}

#[derive(Deserialize)]
struct GeminiCandidate<'a> {
    #[serde(borrow, default)]
    content: Option<Obj<GeminiContent<'a>>>,
}

#[derive(Deserialize)]
struct GeminiContent<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<Obj<GeminiPart<'a>>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiPart<'a> {
    /// Read as a `GeminiCall` when present (a `null` one is the general
    /// path's to name).
    #[serde(borrow, default, deserialize_with = "present")]
    function_call: Option<&'a RawValue>,
    /// Kept as sent, `null` included.
    #[serde(borrow, default, deserialize_with = "present")]
    thought_signature: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct GeminiCall<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// The calls of a body of the provider's usual shape, or `None` for the
/// general path to read (another shape, or something it will name).
///
/// Each call is written once into a vector sized for the body's entries
/// (a call is a few hundred bytes, which an iterator chain collecting
/// into an `Option<Vec<_>>` moves several times).
pub(super) fn calls(provider: Provider, body: &[u8]) -> Option<Vec<ToolCall>> {
    match provider {
        Provider::OpenAiChat { .. } => {
            let Obj(body): Obj<ChatBody<'_>> = serde_json::from_slice(body).ok()?;
            let message = body.choices?.into_iter().next()?.0.message?.0;
            let listed = message.tool_calls.unwrap_or_default();
            let mut calls = Vec::with_capacity(listed.len());
            for Obj(call) in listed {
                calls.push(ToolCall {
                    id: call.id.map(Cow::into_owned),
                    name: call.function.0.name.into_owned(),
                    arguments: text(call.function.0.arguments)?,
                    extra: None,
                    caller: None,
                });
            }
            Some(calls)
        }
        Provider::OpenAiResponses { .. } => {
            let Obj(body): Obj<ResponsesBody<'_>> = serde_json::from_slice(body).ok()?;
            let mut calls = Vec::with_capacity(body.output.len());
            for Obj(item) in body.output {
                // A tool search the application answers: read as values.
                if item
                    .kind
                    .as_ref()
                    .is_some_and(|kind| kind.is("tool_search_call"))
                {
                    return None;
                }
                if item
                    .kind
                    .as_ref()
                    .is_some_and(|kind| kind.is("function_call"))
                {
                    calls.push(ToolCall {
                        id: Some(item.call_id?.into_owned()),
                        name: item.name?.into_owned(),
                        arguments: text(item.arguments)?,
                        extra: super::async_extra(item.is_async == Some(true)),
                        caller: caller(item.caller)?,
                    });
                }
            }
            Some(calls)
        }
        Provider::Anthropic { .. } => {
            let Obj(body): Obj<AnthropicBody<'_>> = serde_json::from_slice(body).ok()?;
            let mut calls = Vec::with_capacity(body.content.len());
            for Obj(block) in body.content {
                if block.kind.as_ref().is_some_and(|kind| kind.is("tool_use")) {
                    calls.push(ToolCall {
                        id: Some(block.id?.into_owned()),
                        name: block.name?.into_owned(),
                        arguments: arguments(block.input)?,
                        extra: None,
                        caller: caller(block.caller)?,
                    });
                }
            }
            Some(calls)
        }
        Provider::Gemini | Provider::GeminiLegacy => {
            let Obj(body): Obj<GeminiBody<'_>> = serde_json::from_slice(body).ok()?;
            let parts = body.candidates.into_iter().next()?.0.content?.0.parts?;
            let mut calls = Vec::with_capacity(parts.len());
            for Obj(part) in parts {
                let Some(call) = part.function_call else {
                    continue;
                };
                let Obj(call): Obj<GeminiCall<'_>> = serde_json::from_str(call.get()).ok()?;
                let extra = match part.thought_signature {
                    Some(raw) => Some(
                        json!({"thoughtSignature": serde_json::from_str::<Value>(raw.get()).ok()?}),
                    ),
                    None => None,
                };
                calls.push(ToolCall {
                    id: id(call.id)?,
                    name: call.name.into_owned(),
                    arguments: arguments(call.args)?,
                    extra,
                    caller: None,
                });
            }
            Some(calls)
        }
        Provider::Mcp => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenAI's argument strings are read to the text they hold, escapes
    /// undone; arguments of another JSON kind leave the body to the
    /// general path, as they did when the field was read as a string.
    #[test]
    fn argument_strings_are_unescaped_and_other_kinds_refused() {
        let body = br#"{"choices": [{"message": {"tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 40,\n \"b\": 2}"}},
            {"id": "call_2", "type": "function", "function": {"name": "echo", "arguments": "{\"text\": \"caf\u00e9 \\\"hi\\\"\"}"}},
            {"id": "call_3", "type": "function", "function": {"name": "none", "arguments": null}}]}}]}"#;
        let read = calls(Provider::OpenAiChat { strict: true }, body).expect("the usual shape");
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].arguments.as_text(), Some("{\"a\": 40,\n \"b\": 2}"));
        assert_eq!(read[0].arguments["b"], 2);
        assert_eq!(
            read[1].arguments.as_text(),
            Some(r#"{"text": "café \"hi\""}"#)
        );
        assert_eq!(read[1].arguments["text"], "café \"hi\"");
        // `null` is no arguments: the empty object.
        assert_eq!(read[2].arguments.as_text(), None);
        assert_eq!(*read[2].arguments, json!({}));
        let object = br#"{"choices": [{"message": {"tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": {"a": 1}}}]}}]}"#;
        assert!(calls(Provider::OpenAiChat { strict: true }, object).is_none());
        let responses = br#"{"output": [{"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\":\t1}"}]}"#;
        let read =
            calls(Provider::OpenAiResponses { strict: true }, responses).expect("the usual shape");
        assert_eq!(read[0].arguments.as_text(), Some("{\"a\":\t1}"));
    }

    /// A block's type is compared as text: written with an escape, it is
    /// the same type (read into a copy rather than borrowed).
    #[test]
    fn an_escaped_type_is_the_same_type() {
        let body = br#"{"content": [{"type": "text", "text": "hi"},
            {"type": "tool\u005fuse", "id": "toolu_1", "name": "add", "input": {"a": 1}}]}"#;
        let read = calls(Provider::Anthropic { strict: true }, body).expect("the usual shape");
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].name, "add");
        assert_eq!(read[0].arguments.as_text(), Some(r#"{"a": 1}"#));
        let body = br#"{"output": [{"type": "function\u005fcall", "call_id": "c1", "name": "add", "arguments": "{}"},
            {"type": "message", "content": []}]}"#;
        let read =
            calls(Provider::OpenAiResponses { strict: true }, body).expect("the usual shape");
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].id.as_deref(), Some("c1"));
    }
}
