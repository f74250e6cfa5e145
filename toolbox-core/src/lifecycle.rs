//! The one call path: events, timing, tracing, panic capture, cancellation,
//! serialization of errors. Every box's calls pass here exactly once, run
//! ([`Call`], through [`ToolBoxExt::call`](crate::ext::ToolBoxExt::call)) or
//! refused before they run ([`refuse`]) (a
//! quiet call to a box that [catches its own panics](ToolBox::catches_panics)
//! is not guarded twice).
//!
//! [`Call`] is written by hand rather than as an `async fn`: a tool that
//! answers at once (a sync tool, bad arguments, an unknown name) is run to
//! its end in the first poll, and the future holds only what a pending call
//! needs, so the call path stays a few words wide.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tracing::Span;

use crate::callers::Caller;
use crate::context::CancellationToken;
use crate::dispatch::into_response;
use crate::dispatch::{BoxFuture, DispatchResult};
use crate::handler::ToolStart;
use crate::panic::panicked;
use crate::{
    args::Arguments, context::Context, dispatch::DispatchFuture, error::ToolError,
    handler::ToolHandler, response::ToolResponse, toolbox::ToolBox,
};

/// One call through the lifecycle: what [`ToolBoxExt::call`](crate::ext::ToolBoxExt::call)
/// returns.
///
/// Eight words: what a call starts from. Everything a pending call needs
/// (its observation, the boxed dispatch, the cancellation signal) lives in
/// one box made only when the dispatch does not answer at once, so a sync
/// tool's call moves little and allocates nothing of its own.
pub(crate) struct Call<'a, B: ?Sized> {
    state: State<'a, B>,
}

enum State<'a, B: ?Sized> {
    /// Not polled yet: nothing has happened, nothing is reported if dropped.
    Start {
        toolbox: &'a B,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
        handler: &'a ToolHandler,
    },
    /// The dispatch is pending; dropping it reports `Cancelled`.
    Running(Box<Running<'a>>),
    Done,
}

struct Running<'a> {
    observation: Observation<'a>,
    dispatch: BoxFuture<'a, DispatchResult>,
    cancelled: Option<BoxFuture<'a, ()>>,
    /// How long a cancelled call may go on to finish (the token's grace).
    grace: Duration,
    /// Set once the call is cancelled: the end of its grace.
    winding_down: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<'a, B: ToolBox + ?Sized> Call<'a, B> {
    #[inline]
    pub(crate) fn new(
        toolbox: &'a B,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
        handler: &'a ToolHandler,
    ) -> Self {
        Call {
            state: State::Start {
                toolbox,
                name,
                arguments,
                ctx,
                handler,
            },
        }
    }
}

impl<B: ToolBox + ?Sized> Future for Call<'_, B> {
    type Output = ToolResponse;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<ToolResponse> {
        // `Call` is `Unpin`: its pending parts are boxed.
        let this = self.get_mut();
        let State::Start {
            toolbox,
            name,
            arguments,
            ctx,
            handler,
        } = this.state
        else {
            return this.poll_running(cx);
        };
        this.state = State::Done;
        // Nobody observes a quiet call (no events, no subscriber that could
        // want its span): a result already there goes straight back, with
        // no observation and no span.
        if observed(handler) {
            return this.begin(toolbox, name, arguments, ctx, handler, cx);
        }
        if ctx.is_cancelled() {
            return Poll::Ready(into_response(Err(ToolError::Cancelled)));
        }
        dispatch_caught(toolbox, name, arguments, ctx).respond_or(|dispatch| {
            let observation = Observation::start(
                handler,
                name,
                ctx.call_id(),
                arguments,
                ctx.extension::<Caller>(),
                Span::none(),
            );
            this.pending(observation, dispatch, ctx, cx)
        })
    }
}

impl<'a, B: ToolBox + ?Sized> Call<'a, B> {
    /// Starts a call that may be observed: its span is made, and its
    /// result reported whether it is already there or comes later.
    #[inline(never)]
    fn begin(
        &mut self,
        toolbox: &'a B,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
        handler: &'a ToolHandler,
        cx: &mut TaskContext<'_>,
    ) -> Poll<ToolResponse> {
        let call_id = ctx.call_id();
        let span = crate::span::execute_tool(name, call_id);
        let observation = Observation::start(
            handler,
            name,
            call_id,
            arguments,
            ctx.extension::<Caller>(),
            span,
        );
        let result = if ctx.is_cancelled() {
            Ok(Err(ToolError::Cancelled))
        } else {
            start(toolbox, name, arguments, ctx, &observation.span)
        };
        match result {
            Ok(result) => Poll::Ready(observation.finish(result)),
            Err(dispatch) => self.pending(observation, dispatch, ctx, cx),
        }
    }

    /// Keeps a pending dispatch, with what it needs, and polls it.
    fn pending(
        &mut self,
        observation: Observation<'a>,
        dispatch: BoxFuture<'a, DispatchResult>,
        ctx: &'a Context,
        cx: &mut TaskContext<'_>,
    ) -> Poll<ToolResponse> {
        self.state = State::Running(Box::new(Running {
            observation,
            dispatch,
            cancelled: ctx
                .cancellation()
                .map(|token| -> BoxFuture<'_, ()> { Box::pin(token.cancelled()) }),
            grace: ctx
                .cancellation()
                .map_or(Duration::ZERO, CancellationToken::grace),
            winding_down: None,
        }));
        self.poll_running(cx)
    }
}

impl<B: ?Sized> Call<'_, B> {
    /// Polls a pending call. Once its token is cancelled, the call has the
    /// token's grace to finish (the tool sees `ctx.cancelled()` and may
    /// clean up or answer with what it has); it ends `Cancelled` either
    /// way, and is dropped when the grace runs out.
    fn poll_running(&mut self, cx: &mut TaskContext<'_>) -> Poll<ToolResponse> {
        let State::Running(running) = &mut self.state else {
            return Poll::Ready(ToolResponse::error(
                "the call was polled after it completed",
            ));
        };
        let cancelled = running
            .cancelled
            .as_mut()
            .is_some_and(|cancelled| cancelled.as_mut().poll(cx).is_ready());
        if cancelled {
            running.cancelled = None;
            // A grace needs tokio's timer; without one the call ends now.
            match grace_timer(running.grace, cx) {
                Some(timer) => running.winding_down = Some(timer),
                None => return self.end(Err(ToolError::Cancelled), false),
            }
        }
        if let Poll::Ready(result) =
            poll_guarded(&mut running.dispatch, &running.observation.span, cx)
        {
            let after_cancel = running.winding_down.is_some();
            return self.end(result, after_cancel);
        }
        let over = running
            .winding_down
            .as_mut()
            .is_some_and(|grace| grace.as_mut().poll(cx).is_ready());
        if over {
            return self.end(Err(ToolError::Cancelled), false);
        }
        Poll::Pending
    }

    /// Ends the call with `result`; a result the tool gave after it was
    /// cancelled is reported as `Cancelled`, a successful answer's text
    /// kept for the model.
    fn end(&mut self, result: DispatchResult, after_cancel: bool) -> Poll<ToolResponse> {
        let State::Running(running) = std::mem::replace(&mut self.state, State::Done) else {
            unreachable!("the state was just matched as running")
        };
        if !after_cancel {
            return Poll::Ready(running.observation.finish(result));
        }
        running.observation.finish_cancelled();
        // What the tool answered once told (a partial result); a failure
        // after the cancel says no more than the cancel does.
        let said = match result {
            Ok(response) if !response.is_error && !response.content.is_empty() => response.content,
            _ => return Poll::Ready(into_response(Err(ToolError::Cancelled))),
        };
        Poll::Ready(ToolResponse::error(format!(
            "{}; before it stopped, the tool answered: {said}",
            ToolError::Cancelled.model_message()
        )))
    }
}

/// A timer for a cancelled call's grace, polled once so that it is
/// registered: `None` for no grace, or where there is no tokio timer
/// (outside a runtime, or in one built without `enable_time`, where a
/// timer panics).
fn grace_timer(grace: Duration, cx: &mut TaskContext<'_>) -> Option<Pin<Box<tokio::time::Sleep>>> {
    if grace.is_zero() || tokio::runtime::Handle::try_current().is_err() {
        return None;
    }
    catch_unwind(AssertUnwindSafe(|| {
        let mut timer = Box::pin(tokio::time::sleep(grace));
        timer.as_mut().poll(cx).is_pending().then_some(timer)
    }))
    .ok()
    .flatten()
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
    span: Span,
    ended: bool,
}

impl<'a> Observation<'a> {
    #[inline]
    pub(crate) fn start(
        handler: &'a ToolHandler,
        name: &'a str,
        call_id: Option<&'a str>,
        arguments: Arguments<'a>,
        caller: Option<&'a Caller>,
        span: Span,
    ) -> Self {
        handler.started(&ToolStart {
            name,
            call_id,
            arguments,
            caller,
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

    /// Reports the end and turns the result into what the model reads.
    #[inline]
    pub(crate) fn finish(mut self, result: DispatchResult) -> ToolResponse {
        self.end(&result);
        into_response(result)
    }

    /// Reports the end of a call that was cancelled.
    fn finish_cancelled(mut self) {
        self.end(&Err(ToolError::Cancelled));
    }

    /// Reports the end of a call whose result goes on as it is.
    pub(crate) fn report(mut self, result: &DispatchResult) {
        self.end(result);
    }

    #[inline]
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
            self.span.record("error.type", kind.as_str());
            // OpenTelemetry marks a failed operation's span as an error.
            self.span.record("otel.status_code", "ERROR");
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

/// Whether anyone may observe a call: its handler, or a subscriber that
/// could want its span. A call nobody observes gets no span.
#[inline]
fn observed(handler: &ToolHandler) -> bool {
    !handler.is_empty() || tracing::level_enabled!(tracing::Level::INFO)
}

/// Ends a call that does not run (not approved, past a turn's cap, a
/// deferred tool not loaded yet) with `error`, observed like every call:
/// its span, `on_start`, then the one error, with no dispatch.
pub fn refuse(
    name: &str,
    arguments: Arguments<'_>,
    ctx: &Context,
    handler: &ToolHandler,
    error: ToolError,
) -> ToolResponse {
    answered(name, arguments, ctx, handler, Err(error))
}

/// Ends a call its caller answered itself (a tool search the turn runner
/// answers from its catalogue, a refusal) with `result`, observed like
/// every call: its span, `on_start`, then the one end event.
pub fn answered(
    name: &str,
    arguments: Arguments<'_>,
    ctx: &Context,
    handler: &ToolHandler,
    result: DispatchResult,
) -> ToolResponse {
    let span = if observed(handler) {
        crate::span::execute_tool(name, ctx.call_id())
    } else {
        Span::none()
    };
    Observation::start(
        handler,
        name,
        ctx.call_id(),
        arguments,
        ctx.extension::<Caller>(),
        span,
    )
    .finish(result)
}

/// Starts a raw dispatch inside `span` with panics caught: the result when
/// it is already there (sync tools, bad arguments, a panic while building the
/// dispatch), else the pending dispatch.
fn start<'a, B: ToolBox + ?Sized>(
    toolbox: &'a B,
    name: &'a str,
    arguments: Arguments<'a>,
    ctx: &'a Context,
    span: &Span,
) -> Result<DispatchResult, BoxFuture<'a, DispatchResult>> {
    let _entered = span.enter();
    dispatch_caught(toolbox, name, arguments, ctx).into_parts()
}

/// The raw dispatch, with a panic while it is built caught, unless the box
/// catches its own.
#[inline(always)]
fn dispatch_caught<'a, B: ToolBox + ?Sized>(
    toolbox: &'a B,
    name: &'a str,
    arguments: Arguments<'a>,
    ctx: &'a Context,
) -> DispatchFuture<'a> {
    if toolbox.catches_panics() {
        return toolbox.dispatch(name, arguments, ctx);
    }
    match catch_unwind(AssertUnwindSafe(|| toolbox.dispatch(name, arguments, ctx))) {
        Ok(dispatch) => dispatch,
        Err(payload) => DispatchFuture::ready(Err(panicked(payload))),
    }
}

/// Polls a pending dispatch inside `span` with panics caught.
fn poll_guarded(
    dispatch: &mut BoxFuture<'_, DispatchResult>,
    span: &Span,
    cx: &mut TaskContext<'_>,
) -> Poll<DispatchResult> {
    let _entered = span.enter();
    match catch_unwind(AssertUnwindSafe(|| dispatch.as_mut().poll(cx))) {
        Ok(poll) => poll,
        Err(payload) => Poll::Ready(Err(panicked(payload))),
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
    match start(toolbox, name, arguments, ctx, &span) {
        Ok(result) => result,
        Err(mut pending) => std::future::poll_fn(|cx| poll_guarded(&mut pending, &span, cx)).await,
    }
}

/// The lifecycle's clock: the TSC where it is reliable (a few ns a read),
/// the OS monotonic clock otherwise; calibrated once per process.
fn clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}
