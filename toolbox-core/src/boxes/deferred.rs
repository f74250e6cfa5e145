//! Deferred tools: tools the speaking model may call but does not run — a
//! call is answered "results will follow" and queued for a planner.

use std::sync::Mutex;

use crate::dispatch::BoxFuture;
use crate::{
    args::Arguments, args::ToolCall, context::Context, dispatch::DispatchFuture, error::ToolError,
    response::ToolResponse, spec::ToolSpecification, toolbox::ToolBox,
};

/// The text a deferred call answers with.
pub const DEFERRED_ANSWER: &str =
    "this request was handed on; its results will follow in a later message";

/// A box offering its own tools plus deferred ones. A call to a deferred
/// tool is recorded (with its call id) for a planner and answered at once
/// with [`DEFERRED_ANSWER`]; the planner drains the queue with
/// [`take_deferred`](Self::take_deferred).
pub struct DeferredToolBox<B> {
    inner: B,
    deferred: Vec<ToolSpecification>,
    queue: Mutex<Vec<ToolCall>>,
}

impl<B: ToolBox> DeferredToolBox<B> {
    /// `inner`'s tools run; `deferred` are offered and queued.
    pub fn new(inner: B, deferred: Vec<ToolSpecification>) -> Self {
        DeferredToolBox {
            inner,
            deferred,
            queue: Mutex::new(Vec::new()),
        }
    }

    /// The calls queued so far, oldest first; the queue is emptied.
    pub fn take_deferred(&self) -> Vec<ToolCall> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn deferred(&self, name: &str) -> Option<&ToolSpecification> {
        self.deferred.iter().find(|s| s.name == name)
    }
}

impl<B: ToolBox> ToolBox for DeferredToolBox<B> {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        let mut specs = self.inner.specifications(ctx);
        specs.extend(
            self.deferred
                .iter()
                .filter(|d| !specs.iter().any(|s| s.name == d.name))
                .cloned()
                .collect::<Vec<_>>(),
        );
        specs
    }

    fn specification(
        &self,
        name: &str,
        ctx: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        self.inner
            .specification(name, ctx)
            .or_else(|| self.deferred(name).map(std::borrow::Cow::Borrowed))
    }

    fn contains(&self, name: &str, ctx: &Context) -> bool {
        self.inner.contains(name, ctx) || self.deferred(name).is_some()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        if self.inner.contains(name, ctx) || self.deferred(name).is_none() {
            return self.inner.dispatch(name, arguments, ctx);
        }
        let arguments = match arguments.to_value() {
            Ok(value) => value.into_owned(),
            Err(error) => return DispatchFuture::ready(Err(error)),
        };
        let mut call = ToolCall::new(name, arguments);
        call.id = ctx.call_id().map(str::to_owned);
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(call);
        DispatchFuture::ready(Ok(ToolResponse::text(DEFERRED_ANSWER)))
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}
