//! What the model is told exists: a tool's [`ToolSpecification`], its
//! annotations, who may call it ([`Callers`]), whether it runs as a task,
//! its UI, and the namespace a catalogue files it under.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::callers::{Caller, Callers};

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
    /// The group the tool belongs to (a registry module, a `#[tool_box]`,
    /// an MCP server): OpenAI Responses offers it as a `namespace`, and a
    /// tool search shows its description first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Namespace>,
    /// Offered only once a tool search has revealed it (see the
    /// `catalog` module): its definition costs nothing until then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
    /// Example argument objects, each valid under `parameters`: Anthropic's
    /// `input_examples`, appended to the description elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Value>,
    /// MCP Apps: the view a host renders for the tool (`_meta.ui`), and
    /// who may call it. A tool whose visibility leaves out the model is
    /// never offered to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<ToolUi>,
    /// Who may call the tool: the model directly (the default), code the
    /// model wrote, or both (see `toolbox::program`).
    #[serde(default, skip_serializing_if = "Callers::is_direct_only")]
    pub callers: Callers,
    /// Whether the tool runs as a task: a long call answered later. An MCP
    /// server runs it as one (the `io.modelcontextprotocol/tasks`
    /// extension) for clients that declared it, which poll instead of
    /// waiting on it; OpenAI Responses is told it is `async` (the model
    /// works on while it runs, and its output comes in a later request;
    /// see `toolbox::turn::BackgroundCalls`). The other
    /// providers have no such mark: their calls of it block.
    #[serde(default, skip_serializing_if = "TaskSupport::is_never")]
    pub task: TaskSupport,
}

/// Whether a tool runs as a task (`#[tool(task)]`, `FnTool::task`,
/// [`ToolSpecification::with_task`]): an MCP task when served, an `async`
/// tool for OpenAI Responses (either value but `Never`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// A plain call (the default).
    #[default]
    Never,
    /// A task for clients that declared the extension, a plain call for
    /// the others.
    Optional,
    /// Only a task: a client without the extension is refused (`-32021`).
    Required,
}

impl TaskSupport {
    /// Whether it is [`TaskSupport::Never`].
    pub fn is_never(&self) -> bool {
        *self == TaskSupport::Never
    }
}

/// A tool's MCP Apps metadata (`_meta.ui` of the
/// `io.modelcontextprotocol/ui` extension): the `ui://` resource a host
/// renders for it and who may call it. Keys toolbox does not read
/// (`csp`, `permissions`, `prefersBorder`, …) are kept as they came, so a
/// proxied tool is served again unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolUi {
    /// The `ui://` resource of the tool's view.
    #[serde(
        rename = "resourceUri",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_uri: Option<String>,
    /// Who may call the tool: `"model"` (the agent), `"app"` (the view,
    /// through the host). Absent: both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<String>>,
    /// Every other key of `_meta.ui`, unchanged.
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

impl ToolUi {
    /// A view at `resource_uri`, callable by the model and the view.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        ToolUi {
            resource_uri: Some(resource_uri.into()),
            ..ToolUi::default()
        }
    }

    /// Sets who may call the tool (`"model"`, `"app"`).
    pub fn with_visibility<S: Into<String>>(mut self, who: impl IntoIterator<Item = S>) -> Self {
        self.visibility = Some(who.into_iter().map(Into::into).collect());
        self
    }

    /// Whether a model may be offered and call the tool.
    pub fn for_model(&self) -> bool {
        self.sees("model")
    }

    /// Whether the view may call the tool.
    pub fn for_app(&self) -> bool {
        self.sees("app")
    }

    fn sees(&self, who: &str) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|list| list.iter().any(|v| v == who))
    }
}

/// A named group of tools with a description: what a model sees of the
/// group before it searches for the tools inside.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Namespace {
    /// The group's name, legal as a tool name.
    pub name: String,
    /// What the group's tools are for.
    pub description: String,
}

impl Namespace {
    /// A namespace with a name and a description.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Namespace {
            name: name.into(),
            description: description.into(),
        }
    }

    /// What is wrong with the namespace (its name illegal as a tool name,
    /// its description empty or longer than
    /// [`MAX_NAMESPACE_DESCRIPTION`]),
    /// or `None`.
    pub fn problem(&self) -> Option<String> {
        namespace_problem(self)
    }
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
            namespace: None,
            deferred: false,
            examples: Vec::new(),
            ui: None,
            callers: Callers::DIRECT,
            task: TaskSupport::Never,
        }
    }

    /// Whether a model may be offered and call the tool: not an MCP Apps
    /// tool whose visibility leaves the model out.
    pub fn for_model(&self) -> bool {
        self.ui.as_ref().is_none_or(ToolUi::for_model)
    }

    /// Sets who may call the tool (see `toolbox::program`).
    pub fn with_callers(mut self, callers: Callers) -> Self {
        self.callers = callers;
        self
    }

    /// Sets whether the tool runs as a task (an MCP task when served, an
    /// `async` tool for OpenAI Responses).
    pub fn with_task(mut self, task: TaskSupport) -> Self {
        self.task = task;
        self
    }

    /// Sets the MCP Apps metadata.
    pub fn with_ui(mut self, ui: ToolUi) -> Self {
        self.ui = Some(ui);
        self
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

    /// Puts the tool in a namespace.
    pub fn with_namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(namespace);
        self
    }

    /// Marks the tool deferred: offered once a tool search revealed it.
    pub fn with_deferred(mut self, deferred: bool) -> Self {
        self.deferred = deferred;
        self
    }

    /// Adds an example argument object (checked against `parameters` by
    /// `testing::check_surface`).
    pub fn with_example(mut self, example: Value) -> Self {
        self.examples.push(example);
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

/// The longest namespace description sent to a model, in bytes.
pub const MAX_NAMESPACE_DESCRIPTION: usize = 1024;

/// What is wrong with a namespace, if anything.
fn namespace_problem(namespace: &Namespace) -> Option<String> {
    if !is_valid_tool_name(&namespace.name) {
        return Some("a namespace name takes 1 to 64 of a-z, A-Z, 0-9, `_` and `-`".to_owned());
    }
    let description = namespace.description.trim();
    if description.is_empty() {
        return Some("the description is empty; say what its tools are for".to_owned());
    }
    if namespace.description.len() > MAX_NAMESPACE_DESCRIPTION {
        return Some(format!(
            "the description is {} bytes long; at most {MAX_NAMESPACE_DESCRIPTION} are sent",
            namespace.description.len()
        ));
    }
    None
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
