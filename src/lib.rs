//! # toolbox
//!
//! Tool calling for LLM agents in Rust. Put ordinary functions behind a
//! [`ToolBox`], get a correct JSON Schema for each, and run every call
//! through one observable lifecycle: events with timings, an `execute_tool`
//! tracing span with the OpenTelemetry GenAI attributes, panics and timeouts
//! caught, bad arguments answered with the JSON path and the expectation.
//!
//! ```
//! use toolbox::prelude::*;
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first addend.
//!     a: i64,
//!     /// The second addend.
//!     b: i64,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let math = FnToolBox::new([tool_fn("add", "Adds two integers", |x: AddArgs| async move { x.a + x.b })])?;
//! let tools = MultiToolBox::builder().add("math", math).build()?;
//! let handler = ToolHandler::empty().on_success(|e| println!("{} took {:?}", e.name, e.elapsed));
//!
//! let response = tools.call("math_add", &json!({"a": 40, "b": 2}), &Context::new(), &handler).await;
//! assert_eq!(response.content, "42");
//!
//! let response = tools.call("math_add", &json!({"a": "forty"}), &Context::new(), &handler).await;
//! assert!(response.is_error);
//! assert_eq!(response.content, "invalid arguments at `a`: got the string \"forty\", expected an integer");
//! # Ok::<(), toolbox::DefinitionError>(())
//! # }).unwrap();
//! ```

//!
//! With the macros (feature `macros`, on by default), a registry (feature
//! `registry`, on by default) and a provider:
//!
//! ```
//! use serde_json::json;
//! use toolbox::prelude::*;
//! use toolbox::provider::Provider;
//!
//! #[derive(Default)] // discovery builds boxes with `Default`
//! struct Crm;
//!
//! /// Customer records.
//! #[tool_box]
//! impl Crm {
//!     /// Gets a customer by id.
//!     #[tool(read_only)]
//!     fn get_customer(
//!         &self,
//!         /// The customer's id.
//!         id: u32,
//!     ) -> Result<String, String> {
//!         if id == 42 { Ok("Ada Lovelace".into()) } else { Err(format!("no customer {id}")) }
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! registry.scan(Crm)?;
//! let agent = registry.resolve(["get_customer@crm", "now"])?;
//!
//! let definitions = Provider::Anthropic { strict: true }.definitions(&agent.specifications(&Context::new()))?;
//! assert_eq!(definitions[0]["input_schema"]["properties"]["id"]["description"], "The customer's id. {minimum: 0}");
//!
//! let response = agent.call("get_customer", &json!({"id": 42}), &Context::new(), &ToolHandler::empty()).await;
//! assert_eq!(response.content, "Ada Lovelace");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

pub use toolbox_core::*;

// The contract's names kept at this root as they always were (the core
// crate files them under `dispatch` and `spec`).
pub use toolbox_core::dispatch::{BoxFuture, DispatchFuture, DispatchResult};
pub use toolbox_core::spec::{Namespace, TaskSupport, ToolUi};

// The crates above the core at the paths they had as its modules, inlined
// so each page shows the crate's own documentation (its guide, tables and
// examples), as the core's module pages did.
#[doc(inline)]
pub use toolbox_catalog as catalog;
#[doc(inline)]
pub use toolbox_code as code;
#[doc(inline)]
pub use toolbox_provider as provider;
#[doc(inline)]
pub use toolbox_provider::program;
#[doc(inline)]
pub use toolbox_surface as testing;
#[doc(inline)]
pub use toolbox_turn as turn;

#[doc(hidden)]
pub mod macro_support {
    //! Support for generated code; not a public API.
    pub use toolbox_core::macro_support::*;
    pub use toolbox_surface::macro_support::*;
}

/// One tool call as a provider or an MCP client sends it (also
/// `toolbox::args::ToolCall` and in the prelude).
pub use toolbox_core::args::ToolCall;

#[cfg(feature = "macros")]
pub use toolbox_macros::{tool, tool_box};

/// The registry: `name@module` keys, O(1) lookup, lazy resolution, core tools.
#[cfg(feature = "registry")]
pub mod registry {
    pub use toolbox_registry::*;
}
#[cfg(feature = "registry")]
pub use toolbox_registry::Registry;

/// MCP both ways, on rmcp: servers as boxes, boxes as servers.
#[cfg(feature = "mcp")]
pub mod mcp {
    pub use toolbox_mcp::*;
}

#[cfg(any(feature = "async-openai", feature = "genai", feature = "rig"))]
pub mod bridge;

/// The guide: the pages of `docs/` and the README, whose Rust examples are
/// compiled and run as doc tests, so none can rot.
#[cfg(all(any(doc, doctest), feature = "macros", feature = "registry"))]
pub mod guide {
    #[doc = include_str!("../README.md")]
    pub mod readme {}
    #[doc = include_str!("../docs/lifecycle.md")]
    pub mod lifecycle {}
    #[doc = include_str!("../docs/boxes.md")]
    pub mod boxes {}
    #[doc = include_str!("../docs/context.md")]
    pub mod context {}
    #[doc = include_str!("../docs/macros.md")]
    pub mod macros {}
    #[doc = include_str!("../docs/errors.md")]
    pub mod errors {}
    #[doc = include_str!("../docs/registry.md")]
    pub mod registry {}
    #[doc = include_str!("../docs/providers.md")]
    pub mod providers {}
    #[doc = include_str!("../docs/code.md")]
    pub mod code {}
    #[doc = include_str!("../docs/testing.md")]
    pub mod testing {}
    #[doc = include_str!("../docs/ci.md")]
    pub mod ci {}
    #[doc = include_str!("../docs/reliability.md")]
    pub mod reliability {}
    #[doc = include_str!("../docs/comparison.md")]
    pub mod comparison {}
    #[cfg(feature = "mcp")]
    #[doc = include_str!("../docs/mcp.md")]
    pub mod mcp {}
}

/// The names most programs need: `use toolbox::prelude::*;`.
pub mod prelude {
    pub use toolbox_core::{
        args::ToolCall, boxes::TimeoutToolBox, tool_fn, try_tool_fn, CallId, Context,
        DefinitionError, FnToolBox, FromContext, MultiToolBox, ToolBox, ToolBoxExt, ToolError,
        ToolErrorKind, ToolHandler, ToolResponse,
    };

    #[cfg(feature = "macros")]
    pub use toolbox_macros::{tool, tool_box};

    #[cfg(feature = "registry")]
    pub use toolbox_registry::{Registry, RegistryError};
}
