//! The runtime of [toolbox](https://docs.rs/toolbox): tool boxes, the final
//! call lifecycle, and composition.
//!
//! A [`ToolBox`] lists its tools' [`ToolSpecification`]s and runs one by
//! name. Every call goes through [`ToolBoxExt::call`]: `on_start`, the timed
//! raw dispatch inside an `execute_tool` tracing span, panics and
//! cancellation caught, then exactly one of `on_success` / `on_error`.
//! Boxes compose: [`EmptyToolBox`], [`MultiToolBox`] (`{box}_{tool}` names),
//! [`FilteredToolBox`] (conditions that hide and refuse),
//! [`TimeoutToolBox`], and [`ToolSet`] of closure tools.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use toolbox_core::{tool_fn, Context, MultiToolBox, ToolBoxExt, ToolHandler, ToolSet};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs {
//!     a: i64,
//!     b: i64,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let math = ToolSet::new([tool_fn("add", "Adds two integers", |x: AddArgs| async move { x.a + x.b })])?;
//! let tools = MultiToolBox::builder().add("math", math).build()?;
//! let response = tools
//!     .call("math_add", &json!({"a": 40, "b": 2}), &Context::new(), &ToolHandler::empty())
//!     .await;
//! assert_eq!(response.content, "42");
//! # Ok::<(), toolbox_core::DefinitionError>(())
//! # }).unwrap();
//! ```

mod args;
mod call;
mod closure;
mod condition;
mod context;
mod decorate;
mod deferred;
mod dispatch;
mod empty;
mod error;
mod finite;
mod handler;
mod lifecycle;
mod multi;
pub mod provider;
#[doc(hidden)]
pub mod __private {
    //! Support for generated code; not a public API.
    pub use crate::private::*;
}
mod private;
mod record;
mod response;
pub mod schema;
mod spec;
pub mod testing;
mod toolbox;

pub use args::{echo, Arguments, ECHO_LIMIT, MAX_DEPTH};
pub use call::{deserialize_arguments, normalize_arguments, parse_arguments, ToolCall};
pub use closure::{tool_fn, try_tool_fn, FnTool, ToolClosure, ToolSet};
pub use condition::{AlwaysTrue, FilteredToolBox, ToolCondition};
pub use context::{Args, CallId, CancellationToken, Context, Extension, FromContext};
pub use decorate::{with_timeout, ObservedToolBox, TimeoutToolBox};
pub use deferred::{DeferredToolBox, DEFERRED_ANSWER};
pub use dispatch::DispatchFuture;
pub use empty::EmptyToolBox;
pub use error::{closest_names, BoxError, ToolError, ToolErrorKind};
pub use handler::{ToolFailure, ToolHandler, ToolStart, ToolSuccess};
pub use multi::{MultiToolBox, MultiToolBoxBuilder};
pub use record::{
    read_tape, RecordingToolBox, ReplayToolBox, Tape, TapeDefect, TapeEntry, TapeError,
    MAX_TAPE_LINE,
};
pub use response::ToolResponse;
pub use spec::{is_valid_tool_name, ToolAnnotations, ToolSpecification};
pub use toolbox::{BoxFuture, DispatchResult, NamedToolBox, ToolBox, ToolBoxExt, ToolCallback};

/// A box or tool definition that cannot be built, with every problem found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("; "))]
pub struct DefinitionError {
    problems: Vec<String>,
}

impl DefinitionError {
    /// An error listing these problems.
    pub fn new(problems: Vec<String>) -> Self {
        DefinitionError { problems }
    }

    /// Each problem, in the order found.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}
