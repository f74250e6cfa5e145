//! The observation hook every call reports to.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::toolbox::DispatchResult;
use crate::{ToolError, ToolErrorKind, ToolResponse};

/// A call is about to run.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolStart<'a> {
    /// The name the tool was called by.
    pub name: &'a str,
    /// The provider's call id, when known.
    pub call_id: Option<&'a str>,
    /// The arguments as the caller sent them.
    pub arguments: &'a Value,
}

/// A call returned a result.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolSuccess<'a> {
    /// The name the tool was called by.
    pub name: &'a str,
    /// The provider's call id, when known.
    pub call_id: Option<&'a str>,
    /// What goes back to the model.
    pub response: &'a ToolResponse,
    /// Time spent in the tool.
    pub elapsed: Duration,
}

/// A call failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolFailure<'a> {
    /// The name the tool was called by.
    pub name: &'a str,
    /// The provider's call id, when known.
    pub call_id: Option<&'a str>,
    /// Why it failed (the operator's view: [`ToolError::report`]).
    pub error: &'a ToolError,
    /// Time spent before the failure.
    pub elapsed: Duration,
}

type StartFn = dyn Fn(&ToolStart<'_>) + Send + Sync;
type SuccessFn = dyn Fn(&ToolSuccess<'_>) + Send + Sync;
type FailureFn = dyn Fn(&ToolFailure<'_>) + Send + Sync;

/// Observes every invocation: `on_start`, then exactly one of `on_success`
/// or `on_error`, with the elapsed time. Cheap to clone.
///
/// ```
/// use toolbox_core::ToolHandler;
/// let handler = ToolHandler::new()
///     .on_start(|e| println!("-> {}", e.name))
///     .on_success(|e| println!("ok {} in {:?}", e.name, e.elapsed))
///     .on_error(|e| println!("!! {}: {}", e.name, e.error.report()));
/// # let _ = handler;
/// ```
#[derive(Clone, Default)]
pub struct ToolHandler {
    start: Option<Arc<StartFn>>,
    success: Option<Arc<SuccessFn>>,
    failure: Option<Arc<FailureFn>>,
}

impl ToolHandler {
    /// A handler that observes nothing.
    pub fn empty() -> Self {
        ToolHandler::default()
    }

    /// A handler that observes nothing yet; add callbacks with `on_*`.
    pub fn new() -> Self {
        ToolHandler::default()
    }

    /// Adds a callback for call starts, after any already set.
    pub fn on_start(mut self, f: impl Fn(&ToolStart<'_>) + Send + Sync + 'static) -> Self {
        self.start = Some(match self.start.take() {
            None => Arc::new(f),
            Some(first) => Arc::new(move |e: &ToolStart<'_>| {
                first(e);
                f(e)
            }),
        });
        self
    }

    /// Adds a callback for successful calls, after any already set.
    pub fn on_success(mut self, f: impl Fn(&ToolSuccess<'_>) + Send + Sync + 'static) -> Self {
        self.success = Some(match self.success.take() {
            None => Arc::new(f),
            Some(first) => Arc::new(move |e: &ToolSuccess<'_>| {
                first(e);
                f(e)
            }),
        });
        self
    }

    /// Adds a callback for failed calls, after any already set.
    pub fn on_error(mut self, f: impl Fn(&ToolFailure<'_>) + Send + Sync + 'static) -> Self {
        self.failure = Some(match self.failure.take() {
            None => Arc::new(f),
            Some(first) => Arc::new(move |e: &ToolFailure<'_>| {
                first(e);
                f(e)
            }),
        });
        self
    }

    /// A handler that runs this one's callbacks, then `other`'s.
    pub fn and(self, other: &ToolHandler) -> Self {
        let mut merged = self;
        if let Some(f) = other.start.clone() {
            merged = merged.on_start(move |e| f(e));
        }
        if let Some(f) = other.success.clone() {
            merged = merged.on_success(move |e| f(e));
        }
        if let Some(f) = other.failure.clone() {
            merged = merged.on_error(move |e| f(e));
        }
        merged
    }

    /// Whether any callback is set.
    pub fn is_empty(&self) -> bool {
        self.start.is_none() && self.success.is_none() && self.failure.is_none()
    }

    #[inline]
    pub(crate) fn started(&self, event: &ToolStart<'_>) {
        if let Some(f) = &self.start {
            f(event)
        }
    }

    /// Fires `on_success` or `on_error` for a finished dispatch (a response
    /// flagged `is_error` counts as a failure); returns the failure's kind.
    #[inline]
    pub(crate) fn report(
        &self,
        name: &str,
        call_id: Option<&str>,
        result: &DispatchResult,
        elapsed: Duration,
    ) -> Option<ToolErrorKind> {
        let failure = |error: &ToolError| {
            if let Some(f) = &self.failure {
                f(&ToolFailure {
                    name,
                    call_id,
                    error,
                    elapsed,
                })
            }
            Some(error.kind())
        };
        match result {
            Ok(response) if !response.is_error => {
                if let Some(f) = &self.success {
                    f(&ToolSuccess {
                        name,
                        call_id,
                        response,
                        elapsed,
                    })
                }
                None
            }
            Ok(response) => failure(&ToolError::failed(&response.content)),
            Err(error) => failure(error),
        }
    }
}

impl fmt::Debug for ToolHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolHandler")
            .field("on_start", &self.start.is_some())
            .field("on_success", &self.success.is_some())
            .field("on_error", &self.failure.is_some())
            .finish()
    }
}
