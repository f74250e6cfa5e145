//! The observation hook every call reports to.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::callers::Caller;
use crate::dispatch::DispatchResult;
use crate::{args::Arguments, error::ToolError, error::ToolErrorKind, response::ToolResponse};

/// A call is about to run.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolStart<'a> {
    /// The name the tool was called by.
    pub name: &'a str,
    /// The provider's call id, when known.
    pub call_id: Option<&'a str>,
    /// The arguments as the caller sent them (a value or JSON text).
    pub arguments: Arguments<'a>,
    /// Who made the call, when known: code the model wrote (a provider's
    /// code execution, a local code mode) or the model directly.
    pub caller: Option<&'a Caller>,
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
/// Callbacks are held in flat lists (adding one is O(1), however many there
/// are) and each runs with panics caught: a panicking observer is logged
/// and never changes a call's outcome, nor stops the observers after it.
///
/// ```
/// use toolbox_core::ToolHandler;
/// let handler = ToolHandler::empty()
///     .on_start(|e| println!("-> {}", e.name))
///     .on_success(|e| println!("ok {} in {:?}", e.name, e.elapsed))
///     .on_error(|e| println!("!! {}: {}", e.name, e.error.report()));
/// # let _ = handler;
/// ```
#[derive(Clone, Default)]
pub struct ToolHandler {
    start: Option<Arc<Vec<Arc<StartFn>>>>,
    success: Option<Arc<Vec<Arc<SuccessFn>>>>,
    failure: Option<Arc<Vec<Arc<FailureFn>>>>,
}

fn push<F: ?Sized>(list: &mut Option<Arc<Vec<Arc<F>>>>, f: Arc<F>) {
    Arc::make_mut(list.get_or_insert_with(Default::default)).push(f);
}

fn extend<F: ?Sized>(list: &mut Option<Arc<Vec<Arc<F>>>>, other: &Option<Arc<Vec<Arc<F>>>>) {
    if let Some(other) = other {
        Arc::make_mut(list.get_or_insert_with(Default::default)).extend(other.iter().cloned());
    }
}

/// Runs one observer with its panic caught and logged.
fn guard(event: &str, name: &str, f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        let message = crate::panic::panic_text(&*payload);
        tracing::error!(
            tool = %crate::echo::echo(name),
            event,
            panic = %message,
            "a tool call observer panicked; the call's outcome is unchanged"
        );
    }
}

impl ToolHandler {
    /// A handler that observes nothing.
    pub fn empty() -> Self {
        ToolHandler::default()
    }

    /// Adds a callback for call starts, after any already set.
    pub fn on_start(mut self, f: impl Fn(&ToolStart<'_>) + Send + Sync + 'static) -> Self {
        push(&mut self.start, Arc::new(f) as Arc<StartFn>);
        self
    }

    /// Adds a callback for successful calls, after any already set.
    pub fn on_success(mut self, f: impl Fn(&ToolSuccess<'_>) + Send + Sync + 'static) -> Self {
        push(&mut self.success, Arc::new(f) as Arc<SuccessFn>);
        self
    }

    /// Adds a callback for failed calls, after any already set.
    pub fn on_error(mut self, f: impl Fn(&ToolFailure<'_>) + Send + Sync + 'static) -> Self {
        push(&mut self.failure, Arc::new(f) as Arc<FailureFn>);
        self
    }

    /// A handler that runs this one's callbacks, then `other`'s.
    pub fn and(mut self, other: &ToolHandler) -> Self {
        extend(&mut self.start, &other.start);
        extend(&mut self.success, &other.success);
        extend(&mut self.failure, &other.failure);
        self
    }

    /// Whether an end callback (`on_success` / `on_error`) is set: only then
    /// is the elapsed time measured.
    #[inline]
    pub(crate) fn observes_ends(&self) -> bool {
        self.success.is_some() || self.failure.is_some()
    }

    /// Whether any callback is set.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start.is_none() && self.success.is_none() && self.failure.is_none()
    }

    #[inline]
    pub(crate) fn started(&self, event: &ToolStart<'_>) {
        if let Some(list) = &self.start {
            for f in list.iter() {
                guard("on_start", event.name, || f(event));
            }
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
            if let Some(list) = &self.failure {
                let event = ToolFailure {
                    name,
                    call_id,
                    error,
                    elapsed,
                };
                for f in list.iter() {
                    guard("on_error", name, || f(&event));
                }
            }
            Some(error.kind())
        };
        match result {
            Ok(response) if !response.is_error => {
                if let Some(list) = &self.success {
                    let event = ToolSuccess {
                        name,
                        call_id,
                        response,
                        elapsed,
                    };
                    for f in list.iter() {
                        guard("on_success", name, || f(&event));
                    }
                }
                None
            }
            Ok(response) if self.failure.is_some() => {
                failure(&ToolError::failed(&response.content))
            }
            Ok(_) => Some(ToolErrorKind::Failed),
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
