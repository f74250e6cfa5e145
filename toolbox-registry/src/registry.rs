//! The registry: tools under `name@module` keys, found in O(1).

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rustc_hash::FxHashMap;
use toolbox_core::{Context, NamedToolBox, ToolBox, ToolHandler, ToolSpecification};

use crate::error::RegistryError;
use crate::key::{Entry, KeyRef, ToolKey};
use crate::resolve::{LiveResolution, ResolvedToolBox};

#[derive(Default)]
struct State {
    /// Every tool by its full key (`name@module`, or `name`).
    by_key: FxHashMap<String, Arc<Entry>>,
    /// Every tool by its bare name, for the second lookup step.
    by_name: FxHashMap<String, Vec<Arc<Entry>>>,
    /// Every tool by its module, for `unregister_module`.
    by_module: FxHashMap<String, Vec<Arc<Entry>>>,
    /// What each described module is for: its namespace's description.
    modules: FxHashMap<String, String>,
}

/// Tools under `name@module` keys. Safe to share across tasks: registering,
/// resolving and calling may happen concurrently.
///
/// ```
/// use toolbox_registry::Registry;
///
/// let registry = Registry::new(); // holds `now@core`
/// assert_eq!(registry.get("now").unwrap().key().to_string(), "now@core");
/// let tools = registry.resolve(["now"]).unwrap();
/// # let _ = tools;
/// ```
pub struct Registry {
    state: RwLock<State>,
    listeners: Arc<RwLock<ToolHandler>>,
    changes: RwLock<Vec<ChangeFn>>,
}

type ChangeFn = Arc<dyn Fn() + Send + Sync>;

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

/// A tool that registered itself, as [`Registry::discovered`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveredTool {
    /// The key it is registered under.
    pub key: ToolKey,
    /// Where it is in the program (`module_path!()`).
    pub module_path: &'static str,
    /// Where it is written, `file:line`.
    pub location: String,
}

/// A tool found in a registry.
#[derive(Clone)]
pub struct RegisteredTool {
    pub(crate) entry: Arc<Entry>,
}

impl RegisteredTool {
    /// The tool's key.
    pub fn key(&self) -> &ToolKey {
        &self.entry.key
    }

    /// The tool's specification as its box offers it in `ctx` (its name is
    /// the bare tool name).
    pub fn specification(&self, ctx: &Context) -> Option<ToolSpecification> {
        let mut spec = self
            .entry
            .source
            .specification(&self.entry.tool, ctx)?
            .into_owned();
        spec.name = self.entry.key.name.clone();
        Some(spec)
    }
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("key", &self.entry.key)
            .finish()
    }
}

impl Registry {
    /// A registry holding the core tools that are on by default: `now@core`.
    pub fn new() -> Self {
        let registry = Registry::empty();
        registry
            .register_box(crate::core_tools::now_tool(), "core")
            .unwrap_or_else(|_| unreachable!("an empty registry has no `now@core`"));
        registry
    }

    /// A registry with no tools at all.
    pub fn empty() -> Self {
        Registry {
            state: RwLock::new(State::default()),
            listeners: Arc::new(RwLock::new(ToolHandler::empty())),
            changes: RwLock::new(Vec::new()),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers every tool of `tools` under its bare name.
    pub fn register(&self, tools: impl ToolBox + 'static) -> Result<Vec<ToolKey>, RegistryError> {
        self.insert(Arc::new(tools), None)
    }

    /// Registers every tool of `tools` as `tool@module`.
    pub fn register_box(
        &self,
        tools: impl ToolBox + 'static,
        module: &str,
    ) -> Result<Vec<ToolKey>, RegistryError> {
        self.insert(Arc::new(tools), Some(module))
    }

    /// Registers a `#[tool_box]` box (an impl value or a module's `Tools`):
    /// each tool becomes `tool@{box name}`. The box's doc comment
    /// describes the module, unless [`register_module`](Self::register_module)
    /// already did.
    pub fn scan(&self, tools: impl NamedToolBox + 'static) -> Result<Vec<ToolKey>, RegistryError> {
        let module = tools.box_name().to_owned();
        let description = tools.box_description().map(str::to_owned);
        let keys = self.insert(Arc::new(tools), Some(&module))?;
        if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
            self.write().modules.entry(module).or_insert(description);
        }
        Ok(keys)
    }

    /// Describes a module: its tools are offered as one namespace with
    /// this description (OpenAI Responses' `namespace`, and what a tool
    /// search shows of them; see `toolbox::catalog`). The
    /// description is checked like a tool's: not empty, at most
    /// [`MAX_NAMESPACE_DESCRIPTION`](toolbox_core::spec::MAX_NAMESPACE_DESCRIPTION)
    /// bytes.
    ///
    /// ```
    /// use toolbox_registry::Registry;
    /// let registry = Registry::new();
    /// registry.register_module("core", "Clock and other built-in tools.").unwrap();
    /// let tools = registry.resolve(["now@core"]).unwrap();
    /// # use toolbox_core::{Context, ToolBox};
    /// let spec = &tools.specifications(&Context::new())[0];
    /// assert_eq!(spec.namespace.as_ref().unwrap().name, "core");
    /// assert!(registry.register_module("crm", " ").unwrap_err().to_string().contains("empty"));
    /// ```
    pub fn register_module(&self, name: &str, description: &str) -> Result<(), RegistryError> {
        let namespace = toolbox_core::spec::Namespace::new(name, description);
        if let Some(problem) = namespace.problem() {
            return Err(RegistryError::InvalidName(format!(
                "module `{name}`: {problem}"
            )));
        }
        self.write()
            .modules
            .insert(name.to_owned(), description.to_owned());
        Ok(())
    }

    /// Registers every tool of a shared box, all or nothing: a key already
    /// taken, or an illegal name, registers none of them. Every tool the box
    /// can ever offer is registered (its [`catalog`](ToolBox::catalog)),
    /// whatever conditions hide it in one context; they decide per call.
    pub fn insert(
        &self,
        source: Arc<dyn ToolBox>,
        module: Option<&str>,
    ) -> Result<Vec<ToolKey>, RegistryError> {
        if let Some(module) = module {
            check_name(module, "module")?;
        }
        let names: Vec<String> = source.catalog().into_iter().map(|s| s.name).collect();
        let mut entries = Vec::with_capacity(names.len());
        for tool in names {
            check_name(&tool, "tool")?;
            let key = ToolKey::new(tool.clone(), module);
            entries.push(Arc::new(Entry {
                full_key: key.to_string(),
                key,
                source: source.clone(),
                tool,
            }));
        }
        let mut state = self.write();
        let mut seen = rustc_hash::FxHashSet::default();
        for entry in &entries {
            if state.by_key.contains_key(&entry.full_key) || !seen.insert(entry.full_key.as_str()) {
                return Err(RegistryError::Duplicate {
                    key: entry.full_key.clone(),
                });
            }
        }
        let keys = Self::add(&mut state, entries);
        drop(state);
        self.changed();
        Ok(keys)
    }

    /// Puts checked entries in; the caller holds the write lock.
    fn add(state: &mut State, entries: Vec<Arc<Entry>>) -> Vec<ToolKey> {
        state.by_key.reserve(entries.len());
        let keys = entries.iter().map(|e| e.key.clone()).collect();
        for entry in entries {
            state
                .by_name
                .entry(entry.key.name.clone())
                .or_default()
                .push(entry.clone());
            if let Some(module) = &entry.key.module {
                state
                    .by_module
                    .entry(module.clone())
                    .or_default()
                    .push(entry.clone());
            }
            state.by_key.insert(entry.full_key.clone(), entry);
        }
        keys
    }

    /// Registers every tool that registered itself in the program (every
    /// `#[tool]` function and buildable `#[tool_box]`, wherever its file
    /// is; see [`toolbox_core::discover`]), all or nothing: a key taken
    /// twice names both items and where they are written, and registers
    /// none. The module of a key is the box's name, or for a free
    /// function the last segment of its module path
    /// (`app::tools::weather::get_weather` → `get_weather@weather`).
    pub fn discover(&self) -> Result<Vec<ToolKey>, RegistryError> {
        let keys = self.register_discovered(|_| true)?;
        if keys.is_empty() {
            tracing::warn!(
                target: "toolbox::registry",
                "discover() found no tool: a tools crate the program never names is not linked (add `use my_tools as _;`); `discover_crates([\"my_tools\"])` names the ones that contributed nothing"
            );
        }
        Ok(keys)
    }

    /// Registers, as [`discover`](Self::discover) does, every discovered
    /// tool, and fails naming each of `crates` (library names, `my_tools`
    /// for a package `my-tools`) that contributed none, registering
    /// nothing: the usual cause is a crate the program never names, which
    /// the linker leaves out with its tools (`use my_tools as _;` links it).
    ///
    /// ```
    /// use toolbox_registry::{Registry, RegistryError};
    /// let registry = Registry::empty();
    /// let error = registry.discover_crates(["weather_tools"]).unwrap_err();
    /// assert!(matches!(&error, RegistryError::NothingDiscovered { crates } if crates == &["weather_tools"]));
    /// assert!(error.to_string().contains("add `use weather_tools as _;` to the binary"));
    /// assert!(registry.is_empty());
    /// ```
    pub fn discover_crates<I, S>(&self, crates: I) -> Result<Vec<ToolKey>, RegistryError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let found: Vec<&'static str> = toolbox_core::discover::discovered()
            .into_iter()
            .map(|item| item.module_path.split("::").next().unwrap_or_default())
            .collect();
        let missing: Vec<String> = crates
            .into_iter()
            .map(|c| c.as_ref().replace('-', "_"))
            .filter(|c| !found.contains(&c.as_str()))
            .collect();
        if !missing.is_empty() {
            return Err(RegistryError::NothingDiscovered { crates: missing });
        }
        self.discover()
    }

    /// Registers, as [`discover`](Self::discover) does, the tools under
    /// one module path, segment-wise: `app::tools` takes `app::tools::crm`
    /// but not `app::toolsmith`. Pass `module_path!()` for the tools of
    /// the calling module and below.
    pub fn scan_module(&self, module_path: &str) -> Result<Vec<ToolKey>, RegistryError> {
        self.register_discovered(|item| item.is_under(module_path))
    }

    /// Every discovered tool of the program, with its key, module path and
    /// source location, in key order: what `discover()` would register.
    pub fn discovered() -> Vec<DiscoveredTool> {
        let mut out: Vec<DiscoveredTool> = toolbox_core::discover::discovered()
            .into_iter()
            .filter_map(|item| Some((item, (item.build)()?)))
            .flat_map(|(item, source)| {
                source
                    .catalog()
                    .into_iter()
                    .map(move |spec| DiscoveredTool {
                        key: ToolKey::new(spec.name, Some(item.module)),
                        module_path: item.module_path,
                        location: item.location(),
                    })
            })
            .collect();
        out.sort_by(|a, b| {
            (a.key.to_string(), a.module_path).cmp(&(b.key.to_string(), b.module_path))
        });
        out
    }

    fn register_discovered(
        &self,
        wanted: impl Fn(&toolbox_core::discover::Discovered) -> bool,
    ) -> Result<Vec<ToolKey>, RegistryError> {
        let mut entries = Vec::new();
        let mut origins: FxHashMap<String, String> = FxHashMap::default();
        for item in toolbox_core::discover::discovered() {
            if !wanted(item) {
                continue;
            }
            let Some(source) = (item.build)() else {
                continue;
            };
            check_name(item.module, "module")?;
            let origin = format!("`{}` ({})", item.module_path, item.location());
            for spec in source.catalog() {
                check_name(&spec.name, "tool")?;
                let key = ToolKey::new(spec.name.clone(), Some(item.module));
                let full_key = key.to_string();
                if let Some(first) = origins.insert(full_key.clone(), origin.clone()) {
                    return Err(RegistryError::DiscoveredTwice {
                        key: full_key,
                        first,
                        second: origin,
                    });
                }
                entries.push(Arc::new(Entry {
                    full_key,
                    key,
                    source: source.clone(),
                    tool: spec.name,
                }));
            }
        }
        let mut state = self.write();
        if let Some(entry) = entries
            .iter()
            .find(|e| state.by_key.contains_key(&e.full_key))
        {
            return Err(RegistryError::DiscoveredTwice {
                key: entry.full_key.clone(),
                first: "an earlier registration".to_owned(),
                second: origins.remove(&entry.full_key).unwrap_or_default(),
            });
        }
        let keys = Self::add(&mut state, entries);
        drop(state);
        self.changed();
        Ok(keys)
    }

    /// Removes one tool by its exact key.
    pub fn unregister(&self, key: &str) -> Result<ToolKey, RegistryError> {
        let mut state = self.write();
        let Some(entry) = state.by_key.remove(key) else {
            let suggestions = suggestions(&state, key);
            return Err(RegistryError::NotFound {
                key: key.to_owned(),
                suggestions,
            });
        };
        remove_from_name_index(&mut state, &entry);
        remove_from_module_index(&mut state, &entry);
        drop(state);
        self.changed();
        Ok(entry.key.clone())
    }

    /// Removes every tool of a module; returns how many. O(size of the module).
    pub fn unregister_module(&self, module: &str) -> usize {
        let mut state = self.write();
        let doomed = state.by_module.remove(module).unwrap_or_default();
        for entry in &doomed {
            state.by_key.remove(&entry.full_key);
            remove_from_name_index(&mut state, entry);
        }
        drop(state);
        if !doomed.is_empty() {
            self.changed();
        }
        doomed.len()
    }

    /// Calls `f` after every change to the registered tools (a register, a
    /// scan, an unregister), outside the registry's lock: the place to
    /// re-resolve, or to tell served MCP clients (`McpServer::tools_changed`).
    /// A panicking callback is caught and logged.
    pub fn on_change(&self, f: impl Fn() + Send + Sync + 'static) {
        self.changes
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::new(f));
    }

    fn changed(&self) {
        let callbacks = self
            .changes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for callback in callbacks {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback())).is_err() {
                tracing::error!("a registry change callback panicked; the change stands");
            }
        }
    }

    /// Like [`resolve`](Self::resolve) (every name must resolve now), but the
    /// box follows the registry: after each change it is resolved again, a
    /// tool unregistered since drops out of it and comes back when it is
    /// registered again. Serve it over MCP and call `tools_changed` from
    /// [`on_change`](Self::on_change) to keep clients' lists current.
    pub fn resolve_live<I, S>(self: &Arc<Self>, names: I) -> Result<LiveResolution, RegistryError>
    where
        I: IntoIterator<Item = S>,
        S: KeyRef,
    {
        let names: Vec<String> = names
            .into_iter()
            .map(|n| n.key_text().into_owned())
            .collect();
        let current = Arc::new(RwLock::new(Arc::new(self.resolve(&names)?)));
        let registry = Arc::downgrade(self);
        let slot = Arc::downgrade(&current);
        self.on_change(move || {
            let (Some(registry), Some(slot)) = (registry.upgrade(), slot.upgrade()) else {
                return;
            };
            let available: Vec<&String> =
                names.iter().filter(|n| registry.get(n).is_ok()).collect();
            match registry.resolve(available) {
                Ok(resolved) => {
                    *slot.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(resolved);
                }
                Err(error) => tracing::warn!(%error, "a live resolution could not follow a change"),
            }
        });
        Ok(LiveResolution { current })
    }

    /// Every key, sorted.
    pub fn keys(&self) -> Vec<ToolKey> {
        let mut keys: Vec<ToolKey> = self.read().by_key.values().map(|e| e.key.clone()).collect();
        keys.sort();
        keys
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.read().by_key.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Finds a tool. `name@module` is exact and never resolves to another
    /// module. A bare `name` is an exact key first, then the one tool of
    /// that name across modules; in several modules it is
    /// [`RegistryError::Ambiguous`]. Both steps are hash lookups: O(1) in
    /// the number of registered tools.
    pub fn get(&self, key: &str) -> Result<RegisteredTool, RegistryError> {
        let state = self.read();
        if let Some(entry) = state.by_key.get(key) {
            return Ok(RegisteredTool {
                entry: entry.clone(),
            });
        }
        if !key.contains('@') {
            match state.by_name.get(key).map(Vec::as_slice) {
                Some([entry]) => {
                    return Ok(RegisteredTool {
                        entry: entry.clone(),
                    })
                }
                Some(many) if !many.is_empty() => {
                    let mut keys: Vec<String> = many.iter().map(|e| e.full_key.clone()).collect();
                    keys.sort();
                    return Err(RegistryError::Ambiguous {
                        name: key.to_owned(),
                        keys,
                    });
                }
                _ => {}
            }
        }
        Err(RegistryError::NotFound {
            key: key.to_owned(),
            suggestions: suggestions(&state, key),
        })
    }

    /// A box for one request made of the named tools, as registered at this
    /// moment (tools registered later are not in it). Each tool is exposed
    /// under a provider-safe name: its bare name where that is unique in the
    /// box, else `module_name`.
    pub fn resolve<I, S>(&self, names: I) -> Result<ResolvedToolBox, RegistryError>
    where
        I: IntoIterator<Item = S>,
        S: KeyRef,
    {
        self.resolve_deferred(names, std::iter::empty::<&str>())
    }

    /// As [`resolve`](Self::resolve), with a second list of tools that are
    /// deferred: offered only once a tool search revealed them (see
    /// `toolbox::catalog::Catalog`). A tool in both lists is eager.
    ///
    /// ```
    /// use toolbox_registry::Registry;
    /// # use toolbox_core::{Context, FnToolBox, ToolBox, tool_fn};
    /// let registry = Registry::new();
    /// let crm = FnToolBox::new([tool_fn("get_customer", "A customer.", |_: serde_json::Value| async { "c" })]).unwrap();
    /// registry.register_box(crm, "crm").unwrap();
    /// let tools = registry.resolve_deferred(["now"], ["get_customer@crm"]).unwrap();
    /// let specs = tools.specifications(&Context::new());
    /// assert!(!specs[0].deferred && specs[1].deferred);
    /// ```
    pub fn resolve_deferred<I, S, J, T>(
        &self,
        names: I,
        deferred: J,
    ) -> Result<ResolvedToolBox, RegistryError>
    where
        I: IntoIterator<Item = S>,
        S: KeyRef,
        J: IntoIterator<Item = T>,
        T: KeyRef,
    {
        let mut found: Vec<(RegisteredTool, bool)> = Vec::new();
        let eager = names
            .into_iter()
            .map(|n| (n.key_text().into_owned(), false));
        let lazy = deferred
            .into_iter()
            .map(|n| (n.key_text().into_owned(), true));
        for (name, deferred) in eager.chain(lazy) {
            let tool = self.get(&name)?;
            if !found
                .iter()
                .any(|(f, _)| Arc::ptr_eq(&f.entry, &tool.entry))
            {
                found.push((tool, deferred));
            }
        }
        let modules = self.read().modules.clone();
        let tools = found
            .into_iter()
            .map(|(tool, deferred)| {
                let namespace = tool.entry.key.module.as_ref().and_then(|module| {
                    modules
                        .get(module)
                        .map(|description| toolbox_core::spec::Namespace::new(module, description))
                });
                crate::resolve::Member {
                    entry: tool.entry,
                    namespace,
                    deferred,
                }
            })
            .collect();
        let listeners = self.listeners.clone();
        ResolvedToolBox::new(tools, move || {
            listeners.read().map(|h| h.clone()).unwrap_or_default()
        })
    }

    /// Adds a listener to the before/after events of every call made through
    /// boxes this registry resolved (including ones resolved earlier).
    pub fn add_listener(&self, handler: ToolHandler) {
        let mut listeners = self.listeners.write().unwrap_or_else(|p| p.into_inner());
        *listeners = std::mem::take(&mut *listeners).and(&handler);
    }
}

fn remove_from_name_index(state: &mut State, entry: &Arc<Entry>) {
    if let Some(list) = state.by_name.get_mut(&entry.key.name) {
        list.retain(|e| !Arc::ptr_eq(e, entry));
        if list.is_empty() {
            state.by_name.remove(&entry.key.name);
        }
    }
}

fn remove_from_module_index(state: &mut State, entry: &Arc<Entry>) {
    let Some(module) = &entry.key.module else {
        return;
    };
    if let Some(list) = state.by_module.get_mut(module) {
        list.retain(|e| !Arc::ptr_eq(e, entry));
        if list.is_empty() {
            state.by_module.remove(module);
        }
    }
}

fn suggestions(state: &State, key: &str) -> Vec<String> {
    let wanted = ToolKey::parse(key);
    let mut out: Vec<String> = match state.by_name.get(&wanted.name) {
        Some(list) => list.iter().map(|e| e.full_key.clone()).collect(),
        None => toolbox_core::names::closest_names(
            &wanted.name,
            state.by_name.keys().map(String::as_str),
        )
        .iter()
        .flat_map(|name| state.by_name[name].iter().map(|e| e.full_key.clone()))
        .collect(),
    };
    out.sort();
    out.truncate(5);
    out
}

fn check_name(name: &str, what: &str) -> Result<(), RegistryError> {
    if toolbox_core::names::is_valid_tool_name(name) {
        Ok(())
    } else {
        Err(RegistryError::InvalidName(format!(
            "{what} name `{name}` is not allowed: use 1 to 64 of a-z, A-Z, 0-9, `_` and `-`"
        )))
    }
}
