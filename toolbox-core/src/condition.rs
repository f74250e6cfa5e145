//! Conditions decide which tools are offered in a context. A hidden tool is
//! absent from the specifications AND refused on call: conditions are an
//! authorization boundary, not a display hint.

use serde_json::Value;

use crate::toolbox::BoxFuture;
use crate::DispatchFuture;
use crate::{Context, ToolBox, ToolError, ToolSpecification};

/// Whether a tool is offered in a context.
///
/// Closures `Fn(&ToolSpecification, &Context) -> bool` are conditions.
pub trait ToolCondition: Send + Sync {
    /// `true` to offer (and allow calling) `tool` in `ctx`.
    fn allows(&self, tool: &ToolSpecification, ctx: &Context) -> bool;
}

/// The condition that allows every tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlwaysTrue;

impl ToolCondition for AlwaysTrue {
    fn allows(&self, _: &ToolSpecification, _: &Context) -> bool {
        true
    }
}

impl<F> ToolCondition for F
where
    F: Fn(&ToolSpecification, &Context) -> bool + Send + Sync,
{
    fn allows(&self, tool: &ToolSpecification, ctx: &Context) -> bool {
        self(tool, ctx)
    }
}

/// A box showing only the tools its condition allows; made by
/// [`ToolBoxExt::filter`](crate::ToolBoxExt::filter).
#[derive(Debug)]
pub struct FilteredToolBox<B, C> {
    inner: B,
    condition: C,
}

impl<B: ToolBox, C: ToolCondition> FilteredToolBox<B, C> {
    /// Wraps `inner`, hiding what `condition` refuses.
    pub fn new(inner: B, condition: C) -> Self {
        FilteredToolBox { inner, condition }
    }

    /// The wrapped box.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: ToolBox, C: ToolCondition> ToolBox for FilteredToolBox<B, C> {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        let mut specs = self.inner.specifications(ctx);
        specs.retain(|s| self.condition.allows(s, ctx));
        specs
    }

    fn specification(
        &self,
        name: &str,
        ctx: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        self.inner
            .specification(name, ctx)
            .filter(|s| self.condition.allows(s, ctx))
    }

    fn contains(&self, name: &str, ctx: &Context) -> bool {
        self.inner.contains(name, ctx)
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Value,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.inner.specification(name, ctx) {
            Some(spec) if self.condition.allows(&spec, ctx) => {
                self.inner.dispatch(name, arguments, ctx)
            }
            Some(_) => DispatchFuture::ready(Err(ToolError::NotAvailable {
                name: name.to_owned(),
            })),
            None => {
                let visible = self.specifications(ctx);
                let error = ToolError::unknown_tool(name, visible.iter().map(|s| s.name.as_str()));
                DispatchFuture::ready(Err(error))
            }
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}
