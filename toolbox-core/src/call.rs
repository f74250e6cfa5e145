//! One invocation, and how its arguments are taken in.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Arguments, ToolError};

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
/// The same as [`Arguments::to_value`].
///
/// ```
/// use serde_json::json;
/// use toolbox_core::arguments::normalize_arguments;
/// assert_eq!(*normalize_arguments(&json!(null)).unwrap(), json!({}));
/// assert_eq!(*normalize_arguments(&json!(r#"{"a":1}"#)).unwrap(), json!({"a": 1}));
/// assert_eq!(*normalize_arguments(&json!(r#""{\"a\":1}""#)).unwrap(), json!({"a": 1}));
/// assert!(normalize_arguments(&json!([1])).is_err());
/// ```
pub fn normalize_arguments(arguments: &Value) -> Result<Cow<'_, Value>, ToolError> {
    Arguments::from(arguments).to_value()
}

/// Parses arguments sent as text, the way providers send them. The same as
/// [`Arguments::to_value`] on text.
pub fn parse_arguments(text: &str) -> Result<Value, ToolError> {
    Arguments::Text(text).to_value().map(Cow::into_owned)
}

/// Deserializes arguments into `T`. The same as [`Arguments::deserialize`].
pub fn deserialize_arguments<T: DeserializeOwned>(arguments: &Value) -> Result<T, ToolError> {
    Arguments::from(arguments).deserialize()
}
