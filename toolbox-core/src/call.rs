//! One invocation, and how its arguments are taken in.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tracked::Tracked;
use crate::ToolError;

/// One invocation of a tool, as a provider or an MCP client sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call, echoed in the result message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The argument object.
    #[serde(default)]
    pub arguments: Value,
    /// Provider fields that must travel back with the call, e.g. Gemini's
    /// `thoughtSignature`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

impl ToolCall {
    /// A call without a provider id.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: None,
            name: name.into(),
            arguments,
            extra: None,
        }
    }

    /// Sets the provider's call id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// Turns what a model sent into an argument object: an object as is, `null`
/// (or an empty string) as no arguments, a JSON string holding an object
/// (also double-encoded) parsed. Anything else is [`ToolError::InvalidArguments`].
///
/// ```
/// use serde_json::json;
/// use toolbox_core::normalize_arguments;
/// assert_eq!(*normalize_arguments(&json!(null)).unwrap(), json!({}));
/// assert_eq!(*normalize_arguments(&json!(r#"{"a":1}"#)).unwrap(), json!({"a": 1}));
/// assert_eq!(*normalize_arguments(&json!(r#""{\"a\":1}""#)).unwrap(), json!({"a": 1}));
/// assert!(normalize_arguments(&json!([1])).is_err());
/// ```
pub fn normalize_arguments(arguments: &Value) -> Result<Cow<'_, Value>, ToolError> {
    match arguments {
        Value::Object(_) => Ok(Cow::Borrowed(arguments)),
        Value::Null => Ok(Cow::Owned(Value::Object(Map::new()))),
        Value::String(text) => parse_argument_text(text, 0).map(Cow::Owned),
        other => Err(ToolError::invalid_arguments(
            "",
            format!(
                "expected a JSON object of arguments, got {}",
                describe(other)
            ),
        )),
    }
}

/// Parses arguments sent as text, the way providers send them.
pub fn parse_arguments(text: &str) -> Result<Value, ToolError> {
    parse_argument_text(text, 0)
}

fn parse_argument_text(text: &str, depth: u8) -> Result<Value, ToolError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(Value::Object(Map::new()));
    }
    let parsed: Value = serde_json::from_str(trimmed).map_err(|e| {
        ToolError::invalid_arguments(
            "",
            format!("the arguments are not valid JSON ({e}); send a JSON object"),
        )
    })?;
    match parsed {
        Value::Object(_) => Ok(parsed),
        Value::String(inner) if depth == 0 => parse_argument_text(&inner, 1),
        other => Err(ToolError::invalid_arguments(
            "",
            format!(
                "expected a JSON object of arguments, got {}",
                describe(&other)
            ),
        )),
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Deserializes an argument object into `T`. On failure the error names the
/// JSON path of the offending value and what was expected; a successful call
/// pays nothing for that.
pub fn deserialize_arguments<T: DeserializeOwned>(arguments: &Value) -> Result<T, ToolError> {
    T::deserialize(Tracked(arguments)).map_err(invalid)
}

fn invalid(error: crate::tracked::PathError) -> ToolError {
    ToolError::invalid_arguments(error.path(), error.message())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Filters {
        tags: Vec<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Search {
        query: String,
        filters: Filters,
    }

    #[test]
    fn errors_name_the_path_and_the_expectation() {
        let error =
            deserialize_arguments::<Search>(&json!({"query": "q", "filters": {"tags": ["a", 3]}}))
                .unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid arguments at `filters.tags[1]`: invalid type: integer `3`, expected a string"
        );
        let error = deserialize_arguments::<Search>(&json!({"filters": {"tags": []}})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid arguments: missing field `query`"
        );
        let error = deserialize_arguments::<Search>(
            &json!({"query": "q", "filters": {"tags": []}, "x": 1}),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid arguments at `x`: unknown field `x`, expected `query` or `filters`"
        );
    }

    #[test]
    fn argument_text_is_parsed() {
        assert_eq!(parse_arguments("").unwrap(), json!({}));
        assert_eq!(parse_arguments(" {\"a\": 1} ").unwrap(), json!({"a": 1}));
        assert_eq!(
            parse_arguments("{\"a\":").unwrap_err().to_string(),
            "invalid arguments: the arguments are not valid JSON (EOF while parsing a value at line 1 column 5); send a JSON object"
        );
        assert_eq!(
            normalize_arguments(&json!(7)).unwrap_err().to_string(),
            "invalid arguments: expected a JSON object of arguments, got a number"
        );
        // Triple encoding is not unambiguous any more: refused.
        let triple = serde_json::to_string(&serde_json::to_string(&"{}").unwrap()).unwrap();
        assert!(parse_arguments(&triple).is_err());
    }
}
