//! Semantic tool search (feature `semantic`): a sentence-transformers model
//! run on the CPU in pure Rust (candle for the BERT forward pass,
//! `tokenizers` for the word pieces), tool embeddings kept by what was
//! embedded and saved to a file the application names, and the hybrid
//! ranking that fuses it with the lexical [`ToolIndex`](super::ToolIndex).
//!
//! The model is a directory the application gives: `config.json`,
//! `tokenizer.json`, `model.safetensors` and, where it has one,
//! `1_Pooling/config.json` (mean pooling without it). Nothing is fetched:
//! no network at run time, no Python, no C++ runtime.

mod embed;
mod hybrid;
mod store;

use std::path::{Path, PathBuf};

pub use embed::Embedder;
pub(crate) use hybrid::lexical_weight;
pub use hybrid::{HybridSearch, DEFAULT_LEXICAL_WEIGHT, MAX_LEXICAL_WEIGHT};
pub use store::{Embeddings, SemanticIndex};

/// Why a model could not be loaded or run, or an embeddings file read.
/// Each names the file and what was wrong with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A file the model directory must have is not there (or cannot be read).
    #[error("the model directory `{dir}` has no readable `{file}` ({source}); a sentence-transformers directory holds config.json, tokenizer.json and model.safetensors")]
    Missing {
        /// The model directory.
        dir: PathBuf,
        /// The file, relative to it.
        file: &'static str,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// A file is there but is not what it should be: a truncated tensor, a
    /// tensor of the wrong shape, a configuration that does not parse.
    #[error("`{path}` is not a valid {what}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What it should be.
        what: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The model failed on an input.
    #[error("embedding failed: {0}")]
    Inference(String),
    /// The embedder's threads could not be started.
    #[error("the embedder's threads ({}) could not be started: {reason}", threads.map_or("as many as the CPUs".to_owned(), |n| n.to_string()))]
    Threads {
        /// How many were asked for (`None`: the default count).
        threads: Option<usize>,
        /// Why they could not be started.
        reason: String,
    },
    /// An embeddings file could not be read or written.
    #[error("the embeddings file `{path}`: {reason}")]
    Embeddings {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

impl ModelError {
    fn invalid(path: &Path, what: &'static str, reason: impl std::fmt::Display) -> Self {
        ModelError::Invalid {
            path: path.to_owned(),
            what,
            reason: reason.to_string(),
        }
    }
}

/// How many texts of each tool are embedded ([`tool_texts`]).
pub(crate) const VIEWS: usize = 2;

/// What a tool's embeddings are computed from, a tool scoring the better
/// of the two:
///
/// - its name as words, its title, and its description's opening (the
///   model reads 256 word pieces at most);
/// - its description's first sentence as a request ("please list the
///   files in a directory"): people state tasks as requests, and one
///   sentence is not blurred by the rest of a long description. On the
///   search benchmark's tune part this lifted the model alone from 0.504
///   / 0.750 (recall@1 / recall@5) to 0.539 / 0.793, and the hybrid from
///   0.675 / 0.921 to 0.696 / 0.925.
pub(crate) fn tool_texts(spec: &toolbox_core::ToolSpecification) -> [String; VIEWS] {
    let name = spec
        .name
        .strip_prefix(
            spec.namespace
                .as_ref()
                .map(|n| format!("{}_", n.name))
                .as_deref()
                .unwrap_or(""),
        )
        .unwrap_or(&spec.name)
        .replace(['_', '-'], " ");
    let mut text = name.clone();
    if let Some(namespace) = &spec.namespace {
        text = format!("{} {text}", namespace.name);
    }
    if let Some(title) = &spec.title {
        text.push_str(": ");
        text.push_str(title);
    }
    text.push_str(". ");
    text.extend(spec.description.trim().chars().take(600));
    let first = spec
        .description
        .trim()
        .split_inclusive(['.', '\n'])
        .map(str::trim)
        .find(|sentence| !sentence.is_empty())
        .map(|sentence| sentence.trim_end_matches('.'))
        .filter(|sentence| !sentence.is_empty())
        .unwrap_or(&name);
    let mut chars = first.chars();
    let request = match chars.next() {
        Some(initial) => format!("please {}{}", initial.to_lowercase(), chars.as_str()),
        None => "please".to_owned(),
    };
    [text, request]
}
