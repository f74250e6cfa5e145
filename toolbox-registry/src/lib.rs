//! The toolbox registry: tools under `name@module` keys, found by an O(1)
//! two-step lookup, resolved lazily into a [`ToolBox`](toolbox_core::ToolBox)
//! for one request, with built-in core tools.
//!
//! ```
//! use toolbox_core::{tool_fn, FnToolBox};
//! use toolbox_registry::{Registry, RegistryError};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::new();
//! let crm = FnToolBox::new([tool_fn("get", "Gets a customer", |_: ()| async { "Ada" })])?;
//! let orders = FnToolBox::new([tool_fn("get", "Gets an order", |_: ()| async { "#1" })])?;
//! registry.register_box(crm, "crm")?;
//! registry.register_box(orders, "orders")?;
//!
//! assert_eq!(registry.get("get@crm")?.key().to_string(), "get@crm");
//! assert_eq!(
//!     registry.get("get").unwrap_err().to_string(),
//!     "`get` is ambiguous: it is registered as `get@crm` and `get@orders`; ask for one of them"
//! );
//!
//! // One request's tools, under provider-safe names (`@` never goes on the wire).
//! let tools = registry.resolve(["get@crm", "get@orders", "now"])?;
//! let names: Vec<&str> = tools.routes().map(|(exposed, _)| exposed).collect();
//! assert_eq!(names, ["crm_get", "orders_get", "now"]);
//! # Ok(()) }
//! ```

mod core_tools;
mod error;
#[cfg(any(test, feature = "http-get"))]
mod http_get;
mod key;
mod registry;
mod resolve;

pub use core_tools::{iso8601_utc, HttpGetOptions};
pub use error::RegistryError;
pub use key::{KeyRef, ToolKey};
pub use registry::{DiscoveredTool, RegisteredTool, Registry};
pub use resolve::{LiveResolution, ResolvedToolBox};
