//! Tools kept in files, as an application keeps them: `tools/weather.rs`
//! (free `#[tool]` functions), `tools/crm.rs` (a `#[tool_box]` impl of a
//! `Default` type), `tools/notes.rs` (a `#[tool_box]` module) and
//! `tools/late_addition.rs` (a file added later that no list names). None
//! of them is listed anywhere: `Registry::discover()` finds them all.
//!
//! ```
//! use toolbox::Registry;
//!
//! toolbox_discovery_tests::linked();
//! let registry = Registry::empty();
//! let keys: Vec<String> = registry.discover().unwrap().iter().map(ToString::to_string).collect();
//! assert!(keys.contains(&"get_weather@weather".to_owned()), "{keys:?}");
//! assert!(keys.contains(&"lookup@crm".to_owned()), "{keys:?}");
//! ```

pub mod tools;

/// Uses this crate, so a binary that calls it links it (and with it every
/// tool in it): what a program does anyway when it uses a tool crate.
pub fn linked() {}
