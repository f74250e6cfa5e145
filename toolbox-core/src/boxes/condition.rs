//! Conditions decide which tools are offered in a context. A hidden tool is
//! absent from the specifications AND refused on call: conditions are an
//! authorization boundary, not a display hint.

use crate::dispatch::BoxFuture;
use crate::dispatch::DispatchFuture;
use crate::{
    args::Arguments, context::Context, error::ToolError, spec::ToolSpecification, toolbox::ToolBox,
};

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
/// [`ToolBoxExt::filter`](crate::ext::ToolBoxExt::filter).
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

    /// `Ok` when `name` is offered in `ctx`; else `NotAvailable` for a tool
    /// the condition hides, or an unknown tool whose suggestions name only
    /// tools offered in `ctx`.
    fn allowed(&self, name: &str, ctx: &Context) -> Result<(), ToolError> {
        match self.inner.specification(name, ctx) {
            Some(spec) if self.condition.allows(&spec, ctx) => Ok(()),
            Some(_) => Err(ToolError::NotAvailable {
                name: name.to_owned(),
            }),
            None => {
                let visible = self.specifications(ctx);
                Err(ToolError::unknown_tool(
                    name,
                    visible.iter().map(|s| s.name.as_str()),
                ))
            }
        }
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

    fn catalog(&self) -> Vec<ToolSpecification> {
        self.inner.catalog()
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
        self.allowed(name, ctx)?;
        self.inner.check(name, arguments, ctx)
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.allowed(name, ctx) {
            Ok(()) => self.inner.dispatch(name, arguments, ctx),
            Err(error) => DispatchFuture::ready(Err(error)),
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}
