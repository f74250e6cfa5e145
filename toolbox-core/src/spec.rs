//! What the model is told exists.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool as the model sees it: its name, what it does, and the JSON Schema
/// of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpecification {
    /// The name the model calls the tool by, `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// A human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does and when to use it.
    pub description: String,
    /// JSON Schema (draft 2020-12) of the argument object.
    pub parameters: Value,
    /// JSON Schema of the structured result, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (MCP tool annotations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// Hints about a tool's effects, as MCP defines them. `read_only` and
/// `destructive` also decide what may run concurrently in a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches outside the application (the web, other systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolSpecification {
    /// A specification with a name, a description and an empty argument object.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpecification {
            name: name.into(),
            title: None,
            description: description.into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
            output_schema: None,
            annotations: None,
        }
    }

    /// Replaces the argument schema.
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the schema of the tool's result.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the effects (MCP's hints).
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Whether the tool is annotated read-only.
    pub fn is_read_only(&self) -> bool {
        self.annotations.as_ref().and_then(|a| a.read_only) == Some(true)
    }

    /// Whether the tool is annotated destructive.
    pub fn is_destructive(&self) -> bool {
        self.annotations.as_ref().and_then(|a| a.destructive) == Some(true)
    }
}

/// Whether `name` is legal for every provider toolbox targets:
/// `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Why `name` is not a legal tool name, or `None` when it is.
pub(crate) fn tool_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a tool name must not be empty".to_owned());
    }
    if name.len() > 64 {
        return Some(format!(
            "tool name `{name}` is {} characters long; providers accept at most 64",
            name.len()
        ));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        .map(|c| {
            format!("tool name `{name}` contains `{c}`; providers accept only a-z, A-Z, 0-9, `_` and `-`")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_portable_rule() {
        assert!(is_valid_tool_name("get_weather-2"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("get@crm"));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert_eq!(
            tool_name_problem("get.weather").unwrap(),
            "tool name `get.weather` contains `.`; providers accept only a-z, A-Z, 0-9, `_` and `-`"
        );
    }
}
