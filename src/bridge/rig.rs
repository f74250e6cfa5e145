//! A box's tools as rig tools (feature `rig`; tested with rig-core 0.44
//! without its default features, which needs rustc 1.95, rig's own
//! minimum).
//!
//! [`RigTools`] makes one [`DynamicTool`] (rig's way to add tools at run
//! time) per tool the box offers, with toolbox's schema (lowered for the
//! model's provider when one is named, its calls then normalized as the
//! turn runner does) and toolbox's lifecycle on every call: the handler's
//! `on_start` and exactly one `on_success` / `on_error`, timing, panics
//! caught, the box's decorators (approval, timeouts, conditions) unchanged.
//! A failure reaches rig as a [`ToolExecutionError`] of the matching kind,
//! whose model text is toolbox's.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use toolbox::bridge::rig::RigTools;
//! use toolbox::prelude::*;
//!
//! /// Adds two numbers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let ends = Arc::new(AtomicUsize::new(0));
//! let seen = ends.clone();
//! let handler = ToolHandler::empty().on_success(move |_| { seen.fetch_add(1, Ordering::SeqCst); });
//! let tools = RigTools::new(Arc::new(AddTool)).handler(&handler).build()?;
//!
//! // rig's own entry point runs the tool.
//! let output = tools[0].execute(serde_json::json!({"a": 2, "b": 3})).await?;
//! assert_eq!(output.as_text(), Some("5"));
//! assert_eq!(ends.load(Ordering::SeqCst), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::sync::{Arc, Mutex};

use crate::provider::Provider;
use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolErrorKind as RigKind, ToolExecutionError, ToolOutput};
use toolbox_core::args::ToolCall;
use toolbox_core::{Context, ToolBox, ToolBoxExt, ToolErrorKind, ToolHandler, ToolSpecification};

use super::BridgeError;

/// Builds rig [`DynamicTool`]s from a box: see the [module](self).
pub struct RigTools {
    toolbox: Arc<dyn ToolBox>,
    handler: ToolHandler,
    provider: Option<Provider>,
    context: Context,
}

impl RigTools {
    /// The tools of `toolbox`, called with an empty handler, the original
    /// schemas and an empty context until told otherwise.
    pub fn new(toolbox: Arc<dyn ToolBox>) -> Self {
        RigTools {
            toolbox,
            handler: ToolHandler::empty(),
            provider: None,
            context: Context::new(),
        }
    }

    /// Observes every call with `handler`.
    pub fn handler(mut self, handler: &ToolHandler) -> Self {
        self.handler = handler.clone();
        self
    }

    /// Lowers each schema for the provider rig sends the tools to, and
    /// undoes in each call what lowering changed in meaning
    /// ([`Provider::normalize_call`]), as
    /// [`TurnRunner::provider`](crate::turn::TurnRunner::provider) does.
    pub fn provider(mut self, provider: Provider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The context each call runs in (a copy per call): the tools listed
    /// are those the box offers in it, and `#[inject]`ed parameters read it.
    pub fn context(mut self, context: Context) -> Self {
        self.context = context;
        self
    }

    /// One rig tool per tool the box offers in the context.
    ///
    /// # Errors
    /// [`BridgeError::Provider`] when a schema cannot be lowered for the
    /// provider; [`BridgeError::Convert`] for a tool whose name rig refuses.
    pub fn build(self) -> Result<Vec<DynamicTool>, BridgeError> {
        let shared = Arc::new(Shared {
            toolbox: self.toolbox,
            handler: self.handler,
            provider: self.provider,
            context: self.context,
        });
        shared
            .toolbox
            .specifications(&shared.context)
            .into_iter()
            .map(|spec| tool(&shared, spec))
            .collect()
    }
}

impl std::fmt::Debug for RigTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigTools")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// What every tool's callback holds.
struct Shared {
    toolbox: Arc<dyn ToolBox>,
    handler: ToolHandler,
    provider: Option<Provider>,
    context: Context,
}

fn tool(shared: &Arc<Shared>, spec: ToolSpecification) -> Result<DynamicTool, BridgeError> {
    let parameters = match shared.provider {
        Some(provider) => provider.parameters(&spec)?,
        None => spec.parameters.clone(),
    };
    let name = ToolName::new(spec.name.as_str()).map_err(|error| BridgeError::Convert {
        path: "name".to_owned(),
        target: "rig_core::message::ToolName",
        message: error.to_string(),
    })?;
    let description = spec.description.clone();
    let shared = shared.clone();
    let spec = Arc::new(spec);
    Ok(DynamicTool::new(
        name,
        description,
        parameters,
        move |arguments| {
            let shared = shared.clone();
            let spec = spec.clone();
            Box::pin(async move { run(&shared, &spec, arguments).await })
        },
    ))
}

/// One call through the lifecycle, its failure mapped to rig's kinds.
async fn run(
    shared: &Shared,
    spec: &ToolSpecification,
    arguments: toolbox_core::serde_json::Value,
) -> Result<ToolOutput, ToolExecutionError> {
    let mut call = ToolCall::new(spec.name.as_str(), arguments);
    if let Some(provider) = shared.provider {
        provider.normalize_call(&mut call, spec);
    }
    // The kind of a failure, which the response does not carry.
    let kind = Arc::new(Mutex::new(None));
    let seen = kind.clone();
    let handler = shared.handler.clone().on_error(move |failure| {
        if let Ok(mut kind) = seen.lock() {
            *kind = Some(failure.error.kind());
        }
    });
    let ctx = shared.context.clone();
    let response = shared
        .toolbox
        .call(&spec.name, &call.arguments, &ctx, &handler)
        .await;
    if !response.is_error {
        return Ok(ToolOutput::text(response.content));
    }
    let kind = kind.lock().ok().and_then(|kind| *kind);
    Err(ToolExecutionError::new(rig_kind(kind), response.content))
}

/// rig's kind for a toolbox failure (`Other` for a tool's own error
/// response, which the lifecycle does not report as a failure).
pub fn rig_kind(kind: Option<ToolErrorKind>) -> RigKind {
    match kind {
        Some(ToolErrorKind::UnknownTool | ToolErrorKind::NotAvailable) => RigKind::NotFound,
        Some(ToolErrorKind::InvalidArguments) => RigKind::InvalidArgs,
        Some(ToolErrorKind::TimedOut) => RigKind::Timeout,
        Some(ToolErrorKind::Cancelled) => RigKind::Cancelled,
        Some(ToolErrorKind::Transport) => RigKind::Network,
        Some(ToolErrorKind::Unauthorized) => RigKind::PermissionDenied,
        Some(ToolErrorKind::Configuration) => RigKind::Other,
        Some(ToolErrorKind::Failed | ToolErrorKind::Panicked) | None => RigKind::Other,
        Some(_) => RigKind::Other,
    }
}
