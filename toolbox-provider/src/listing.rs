//! Anthropic's MCP tool-list pinning: the `mcp_tool_listing` blocks a
//! response carries, kept and sent back unchanged ([`McpToolListings`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Provider;

/// The `mcp_tool_listing` blocks of a conversation with Anthropic's MCP
/// connector (beta `mcp-client-2026-09-15`): each server's tool list as a
/// response fetched it (`{"type": "mcp_tool_listing", "mcp_server_name",
/// "tools"}`). Sent back unchanged, a listing pins that server's tools: the
/// server is not asked for them again before sampling, and exactly the
/// listed entries are its toolset's tools, so a server cannot swap its
/// definitions in the middle of a conversation.
///
/// Kept between turns as [`ProgramState`](crate::program::ProgramState) is
/// (serializable, an array of the blocks): [`update`](Self::update) with
/// each response, [`carry`](Self::carry) into each request. An application
/// that sends each assistant turn back as it came already sends the
/// listings; `carry` finds them there and changes nothing.
///
/// ```
/// use serde_json::json;
/// use toolbox_provider::{McpToolListings, Provider};
///
/// let anthropic = Provider::Anthropic { strict: false };
/// let response = json!({"role": "assistant", "content": [
///     {"type": "mcp_tool_listing", "mcp_server_name": "crm", "tools": [
///         {"name": "find_customer", "input_schema": {"type": "object"}}]},
///     {"type": "text", "text": "Looking the customer up."}
/// ]});
/// let mut listings = McpToolListings::new();
/// listings.update(anthropic, &response);
/// assert_eq!(listings.tools("crm").unwrap()[0]["name"], "find_customer");
///
/// // The assistant turn rebuilt from its text alone: the listing goes back in.
/// let mut request = json!({"messages": [
///     {"role": "user", "content": "Who is ACME's contact?"},
///     {"role": "assistant", "content": "Looking the customer up."}
/// ]});
/// listings.carry(anthropic, &mut request);
/// assert_eq!(request["messages"][1]["content"][0], response["content"][0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct McpToolListings {
    blocks: Vec<Value>,
}

/// The block type of a listing.
const LISTING: &str = "mcp_tool_listing";

impl McpToolListings {
    /// No listing.
    pub fn new() -> Self {
        McpToolListings::default()
    }

    /// Keeps each `mcp_tool_listing` block of an Anthropic `response` (the
    /// whole response body, or the assistant message), as it came, in
    /// place of a listing kept before for the same server. Other
    /// providers' responses hold none.
    pub fn update(&mut self, provider: Provider, response: &Value) {
        if !matches!(provider, Provider::Anthropic { .. }) {
            return;
        }
        let blocks = response
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for block in blocks.iter().filter(|b| is_listing(b)) {
            match self
                .blocks
                .iter_mut()
                .find(|kept| server(kept) == server(block))
            {
                Some(kept) => kept.clone_from(block),
                None => self.blocks.push(block.clone()),
            }
        }
    }

    /// Puts each kept listing that no message of the Anthropic `request`
    /// holds into its last assistant message, after the turn's thinking
    /// and before the rest, as the response had it; a listing already in
    /// the conversation is left where it is (none is sent twice, and the
    /// cached prefix is not moved).
    pub fn carry(&self, provider: Provider, request: &mut Value) {
        if !matches!(provider, Provider::Anthropic { .. }) || self.blocks.is_empty() {
            return;
        }
        let Some(messages) = request.get_mut("messages").and_then(Value::as_array_mut) else {
            return;
        };
        let held = |block: &Value| {
            messages.iter().any(|message| {
                message
                    .get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|content| content.contains(block))
            })
        };
        let missing: Vec<&Value> = self.blocks.iter().filter(|&b| !held(b)).collect();
        if missing.is_empty() {
            return;
        }
        let Some(assistant) = messages
            .iter_mut()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        else {
            return;
        };
        // A text turn becomes its one text block.
        let text = match assistant.get("content") {
            Some(Value::String(text)) => vec![serde_json::json!({"type": "text", "text": text})],
            _ => Vec::new(),
        };
        if !assistant.get("content").is_some_and(Value::is_array) {
            assistant["content"] = Value::Array(text);
        }
        let Some(Value::Array(content)) = assistant.get_mut("content") else {
            return;
        };
        let at = content
            .iter()
            .position(|b| {
                !matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("thinking" | "redacted_thinking")
                )
            })
            .unwrap_or(content.len());
        for (i, block) in missing.into_iter().enumerate() {
            content.insert(at + i, block.clone());
        }
    }

    /// The tools a server's kept listing names, as the response listed
    /// them (`name`, `description`, `input_schema`, verbatim from the
    /// server).
    pub fn tools(&self, server_name: &str) -> Option<&[Value]> {
        self.blocks
            .iter()
            .find(|block| server(block) == Some(server_name))?
            .get("tools")?
            .as_array()
            .map(Vec::as_slice)
    }

    /// The servers whose listings are kept, in the order they came.
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(server)
    }

    /// Whether no listing is kept.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

fn is_listing(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some(LISTING) && server(block).is_some()
}

fn server(block: &Value) -> Option<&str> {
    block.get("mcp_server_name").and_then(Value::as_str)
}
