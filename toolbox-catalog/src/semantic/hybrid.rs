//! The hybrid ranking: each tool's cosine similarity to the query plus its
//! lexical score, scaled to the best lexical match and weighed by how
//! strong that match is.

use std::collections::HashMap;
use std::sync::Arc;

use super::store::{best, Embeddings, SemanticIndex};
use super::{Embedder, ModelError};
use crate::index::{SearchHit, ToolIndex, ToolSearch};
use toolbox_core::ToolSpecification;

/// The lexical score's weight beside the cosine similarity's 1, by
/// default ([`HybridSearch::with_lexical_weight`]): the best lexical match,
/// when it is a strong one, gains this much. Tuned on the search
/// benchmark's tune part (BENCHMARKS.md).
pub const DEFAULT_LEXICAL_WEIGHT: f32 = 0.5;
/// The largest lexical weight taken; a larger one is read as this (the
/// model's cosines, 0–1, would no longer count).
pub const MAX_LEXICAL_WEIGHT: f32 = 10.0;
/// A lexical match is strong from this share of its query's ceiling on
/// (what a tool matching every word of the query at its rarest term would
/// score); a weaker best match gains in proportion. A word no tool uses
/// does not count in the ceiling.
const STRONG: f32 = 0.3;
/// The share of the lexical weight a query the model read framed as a
/// request (at most 32 words, [`SemanticIndex`]) gives the lexical match:
/// the model reads such a query better. Chosen on the tune data: on the
/// search benchmark's tune part (hybrid recall@1 0.707 → 0.736 at 0.7,
/// 0.729 at 0.6, 0.721 at 0.8), ToolRet's apigen unchanged (its
/// instruction variant, long queries, preferred the full weight).
const FRAMED_SHARE: f32 = 0.7;
/// How deep the lexical list is read.
const DEPTH: usize = 50;

/// Lexical ([`ToolIndex`]) and semantic ([`SemanticIndex`]) rankings fused.
/// Each tool scores its cosine similarity to the query plus
/// `weight` × its lexical score over the best lexical match's × the best
/// match's strength: its score over its query's ceiling (what a tool
/// matching each of the query's words at its rarest indexed form would
/// score) over 0.3, at most 1. A strong match, one that covers the query,
/// counts in full; the best of weak ones (one common word of a long query)
/// counts in proportion, so it does not bury the model's clear first
/// answer. For a short query, which the model reads framed as a request
/// (`I want to …`, [`SemanticIndex`]), the weight is 0.7 × the one set.
/// What a [`Catalog`](crate::Catalog) searches with once
/// it is given a model
/// ([`with_semantic`](crate::Catalog::with_semantic)). A query
/// the model cannot embed is ranked by the lexical index alone.
///
/// It is cheap to clone: the indexes are shared.
#[derive(Clone, Debug)]
pub struct HybridSearch {
    inner: Arc<Indexes>,
    lexical_weight: f32,
}

#[derive(Debug)]
struct Indexes {
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
            inner: Arc::new(Indexes {
                lexical: ToolIndex::new(specs),
                semantic,
                positions,
            }),
            lexical_weight: DEFAULT_LEXICAL_WEIGHT,
        })
    }

    /// The same indexes with the lexical score weighed `weight` beside
    /// the cosine's 1 ([`DEFAULT_LEXICAL_WEIGHT`] by default): 0 ranks by
    /// the model alone (the lexical index still answers a query the model
    /// cannot embed), a larger weight trusts the words more. A weight
    /// below 0 is read as 0, one above [`MAX_LEXICAL_WEIGHT`] as that, and
    /// a NaN as the default.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use toolbox_catalog::semantic::{Embedder, Embeddings, HybridSearch};
    /// # use toolbox_core::ToolSpecification;
    /// let embedder = Arc::new(Embedder::load(".interop/model/all-MiniLM-L6-v2")?);
    /// let mut store = Embeddings::new(&embedder);
    /// let tools = [ToolSpecification::new("get_weather", "Current weather for a city.")];
    /// let search = HybridSearch::new(embedder, &tools, &mut store)?.with_lexical_weight(0.3);
    /// assert_eq!(search.lexical_weight(), 0.3);
    /// # Ok::<(), toolbox_catalog::semantic::ModelError>(())
    /// ```
    pub fn with_lexical_weight(mut self, weight: f32) -> Self {
        self.lexical_weight = lexical_weight(weight);
        self
    }

    /// The lexical score's weight beside the cosine's 1.
    pub fn lexical_weight(&self) -> f32 {
        self.lexical_weight
    }

    /// How many tools were embedded when it was built (the others' vectors
    /// came from the store).
    pub fn embedded(&self) -> usize {
        self.inner.semantic.embedded()
    }

    /// The semantic index inside.
    pub fn semantic(&self) -> &SemanticIndex {
        &self.inner.semantic
    }
}

/// `weight` as a lexical weight is taken: clamped to 0–[`MAX_LEXICAL_WEIGHT`],
/// a NaN read as the default.
pub(crate) fn lexical_weight(weight: f32) -> f32 {
    if weight.is_nan() {
        DEFAULT_LEXICAL_WEIGHT
    } else {
        weight.clamp(0.0, MAX_LEXICAL_WEIGHT)
    }
}

impl ToolSearch for HybridSearch {
    fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let inner = &*self.inner;
        // The lexical search runs beside the query's embedding, on the core
        // the model's small matrix products leave idle.
        let ((lexical, ceiling), scores) = rayon::join(
            || inner.lexical.ranked(query, DEPTH),
            || inner.semantic.similarities(query),
        );
        let Some((mut scores, framed)) = scores else {
            return lexical.into_iter().take(limit).collect();
        };
        let weight = query_weight(self.lexical_weight, framed);
        fuse(
            &mut scores,
            lexical
                .iter()
                .filter_map(|hit| Some((*inner.positions.get(&hit.name)?, hit.score))),
            ceiling,
            weight,
            STRONG,
        );
        best(&scores, limit)
            .into_iter()
            .map(|(i, score)| SearchHit {
                name: inner.semantic.name(i).to_owned(),
                score,
            })
            .collect()
    }
}

/// The lexical weight for one query: the model reads a short query framed
/// as a request better than a long one, and the lexical match counts less
/// beside it.
fn query_weight(weight: f32, framed: bool) -> f32 {
    if framed {
        weight * FRAMED_SHARE
    } else {
        weight
    }
}

/// Adds to each tool's cosine in `scores` its lexical score (`lexical`:
/// place and score, best first) over the best one's, × `weight`, × the
/// best match's strength (its score over `ceiling`, over `strong`, at
/// most 1).
fn fuse(
    scores: &mut [f32],
    lexical: impl Iterator<Item = (usize, f32)>,
    ceiling: f32,
    weight: f32,
    strong: f32,
) {
    let mut lexical = lexical.peekable();
    let Some(&(_, best_lexical)) = lexical.peek() else {
        return;
    };
    let best_lexical = best_lexical.max(f32::EPSILON);
    let strength = (best_lexical / ceiling.max(f32::EPSILON) / strong).min(1.0);
    let scale = weight * strength / best_lexical;
    for (i, score) in lexical {
        if let Some(fused) = scores.get_mut(i) {
            *fused += scale * score;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's ranking of four tools, clear first answer `0`.
    fn cosines() -> Vec<f32> {
        vec![0.62, 0.48, 0.46, 0.45]
    }

    #[test]
    fn a_weak_lexical_match_does_not_bury_the_models_clear_answer() {
        // The best lexical match shares one common word of a long query:
        // 5 of a ceiling of 60.
        let mut scores = cosines();
        fuse(
            &mut scores,
            [(2, 5.0), (3, 4.0)].into_iter(),
            60.0,
            0.5,
            STRONG,
        );
        let first = best(&scores, 1)[0].0;
        assert_eq!(first, 0, "{scores:?}");
        // The same match counted in full, as before: it wins.
        let mut scores = cosines();
        fuse(
            &mut scores,
            [(2, 5.0), (3, 4.0)].into_iter(),
            5.0 * STRONG,
            0.5,
            STRONG,
        );
        assert_eq!(best(&scores, 1)[0].0, 2, "{scores:?}");
    }

    #[test]
    fn a_strong_exact_name_match_still_wins() {
        // The query names tool 3: its score is most of the ceiling.
        let mut scores = cosines();
        fuse(
            &mut scores,
            [(3, 40.0), (1, 9.0)].into_iter(),
            50.0,
            0.5,
            STRONG,
        );
        assert_eq!(best(&scores, 1)[0].0, 3, "{scores:?}");
        // Weight 0: the model alone.
        let mut scores = cosines();
        fuse(&mut scores, [(3, 40.0)].into_iter(), 50.0, 0.0, STRONG);
        assert_eq!(scores, cosines());
    }

    #[test]
    fn a_short_query_weighs_the_lexical_match_less() {
        assert_eq!(query_weight(0.5, false), 0.5);
        assert!((query_weight(0.5, true) - 0.35).abs() < 1e-6);
        assert_eq!(query_weight(0.0, true), 0.0);
    }

    #[test]
    fn weights_are_clamped() {
        assert_eq!(lexical_weight(-1.0), 0.0);
        assert_eq!(lexical_weight(1e9), MAX_LEXICAL_WEIGHT);
        assert_eq!(lexical_weight(f32::NAN), DEFAULT_LEXICAL_WEIGHT);
        assert_eq!(lexical_weight(0.3), 0.3);
    }
}
