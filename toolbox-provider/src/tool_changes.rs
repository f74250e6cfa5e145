//! Anthropic's mid-conversation tool changes (beta
//! [`ANTHROPIC_INLINE_TOOLS_BETA`]): a tool that joins the conversation is a
//! `tool_addition` block carrying its whole definition, one that leaves is a
//! `tool_removal` block naming it, both in a `system` message after the
//! tool results. The request's `tools`, the head of the cached prompt
//! prefix, stay as they were. A `Catalog` with
//! `inline_tool_changes`
//! puts the blocks of a search's answer on the search call
//! ([`ToolCall::extra`]); [`Provider::result_messages`](super::Provider::result_messages)
//! sends them.

use serde_json::{json, Value};

use super::Answered;
use toolbox_core::args::ToolCall;

/// The `anthropic-beta` header value a request needs when its messages
/// define tools inline (`tool_addition` with a `tool_definition`) or remove
/// them (`tool_removal`).
pub const ANTHROPIC_INLINE_TOOLS_BETA: &str = "inline-tools-2026-09-15";

/// The key in a [`ToolCall::extra`] holding the tool changes its result
/// message carries (an array of `tool_addition` / `tool_removal` blocks).
#[doc(hidden)]
pub const TOOL_CHANGES: &str = "toolbox_tool_changes";

/// A `tool_addition` block carrying `definition` (an Anthropic tool
/// definition) by value.
#[doc(hidden)]
pub fn addition(definition: Value) -> Value {
    json!({"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}})
}

/// A `tool_removal` block for the tool named `name`.
#[doc(hidden)]
pub fn removal(name: &str) -> Value {
    json!({"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}})
}

/// Whether `call`'s result carries tool changes.
pub(crate) fn carries(call: &ToolCall) -> bool {
    call.extra
        .as_ref()
        .is_some_and(|extra| extra.get(TOOL_CHANGES).is_some())
}

/// The `system` message with the tool changes `results` carry, in the
/// order of the calls; `None` when they carry none.
pub(crate) fn system_message<R: Answered>(results: &[R]) -> Option<Value> {
    let blocks: Vec<Value> = results
        .iter()
        .filter_map(|result| result.call().extra.as_ref()?.get(TOOL_CHANGES)?.as_array())
        .flatten()
        .cloned()
        .collect();
    (!blocks.is_empty()).then(|| json!({"role": "system", "content": blocks}))
}
