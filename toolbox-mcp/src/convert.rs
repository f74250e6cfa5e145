//! Between toolbox's types and MCP's: through the JSON both are defined by,
//! so every field MCP has and toolbox knows crosses unchanged.

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};
use toolbox_core::provider::Provider;
use toolbox_core::{ToolAnnotations, ToolError, ToolResponse, ToolSpecification};

/// A toolbox specification as an MCP tool (the MCP dialect's definition).
pub(crate) fn to_tool(spec: &ToolSpecification) -> Result<Tool, String> {
    let definition = Provider::Mcp
        .definition(spec)
        .map_err(|e| format!("tool `{}` cannot be offered over MCP: {e}", spec.name))?;
    serde_json::from_value(definition)
        .map_err(|e| format!("tool `{}` is not a valid MCP tool: {e}", spec.name))
}

/// An MCP tool as a toolbox specification: schemas untouched, the
/// annotations' hints as toolbox's effects.
///
/// Tools that need the task extension (`execution.taskSupport:
/// "required"`) cannot be told apart here: rmcp's `Tool` does not keep
/// `execution`, so such a tool is offered and its call answers with the
/// server's error.
pub(crate) fn from_tool(tool: &Tool) -> ToolSpecification {
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
    let content = vec![ContentBlock::text(response.content)];
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
/// images and resources kept in the element for the client, `isError` as
/// an error with the server's text.
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
    let others: Vec<Value> = content
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) != Some("text"))
        .cloned()
        .collect();
    let structured = value.get("structuredContent").cloned();
    let text = if texts.is_empty() {
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
