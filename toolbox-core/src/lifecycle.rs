//! The one call path: events, timing, tracing, panic capture, cancellation,
//! serialization of errors. Every box's calls pass here exactly once.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use serde_json::Value;
use tracing::Instrument;

use crate::handler::{ToolFailure, ToolStart, ToolSuccess};
use crate::toolbox::{BoxFuture, DispatchResult};
use crate::{normalize_arguments, Context, ToolBox, ToolError, ToolHandler, ToolResponse};

pub(crate) async fn run<B: ToolBox + ?Sized>(
    toolbox: &B,
    name: &str,
    arguments: Value,
    ctx: &Context,
    handler: &ToolHandler,
) -> ToolResponse {
    let call_id = ctx.call_id();
    let span = tracing::info_span!(
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        error.type = tracing::field::Empty,
    );
    handler.started(&ToolStart {
        name,
        call_id,
        arguments: &arguments,
    });
    let started = quanta::Instant::now();
    let result = match normalize_arguments(arguments) {
        Ok(arguments) => {
            let dispatch = guarded_dispatch(toolbox, name, arguments, ctx);
            match ctx.cancellation() {
                None => dispatch.instrument(span.clone()).await,
                Some(token) => {
                    let mut cancelled = std::pin::pin!(token.cancelled());
                    let mut dispatch = std::pin::pin!(dispatch.instrument(span.clone()));
                    std::future::poll_fn(|cx| {
                        if cancelled.as_mut().poll(cx).is_ready() {
                            return Poll::Ready(Err(ToolError::Cancelled));
                        }
                        dispatch.as_mut().poll(cx)
                    })
                    .await
                }
            }
        }
        Err(error) => Err(error),
    };
    let elapsed = started.elapsed();
    match result {
        Ok(response) if !response.is_error => {
            handler.succeeded(&ToolSuccess {
                name,
                call_id,
                response: &response,
                elapsed,
            });
            response
        }
        Ok(response) => {
            let error = ToolError::failed(&response.content);
            span.record("error.type", error.kind().as_str());
            handler.failed(&ToolFailure {
                name,
                call_id,
                error: &error,
                elapsed,
            });
            response
        }
        Err(error) => {
            span.record("error.type", error.kind().as_str());
            handler.failed(&ToolFailure {
                name,
                call_id,
                error: &error,
                elapsed,
            });
            ToolResponse::error(error.model_message())
        }
    }
}

/// Starts the raw dispatch with panics caught, both while the future is
/// built and while it is polled.
fn guarded_dispatch<'a, B: ToolBox + ?Sized>(
    toolbox: &'a B,
    name: &'a str,
    arguments: Value,
    ctx: &'a Context,
) -> CatchUnwind<'a> {
    match catch_unwind(AssertUnwindSafe(|| toolbox.dispatch(name, arguments, ctx))) {
        Ok(future) => CatchUnwind::Running(future),
        Err(payload) => CatchUnwind::Failed(Some(panicked(payload))),
    }
}

enum CatchUnwind<'a> {
    Running(BoxFuture<'a, DispatchResult>),
    Failed(Option<ToolError>),
}

impl Future for CatchUnwind<'_> {
    type Output = DispatchResult;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<DispatchResult> {
        match self.get_mut() {
            CatchUnwind::Running(future) => {
                match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(poll) => poll,
                    Err(payload) => Poll::Ready(Err(panicked(payload))),
                }
            }
            CatchUnwind::Failed(error) => {
                Poll::Ready(Err(error.take().unwrap_or(ToolError::Panicked {
                    message: "polled after completion".to_owned(),
                })))
            }
        }
    }
}

fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    let message = if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    };
    ToolError::Panicked { message }
}
