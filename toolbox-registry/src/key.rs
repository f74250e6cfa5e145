//! `name@module` keys, and the entry each registered key names.

use std::fmt;
use std::sync::Arc;

use toolbox_core::ToolBox;

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

/// What names a registered tool: a `name@module` or bare `name` string
/// (`&str`, `String`), or a [`ToolKey`], so the keys a registry hands out
/// go straight back into it.
///
/// ```
/// use toolbox_registry::Registry;
///
/// let registry = Registry::new();
/// // Everything registered (here the built-in `now@core`), by its keys.
/// let every = registry.resolve(registry.keys()).unwrap();
/// # let _ = every;
/// ```
pub trait KeyRef {
    /// The key as `name@module` or `name`.
    fn key_text(&self) -> std::borrow::Cow<'_, str>;
}

impl<T: AsRef<str> + ?Sized> KeyRef for T {
    fn key_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Borrowed(self.as_ref())
    }
}

impl KeyRef for ToolKey {
    fn key_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(self.to_string())
    }
}

impl KeyRef for &ToolKey {
    fn key_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(self.to_string())
    }
}

/// One registered tool: its key and the box that serves it.
pub(crate) struct Entry {
    pub(crate) key: ToolKey,
    pub(crate) full_key: String,
    pub(crate) source: Arc<dyn ToolBox>,
    /// The tool's name inside `source`.
    pub(crate) tool: String,
}
