//! The call side of every box: [`ToolBoxExt`] (the lifecycle's one way in,
//! and the combinators that wrap a box) and [`ToolCallback`], a tool as a
//! framework-neutral function.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::args::Arguments;
use crate::boxes::condition::{FilteredToolBox, ToolCondition};
use crate::boxes::decorate::TimeoutToolBox;
use crate::context::Context;
use crate::handler::ToolHandler;
use crate::lifecycle;
use crate::response::ToolResponse;
use crate::spec::ToolSpecification;
use crate::toolbox::ToolBox;

/// The public call path of every [`ToolBox`]. Implemented for every box by a
/// blanket implementation, so the lifecycle is final.
pub trait ToolBoxExt: ToolBox {
    /// Calls the tool `name` through the lifecycle: `on_start`; the raw
    /// dispatch, which takes the arguments in (an object, JSON text, a JSON
    /// string holding an object, or `null`), timed, traced as
    /// `execute_tool {name}`, with panics and cancellation caught; then
    /// exactly one of `on_success` / `on_error`, also when the call is
    /// dropped before it finishes (`Cancelled`). Never fails: an error
    /// becomes an error response with the model's text.
    ///
    /// The future is `Unpin`, so a caller may poll it once in place (most
    /// tools answer in their first poll) and box only the calls still
    /// running.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: impl Into<Arguments<'a>>,
        ctx: &'a Context,
        handler: &'a ToolHandler,
    ) -> impl Future<Output = ToolResponse> + Send + Unpin + 'a {
        lifecycle::Call::new(self, name, arguments.into(), ctx, handler)
    }

    /// The tools as framework-neutral callbacks (name, specification, a call
    /// taking the provider's argument string), each call passing the
    /// lifecycle under `handler`.
    fn callbacks(self: &Arc<Self>, handler: &ToolHandler) -> Vec<ToolCallback>
    where
        Self: Sized + 'static,
    {
        ToolCallback::all(self.clone(), handler)
    }

    /// Hides the tools a closure refuses: absent from the specifications
    /// and refused on call without running. The closure's parameter types
    /// need no annotations: `.filter(|spec, ctx| spec.name != "delete")`.
    fn filter<F>(self, condition: F) -> FilteredToolBox<Self, F>
    where
        Self: Sized,
        F: Fn(&ToolSpecification, &Context) -> bool + Send + Sync + 'static,
    {
        FilteredToolBox::new(self, condition)
    }

    /// Hides the tools a [`ToolCondition`] value refuses (a type of your
    /// own, or [`AlwaysTrue`](crate::boxes::AlwaysTrue)); [`filter`](Self::filter)
    /// takes closures.
    fn filter_by<C: ToolCondition + 'static>(self, condition: C) -> FilteredToolBox<Self, C>
    where
        Self: Sized,
    {
        FilteredToolBox::new(self, condition)
    }

    /// Ends any call of this box that runs longer than `limit`.
    fn with_timeout(self, limit: Duration) -> TimeoutToolBox<Self>
    where
        Self: Sized,
    {
        TimeoutToolBox::new(self).default_timeout(limit)
    }
}

impl<T: ToolBox + ?Sized> ToolBoxExt for T {}

/// One tool as a framework-neutral callback: what other agent frameworks
/// accept (a name, a schema, a function from argument text to result text).
#[derive(Clone)]
pub struct ToolCallback {
    specification: ToolSpecification,
    toolbox: Arc<dyn ToolBox>,
    handler: ToolHandler,
}

impl ToolCallback {
    /// Callbacks for every tool `toolbox` offers in an empty context.
    pub fn all(toolbox: Arc<dyn ToolBox>, handler: &ToolHandler) -> Vec<ToolCallback> {
        toolbox
            .specifications(&Context::new())
            .into_iter()
            .map(|specification| ToolCallback {
                specification,
                toolbox: toolbox.clone(),
                handler: handler.clone(),
            })
            .collect()
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.specification.name
    }

    /// The tool's specification.
    pub fn specification(&self) -> &ToolSpecification {
        &self.specification
    }

    /// Calls the tool with the provider's argument string and returns the
    /// text the model reads (an error's model text on failure).
    pub async fn call(&self, arguments: &str) -> String {
        self.call_with_context(arguments, &Context::new())
            .await
            .content
    }

    /// Calls the tool with the provider's argument string in a context and
    /// returns the whole response.
    pub async fn call_with_context(&self, arguments: &str, ctx: &Context) -> ToolResponse {
        self.toolbox
            .call(&self.specification.name, arguments, ctx, &self.handler)
            .await
    }
}

impl std::fmt::Debug for ToolCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallback")
            .field("name", &self.specification.name)
            .finish()
    }
}
