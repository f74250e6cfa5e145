//! What raw dispatch returns ([`ToolBox::dispatch`](crate::ToolBox::dispatch)):
//! the future, a result that is already there (no
//! allocation: sync tools, bad arguments, unknown names) or a boxed future.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::{error::ToolError, response::ToolResponse};

/// A boxed, sendable future, the return type of raw dispatch.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What raw dispatch yields: the tool's response, or why it failed.
pub type DispatchResult = Result<ToolResponse, ToolError>;

/// What the model reads for a result.
#[inline]
pub(crate) fn into_response(result: DispatchResult) -> ToolResponse {
    match result {
        Ok(response) => response,
        Err(error) => ToolResponse::error(error.model_message()),
    }
}

/// What [`ToolBox::dispatch`](crate::toolbox::ToolBox::dispatch) returns.
///
/// ```
/// use toolbox_core::ToolResponse;
/// use toolbox_core::dispatch::DispatchFuture;
/// let done = DispatchFuture::ready(Ok(ToolResponse::text("42")));
/// let later = DispatchFuture::new(async { Ok(ToolResponse::text("42")) });
/// # let _ = (done, later);
/// ```
#[must_use = "a dispatch does nothing unless awaited"]
pub struct DispatchFuture<'a>(State<'a>);

enum State<'a> {
    Ready(Option<DispatchResult>),
    Pending(BoxFuture<'a, DispatchResult>),
}

impl<'a> DispatchFuture<'a> {
    /// A dispatch whose result is already known.
    #[inline]
    pub fn ready(result: DispatchResult) -> Self {
        DispatchFuture(State::Ready(Some(result)))
    }

    /// A dispatch that runs `future` (boxed).
    #[inline]
    pub fn new(future: impl Future<Output = DispatchResult> + Send + 'a) -> Self {
        DispatchFuture(State::Pending(Box::pin(future)))
    }

    /// The result when it is already known, else the boxed future.
    #[inline]
    pub(crate) fn into_parts(self) -> Result<DispatchResult, BoxFuture<'a, DispatchResult>> {
        match self.0 {
            State::Ready(Some(result)) => Ok(result),
            State::Ready(None) => Ok(Err(polled_after_completion())),
            State::Pending(future) => Err(future),
        }
    }

    /// What the model reads when the result is already known, else what
    /// `pending` makes of the boxed future: [`into_parts`](Self::into_parts)
    /// and the lifecycle's conversion in one step, for a quiet call.
    #[inline(always)]
    pub(crate) fn respond_or(
        self,
        pending: impl FnOnce(BoxFuture<'a, DispatchResult>) -> Poll<ToolResponse>,
    ) -> Poll<ToolResponse> {
        // One arm per case: folding `None` in with `unwrap_or_else` copies
        // the response once more (+17 ns a call on `add` in the bench).
        match self.0 {
            State::Ready(Some(result)) => Poll::Ready(into_response(result)),
            State::Ready(None) => Poll::Ready(into_response(Err(polled_after_completion()))),
            State::Pending(future) => pending(future),
        }
    }

    /// The result, if it is already known, or the dispatch back.
    #[inline]
    pub fn into_ready(self) -> Result<DispatchResult, Self> {
        match self.0 {
            State::Ready(Some(result)) => Ok(result),
            state => Err(DispatchFuture(state)),
        }
    }
}

/// The error of a dispatch asked for its result a second time.
#[cold]
fn polled_after_completion() -> ToolError {
    ToolError::Panicked {
        message: "a dispatch was polled after it completed".to_owned(),
    }
}

impl<'a> From<BoxFuture<'a, DispatchResult>> for DispatchFuture<'a> {
    fn from(future: BoxFuture<'a, DispatchResult>) -> Self {
        DispatchFuture(State::Pending(future))
    }
}

impl Future for DispatchFuture<'_> {
    type Output = DispatchResult;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<DispatchResult> {
        match &mut self.get_mut().0 {
            State::Ready(result) => Poll::Ready(
                result
                    .take()
                    .unwrap_or_else(|| Err(polled_after_completion())),
            ),
            State::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

impl std::fmt::Debug for DispatchFuture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            State::Ready(_) => "DispatchFuture::Ready",
            State::Pending(_) => "DispatchFuture::Pending",
        })
    }
}
