//! Bridges into the Rust LLM clients applications already call models
//! with, each behind its own feature: definitions come out as that crate's
//! tool types, calls are read from its typed responses, results go back as
//! its messages, and every call still passes toolbox's lifecycle.
//!
//! | Module | Feature | Crate (tested version) |
//! |---|---|---|
//! | `async_openai` | `async-openai` | async-openai 0.43 (types only: `chat-completion-types`, `response-types`) |
//! | `genai` | `genai` | genai 0.7 (without its TLS features) |
//! | `rig` | `rig` | rig-core 0.44 (without its default features; needs rustc 1.95, rig's own minimum) |
//!
//! None is in the default build: a program that uses no bridge compiles
//! none of these crates.

#[cfg(feature = "async-openai")]
pub mod async_openai;
#[cfg(feature = "genai")]
pub mod genai;
#[cfg(feature = "rig")]
pub mod rig;

use std::fmt;

use crate::provider::ProviderError;
#[cfg(feature = "async-openai")]
use toolbox_core::{serde::de::DeserializeOwned, serde_json::Value};

/// A value toolbox produced that the other crate's types cannot hold, or
/// a definition that cannot be lowered for the provider.
#[derive(Debug)]
#[non_exhaustive]
pub enum BridgeError {
    /// Lowering the definitions for the provider failed.
    Provider(ProviderError),
    /// The value does not read as the crate's type.
    Convert {
        /// Where in what was converted, e.g. `tools[2]`.
        path: String,
        /// The crate's type, e.g. `async_openai::types::chat::ChatCompletionTools`.
        target: &'static str,
        /// Why it does not read.
        message: String,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::Provider(error) => error.fmt(f),
            BridgeError::Convert {
                path,
                target,
                message,
            } => write!(f, "`{path}` does not read as `{target}`: {message}"),
        }
    }
}

impl std::error::Error for BridgeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BridgeError::Provider(error) => Some(error),
            BridgeError::Convert { .. } => None,
        }
    }
}

impl From<ProviderError> for BridgeError {
    fn from(error: ProviderError) -> Self {
        BridgeError::Provider(error)
    }
}

/// Each element of a JSON array (`tools`, result messages) as `T`, the
/// first that does not read named by its index under `what`.
#[cfg(feature = "async-openai")]
fn each<T: DeserializeOwned>(
    value: &Value,
    what: &str,
    target: &'static str,
) -> Result<Vec<T>, BridgeError> {
    let items = match value {
        Value::Array(items) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| read(item, &format!("{what}[{i}]"), target))
        .collect()
}

/// One value as `T`.
#[cfg(feature = "async-openai")]
fn read<T: DeserializeOwned>(
    value: &Value,
    path: &str,
    target: &'static str,
) -> Result<T, BridgeError> {
    T::deserialize(value).map_err(|error| BridgeError::Convert {
        path: path.to_owned(),
        target,
        message: error.to_string(),
    })
}
