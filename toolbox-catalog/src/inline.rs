//! A catalogue's reveals sent to Anthropic as mid-conversation tool
//! changes ([`Catalog::inline_tool_changes`]): the request's `tools` stay
//! byte for byte what the first request sent, so the prompt cache holds as
//! searches load tools and the least recently used leave.

use serde_json::Value;

use super::{Catalog, Revealed};
use toolbox_core::args::ToolCall;
use toolbox_core::ToolSpecification;
use toolbox_provider::internal::hosted_tool;
use toolbox_provider::internal::tool_changes::{addition, removal, TOOL_CHANGES};
use toolbox_provider::{Provider, ProviderError, ANTHROPIC_INLINE_TOOLS_BETA};

impl Catalog {
    /// Sends Anthropic the tools a search loads as tool changes in the
    /// conversation instead of in the request's `tools`: each revealed
    /// tool as a `tool_addition` block carrying its whole definition,
    /// each tool unloaded to make room ([`fit`](Self::fit)) as a
    /// `tool_removal` block, both in a `system` message after the search's
    /// result ([`Provider::result_messages`]). The `tools` of every request
    /// stay those of the first (the tools not deferred and the search),
    /// so the cached prompt prefix is not invalidated as reveals
    /// accumulate; the search's result names what it loaded, as for the
    /// providers without `tool_reference`.
    ///
    /// Anthropic reads these blocks under a beta: send
    /// [`anthropic_betas`](Self::anthropic_betas) as the `anthropic-beta`
    /// header of every request of the conversation. Off by default; no
    /// effect on other providers or with [`hosted_search`](Self::hosted_search)
    /// (whose `tools` already hold every tool). Give the catalogue to the
    /// `TurnRunner` with
    /// `catalog`: one it builds itself
    /// sends reveals in `tools`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolbox_core::args::ToolCall;
    /// use toolbox_catalog::{Catalog, Revealed};
    /// use toolbox_provider::Provider;
    /// use toolbox_core::ToolSpecification;
    ///
    /// let catalog = Catalog::new(vec![
    ///     ToolSpecification::new("now", "The current time."),
    ///     ToolSpecification::new("list_orders", "A customer's orders.").with_deferred(true),
    /// ])?
    /// .inline_tool_changes(true);
    /// assert_eq!(catalog.anthropic_betas(), ["inline-tools-2026-09-15"]);
    ///
    /// let anthropic = Provider::Anthropic { strict: false };
    /// let mut revealed = Revealed::new();
    /// let before = catalog.definitions(anthropic, &revealed)?.to_string();
    /// let mut search = ToolCall::new("search_tools", json!({"query": "orders"})).with_id("toolu_1");
    /// let found = catalog.answer(Some(anthropic), &mut search, &mut revealed);
    /// assert!(revealed.contains("list_orders"));
    /// // The next request's tools are the same bytes...
    /// assert_eq!(catalog.definitions(anthropic, &revealed)?.to_string(), before);
    /// // ...and the tool joins the conversation after the search's result.
    /// let messages = anthropic.result_messages(&[(search, found)]);
    /// assert_eq!(messages[1]["role"], "system");
    /// let block = &messages[1]["content"][0];
    /// assert_eq!(block["type"], "tool_addition");
    /// assert_eq!(block["tool"]["type"], "tool_definition");
    /// assert_eq!(block["tool"]["definition"]["name"], "list_orders");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn inline_tool_changes(mut self, inline: bool) -> Self {
        self.inline = inline;
        self
    }

    /// The `anthropic-beta` header values the requests this catalogue
    /// builds for Anthropic need: [`ANTHROPIC_INLINE_TOOLS_BETA`] where
    /// [`inline_tool_changes`](Self::inline_tool_changes) sends tool changes
    /// (tools are deferred and toolbox answers the searches), else none.
    pub fn anthropic_betas(&self) -> &'static [&'static str] {
        if self.inline_for(Some(Provider::Anthropic { strict: false })) {
            &[ANTHROPIC_INLINE_TOOLS_BETA]
        } else {
            &[]
        }
    }

    /// Whether reveals reach `provider` as tool changes in the
    /// conversation rather than in the request's `tools`.
    pub(super) fn inline_for(&self, provider: Option<Provider>) -> bool {
        self.inline
            && !self.hosted
            && self.has_deferred()
            && matches!(provider, Some(Provider::Anthropic { .. }))
    }

    /// The `tools` of every request under inline tool changes: the tools
    /// not deferred and the search, whatever was revealed, with the code
    /// execution tool from the first request where a deferred tool may be
    /// called from code (a reveal would add it otherwise).
    pub(super) fn unchanging_definitions(
        &self,
        provider: Provider,
    ) -> Result<Value, ProviderError> {
        let mut tools = self.offered_definitions(provider, &Revealed::new())?;
        let code = self.specs.iter().any(|s| s.deferred && s.callers.code());
        if let (true, Value::Array(list), Some(tool)) = (code, &mut tools, hosted_tool(provider)) {
            if !list.contains(&tool) {
                list.push(tool);
            }
        }
        Ok(tools)
    }

    /// Marks a search `call` answered for Anthropic with the tool changes
    /// its result message carries: a `tool_addition` for each of its
    /// `hits` it `added` (not revealed before), a `tool_removal` for each
    /// tool `forgotten` to make room that an earlier search had added.
    pub(super) fn mark_tool_changes(
        &self,
        provider: Provider,
        call: &mut ToolCall,
        hits: &[&ToolSpecification],
        added: &[&str],
        forgotten: &[String],
    ) {
        let additions = hits
            .iter()
            .filter(|spec| added.contains(&spec.name.as_str()))
            .filter_map(|spec| provider.definition(spec).ok())
            .map(addition);
        let removals = forgotten
            .iter()
            .filter(|name| !added.contains(&name.as_str()))
            .map(|name| removal(name));
        let blocks: Vec<Value> = additions.chain(removals).collect();
        if blocks.is_empty() {
            return;
        }
        let mut extra = match call.extra.take() {
            Some(Value::Object(extra)) => extra,
            _ => serde_json::Map::new(),
        };
        extra.insert(TOOL_CHANGES.to_owned(), Value::Array(blocks));
        call.extra = Some(Value::Object(extra));
    }
}
