//! The marks of a tool search answered by toolbox: the call items OpenAI's
//! client-executed `tool_search` reads as, and the keys a search answered
//! for Anthropic leaves in a call's `extra` (its result sent as
//! `tool_reference` blocks).

use serde_json::{json, Value};
use toolbox_core::args::ToolCall;

use crate::tool_changes;

/// The key in a [`ToolCall::extra`] that marks a tool search answered for
/// Anthropic: its result is sent as `tool_reference` blocks.
pub const SEARCH_MARK: &str = "toolbox_search";

/// The key in a [`ToolCall::extra`] with what the model is told beside a
/// search's `tool_reference` blocks (the tools unloaded to make room).
pub const SEARCH_NOTE: &str = "toolbox_search_note";

/// Whether `call` is an OpenAI client-executed `tool_search_call`.
pub fn is_tool_search_call(call: &ToolCall) -> bool {
    call.extra
        .as_ref()
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
        == Some("tool_search_call")
}

/// The name a client-executed OpenAI `tool_search_call` is read under.
pub const OPENAI_TOOL_SEARCH: &str = "tool_search";

/// The `tool_reference` blocks of a search answered for Anthropic, and a
/// text block with its note.
pub(crate) fn search_references(call: &ToolCall) -> Option<Value> {
    let extra = call.extra.as_ref()?;
    let names = extra.get(SEARCH_MARK)?.as_array()?;
    let mut blocks: Vec<Value> = names
        .iter()
        .map(|name| json!({"type": "tool_reference", "tool_name": name}))
        .collect();
    if let Some(note) = extra.get(SEARCH_NOTE).and_then(Value::as_str) {
        blocks.push(json!({"type": "text", "text": note}));
    }
    Some(Value::Array(blocks))
}

/// Whether a call's result message is not the plain one (a search answered
/// for OpenAI Responses or Anthropic).
pub(crate) fn special_result(call: &ToolCall) -> bool {
    is_tool_search_call(call)
        || tool_changes::carries(call)
        || call
            .extra
            .as_ref()
            .is_some_and(|e| e.get(SEARCH_MARK).is_some())
}
