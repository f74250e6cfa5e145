//! Tools a model calls from code (programmatic tool calling): which callers
//! may call a tool ([`Callers`], on each
//! [`ToolSpecification`](crate::ToolSpecification)), who made a call
//! ([`Caller`], on each [`ToolCall`](toolbox_core::args::ToolCall)), and what the
//! next request must carry for the provider's code to go on
//! ([`ProgramState`]).
//!
//! Lowered per provider by [`Provider::definitions`](crate::Provider::definitions):
//!
//! | provider | a tool code may call | added to the tools |
//! | --- | --- | --- |
//! | Anthropic Messages | `allowed_callers: ["code_execution_20260120"]` (with `"direct"` when the model may call it too) | `{"type": "code_execution_20260120", "name": "code_execution"}` |
//! | OpenAI Responses | `allowed_callers: ["programmatic"]` (with `"direct"`) | `{"type": "programmatic_tool_calling"}` |
//! | the others (no hosted code execution) | a tool code alone may call is refused by name | — |
//!
//! ```
//! use serde_json::json;
//! use toolbox_provider::program::{Caller, Callers, ProgramState};
//! use toolbox_provider::Provider;
//! use toolbox_core::ToolSpecification;
//!
//! let spec = ToolSpecification::new("get_inventory", "Units in stock for a SKU.")
//!     .with_callers(Callers::CODE);
//! let anthropic = Provider::Anthropic { strict: false };
//! let tools = anthropic.definitions(&[spec]).unwrap();
//! assert_eq!(tools[0]["allowed_callers"], json!(["code_execution_20260120"]));
//! assert_eq!(tools[1], json!({"type": "code_execution_20260120", "name": "code_execution"}));
//!
//! let response = json!({
//!     "container": {"id": "container_011", "expires_at": "2026-12-05T17:00:00Z"},
//!     "content": [
//!         {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "..."}},
//!         {"type": "tool_use", "id": "toolu_1", "name": "get_inventory", "input": {"sku": "A1"},
//!          "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}}
//!     ]
//! });
//! let calls = anthropic.parse_calls(&response).unwrap();
//! assert_eq!(calls[0].caller, Some(Caller::Code {
//!     runtime: "code_execution_20260120".into(),
//!     id: "srvtoolu_1".into(),
//! }));
//! let mut state = ProgramState::default();
//! state.update(anthropic, &response);
//! let mut request = json!({"model": "claude-opus-4-7", "messages": []});
//! state.carry(anthropic, &mut request);
//! assert_eq!(request["container"], "container_011");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::code::{hosted, ANTHROPIC_CODE_EXECUTION};
use crate::Provider;
pub use toolbox_core::spec::{Caller, Callers};

/// What the next request must carry for the provider's code to go on,
/// kept between turns as `Revealed` is
/// (serializable, for an application that stores its conversations):
/// Anthropic's code execution `container`, and the OpenAI Responses
/// `program` items (with their opaque `fingerprint`) whose programs have
/// not ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProgramState {
    /// Anthropic: the container the code runs in, sent back as `container`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// OpenAI Responses: each running program's `program` item, as it came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<Value>,
}

impl ProgramState {
    /// Whether there is nothing to carry.
    pub fn is_empty(&self) -> bool {
        self.container.is_none() && self.programs.is_empty()
    }

    /// Reads what a provider's response asks to be carried: the latest
    /// `container`; each new `program` item; a program whose
    /// `program_output` came has ended and is dropped. `response` is the
    /// whole response body (or, for Responses, its `output` items).
    pub fn update(&mut self, provider: Provider, response: &Value) {
        match provider {
            Provider::Anthropic { .. } => {
                let id = response.get("container").and_then(|container| {
                    container
                        .get("id")
                        .or(Some(container))
                        .and_then(Value::as_str)
                });
                if let Some(id) = id {
                    self.container = Some(id.to_owned());
                }
            }
            Provider::OpenAiResponses { .. } => {
                let items = response
                    .get("output")
                    .unwrap_or(response)
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for item in items {
                    let call_id = item.get("call_id").and_then(Value::as_str);
                    match item.get("type").and_then(Value::as_str) {
                        Some("program")
                            if call_id.is_some()
                                && !self
                                    .programs
                                    .iter()
                                    .any(|p| p.get("call_id") == item.get("call_id")) =>
                        {
                            self.programs.push(item.clone());
                        }
                        Some("program_output") => {
                            self.programs
                                .retain(|p| p.get("call_id") != item.get("call_id"));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// Puts what must be carried into the next `request` body: Anthropic's
    /// `container`; for Responses, each running program's `program` item
    /// in `input` before the first item of its calls (or at the end),
    /// unless `input` holds it already (an application that sends every
    /// output item back loses nothing, and none is sent twice).
    pub fn carry(&self, provider: Provider, request: &mut Value) {
        match provider {
            Provider::Anthropic { .. } => {
                if let (Some(container), Some(body)) = (&self.container, request.as_object_mut()) {
                    body.insert("container".into(), Value::String(container.clone()));
                }
            }
            Provider::OpenAiResponses { .. } => {
                if self.programs.is_empty() {
                    return;
                }
                let Some(body) = request.as_object_mut() else {
                    return;
                };
                let input = body
                    .entry("input")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::String(text) = input {
                    *input = serde_json::json!([{"role": "user", "content": text.clone()}]);
                }
                let Some(items) = input.as_array_mut() else {
                    return;
                };
                for program in &self.programs {
                    let call_id = program.get("call_id");
                    let present = items.iter().any(|item| {
                        item.get("type").and_then(Value::as_str) == Some("program")
                            && item.get("call_id") == call_id
                    });
                    if present {
                        continue;
                    }
                    let at = items
                        .iter()
                        .position(|item| item.pointer("/caller/caller_id") == call_id)
                        .unwrap_or(items.len());
                    items.insert(at, program.clone());
                }
            }
            _ => {}
        }
    }
}
