//! A call's progress, reported by a tool and carried across MCP both ways.

use std::fmt;
use std::sync::Arc;

use toolbox_core::{Context, FromContext, ToolError};

/// One progress report of a running call.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The progress so far; it grows with every report.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening now, for a person.
    pub message: Option<String>,
}

/// Where a call's progress goes.
///
/// A served call whose client asked for progress (a `progressToken` in the
/// request) gets one that sends `notifications/progress` to that client; a
/// proxied call whose [`Context`] holds one asks the remote server for
/// progress and forwards each report to it. Injectable into a tool
/// (`#[inject] progress: McpProgress`): without one in the context, reports
/// go nowhere, so a tool may always report.
///
/// ```
/// use toolbox_core::Context;
/// use toolbox_mcp::{McpProgress, server::Progress};
///
/// let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let ctx = Context::new().with_extension(McpProgress::new(move |p: Progress| {
///     sink.lock().unwrap().push(p.progress);
/// }));
/// let progress = ctx.extension::<McpProgress>().unwrap();
/// progress.report(1.0, Some(2.0), Some("half way"));
/// assert_eq!(*seen.lock().unwrap(), [1.0]);
/// ```
#[derive(Clone, Default)]
pub struct McpProgress {
    sink: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
}

impl McpProgress {
    /// Progress reported to `sink`.
    pub fn new(sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        McpProgress {
            sink: Some(Arc::new(sink)),
        }
    }

    /// Reports progress (and the total, and a message, when known).
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.send(Progress {
            progress,
            total,
            message: message.map(str::to_owned),
        });
    }

    /// Reports one [`Progress`].
    pub fn send(&self, progress: Progress) {
        if let Some(sink) = &self.sink {
            sink(progress);
        }
    }

    /// Whether anyone receives the reports.
    pub fn is_wanted(&self) -> bool {
        self.sink.is_some()
    }
}

impl fmt::Debug for McpProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpProgress")
            .field("wanted", &self.is_wanted())
            .finish()
    }
}

impl FromContext for McpProgress {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(ctx.extension::<McpProgress>().cloned().unwrap_or_default())
    }
}
