//! The runtime of [toolbox](https://docs.rs/toolbox): tool boxes, the final
//! call lifecycle, and composition.
//!
//! A [`ToolBox`] lists its tools' [`ToolSpecification`]s and runs one by
//! name. Every call goes through [`ToolBoxExt::call`]: `on_start`, the timed
//! raw dispatch inside an `execute_tool` tracing span, panics and
//! cancellation caught, then exactly one of `on_success` / `on_error`.
//! Boxes compose: [`EmptyToolBox`], [`MultiToolBox`] (`{box}_{tool}` names),
//! [`boxes::FilteredToolBox`] (conditions that hide and refuse),
//! [`boxes::TimeoutToolBox`], [`boxes::RecordingToolBox`], and [`FnToolBox`]
//! of closure tools; [`boxes`] holds them all.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use toolbox_core::{tool_fn, Context, MultiToolBox, ToolBoxExt, ToolHandler, FnToolBox};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs {
//!     a: i64,
//!     b: i64,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let math = FnToolBox::new([tool_fn("add", "Adds two integers", |x: AddArgs| async move { x.a + x.b })])?;
//! let tools = MultiToolBox::builder().add("math", math).build()?;
//! let response = tools
//!     .call("math_add", &json!({"a": 40, "b": 2}), &Context::new(), &ToolHandler::empty())
//!     .await;
//! assert_eq!(response.content, "42");
//! # Ok::<(), toolbox_core::DefinitionError>(())
//! # }).unwrap();
//! ```

pub mod args;
pub mod boxes;
mod callers;
pub mod catalog;
pub mod code;
mod content;
mod context;
mod dialect;
pub mod discover;
mod dispatch;
mod echo;
mod error;
mod ext;
mod finite;
mod handler;
mod lifecycle;
mod panic;
mod path;
pub mod provider;
#[doc(hidden)]
pub mod macro_support {
    //! Support for generated code; not a public API.
    pub use crate::private::*;
}

/// The serde, serde_json and schemars the macros generate code for: derive
/// with them (`#[derive(toolbox::serde::Deserialize, toolbox::schemars::JsonSchema)]`
/// with `#[serde(crate = "toolbox::serde")]` and
/// `#[schemars(crate = "toolbox::schemars")]`) to use the same versions
/// without depending on them yourself.
pub use {schemars, serde, serde_json};
mod private;
pub mod program;
mod response;
pub mod schema;
mod span;
mod spec;
pub mod testing;
mod toolbox;
pub mod turn;

/// What a [`ToolHandler`] observes: the start and the
/// one end of every call, and per-tool callbacks for frameworks that want
/// one function per tool.
pub mod events {
    pub use crate::ext::ToolCallback;
    pub use crate::handler::{ToolFailure, ToolStart, ToolSuccess};
}

/// Tool names: the rule every provider accepts, and the closest-name
/// suggestions an unknown name's [`ToolError`] is built with.
pub mod names {
    pub use crate::error::closest_names;
    pub use crate::spec::is_valid_tool_name;
}

pub use args::{Args, Arguments};
pub use boxes::{tool_fn, try_tool_fn, EmptyToolBox, FnToolBox, MultiToolBox};
pub use content::{Content, EmbeddedResource};
pub use context::{CallId, CancellationToken, Context, Extension, FromContext};
pub use dispatch::{BoxFuture, DispatchFuture, DispatchResult};
pub use error::{BoxError, DefinitionError, ToolError, ToolErrorKind};
pub use ext::ToolBoxExt;
pub use handler::ToolHandler;
pub use response::ToolResponse;
pub use spec::{Namespace, TaskSupport, ToolAnnotations, ToolSpecification, ToolUi};
pub use toolbox::{NamedToolBox, ToolBox};
