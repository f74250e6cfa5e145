//! Between toolbox's types and MCP's: through the JSON both are defined by,
//! so every field MCP has and toolbox knows crosses unchanged.

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};
use toolbox_core::spec::TaskSupport;
use toolbox_core::{ToolAnnotations, ToolError, ToolResponse, ToolSpecification};
use toolbox_provider::Provider;

/// A toolbox specification as an MCP tool (the MCP dialect's definition).
pub(crate) fn to_tool(spec: &ToolSpecification) -> Result<Tool, String> {
    let definition = Provider::Mcp
        .definition(spec)
        .map_err(|e| format!("tool `{}` cannot be offered over MCP: {e}", spec.name))?;
    serde_json::from_value(definition)
        .map_err(|e| format!("tool `{}` is not a valid MCP tool: {e}", spec.name))
}

/// An MCP tool as a toolbox specification: schemas untouched, the
/// annotations' hints as toolbox's effects, `task` the task support its
/// server declared (see [`server_tasks`]).
///
/// Tools that need the task extension (`execution.taskSupport:
/// "required"` of `2025-11-25`) cannot be told apart here: rmcp's `Tool`
/// does not keep `execution`, so such a tool is offered and its call
/// answers with the server's error.
pub(crate) fn from_tool(tool: &Tool, task: TaskSupport) -> ToolSpecification {
    let hints = tool.annotations.as_ref();
    let annotations = hints
        .map(|hints| ToolAnnotations {
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
        })
        .filter(|a| {
            a.read_only.is_some()
                || a.destructive.is_some()
                || a.idempotent.is_some()
                || a.open_world.is_some()
        });
    ToolSpecification {
        name: tool.name.to_string(),
        title: tool
            .title
            .clone()
            .or_else(|| hints.and_then(|hints| hints.title.clone())),
        description: tool.description.as_deref().unwrap_or_default().to_owned(),
        parameters: Value::Object((*tool.input_schema).clone()),
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|s| Value::Object((**s).clone())),
        annotations,
        namespace: None,
        deferred: false,
        examples: Vec::new(),
        ui: tool
            .meta
            .as_ref()
            .and_then(|meta| meta.get("ui"))
            .and_then(|ui| serde_json::from_value(ui.clone()).ok()),
        callers: toolbox_core::spec::Callers::DIRECT,
        task,
    }
}

/// The task support of every tool of a server that declared
/// `capabilities`: [`TaskSupport::Optional`] where it declared the Tasks
/// extension (`io.modelcontextprotocol/tasks`), whose era has no per-tool
/// flag on the wire (the server decides call by call whether to answer a
/// client that declared it with a task, and a plain call stays possible),
/// else [`TaskSupport::Never`].
pub(crate) fn server_tasks(capabilities: &rmcp::model::ServerCapabilities) -> TaskSupport {
    if capabilities.supports_tasks() {
        TaskSupport::Optional
    } else {
        TaskSupport::Never
    }
}

/// A toolbox response as an MCP result: the text as text content, a JSON
/// object result also as `structuredContent` when the tool declares an
/// output schema, an error as `isError`.
pub(crate) fn to_result(response: ToolResponse, structured: bool) -> CallToolResult {
    let structured_content = if structured && !response.is_error {
        match serde_json::from_str::<Value>(&response.content) {
            Ok(value @ Value::Object(_)) => Some(value),
            _ => None,
        }
    } else {
        None
    };
    // Content parts (a tool's, or a proxied server's, kept as it sent
    // them) are the blocks; else the text is one.
    let content: Vec<ContentBlock> = response
        .content_blocks()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| serde_json::from_value(b.clone()).ok())
                .collect()
        })
        .unwrap_or_else(|| vec![ContentBlock::text(response.content.clone())]);
    let kept_structured = response
        .element
        .as_ref()
        .and_then(|e| e.get("structuredContent"))
        .filter(|_| !response.is_error)
        .cloned();
    let structured_content = kept_structured.or(structured_content);
    let mut result = if response.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured_content;
    result
}

/// An MCP result as toolbox's: text content joined into the text,
/// `structuredContent` kept (as the text when there is no text content),
/// every block kept in order in the element when there is more than text
/// (so the response is served again unchanged), `isError` as an error with
/// the server's text.
pub(crate) fn from_result(result: &CallToolResult) -> Result<ToolResponse, ToolError> {
    let value = serde_json::to_value(result).unwrap_or(Value::Null);
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let texts: Vec<&str> = content
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    // Beyond text, every block is kept in order (text included), so the
    // response can be served again unchanged.
    let others: Vec<Value> = if content
        .iter()
        .any(|c| c.get("type").and_then(Value::as_str) != Some("text"))
    {
        content.clone()
    } else {
        Vec::new()
    };
    let structured = value.get("structuredContent").cloned();
    let text = if !others.is_empty() {
        // What the model reads of blocks it may not see: their text, and a
        // note for each image, audio clip or resource.
        others
            .iter()
            .map(
                |block| match serde_json::from_value::<toolbox_core::Content>(block.clone()) {
                    Ok(part) => part.as_model_text(),
                    Err(_) => block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                },
            )
            .collect::<Vec<_>>()
            .join("\n")
    } else if texts.is_empty() {
        structured
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    } else {
        texts.join("\n")
    };
    if value.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(ToolError::failed(text));
    }
    let mut response = ToolResponse::text(text);
    let mut element = Map::new();
    if !others.is_empty() {
        element.insert("content".into(), Value::Array(others));
    }
    if let Some(structured) = structured {
        element.insert("structuredContent".into(), structured);
    }
    if !element.is_empty() {
        response = response.with_element(Value::Object(element));
    }
    Ok(response)
}
