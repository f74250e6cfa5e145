//! One invocation, and the arguments it came with.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Arguments;

/// One invocation of a tool, as a provider or an MCP client sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call, echoed in the result message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments, in the form they came (see [`CallArguments`]); they
    /// deref to the argument object.
    #[serde(default)]
    pub arguments: CallArguments,
    /// Provider fields that must travel back with the call, e.g. Gemini's
    /// `thoughtSignature`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
    /// Who made the call, where the provider says: the model directly, or
    /// code it wrote (see `toolbox::program`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<crate::callers::Caller>,
}

impl ToolCall {
    /// A call without a provider id.
    pub fn new(name: impl Into<String>, arguments: impl Into<CallArguments>) -> Self {
        ToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
            extra: None,
            caller: None,
        }
    }

    /// Sets the provider's call id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets who made the call.
    pub fn with_caller(mut self, caller: crate::callers::Caller) -> Self {
        self.caller = Some(caller);
        self
    }

    /// Whether the provider lets the call's output come in a later request
    /// while the model works on: an OpenAI Responses call item with
    /// `"async": true` (kept in [`extra`](Self::extra) as
    /// `{"async": true}`). A runner over a shared box leaves such a call
    /// running in the background (see
    /// `toolbox::turn::BackgroundCalls`).
    pub fn is_async(&self) -> bool {
        self.extra
            .as_ref()
            .and_then(|extra| extra.get("async"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// A call's arguments in the form the provider sent them: JSON text (OpenAI's
/// and Responses' `arguments` strings) is kept as text, so the tool reads
/// it as text (the intake's text reader, `from_str`'s acceptance) and no `Value` tree is built;
/// an object (Anthropic's `input`, Gemini's `args`) is kept as a value.
///
/// It derefs to the argument object, which text becomes on first use (as
/// [`Arguments::to_value`] reads it: `null` or empty text is `{}`, a JSON
/// string holding an object is that object; text that is not such JSON
/// stays a JSON string, so the call still reaches the tool and gets an
/// invalid-arguments error the model can act on).
///
/// ```
/// use serde_json::json;
/// use toolbox_core::args::{Arguments, CallArguments};
/// let arguments = CallArguments::text(r#"{"city": "Oslo"}"#);
/// assert!(matches!(arguments.as_arguments(), Arguments::Text(_)));
/// assert_eq!(arguments["city"], "Oslo");
/// assert_eq!(arguments, json!({"city": "Oslo"}));
/// ```
#[derive(Clone, Default)]
pub struct CallArguments {
    /// The text as it came; `None` for a value, or once the value changed.
    text: Option<String>,
    /// The argument object: set for a value, parsed from the text on first use.
    value: std::sync::OnceLock<Value>,
}

impl CallArguments {
    /// Arguments sent as JSON text.
    pub fn text(text: impl Into<String>) -> Self {
        CallArguments {
            text: Some(text.into()),
            value: std::sync::OnceLock::new(),
        }
    }

    /// The text the arguments came as, unless they came as a value or were
    /// changed since.
    pub fn as_text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The arguments for a call: the text when they came as text.
    #[inline]
    pub fn as_arguments(&self) -> Arguments<'_> {
        match &self.text {
            Some(text) => Arguments::Text(text),
            None => Arguments::Value(self.value()),
        }
    }

    /// The argument object.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let text = self.text.as_deref().unwrap_or_default();
            match Arguments::Text(text).to_value() {
                Ok(value) => value.into_owned(),
                Err(_) => Value::String(text.to_owned()),
            }
        })
    }

    /// The argument object, to change; the text is dropped (the value is
    /// what the call then takes).
    pub fn value_mut(&mut self) -> &mut Value {
        self.value();
        self.text = None;
        self.value.get_mut().expect("the value was just set")
    }

    /// The argument object, owned.
    pub fn into_value(mut self) -> Value {
        self.value();
        self.value.take().unwrap_or_default()
    }
}

impl From<Value> for CallArguments {
    /// A value as a provider sends it: a JSON string is text, `null` no
    /// arguments (`{}`), a JSON string holding an object that object.
    fn from(value: Value) -> Self {
        match value {
            Value::String(text) => CallArguments::text(text),
            value => {
                let value = match Arguments::Value(&value).to_value() {
                    Ok(Cow::Owned(normalized)) => normalized,
                    _ => value,
                };
                CallArguments {
                    text: None,
                    value: std::sync::OnceLock::from(value),
                }
            }
        }
    }
}

impl From<&Value> for CallArguments {
    fn from(value: &Value) -> Self {
        CallArguments::from(value.clone())
    }
}

impl From<String> for CallArguments {
    fn from(text: String) -> Self {
        CallArguments::text(text)
    }
}

impl From<&str> for CallArguments {
    fn from(text: &str) -> Self {
        CallArguments::text(text)
    }
}

impl std::ops::Deref for CallArguments {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl<'a> From<&'a CallArguments> for Arguments<'a> {
    #[inline]
    fn from(arguments: &'a CallArguments) -> Self {
        arguments.as_arguments()
    }
}

impl PartialEq for CallArguments {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}

impl PartialEq<Value> for CallArguments {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl std::fmt::Debug for CallArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.value(), f)
    }
}

impl std::fmt::Display for CallArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.value(), f)
    }
}

impl Serialize for CallArguments {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CallArguments {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(CallArguments::from)
    }
}
