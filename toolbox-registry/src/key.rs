//! `name@module` keys.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A registry key: a tool name and an optional module, written `name@module`.
/// It is the registry's key, never a wire name: no provider accepts `@`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolKey {
    /// The tool's name.
    pub name: String,
    /// The module it was registered under, if any.
    pub module: Option<String>,
}

impl ToolKey {
    /// A key in a module.
    pub fn new(name: impl Into<String>, module: Option<&str>) -> Self {
        ToolKey {
            name: name.into(),
            module: module.map(str::to_owned),
        }
    }

    /// Splits `name@module` (or a bare `name`).
    pub fn parse(key: &str) -> ToolKey {
        match key.rsplit_once('@') {
            Some((name, module)) => ToolKey::new(name, Some(module)),
            None => ToolKey::new(key, None),
        }
    }
}

impl fmt::Display for ToolKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.module {
            Some(module) => write!(f, "{}@{}", self.name, module),
            None => f.write_str(&self.name),
        }
    }
}
