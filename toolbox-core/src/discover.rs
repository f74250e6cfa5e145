//! Tools that register themselves: every `#[tool]` function and every
//! buildable `#[tool_box]` (a module, or an impl block of a type that is
//! `Default` or names a constructor with `register = path`) submits an
//! entry at link time, with its module path and source location. The
//! registry's `discover()` and `scan_module(..)` turn them into keys.
//!
//! The mechanism is `inventory`: link-time constructors on Linux, macOS,
//! Windows and WebAssembly. What it asks of a program: a tool is found
//! when the object it is compiled into is linked. Tools of the binary
//! itself always are; a library crate's tools are once the binary uses
//! anything of that crate (a `use my_tools as _;` line is enough). Without
//! the `discovery` feature nothing is submitted.

use std::sync::Arc;

use crate::toolbox::ToolBox;

/// One item that registered itself.
#[derive(Debug)]
pub struct Discovered {
    /// `module_path!()` where the item is.
    pub module_path: &'static str,
    /// The box's name (`#[tool_box]`), or the tool's (`#[tool]`).
    pub name: &'static str,
    /// The module its keys get: the box's name, or for a free function
    /// the last segment of its module path, unless `#[tool(module = "…")]`
    /// says otherwise.
    pub module: &'static str,
    /// `file!()`.
    pub file: &'static str,
    /// `line!()`.
    pub line: u32,
    /// Builds the box, or says it cannot be built without arguments.
    pub build: fn() -> Option<Arc<dyn ToolBox>>,
}

impl Discovered {
    /// Where the item is written, `file:line`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// Whether the item is under the module path `prefix`, segment-wise:
    /// `app::tools` takes `app::tools` and `app::tools::crm`, not
    /// `app::toolsmith`.
    pub fn is_under(&self, prefix: &str) -> bool {
        let prefix = prefix.trim_end_matches("::");
        self.module_path == prefix
            || self
                .module_path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with("::"))
    }
}

#[cfg(feature = "discovery")]
inventory::collect!(Discovered);

/// Every item in the program that registered itself, by module path, then
/// name: the same order whatever the link order.
pub fn discovered() -> Vec<&'static Discovered> {
    #[cfg(feature = "discovery")]
    let mut all: Vec<&'static Discovered> = inventory::iter::<Discovered>.into_iter().collect();
    #[cfg(not(feature = "discovery"))]
    let mut all: Vec<&'static Discovered> = Vec::new();
    all.sort_by(|a, b| {
        (a.module_path, a.name, a.file, a.line).cmp(&(b.module_path, b.name, b.file, b.line))
    });
    all
}

/// The module a free function's keys get by default: the last segment of
/// its module path.
pub const fn last_segment(module_path: &'static str) -> &'static str {
    let bytes = module_path.as_bytes();
    let mut i = bytes.len();
    while i > 1 {
        if bytes[i - 1] == b':' && bytes[i - 2] == b':' {
            let (_, tail) = bytes.split_at(i);
            return match std::str::from_utf8(tail) {
                Ok(tail) => tail,
                Err(_) => module_path,
            };
        }
        i -= 1;
    }
    module_path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_match_segment_wise() {
        let entry = Discovered {
            module_path: "app::tools::crm",
            name: "crm",
            module: "crm",
            file: "src/tools/crm.rs",
            line: 3,
            build: || None,
        };
        assert!(entry.is_under("app"));
        assert!(entry.is_under("app::tools"));
        assert!(entry.is_under("app::tools::"));
        assert!(entry.is_under("app::tools::crm"));
        assert!(!entry.is_under("app::tool"));
        assert!(!entry.is_under("app::tools::crm::inner"));
        assert_eq!(last_segment("app::tools::weather"), "weather");
        assert_eq!(last_segment("app"), "app");
    }
}
