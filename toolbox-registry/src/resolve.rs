//! A registry's resolution: the box one request sees.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use toolbox_core::dispatch::{BoxFuture, DispatchFuture};
use toolbox_core::spec::Namespace;
use toolbox_core::{
    boxes::ObservedToolBox, Arguments, Context, ToolBox, ToolError, ToolHandler, ToolSpecification,
};

use crate::error::RegistryError;
use crate::key::Entry;

/// The tools of one resolution, under provider-safe names, routing calls
/// back to the boxes that registered them. Registry listeners observe every
/// call; the call's own lifecycle runs once, in [`ToolBoxExt::call`](toolbox_core::ToolBoxExt::call).
pub struct ResolvedToolBox {
    inner: ObservedToolBox<Resolution>,
}

struct Resolution {
    tools: Vec<(String, Arc<Entry>)>,
    /// Per tool: its module's namespace, when the module is described.
    namespaces: Vec<Option<Namespace>>,
    /// Per tool: whether it is deferred in this resolution.
    deferred: Vec<bool>,
    index: FxHashMap<String, usize>,
}

/// One tool of a resolution, as the registry hands it over.
pub(crate) struct Member {
    pub(crate) entry: Arc<Entry>,
    pub(crate) namespace: Option<Namespace>,
    pub(crate) deferred: bool,
}

impl ResolvedToolBox {
    pub(crate) fn new(
        members: Vec<Member>,
        listeners: impl Fn() -> ToolHandler + Send + Sync + 'static,
    ) -> Result<Self, RegistryError> {
        let mut per_name: BTreeMap<&str, usize> = BTreeMap::new();
        for member in &members {
            *per_name.entry(member.entry.key.name.as_str()).or_default() += 1;
        }
        let mut tools = Vec::with_capacity(members.len());
        let mut namespaces = Vec::with_capacity(members.len());
        let mut deferred = Vec::with_capacity(members.len());
        let mut index: FxHashMap<String, usize> = FxHashMap::default();
        for member in &members {
            let entry = &member.entry;
            let exposed = match (&entry.key.module, per_name[entry.key.name.as_str()]) {
                (Some(module), n) if n > 1 => format!("{module}_{}", entry.key.name),
                _ => entry.key.name.clone(),
            };
            if !toolbox_core::names::is_valid_tool_name(&exposed) {
                return Err(RegistryError::InvalidName(format!(
                    "`{}` would be exposed as `{exposed}`, which providers refuse (1 to 64 of a-z, A-Z, 0-9, `_` and `-`)",
                    entry.full_key
                )));
            }
            if let Some(&other) = index.get(&exposed) {
                let first: &(String, Arc<Entry>) = &tools[other];
                return Err(RegistryError::ExposedNameCollision {
                    exposed,
                    first: first.1.full_key.clone(),
                    second: entry.full_key.clone(),
                });
            }
            index.insert(exposed.clone(), tools.len());
            tools.push((exposed, entry.clone()));
            namespaces.push(member.namespace.clone());
            deferred.push(member.deferred);
        }
        Ok(ResolvedToolBox {
            inner: ObservedToolBox::new(
                Resolution {
                    tools,
                    namespaces,
                    deferred,
                    index,
                },
                listeners,
            ),
        })
    }

    /// The exposed names with the keys they route to, in resolution order.
    pub fn routes(&self) -> impl Iterator<Item = (&str, String)> {
        self.inner
            .inner()
            .tools
            .iter()
            .map(|(exposed, entry)| (exposed.as_str(), entry.full_key.clone()))
    }
}

impl std::fmt::Debug for ResolvedToolBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.routes()).finish()
    }
}

impl Resolution {
    /// Tool `i`'s specification as this resolution offers it: under its
    /// exposed name, in its module's namespace (unless it has its own),
    /// deferred when the resolution defers it.
    fn offered(&self, i: usize, mut spec: ToolSpecification) -> ToolSpecification {
        spec.name = self.tools[i].0.clone();
        if spec.namespace.is_none() {
            spec.namespace = self.namespaces[i].clone();
        }
        spec.deferred |= self.deferred[i];
        spec
    }
}

impl ToolBox for Resolution {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        self.tools
            .iter()
            .enumerate()
            .filter_map(|(i, (_, entry))| {
                let spec = entry.source.specification(&entry.tool, ctx)?.into_owned();
                Some(self.offered(i, spec))
            })
            .collect()
    }

    fn specification(&self, name: &str, ctx: &Context) -> Option<Cow<'_, ToolSpecification>> {
        let i = *self.index.get(name)?;
        let entry = &self.tools[i].1;
        let spec = entry.source.specification(&entry.tool, ctx)?.into_owned();
        Some(Cow::Owned(self.offered(i, spec)))
    }

    fn contains(&self, name: &str, _: &Context) -> bool {
        self.index.contains_key(name)
    }

    fn catalog(&self) -> Vec<ToolSpecification> {
        self.tools
            .iter()
            .enumerate()
            .filter_map(|(i, (_, entry))| {
                let spec = entry
                    .source
                    .catalog()
                    .into_iter()
                    .find(|s| s.name == entry.tool)?;
                Some(self.offered(i, spec))
            })
            .collect()
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
        match self.index.get(name) {
            Some(&i) => {
                let entry = &self.tools[i].1;
                entry.source.check(&entry.tool, arguments, ctx)
            }
            None => Err(self.unknown(name, ctx)),
        }
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.index.get(name) {
            Some(&i) => {
                let entry = &self.tools[i].1;
                entry.source.dispatch(&entry.tool, arguments, ctx)
            }
            None => DispatchFuture::ready(Err(self.unknown(name, ctx))),
        }
    }
}

impl Resolution {
    /// An unknown tool, suggesting only tools offered in `ctx`: nothing
    /// tells a caller about a tool it may not see.
    fn unknown(&self, name: &str, ctx: &Context) -> ToolError {
        let offered = self.specifications(ctx);
        ToolError::unknown_tool(name, offered.iter().map(|s| s.name.as_str()))
    }
}

impl ToolBox for ResolvedToolBox {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        self.inner.specifications(ctx)
    }

    fn specification(&self, name: &str, ctx: &Context) -> Option<Cow<'_, ToolSpecification>> {
        self.inner.specification(name, ctx)
    }

    fn contains(&self, name: &str, ctx: &Context) -> bool {
        self.inner.contains(name, ctx)
    }

    fn catalog(&self) -> Vec<ToolSpecification> {
        self.inner.catalog()
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
        self.inner.check(name, arguments, ctx)
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        self.inner.dispatch(name, arguments, ctx)
    }

    /// A resolution borrows its tools from the registry: closing it closes
    /// nothing (unregister or close the registered boxes themselves).
    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// A resolution that follows its registry
/// ([`Registry::resolve_live`](crate::Registry::resolve_live)): every call
/// and listing sees the latest resolution.
pub struct LiveResolution {
    pub(crate) current: Arc<std::sync::RwLock<Arc<ResolvedToolBox>>>,
}

impl LiveResolution {
    /// The resolution as it stands now.
    pub fn snapshot(&self) -> Arc<ResolvedToolBox> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl std::fmt::Debug for LiveResolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LiveResolution")
            .field(&self.snapshot())
            .finish()
    }
}

impl ToolBox for LiveResolution {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        self.snapshot().specifications(ctx)
    }

    fn specification(&self, name: &str, ctx: &Context) -> Option<Cow<'_, ToolSpecification>> {
        let snapshot = self.snapshot();
        let spec = snapshot.specification(name, ctx)?.into_owned();
        Some(Cow::Owned(spec))
    }

    fn contains(&self, name: &str, ctx: &Context) -> bool {
        self.snapshot().contains(name, ctx)
    }

    fn catalog(&self) -> Vec<ToolSpecification> {
        self.snapshot().catalog()
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
        self.snapshot().check(name, arguments, ctx)
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        let snapshot = self.snapshot();
        DispatchFuture::new(async move { snapshot.dispatch(name, arguments, ctx).await })
    }
}
