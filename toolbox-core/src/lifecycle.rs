//! The one call path: events, timing, tracing, panic capture, cancellation,
//! serialization of errors. Every box's calls pass here exactly once.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tracing::Span;

use crate::args::echo;
use crate::handler::ToolStart;
use crate::toolbox::DispatchResult;
use crate::DispatchFuture;
use crate::{Arguments, Context, ToolBox, ToolError, ToolHandler, ToolResponse};

pub(crate) async fn run<B: ToolBox + ?Sized>(
    toolbox: &B,
    name: &str,
    arguments: Arguments<'_>,
    ctx: &Context,
    handler: &ToolHandler,
) -> ToolResponse {
    let call_id = ctx.call_id();
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {}", echo(name)),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %echo(name),
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = call_id,
        error.type = tracing::field::Empty,
    );
    let observation = Observation::start(handler, name, call_id, arguments, Some(&span));
    let result = if ctx.is_cancelled() {
        Err(ToolError::Cancelled)
    } else {
        match start(toolbox, name, arguments, ctx, &span) {
            Ok(result) => result,
            Err(dispatch) => match ctx.cancellation() {
                None => dispatch.await,
                Some(token) => {
                    let mut cancelled = std::pin::pin!(token.cancelled());
                    let mut dispatch = std::pin::pin!(dispatch);
                    std::future::poll_fn(|cx| {
                        if cancelled.as_mut().poll(cx).is_ready() {
                            return Poll::Ready(Err(ToolError::Cancelled));
                        }
                        dispatch.as_mut().poll(cx)
                    })
                    .await
                }
            },
        }
    };
    observation.finish(&result);
    match result {
        Ok(response) => response,
        Err(error) => ToolResponse::error(error.model_message()),
    }
}

/// One call as its observers see it: `on_start` when it begins, then
/// exactly one end event: the result's, or `Cancelled` when the call is
/// dropped before it finishes (a caller's timeout, a `select!`).
pub(crate) struct Observation<'a> {
    handler: &'a ToolHandler,
    name: &'a str,
    call_id: Option<&'a str>,
    /// The clock's reading at the start; `None` when no observer takes the
    /// end events, so nobody needs the elapsed time and the clock is not read.
    started: Option<u64>,
    span: Option<&'a Span>,
    ended: bool,
}

impl<'a> Observation<'a> {
    pub(crate) fn start(
        handler: &'a ToolHandler,
        name: &'a str,
        call_id: Option<&'a str>,
        arguments: Arguments<'a>,
        span: Option<&'a Span>,
    ) -> Self {
        handler.started(&ToolStart {
            name,
            call_id,
            arguments,
        });
        Observation {
            handler,
            name,
            call_id,
            started: handler.observes_ends().then(|| clock().raw()),
            span,
            ended: false,
        }
    }

    pub(crate) fn finish(mut self, result: &DispatchResult) {
        self.end(result);
    }

    fn end(&mut self, result: &DispatchResult) {
        self.ended = true;
        let elapsed = match self.started {
            Some(started) => {
                let clock = clock();
                clock.delta(started, clock.raw())
            }
            None => Duration::ZERO,
        };
        if let Some(kind) = self
            .handler
            .report(self.name, self.call_id, result, elapsed)
        {
            if let Some(span) = self.span {
                span.record("error.type", kind.as_str());
            }
        }
    }
}

impl Drop for Observation<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.end(&Err(ToolError::Cancelled));
        }
    }
}

/// Starts a raw dispatch inside `span` with panics caught: the result when
/// it is already there (sync tools, bad arguments, a panic while building the
/// dispatch), else the pending dispatch, guarded the same way while polled.
/// The lifecycle and the observing decorators share it.
fn start<'a: 's, 's, B: ToolBox + ?Sized>(
    toolbox: &'a B,
    name: &'a str,
    arguments: Arguments<'a>,
    ctx: &'a Context,
    span: &'s Span,
) -> Result<DispatchResult, Guarded<'s>> {
    let started = {
        let _entered = span.enter();
        catch_unwind(AssertUnwindSafe(|| toolbox.dispatch(name, arguments, ctx)))
    };
    match started {
        Err(payload) => Ok(Err(panicked(payload))),
        Ok(dispatch) => dispatch
            .into_ready()
            .map_err(|pending| Guarded::Running(pending, span)),
    }
}

/// Runs a raw dispatch to completion with panics caught, for decorators that
/// observe calls.
pub(crate) async fn guarded<B: ToolBox + ?Sized>(
    toolbox: &B,
    name: &str,
    arguments: Arguments<'_>,
    ctx: &Context,
) -> DispatchResult {
    let span = Span::none();
    let result = match start(toolbox, name, arguments, ctx, &span) {
        Ok(result) => result,
        Err(pending) => pending.await,
    };
    result
}

/// A pending raw dispatch, polled inside the call's span with panics caught.
enum Guarded<'a> {
    Running(DispatchFuture<'a>, &'a Span),
    Done,
}

impl Future for Guarded<'_> {
    type Output = DispatchResult;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<DispatchResult> {
        let this = self.get_mut();
        let Guarded::Running(future, span) = this else {
            return Poll::Ready(Err(panicked(Box::new("polled after completion"))));
        };
        let _entered = span.enter();
        match catch_unwind(AssertUnwindSafe(|| Pin::new(future).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(result)) => {
                *this = Guarded::Done;
                Poll::Ready(result)
            }
            Err(payload) => {
                *this = Guarded::Done;
                Poll::Ready(Err(panicked(payload)))
            }
        }
    }
}

/// The lifecycle's clock: the TSC where it is reliable (a few ns a read),
/// the OS monotonic clock otherwise; calibrated once per process.
fn clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}

fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    ToolError::Panicked {
        message: panic_text(&*payload),
    }
}

/// A panic payload's text, when it has one.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}
