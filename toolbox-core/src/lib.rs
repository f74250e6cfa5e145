//! The contract of [toolbox](https://docs.rs/toolbox-sdk): tool boxes,
//! their specifications, arguments, responses and errors, the final call
//! lifecycle, and composition. What speaks to models sits in crates above
//! this one (`toolbox-provider`, `toolbox-catalog`, `toolbox-turn`,
//! `toolbox-code`, `toolbox-surface`), all behind the `toolbox` facade.
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
mod content;
mod context;
mod dialect;
pub mod discover;
pub mod dispatch;
mod echo;
mod error;
mod ext;
mod finite;
mod handler;
mod lifecycle;
mod panic;
mod path;
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

/// What the toolbox crates above this one (providers, catalogue, turns,
/// code mode, surface checks) build on beside the public contract: shared
/// helpers, not a public API, no stability promise.
#[doc(hidden)]
pub mod internal {
    pub use crate::args::read::string_text;
    pub use crate::lifecycle::answered;
    pub use crate::lifecycle::refuse;
    pub use crate::path::join;
    pub use crate::response::json_string;

    use serde_json::Value;

    use crate::context::Context;
    use crate::spec::Caller;

    /// The schema a `$ref` inside `root` points at (`#`, `#/$defs/…`,
    /// `#/definitions/…`).
    pub fn resolve_ref<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
        crate::schema::resolve_ref(root, reference)
    }

    /// Whether `schema` (inside `root`) accepts `null`.
    pub fn accepts_null(root: &Value, schema: &Value) -> bool {
        crate::schema::accepts_null(root, schema)
    }

    /// The one value a property's schema allows (`const`, a one-value
    /// `enum`), if it allows one.
    pub fn constant(property: &Value) -> Option<&Value> {
        crate::schema::constant(property)
    }

    /// The context of one call of a turn: `ctx` with the call's id.
    pub fn context_for_call(ctx: &Context, id: &str) -> Context {
        ctx.for_call(id)
    }

    /// Who made a call, read from a provider's `caller` object.
    pub fn caller_from_wire(value: &Value) -> Option<Caller> {
        Caller::from_wire(value)
    }
}
mod response;
pub mod schema;
mod span;
pub mod spec;
mod toolbox;

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
pub use error::{BoxError, DefinitionError, ToolError, ToolErrorKind};
pub use ext::ToolBoxExt;
pub use handler::ToolHandler;
pub use response::ToolResponse;
pub use spec::{ToolAnnotations, ToolSpecification};
pub use toolbox::{NamedToolBox, ToolBox};
