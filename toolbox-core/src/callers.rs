//! Who may call a tool ([`Callers`], on each specification) and who made a
//! call ([`Caller`], on each call): the model directly, or code the model
//! wrote. Re-exported by `toolbox::program`, where the providers'
//! programmatic tool calling is described.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which callers may call a tool: the model directly, code the model wrote
/// (a provider's hosted code execution, or a local code mode), or both.
/// Direct only by default. Serialized as a list: `["direct", "code"]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Callers {
    direct: bool,
    code: bool,
}

impl Default for Callers {
    fn default() -> Self {
        Callers::DIRECT
    }
}

impl Callers {
    /// The model calls the tool directly (the default).
    pub const DIRECT: Callers = Callers {
        direct: true,
        code: false,
    };
    /// Only code the model wrote calls the tool: it is absent from the
    /// model's direct list.
    pub const CODE: Callers = Callers {
        direct: false,
        code: true,
    };
    /// Both.
    pub const ANY: Callers = Callers {
        direct: true,
        code: true,
    };

    /// Whether the model may call the tool directly.
    pub fn direct(self) -> bool {
        self.direct
    }

    /// Whether code the model wrote may call the tool.
    pub fn code(self) -> bool {
        self.code
    }

    /// Whether the default (direct only).
    pub fn is_direct_only(&self) -> bool {
        *self == Callers::DIRECT
    }

    /// Whether `caller` may make a call (a call that names no caller is a
    /// direct one).
    pub fn allow(self, caller: Option<&Caller>) -> bool {
        match caller {
            None | Some(Caller::Direct) => self.direct,
            Some(Caller::Code { .. }) => self.code,
        }
    }

    /// The callers from their names (`"direct"`, `"code"`); an unknown
    /// name, or none at all, is an error naming it.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut callers = Callers {
            direct: false,
            code: false,
        };
        for name in names {
            match name {
                "direct" => callers.direct = true,
                "code" => callers.code = true,
                other => {
                    return Err(format!(
                        "unknown caller `{other}`: a tool's callers are `direct` (the model) and `code` (code the model wrote)"
                    ))
                }
            }
        }
        if !callers.direct && !callers.code {
            return Err(
                "a tool needs at least one caller: `direct` (the model), `code` (code the model wrote), or both"
                    .to_owned(),
            );
        }
        Ok(callers)
    }

    /// The callers' names, `direct` first.
    pub fn names(self) -> Vec<&'static str> {
        let mut names = Vec::with_capacity(2);
        if self.direct {
            names.push("direct");
        }
        if self.code {
            names.push("code");
        }
        names
    }
}

impl Serialize for Callers {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Callers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(deserializer)?;
        Callers::from_names(names.iter().map(String::as_str)).map_err(serde::de::Error::custom)
    }
}

/// Who made a call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Caller {
    /// The model, directly.
    Direct,
    /// Code the model wrote.
    Code {
        /// What ran it: the provider's caller type
        /// (`code_execution_20260120` for Anthropic, `program` for OpenAI
        /// Responses) or a local code mode's name.
        runtime: String,
        /// The provider's id of the code that made the call: Anthropic's
        /// code execution `tool_id`, the Responses `program`'s `call_id`.
        id: String,
    },
}

impl Caller {
    /// Whether code made the call.
    pub fn is_code(&self) -> bool {
        matches!(self, Caller::Code { .. })
    }

    /// A provider's `caller` object: `{"type": "direct"}`, Anthropic's
    /// `{"type": "code_execution_…", "tool_id"}`, OpenAI's `{"type":
    /// "program", "caller_id"}`. `None` for anything without a `type`.
    pub(crate) fn from_wire(value: &Value) -> Option<Caller> {
        let kind = value.get("type")?.as_str()?;
        if kind == "direct" {
            return Some(Caller::Direct);
        }
        let id = ["tool_id", "caller_id"]
            .iter()
            .find_map(|key| value.get(*key).and_then(Value::as_str))
            .unwrap_or_default();
        Some(Caller::Code {
            runtime: kind.to_owned(),
            id: id.to_owned(),
        })
    }
}
