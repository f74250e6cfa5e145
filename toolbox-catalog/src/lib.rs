//! Large tool sets: namespaces, deferred tools and tool search.
//!
//! A [`Catalog`] holds a box's tools and a search index over them. Its
//! [`definitions`](Catalog::definitions) are what one request offers: the
//! tools that are not deferred, a search tool, and the deferred tools a
//! search has revealed so far ([`Revealed`], kept by the
//! `TurnRunner` across the requests of a
//! conversation). Per provider:
//!
//! | provider | namespaces | search (default, answered by toolbox) | [`hosted_search`](Catalog::hosted_search) |
//! | --- | --- | --- | --- |
//! | OpenAI Responses | `namespace` objects | client `tool_search`, answered with `tool_search_output` | every tool, deferred ones `defer_loading`, `tool_search` |
//! | Anthropic | flat names | `search_tools`, answered with `tool_reference` blocks; revealed tools sent with `defer_loading` | every tool, deferred ones `defer_loading`, `tool_search_tool_bm25` |
//! | Chat Completions, Gemini, MCP | flat names | `search_tools`; revealed tools offered in full from the next request | — (no native search) |
//!
//! With [`inline_tool_changes`](Catalog::inline_tool_changes), Anthropic
//! gets revealed tools as `tool_addition` blocks in the conversation (and
//! unloaded ones as `tool_removal`), its `tools` never changing.

mod entity;
mod index;
mod inline;
mod lexicon;
#[cfg(feature = "semantic")]
pub mod semantic;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub(crate) use index::clip;
pub use index::{check_query, SearchHit, ToolIndex, ToolSearch, MAX_QUERY_BYTES, MAX_QUERY_WORDS};

use toolbox_core::args::ToolCall;
use toolbox_core::spec::Namespace;
use toolbox_core::ToolError;
use toolbox_core::ToolResponse;
use toolbox_core::ToolSpecification;
use toolbox_provider::{Provider, ProviderError};

/// The name of toolbox's own search tool, where a provider has none.
pub const SEARCH_TOOL: &str = "search_tools";

pub use toolbox_provider::OPENAI_TOOL_SEARCH;

/// How many tools one search reveals by default.
pub const DEFAULT_RESULTS: usize = 5;

pub use toolbox_core::spec::MAX_NAMESPACE_DESCRIPTION;

use toolbox_provider::internal::{is_tool_search_call, responses_tools, SEARCH_MARK, SEARCH_NOTE};

/// The deferred tools a conversation's searches have revealed, least
/// recently used first. Serializable (an array of names, oldest first), so
/// a pending turn keeps it.
///
/// A request has room for only so many tools (Anthropic strict: 20), so
/// as searches reveal more, the least recently used leave it
/// ([`Catalog::answer`] forgets them and tells the model to search again).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Revealed {
    tools: Vec<String>,
}

impl Revealed {
    /// Nothing revealed.
    pub fn new() -> Self {
        Revealed::default()
    }

    /// Whether `tool` was revealed.
    pub fn contains(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }

    /// Reveals `tool`, as the most recently used; whether it was new.
    pub fn insert(&mut self, tool: impl Into<String>) -> bool {
        let tool = tool.into();
        let new = !self.forget(&tool);
        self.tools.push(tool);
        new
    }

    /// Marks `tool` as just used (called), if it was revealed; whether it was.
    pub fn touch(&mut self, tool: &str) -> bool {
        match self.tools.iter().position(|t| t == tool) {
            Some(at) => {
                let tool = self.tools.remove(at);
                self.tools.push(tool);
                true
            }
            None => false,
        }
    }

    /// Forgets `tool` (it leaves the requests until a search reveals it
    /// again); whether it was revealed.
    pub fn forget(&mut self, tool: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|t| t != tool);
        self.tools.len() != before
    }

    /// The revealed tools, least recently used first.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(String::as_str)
    }

    /// How many were revealed.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// A box's tools offered a few at a time: namespaces, deferred tools and a
/// search over them.
///
/// ```
/// use toolbox_catalog::{Catalog, Revealed};
/// use toolbox_provider::Provider;
/// use toolbox_core::ToolSpecification;
/// use toolbox_core::spec::Namespace;
///
/// let crm = Namespace::new("crm", "Customers and their orders.");
/// let catalog = Catalog::new(vec![
///     ToolSpecification::new("now", "The current time."),
///     ToolSpecification::new("get_customer", "A customer by id.").with_namespace(crm.clone()).with_deferred(true),
///     ToolSpecification::new("list_orders", "A customer's orders.").with_namespace(crm).with_deferred(true),
/// ])?;
/// let mut revealed = Revealed::new();
/// let tools = catalog.definitions(Provider::Gemini, &revealed)?;
/// let names: Vec<&str> = tools[0]["functionDeclarations"].as_array().unwrap().iter()
///     .map(|d| d["name"].as_str().unwrap()).collect();
/// assert_eq!(names, ["now", "search_tools"]);
///
/// for hit in catalog.search("orders of a customer", 1) {
///     revealed.insert(hit.name);
/// }
/// assert!(revealed.contains("list_orders"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Catalog {
    specs: Vec<ToolSpecification>,
    by_name: HashMap<String, usize>,
    /// What ranks the tools: the one given, or a [`ToolIndex`] built at the
    /// first search (shared by the catalogue's clones).
    search: Arc<OnceLock<Box<dyn ToolSearch>>>,
    /// How many tools `with_semantic` (feature `semantic`) embedded.
    embedded: usize,
    /// The hybrid ranking `with_semantic` built, kept to weigh it again.
    #[cfg(feature = "semantic")]
    hybrid: Option<semantic::HybridSearch>,
    /// The lexical weight a hybrid ranking is built with.
    #[cfg(feature = "semantic")]
    lexical_weight: f32,
    hosted: bool,
    /// Reveals sent to Anthropic as tool changes in the conversation.
    inline: bool,
    results: usize,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.specs.len())
            .field(
                "deferred",
                &self.specs.iter().filter(|s| s.deferred).count(),
            )
            .field("hosted", &self.hosted)
            .field("inline", &self.inline)
            .finish()
    }
}

/// A catalogue that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// Two tools share a name.
    #[error("two tools are named `{0}`; a catalogue needs one name per tool")]
    DuplicateName(String),
    /// A tool takes the search tool's name while another tool is deferred.
    #[error("a tool is named `{SEARCH_TOOL}`, the name of the catalogue's search tool; rename it")]
    SearchToolName,
    /// A namespace's description is empty or too long, or two tools give
    /// one namespace different descriptions.
    #[error("namespace `{name}`: {problem}")]
    Namespace {
        /// The namespace.
        name: String,
        /// What is wrong.
        problem: String,
    },
}

impl Catalog {
    /// A catalogue of `specs`, searched with a [`ToolIndex`] over them
    /// (built at the first search, unless [`with_search`](Self::with_search)
    /// or `with_semantic` (feature `semantic`) gives another ranking).
    pub fn new(specs: Vec<ToolSpecification>) -> Result<Self, CatalogError> {
        // A catalogue is what a model is offered: an MCP Apps tool for its
        // view only is not.
        let specs: Vec<ToolSpecification> = specs.into_iter().filter(|s| s.for_model()).collect();
        Self::checked(specs)
    }

    /// A catalogue of the tools `toolbox` offers in `ctx`.
    pub fn of<B: toolbox_core::ToolBox + ?Sized>(
        toolbox: &B,
        ctx: &toolbox_core::Context,
    ) -> Result<Self, CatalogError> {
        Self::new(toolbox.specifications(ctx))
    }

    fn checked(specs: Vec<ToolSpecification>) -> Result<Self, CatalogError> {
        let mut by_name = HashMap::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            if by_name.insert(spec.name.clone(), i).is_some() {
                return Err(CatalogError::DuplicateName(spec.name.clone()));
            }
        }
        if specs.iter().any(|s| s.deferred) && by_name.contains_key(SEARCH_TOOL) {
            return Err(CatalogError::SearchToolName);
        }
        let mut namespaces: BTreeMap<&str, &str> = BTreeMap::new();
        for namespace in specs.iter().filter_map(|s| s.namespace.as_ref()) {
            if let Some(problem) = namespace.problem() {
                return Err(CatalogError::Namespace {
                    name: namespace.name.clone(),
                    problem,
                });
            }
            match namespaces.insert(&namespace.name, &namespace.description) {
                Some(other) if other != namespace.description => {
                    return Err(CatalogError::Namespace {
                        name: namespace.name.clone(),
                        problem: "its tools give it different descriptions".to_owned(),
                    })
                }
                _ => {}
            }
        }
        Ok(Catalog {
            specs,
            by_name,
            search: Arc::new(OnceLock::new()),
            embedded: 0,
            #[cfg(feature = "semantic")]
            hybrid: None,
            #[cfg(feature = "semantic")]
            lexical_weight: semantic::DEFAULT_LEXICAL_WEIGHT,
            hosted: false,
            inline: false,
            results: DEFAULT_RESULTS,
        })
    }

    /// Ranks with `search` instead of the built-in [`ToolIndex`] (an
    /// embedding search, say), built by the application over the same
    /// tools.
    pub fn with_search(mut self, search: impl ToolSearch + 'static) -> Self {
        self.search = Arc::new(OnceLock::from(Box::new(search) as Box<dyn ToolSearch>));
        self.embedded = 0;
        #[cfg(feature = "semantic")]
        {
            self.hybrid = None;
        }
        self
    }

    /// Searches with the hybrid ranking: the lexical index and
    /// `embedder`'s semantic one fused ([`semantic::HybridSearch`]). Each
    /// tool's vector comes from `store` where the same text was embedded
    /// before; the others are embedded now and added to it (save it to keep
    /// them across restarts; [`embedded`](Self::embedded) says how many
    /// were). Feature `semantic`.
    ///
    /// The store is then pruned to this catalogue's tools: vectors of
    /// tools it no longer has, or of their former descriptions, are dropped,
    /// so the saved file holds what the catalogue serves and does not grow
    /// with each change. To share one store between catalogues, build each
    /// one's [`HybridSearch::new`](semantic::HybridSearch::new) (which
    /// keeps everything), give it with [`with_search`](Self::with_search),
    /// and [`retain`](semantic::Embeddings::retain) the tools of all.
    #[cfg(feature = "semantic")]
    pub fn with_semantic(
        self,
        embedder: Arc<semantic::Embedder>,
        store: &mut semantic::Embeddings,
    ) -> Result<Self, semantic::ModelError> {
        let search = semantic::HybridSearch::build(embedder, &self.specs, store, true)?
            .with_lexical_weight(self.lexical_weight);
        let embedded = search.embedded();
        tracing::info!(
            target: "toolbox::catalog",
            tools = self.specs.len(),
            embedded,
            "semantic search ready"
        );
        let mut catalog = self.with_search(search.clone());
        catalog.embedded = embedded;
        catalog.hybrid = Some(search);
        Ok(catalog)
    }

    /// How much the words count beside the model in the hybrid ranking
    /// (feature `semantic`): the lexical score's weight beside the cosine
    /// similarity's 1, [`DEFAULT_LEXICAL_WEIGHT`](semantic::DEFAULT_LEXICAL_WEIGHT)
    /// (0.5) by default; 0 ranks by the model alone. See
    /// [`HybridSearch::with_lexical_weight`](semantic::HybridSearch::with_lexical_weight),
    /// which reads a weight below 0 as 0, one above
    /// [`MAX_LEXICAL_WEIGHT`](semantic::MAX_LEXICAL_WEIGHT) as that, and a
    /// NaN as the default. Given before or after
    /// [`with_semantic`](Self::with_semantic), it weighs that ranking
    /// (without embedding anything again); it does not change a ranking
    /// given with [`with_search`](Self::with_search), nor the catalogue's
    /// clones made before.
    #[cfg(feature = "semantic")]
    pub fn lexical_weight(mut self, weight: f32) -> Self {
        self.lexical_weight = semantic::lexical_weight(weight);
        if let Some(hybrid) = self.hybrid.take() {
            let embedded = self.embedded;
            let hybrid = hybrid.with_lexical_weight(self.lexical_weight);
            self = self.with_search(hybrid.clone());
            self.embedded = embedded;
            self.hybrid = Some(hybrid);
        }
        self
    }

    /// How many tools `with_semantic` (feature `semantic`) embedded when
    /// it built the semantic index: the ones whose texts the store did not
    /// hold (0 when a saved store held every tool's, or without a model).
    pub fn embedded(&self) -> usize {
        self.embedded
    }

    /// Lets the provider search where it can (OpenAI Responses' hosted
    /// `tool_search`, Anthropic's `tool_search_tool_bm25`): every tool is
    /// sent, the deferred ones marked `defer_loading`, and the provider
    /// loads what its search finds. The request is as large as an eager
    /// one (the model's context is not). Off by default: toolbox answers
    /// the searches, and a request carries only what was revealed.
    pub fn hosted_search(mut self, hosted: bool) -> Self {
        self.hosted = hosted;
        self
    }

    /// Reveals at most `results` tools per search (at least 1; 5 by default).
    pub fn results(mut self, results: usize) -> Self {
        self.results = results.max(1);
        self
    }

    /// Every tool.
    pub fn specifications(&self) -> &[ToolSpecification] {
        &self.specs
    }

    /// One tool by name.
    pub fn specification(&self, name: &str) -> Option<&ToolSpecification> {
        self.by_name.get(name).map(|&i| &self.specs[i])
    }

    /// The namespaces of the tools, each once, in name order.
    pub fn namespaces(&self) -> Vec<&Namespace> {
        let mut seen: BTreeMap<&str, &Namespace> = BTreeMap::new();
        for namespace in self.specs.iter().filter_map(|s| s.namespace.as_ref()) {
            seen.entry(&namespace.name).or_insert(namespace);
        }
        seen.into_values().collect()
    }

    /// Whether any tool is deferred (else the catalogue offers every tool
    /// and no search tool).
    pub fn has_deferred(&self) -> bool {
        self.specs.iter().any(|s| s.deferred)
    }

    /// Whether the provider's own search is used where it has one.
    pub fn is_hosted(&self) -> bool {
        self.hosted
    }

    /// The tools that best match `query`, best first. A query past
    /// [`MAX_QUERY_BYTES`] is cut there before any search reads it.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.search
            .get_or_init(|| Box::new(ToolIndex::new(&self.specs)))
            .search(clip(query, MAX_QUERY_BYTES), limit)
            .into_iter()
            .filter(|hit| self.by_name.contains_key(&hit.name))
            .collect()
    }

    /// The specification of toolbox's search tool: its description names
    /// the namespaces (what the model sees of the deferred tools).
    pub fn search_tool(&self) -> ToolSpecification {
        let mut description = String::from(
            "Finds tools by what they do and loads them, so you can call them from your next step. \
             Search whenever no loaded tool fits the task; describe the task in a few words.",
        );
        let namespaces = self.namespaces();
        if !namespaces.is_empty() {
            description.push_str(" Tool groups:");
            for namespace in namespaces {
                let said = namespace.description.trim_end_matches(['.', ';', ' ']);
                description.push_str(&format!(" {}: {said};", namespace.name));
            }
            description.pop();
            description.push('.');
        }
        ToolSpecification::new(SEARCH_TOOL, description).with_parameters(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words."}
            },
            "required": ["query"],
            "additionalProperties": false
        }))
    }

    /// The `tools` of the next request to `provider`, given what the
    /// conversation's searches revealed. Without deferred tools, every
    /// tool (as namespaces for OpenAI Responses).
    ///
    /// A request stays within the provider's limits as reveals
    /// accumulate: the least recently used revealed tools are left out
    /// until it fits ([`fit`](Self::fit); the runner forgets them and
    /// tells the model). With [`inline_tool_changes`](Self::inline_tool_changes),
    /// Anthropic's are the same whatever was revealed.
    pub fn definitions(
        &self,
        provider: Provider,
        revealed: &Revealed,
    ) -> Result<Value, ProviderError> {
        if self.inline_for(Some(provider)) {
            return self.unchanging_definitions(provider);
        }
        match self.offered_definitions(provider, revealed) {
            Err(ProviderError::Request { .. }) if !revealed.is_empty() => {
                let mut fitted = revealed.clone();
                self.fit(provider, &mut fitted, &[]);
                self.offered_definitions(provider, &fitted)
            }
            other => other,
        }
    }

    fn offered_definitions(
        &self,
        provider: Provider,
        revealed: &Revealed,
    ) -> Result<Value, ProviderError> {
        let deferred = self.has_deferred();
        match provider {
            Provider::OpenAiResponses { .. } => {
                let offered: Vec<&ToolSpecification> = self
                    .specs
                    .iter()
                    .filter(|s| !deferred || self.hosted || !s.deferred)
                    .collect();
                let mut tools = responses_tools(provider, &offered)?;
                if deferred && self.hosted {
                    tools.push(json!({"type": "tool_search"}));
                } else if deferred {
                    let search = self.search_tool();
                    tools.push(json!({
                        "type": "tool_search",
                        "execution": "client",
                        "description": search.description,
                        "parameters": search.parameters,
                    }));
                }
                Ok(Value::Array(tools))
            }
            Provider::Anthropic { .. } => {
                let mut offered: Vec<ToolSpecification> = self
                    .specs
                    .iter()
                    .filter(|s| {
                        !deferred || self.hosted || !s.deferred || revealed.contains(&s.name)
                    })
                    .cloned()
                    .collect();
                if deferred && !self.hosted {
                    offered.push(self.search_tool());
                }
                let mut tools = provider.definitions(&offered)?;
                if let Value::Array(definitions) = &mut tools {
                    for (definition, spec) in definitions.iter_mut().zip(&offered) {
                        if spec.deferred {
                            definition["defer_loading"] = Value::Bool(true);
                        }
                    }
                    if deferred && self.hosted {
                        definitions.push(json!({
                            "type": "tool_search_tool_bm25_20251119",
                            "name": "tool_search_tool_bm25"
                        }));
                    }
                }
                Ok(tools)
            }
            _ => {
                let mut offered: Vec<ToolSpecification> = self
                    .specs
                    .iter()
                    .filter(|s| !s.deferred || revealed.contains(&s.name))
                    .cloned()
                    .collect();
                if deferred {
                    offered.push(self.search_tool());
                }
                provider.definitions(&offered)
            }
        }
    }

    /// Whether `call` is a search this catalogue answers: toolbox's
    /// `search_tools`, or an OpenAI client `tool_search_call`.
    pub fn is_search(&self, call: &ToolCall) -> bool {
        self.has_deferred()
            && !self.hosted
            && (call.name == SEARCH_TOOL || is_tool_search_call(call))
    }

    /// The name the model knows the search by: OpenAI Responses'
    /// `tool_search` (its hosted search's too), Anthropic's hosted
    /// `tool_search_tool_bm25`, else toolbox's `search_tools`.
    pub fn search_tool_name(&self, provider: Option<Provider>) -> &'static str {
        match provider {
            Some(Provider::OpenAiResponses { .. }) => OPENAI_TOOL_SEARCH,
            Some(Provider::Anthropic { .. }) if self.hosted => "tool_search_tool_bm25",
            _ => SEARCH_TOOL,
        }
    }

    /// Why a call to `name` may not run yet: a deferred tool the
    /// conversation's searches have not revealed (the provider's own
    /// search reveals it under [`hosted_search`](Self::hosted_search)),
    /// naming the search as `provider` calls it.
    pub fn refusal(
        &self,
        name: &str,
        revealed: &Revealed,
        provider: Option<Provider>,
    ) -> Option<ToolError> {
        let spec = self.specification(name)?;
        (spec.deferred && !self.hosted && !revealed.contains(name)).then(|| {
            ToolError::failed(format!(
                "the tool `{}` is not loaded yet, so it did not run: find it with `{}` first, then call it",
                toolbox_core::args::echo(name),
                self.search_tool_name(provider)
            ))
        })
    }

    /// The tools a model may call now: the ones not deferred and the
    /// revealed ones (every tool under a hosted search).
    pub fn callable<'c>(&'c self, revealed: &'c Revealed) -> impl Iterator<Item = &'c str> {
        self.specs
            .iter()
            .filter(move |s| !s.deferred || self.hosted || revealed.contains(&s.name))
            .map(|s| s.name.as_str())
    }

    /// The error for a call of a tool the catalogue does not have: the
    /// closest names among the tools callable now, and, where tools are
    /// deferred, where to find the rest.
    pub fn unknown(
        &self,
        name: &str,
        revealed: &Revealed,
        provider: Option<Provider>,
    ) -> ToolError {
        let error = ToolError::unknown_tool(name, self.callable(revealed));
        if !self.has_deferred() || self.hosted {
            return error;
        }
        let suggestions = match error {
            ToolError::UnknownTool { suggestions, .. } => suggestions,
            _ => Vec::new(),
        };
        let mut text = format!("unknown tool `{}`", toolbox_core::args::echo(name));
        let search = self.search_tool_name(provider);
        if suggestions.is_empty() {
            text.push_str(&format!("; more tools can be found with `{search}`."));
        } else {
            let names: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
            text.push_str(&format!(
                "; did you mean {}? More tools can be found with `{search}`.",
                names.join(" or ")
            ));
        }
        ToolError::retryable(text)
    }

    /// Forgets the least recently used revealed tools until the request
    /// to `provider` is within its limits, keeping `keep` where it can;
    /// the names forgotten, oldest first.
    pub fn fit(&self, provider: Provider, revealed: &mut Revealed, keep: &[&str]) -> Vec<String> {
        let mut forgotten = Vec::new();
        while matches!(
            self.offered_definitions(provider, revealed),
            Err(ProviderError::Request { .. })
        ) {
            let oldest = revealed
                .iter()
                .find(|t| !keep.contains(t))
                .or_else(|| revealed.iter().next())
                .map(str::to_owned);
            match oldest {
                Some(tool) => {
                    revealed.forget(&tool);
                    forgotten.push(tool);
                }
                None => break,
            }
        }
        forgotten
    }

    /// Answers a search call for `provider`: the matches are added to
    /// `revealed`, and the response says what was found in the form the
    /// provider reads (OpenAI Responses: the loaded definitions, for a
    /// `tool_search_output`; Anthropic: the names, sent as
    /// `tool_reference` blocks, or with
    /// [`inline_tool_changes`](Self::inline_tool_changes) the list and the
    /// tool changes; elsewhere a list the model reads). The call's `extra`
    /// is marked where its result message needs it.
    pub fn answer(
        &self,
        provider: Option<Provider>,
        call: &mut ToolCall,
        revealed: &mut Revealed,
    ) -> ToolResponse {
        // Read as a tool reads its arguments: text that is not an object of
        // them is said as what it is, not as a missing `query`.
        let query = match call.arguments.as_arguments().to_value() {
            Err(error) => return ToolResponse::error(error.to_string()),
            Ok(arguments) => match arguments.get("query") {
                Some(Value::String(query)) if !query.trim().is_empty() => query.clone(),
                Some(Value::String(_)) => return ToolResponse::error(
                    "invalid arguments at `query`: the query is empty; say what the tool should do",
                ),
                Some(_) => {
                    return ToolResponse::error("invalid arguments at `query`: expected a string")
                }
                None => {
                    return ToolResponse::error(
                        "invalid arguments: missing field `query`; say what the tool should do",
                    )
                }
            },
        };
        if let Err(refused) = check_query(&query) {
            return ToolResponse::error(format!("invalid arguments at `query`: {refused}"));
        }
        // Only tools the provider can be offered are revealed.
        let hits: Vec<&ToolSpecification> = self
            .search(&query, self.results)
            .into_iter()
            .filter_map(|hit| self.specification(&hit.name))
            .filter(|spec| provider.is_none_or(|p| p.definition(spec).is_ok()))
            .collect();
        let added: Vec<&str> = hits
            .iter()
            .filter(|spec| revealed.insert(spec.name.clone()))
            .map(|spec| spec.name.as_str())
            .collect();
        // Room for the new tools: the least recently used leave the
        // request, and the model is told how to bring them back.
        let keep: Vec<&str> = hits.iter().map(|s| s.name.as_str()).collect();
        let forgotten = provider
            .map(|p| self.fit(p, revealed, &keep))
            .unwrap_or_default();
        let hits: Vec<&ToolSpecification> = hits
            .into_iter()
            .filter(|s| revealed.contains(&s.name))
            .collect();
        if let (Some(p), true) = (provider, self.inline_for(provider)) {
            self.mark_tool_changes(p, call, &hits, &added, &forgotten);
        }
        let search_name = self.search_tool_name(provider);
        tracing::info!(
            target: "toolbox::catalog",
            query = %toolbox_core::args::echo(&query),
            found = hits.len(),
            "tool search"
        );
        match provider {
            Some(provider @ Provider::OpenAiResponses { .. }) if is_tool_search_call(call) => {
                let mut loaded: Vec<ToolSpecification> = hits.into_iter().cloned().collect();
                for spec in &mut loaded {
                    spec.deferred = true;
                }
                let loaded: Vec<&ToolSpecification> = loaded.iter().collect();
                match responses_tools(provider, &loaded) {
                    Ok(tools) => ToolResponse::text(Value::Array(tools).to_string()),
                    Err(error) => ToolResponse::error(error.to_string()),
                }
            }
            Some(Provider::Anthropic { .. }) if !hits.is_empty() && !self.inline_for(provider) => {
                let names: Vec<Value> =
                    hits.iter().map(|s| Value::String(s.name.clone())).collect();
                let mut extra = match call.extra.take() {
                    Some(Value::Object(extra)) => extra,
                    _ => serde_json::Map::new(),
                };
                extra.insert(SEARCH_MARK.to_owned(), Value::Array(names));
                if !forgotten.is_empty() {
                    extra.insert(
                        SEARCH_NOTE.to_owned(),
                        Value::String(unloaded_note(&forgotten, search_name)),
                    );
                }
                call.extra = Some(Value::Object(extra));
                ToolResponse::text(found_text(&hits, &forgotten, search_name))
            }
            _ if hits.is_empty() => ToolResponse::text(format!(
                "no tool matches `{}`; try other words",
                toolbox_core::args::echo(&query)
            )),
            _ => ToolResponse::text(found_text(&hits, &forgotten, search_name)),
        }
    }
}

/// What the model is told of the tools that left the request.
fn unloaded_note(forgotten: &[String], search: &str) -> String {
    let names: Vec<String> = forgotten.iter().map(|t| format!("`{t}`")).collect();
    format!(
        "to make room, these tools were unloaded: {}; find them with `{search}` again before calling them",
        names.join(", ")
    )
}

/// What a model reads of a search's matches, and of the tools that left
/// the request to make room.
///
/// Each hit says enough to choose: its name, its namespace where it has one,
/// and its description's first line (the whole definition arrives with the
/// next request's tools); the note says how to search again.
fn found_text(hits: &[&ToolSpecification], forgotten: &[String], search: &str) -> String {
    let tools: Vec<Value> = hits
        .iter()
        .map(|s| {
            let mut hit =
                json!({"name": s.name, "description": internal::one_line(&s.description)});
            if let Some(namespace) = &s.namespace {
                hit["namespace"] = Value::String(namespace.name.clone());
            }
            hit
        })
        .collect();
    let mut found = json!({"loaded": tools, "note": format!(
        "these tools can be called from your next step; if none fits, call `{search}` again with other words"
    )});
    if !forgotten.is_empty() {
        found["unloaded"] = json!(forgotten);
        found["unloaded_note"] = Value::String(unloaded_note(forgotten, search));
    }
    found.to_string()
}

/// What the toolbox crates above this one build on beside the public API:
/// shared helpers, not a public API, no stability promise.
#[doc(hidden)]
pub mod internal {
    pub use crate::index::clip;

    /// `query` with its identifiers spelled out, as `SemanticIndex` embeds
    /// it (a short one then framed as a request, `I want to …`), for the
    /// fuzz target that searches.
    pub fn spelled_out(query: &str) -> std::borrow::Cow<'_, str> {
        crate::entity::spelled_out(query)
    }

    /// The lexical index's best `limit` tools for `query` and the query's
    /// ceiling (what the hybrid weighs the best match's strength by), for
    /// the search benchmarks' dumps.
    pub fn lexical_ranked(
        index: &crate::ToolIndex,
        query: &str,
        limit: usize,
    ) -> (Vec<crate::SearchHit>, f32) {
        index.ranked(query, limit)
    }

    /// A description's first line, at most 200 characters (cut at a word).
    pub fn one_line(description: &str) -> String {
        let line = description.trim().lines().next().unwrap_or_default().trim();
        if line.chars().count() <= 200 {
            return line.to_owned();
        }
        let cut: String = line.chars().take(200).collect();
        match cut.rfind(' ') {
            Some(at) => format!("{}…", &cut[..at]),
            None => format!("{cut}…"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a search call with `arguments` answers, and whether as an
    /// error.
    fn search(arguments: impl Into<toolbox_core::args::CallArguments>) -> (String, bool) {
        let catalog = Catalog::new(vec![
            ToolSpecification::new("send_email", "Sends an email.").with_deferred(true),
            ToolSpecification::new("get_weather", "Current weather for a city."),
        ])
        .unwrap();
        let mut call = ToolCall::new("search_tools", arguments);
        let response = catalog.answer(None, &mut call, &mut Revealed::new());
        (response.content, response.is_error)
    }

    #[test]
    fn search_arguments_that_do_not_read_say_why() {
        let lone =
            "the string has a lone surrogate escape (`\\uD800` to `\\uDFFF` without its pair); \
                    strings must be well-formed Unicode text";
        let cases = [
            (
                r#"{"query": "email""#,
                "invalid arguments: the arguments are not valid JSON (EOF while parsing an object at line 1 column 17); send a JSON object".to_owned(),
            ),
            (
                "not json",
                "invalid arguments: the arguments are not valid JSON (expected ident at line 1 column 2); send a JSON object".to_owned(),
            ),
            (
                r#"["email"]"#,
                "invalid arguments: expected a JSON object of arguments, got an array of 1 item"
                    .to_owned(),
            ),
            (
                r#"{"query":"\ud800 email"}"#,
                format!("invalid arguments at `query`: {lone}"),
            ),
            (
                r#"{"query":"email","limit":1e999}"#,
                "invalid arguments at `limit`: the number is out of range; send a number of smaller magnitude".to_owned(),
            ),
            (
                r#"{"limit": 3}"#,
                "invalid arguments: missing field `query`; say what the tool should do".to_owned(),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(search(text), (expected, true), "{text}");
        }
        // Arguments sent as a value that is not an object.
        assert_eq!(
            search(json!(["email"])),
            (
                "invalid arguments: expected a JSON object of arguments, got an array of 1 item"
                    .to_owned(),
                true
            )
        );
        let (found, is_error) = search(r#"{"query": "send an email"}"#);
        assert!(!is_error && found.contains("send_email"), "{found}");
    }
}
