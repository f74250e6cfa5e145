//! The hybrid ranking: each tool's cosine similarity to the query plus its
//! lexical score, scaled to the best lexical match.

use std::collections::HashMap;
use std::sync::Arc;

use super::store::{best, Embeddings, SemanticIndex};
use super::{Embedder, ModelError};
use crate::catalog::{SearchHit, ToolIndex, ToolSearch};
use crate::spec::ToolSpecification;

/// The lexical score's weight (the best lexical match scores this much)
/// beside the cosine similarity's 1. Tuned on the benchmark's tune part,
/// recall@5 first: with each tool's two texts, 0.4–0.58 read 0.929–0.936
/// against 0.925 at 0.3 (recall@1 0.68 against 0.70); 0.5 is the middle
/// of that plateau. (With one text, 0.3 beat 0.1–1.0 and reciprocal rank
/// fusion, k 1–60, weights 0.5–2.)
const LEXICAL_WEIGHT: f32 = 0.5;
/// How deep the lexical list is read.
const DEPTH: usize = 50;

/// Lexical ([`ToolIndex`]) and semantic ([`SemanticIndex`]) rankings fused:
/// each tool scores its cosine similarity to the query plus 0.5 × its
/// lexical score over the best lexical match's. What a [`Catalog`](crate::catalog::Catalog) searches
/// with once it is given a model
/// ([`with_semantic`](crate::catalog::Catalog::with_semantic)). A query the
/// model cannot embed is ranked by the lexical index alone.
#[derive(Debug)]
pub struct HybridSearch {
    lexical: ToolIndex,
    semantic: SemanticIndex,
    /// Each tool's place in the semantic index.
    positions: HashMap<String, usize>,
}

impl HybridSearch {
    /// Both rankings over `specs`, with the vectors in `store` reused and
    /// the missing ones embedded into it (the store keeps what it held for
    /// other tools too: [`Embeddings::retain`] drops it).
    pub fn new(
        embedder: Arc<Embedder>,
        specs: &[ToolSpecification],
        store: &mut Embeddings,
    ) -> Result<Self, ModelError> {
        Self::build(embedder, specs, store, false)
    }

    /// [`new`](Self::new), the store then holding only `specs`' vectors
    /// where `retain` is set.
    pub(crate) fn build(
        embedder: Arc<Embedder>,
        specs: &[ToolSpecification],
        store: &mut Embeddings,
        retain: bool,
    ) -> Result<Self, ModelError> {
        let semantic = SemanticIndex::build(embedder, specs, store, retain)?;
        let positions = (0..semantic.len())
            .map(|i| (semantic.name(i).to_owned(), i))
            .collect();
        Ok(HybridSearch {
            lexical: ToolIndex::new(specs),
            semantic,
            positions,
        })
    }

    /// How many tools were embedded when it was built (the others' vectors
    /// came from the store).
    pub fn embedded(&self) -> usize {
        self.semantic.embedded()
    }

    /// The semantic index inside.
    pub fn semantic(&self) -> &SemanticIndex {
        &self.semantic
    }
}

impl ToolSearch for HybridSearch {
    fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        // The lexical search runs beside the query's embedding, on the core
        // the model's small matrix products leave idle.
        let (lexical, scores) = rayon::join(
            || self.lexical.search(query, DEPTH),
            || self.semantic.similarities(query),
        );
        let Some(mut scores) = scores else {
            return lexical.into_iter().take(limit).collect();
        };
        let best_lexical = lexical.first().map_or(1.0, |h| h.score).max(f32::EPSILON);
        for hit in &lexical {
            if let Some(&i) = self.positions.get(&hit.name) {
                scores[i] += LEXICAL_WEIGHT * hit.score / best_lexical;
            }
        }
        best(&scores, limit)
            .into_iter()
            .map(|(i, score)| SearchHit {
                name: self.semantic.name(i).to_owned(),
                score,
            })
            .collect()
    }
}
