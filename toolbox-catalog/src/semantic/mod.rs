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

/// What a short query is framed in before the model reads it: a request
/// in the first person, as people state tasks.
const QUERY_FRAME: &str = "I want to ";
/// The most words a query is framed at: a longer one (a task stated at
/// length, an instruction before it) is read as written.
const MAX_FRAMED_WORDS: usize = 32;
/// A query's first word that makes it a request in the first person
/// already (`I'm` and `we're` read by the word before the apostrophe;
/// `let` only as `let's`, `let me` or `let us`).
const FIRST_PERSON: [&str; 5] = ["i", "we", "my", "our", "me"];

/// The text the model embeds for a short query (its identifiers already spelled
/// out): a query of at most 32 words framed as a request in the first
/// person ("switch to the staging cluster" → "I want to switch to the
/// staging cluster"); a longer one, or one that opens in the first person
/// ("we expect a spike, …"), as it is. all-MiniLM-L6-v2 reads a bare
/// phrase's few words with little context; framed, it meets the tools'
/// request texts ([`tool_texts`]) better. Chosen on the search
/// benchmark's tune part (the model alone 0.554 / 0.804 / 0.660 → 0.582 /
/// 0.814 / 0.684, recall@1 / recall@5 / MRR; the hybrid's recall@5 0.925
/// → 0.943) and ToolRet's `apigen` (BENCHMARKS.md). `None` when the
/// query is read as it is.
pub(crate) fn framed_query(query: &str) -> Option<String> {
    let mut words = query.split_whitespace();
    let (first, second) = (words.next(), words.clone().next());
    let first_person = first.is_some_and(|first| {
        let first = first
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        let mut parts = first.split(['\'', '\u{2019}']);
        let word = parts.next().unwrap_or_default();
        let contracted = parts.next().is_some();
        FIRST_PERSON.contains(&word)
            || word == "lets"
            || (word == "let"
                && (contracted
                    || second.is_some_and(|next| {
                        next.eq_ignore_ascii_case("me") || next.eq_ignore_ascii_case("us")
                    })))
    });
    if first_person || words.nth(MAX_FRAMED_WORDS - 1).is_some() {
        None
    } else {
        Some(format!("{QUERY_FRAME}{query}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_query_is_framed_as_a_request_and_a_long_one_read_as_written() {
        assert_eq!(
            framed_query("switch to the staging cluster").as_deref(),
            Some("I want to switch to the staging cluster")
        );
        let words = |n: usize| vec!["word"; n].join(" ");
        assert_eq!(
            framed_query(&words(32)),
            Some(format!("I want to {}", words(32)))
        );
        assert_eq!(framed_query(&words(33)), None);
        // Counted as a search counts them: by whitespace.
        assert_eq!(framed_query(&format!(" {}\t", words(33))), None);
        // A request in the first person already is read as it is.
        for query in [
            "we expect a traffic spike, run more copies of the frontend",
            "I'm stuck: why does my pod restart",
            "I\u{2019}d like the weather in Oslo",
            "Let's see the open pull requests",
            "my build is failing",
            "(our) standup notes",
        ] {
            assert_eq!(framed_query(query), None, "{query}");
        }
        // Words that only start like one are not.
        assert_eq!(
            framed_query("mystery novels").as_deref(),
            Some("I want to mystery novels")
        );
        assert_eq!(
            framed_query("users of the team").as_deref(),
            Some("I want to users of the team")
        );
        // Nor is a request to let someone else do something, or the US.
        for query in [
            "let the team know the release is out",
            "US holiday calendar",
        ] {
            assert_eq!(framed_query(query), Some(format!("I want to {query}")));
        }
        for query in [
            "let me know about new preprints",
            "Let us see the logs",
            "lets go",
        ] {
            assert_eq!(framed_query(query), None, "{query}");
        }
    }
}
