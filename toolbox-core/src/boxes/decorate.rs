//! Decorators: boxes that wrap a box to change what happens around a call
//! without adding tools.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::dispatch::DispatchFuture;
use crate::dispatch::{BoxFuture, DispatchResult};
use crate::lifecycle::Observation;
use crate::{
    args::Arguments, context::Context, error::ToolError, handler::ToolHandler, toolbox::ToolBox,
};

/// Ends calls that run too long with [`ToolError::TimedOut`]: a box-wide
/// default and per-tool limits (a per-tool limit wins). Needs a Tokio runtime
/// with its timer enabled.
///
/// ```
/// use std::time::Duration;
/// use toolbox_core::{EmptyToolBox, boxes::TimeoutToolBox};
/// let guarded = TimeoutToolBox::new(EmptyToolBox)
///     .default_timeout(Duration::from_secs(30))
///     .tool_timeout("slow_report", Duration::from_secs(120));
/// # let _ = guarded;
/// ```
#[derive(Debug)]
pub struct TimeoutToolBox<B> {
    inner: B,
    default: Option<Duration>,
    per_tool: HashMap<String, Duration>,
}

impl<B: ToolBox> TimeoutToolBox<B> {
    /// Wraps `inner` with no limits yet.
    pub fn new(inner: B) -> Self {
        TimeoutToolBox {
            inner,
            default: None,
            per_tool: HashMap::new(),
        }
    }

    /// Sets the limit for every tool without its own.
    pub fn default_timeout(mut self, limit: Duration) -> Self {
        self.default = Some(limit);
        self
    }

    /// Sets the limit for one tool.
    pub fn tool_timeout(mut self, tool: impl Into<String>, limit: Duration) -> Self {
        self.per_tool.insert(tool.into(), limit);
        self
    }

    /// The limit applied to `tool`, if any.
    pub fn timeout_for(&self, tool: &str) -> Option<Duration> {
        self.per_tool.get(tool).copied().or(self.default)
    }
}

impl<B: ToolBox> ToolBox for TimeoutToolBox<B> {
    crate::forward_listing!(inner);

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        let call = self.inner.dispatch(name, arguments, ctx);
        match self.timeout_for(name) {
            None => call,
            Some(limit) => match call.into_ready() {
                Ok(done) => DispatchFuture::ready(done),
                Err(pending) => DispatchFuture::new(time_limited(limit, pending)),
            },
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}

/// Runs `call`, failing with [`ToolError::TimedOut`] after `limit`: the
/// time limit of one dispatch, for boxes of your own ([`ToolBoxExt::with_timeout`](crate::ToolBoxExt::with_timeout)
/// limits a whole box).
pub async fn time_limited<F>(limit: Duration, call: F) -> DispatchResult
where
    F: std::future::Future<Output = DispatchResult>,
{
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::TimedOut { after: limit }),
    }
}

/// Reports every raw dispatch of the wrapped box to a [`ToolHandler`], next
/// to (not instead of) the handler of each call: a registry's or an
/// application's global listeners. Panics inside the wrapped box are caught
/// here too, and a call dropped before it ends reports `Cancelled`, so the
/// listener always sees exactly one of success or error per start.
pub struct ObservedToolBox<B> {
    inner: B,
    observer: Arc<dyn Fn() -> ToolHandler + Send + Sync>,
}

impl<B: ToolBox> ObservedToolBox<B> {
    /// Wraps `inner`; `observer` is asked for the current listeners at each call.
    pub fn new(inner: B, observer: impl Fn() -> ToolHandler + Send + Sync + 'static) -> Self {
        ObservedToolBox {
            inner,
            observer: Arc::new(observer),
        }
    }

    /// The wrapped box.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: ToolBox> ToolBox for ObservedToolBox<B> {
    crate::forward_listing!(inner);

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        let handler = (self.observer)();
        if handler.is_empty() {
            return self.inner.dispatch(name, arguments, ctx);
        }
        DispatchFuture::new(async move {
            let observation = Observation::start(
                &handler,
                name,
                ctx.call_id(),
                arguments,
                ctx.extension::<crate::callers::Caller>(),
                tracing::Span::none(),
            );
            let result = crate::lifecycle::guarded(&self.inner, name, arguments, ctx).await;
            observation.report(&result);
            result
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}
