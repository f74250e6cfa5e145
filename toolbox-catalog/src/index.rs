//! The search index over a catalogue's tools: BM25F over the words of each
//! tool's name, namespace, description and parameters.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::entity::{entities, kind_words};
use super::lexicon::{STOP_WORDS, SYNONYMS};
use toolbox_core::ToolSpecification;

/// One tool a search found, best first.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// How well it matched (higher is better; comparable within one search).
    pub score: f32,
}

/// Finds tools for a query. [`ToolIndex`] is the built-in ranking; an
/// application may plug its own (an embedding search) into a
/// [`Catalog`](super::Catalog) with
/// [`with_search`](super::Catalog::with_search).
pub trait ToolSearch: Send + Sync {
    /// The best `limit` tools for `query`, best first; names only of tools
    /// the search was built over.
    fn search(&self, query: &str, limit: usize) -> Vec<SearchHit>;
}

/// How much a word counts where it was found.
const NAME: f32 = 2.0;
const TITLE: f32 = 2.0;
const NAMESPACE: f32 = 1.5;
const PARAMETER: f32 = 1.5;
const DESCRIPTION: f32 = 1.0;
const NAMESPACE_DESCRIPTION: f32 = 0.4;
const PARAMETER_DESCRIPTION: f32 = 0.5;
/// A query word that only starts an indexed word counts this much.
const PREFIX: f32 = 0.25;
/// The most words of a URL's site name a query's terms take.
const MAX_SITE_WORDS: usize = 4;
/// The most words of a tool's name the name cover reads (a legal name,
/// 64 bytes, has at most 32).
const MAX_NAME_WORDS: usize = 32;
/// BM25's saturation and length normalisation.
const K1: f32 = 1.5;
const B: f32 = 0.75;
/// How deep parameter names and descriptions are read.
const MAX_SCHEMA_DEPTH: usize = 4;

/// The most bytes of a query a search reads: a tool is described in a few
/// words, and a longer query is cut here (the catalogue's `search_tools`
/// and the code mode's `search()` refuse it, see [`check_query`]).
pub const MAX_QUERY_BYTES: usize = 1024;
/// The most words of a query a search reads: room for a request with its
/// instructions ("You are given a user request; find the tool ..."), which
/// come first and would leave the request itself past a shorter bound.
pub const MAX_QUERY_WORDS: usize = 64;
/// The longest query word tried as a compound of two indexed words.
const MAX_COMPOUND: usize = 40;
/// The most postings one search reads for prefix matches (`repo` for
/// `repository`), all its words together: a catalogue whose every tool
/// holds every word, each the start of 16 longer ones, made a 64-word
/// search read 17 lists of every tool for each word (33 ms over 4,000
/// tools). An ordinary search reads a few thousand.
const MAX_PREFIX_POSTINGS: usize = 1 << 17;

/// Whether `query` is within what a search reads ([`MAX_QUERY_BYTES`],
/// [`MAX_QUERY_WORDS`]); if not, a text the model can act on.
///
/// ```
/// use toolbox_catalog::check_query;
/// assert!(check_query("send an email").is_ok());
/// let refused = check_query(&"x".repeat(5000)).unwrap_err();
/// assert!(refused.starts_with("the query is 5000 bytes; a search reads at most 1024"));
/// ```
pub fn check_query(query: &str) -> Result<(), String> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(format!(
            "the query is {} bytes; a search reads at most {MAX_QUERY_BYTES}: say what the tool should do in a few words",
            query.len()
        ));
    }
    let count = query.split_whitespace().count();
    if count > MAX_QUERY_WORDS {
        return Err(format!(
            "the query has {count} words; a search reads at most {MAX_QUERY_WORDS}: say what the tool should do in a few words"
        ));
    }
    Ok(())
}

/// `text` cut to at most `max` bytes, at a character boundary.
#[doc(hidden)]
pub fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A BM25F index over tool specifications: built once, updated as tools
/// are added or removed, searched in well under a millisecond for ten
/// thousand tools.
///
/// ```
/// use toolbox_catalog::{ToolIndex, ToolSearch};
/// use toolbox_core::ToolSpecification;
/// let index = ToolIndex::new(&[
///     ToolSpecification::new("get_weather", "Current weather for a city."),
///     ToolSpecification::new("create_issue", "Open an issue in a repository."),
/// ]);
/// assert_eq!(index.search("open a new github issue", 1)[0].name, "create_issue");
/// ```
#[derive(Clone, Debug, Default)]
pub struct ToolIndex {
    /// Each term's postings: (document, weighted term frequency).
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// The vocabulary, sorted, for prefix matches.
    terms: Vec<String>,
    /// Each document's tool name, `None` once removed.
    names: Vec<Option<String>>,
    /// Each tool's document.
    slots: HashMap<String, u32>,
    /// Each document's terms, so that removing it reads only its postings.
    doc_terms: Vec<Vec<String>>,
    /// Each document's turn among equal matches: the order tools came in.
    order: Vec<u64>,
    next_order: u64,
    /// Each document's weighted length.
    lengths: Vec<f32>,
    /// Each document's name, as search words (at most
    /// [`MAX_NAME_WORDS`]), each with its [`word_hash`].
    name_words: Vec<Vec<(u64, String)>>,
    /// The slots of removed tools, taken again by the next tools added, so
    /// that replacing tools does not grow the index or its searches.
    free: Vec<u32>,
    live: usize,
    total_length: f32,
}

impl ToolIndex {
    /// An index over `specs` (of two tools of one name, the later).
    pub fn new<'s>(specs: impl IntoIterator<Item = &'s ToolSpecification>) -> Self {
        let mut index = ToolIndex::default();
        for spec in specs {
            let turn = index.forget(&spec.name).map(|(turn, _)| turn);
            index.add(spec, turn);
        }
        index.terms = index.postings.keys().cloned().collect();
        index.terms.sort_unstable();
        tracing::debug!(target: "toolbox::catalog", tools = index.live, "lexical index built");
        index
    }

    /// Adds a tool (a tool of the same name is replaced, and keeps its
    /// place among equally good matches). It costs the postings of the
    /// replaced tool's words and, when words come or go, a pass over the
    /// vocabulary: not a sort of it, nor a read of every posting.
    pub fn insert(&mut self, spec: &ToolSpecification) {
        let (turn, gone) = self.forget(&spec.name).unzip();
        self.drop_terms(gone.unwrap_or_default());
        let mut fresh = self.add(spec, turn);
        if !fresh.is_empty() {
            fresh.sort_unstable();
            let old = std::mem::take(&mut self.terms);
            let mut merged = Vec::with_capacity(old.len() + fresh.len());
            let mut fresh = fresh.into_iter().peekable();
            for term in old {
                while let Some(new) = fresh.next_if(|new| *new < term) {
                    merged.push(new);
                }
                merged.push(term);
            }
            merged.extend(fresh);
            self.terms = merged;
        }
        self.shrink();
    }

    /// Removes a tool; whether it was there. Its slot is taken by the next
    /// tool added, and the words only it used are forgotten. It costs the
    /// postings of its words and, when words are forgotten, a pass over
    /// the vocabulary.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some((_, gone)) = self.forget(name) else {
            return false;
        };
        self.drop_terms(gone);
        self.shrink();
        true
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether it holds no tool.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Takes a tool out of the postings (its terms left empty are dropped
    /// from them, not yet from the vocabulary); if it was there, its turn
    /// and those terms.
    fn forget(&mut self, name: &str) -> Option<(u64, Vec<String>)> {
        let doc = self.slots.remove(name)?;
        let slot = doc as usize;
        self.names[slot] = None;
        self.name_words[slot] = Vec::new();
        self.live -= 1;
        self.total_length -= self.lengths[slot];
        self.lengths[slot] = 0.0;
        if self.live == 0 {
            // No rounding left behind in the average length.
            self.total_length = 0.0;
        }
        let mut gone = Vec::new();
        for term in std::mem::take(&mut self.doc_terms[slot]) {
            if let Some(postings) = self.postings.get_mut(&term) {
                postings.retain(|(d, _)| *d != doc);
                if postings.is_empty() {
                    self.postings.remove(&term);
                    gone.push(term);
                }
            }
        }
        self.free.push(doc);
        Some((self.order[slot], gone))
    }

    /// The vocabulary without `gone`, the words no tool uses any longer:
    /// one pass beside them, both sorted.
    fn drop_terms(&mut self, mut gone: Vec<String>) {
        if gone.is_empty() {
            return;
        }
        gone.sort_unstable();
        let mut gone = gone.iter().peekable();
        self.terms.retain(|term| {
            while gone.next_if(|g| *g < term).is_some() {}
            gone.next_if(|g| *g == term).is_none()
        });
    }

    /// Memory given back once most of it is unused (a tool of a million
    /// words removed).
    fn shrink(&mut self) {
        if self.postings.capacity() > 4 * self.postings.len().max(64) {
            self.postings.shrink_to_fit();
        }
        if self.terms.capacity() > 4 * self.terms.len().max(64) {
            self.terms.shrink_to_fit();
        }
    }

    /// Indexes a tool in a free slot, at `turn` among equal matches (a new
    /// turn if `None`); the terms it brings to the vocabulary.
    fn add(&mut self, spec: &ToolSpecification, turn: Option<u64>) -> Vec<String> {
        let doc = self.free.pop().unwrap_or(self.names.len() as u32);
        let mut weights: HashMap<String, f32> = HashMap::new();
        let mut length = 0.0;
        let mut field = |text: &str, weight: f32| {
            for word in words(text) {
                *weights.entry(word).or_default() += weight;
                length += weight;
            }
        };
        field(&spec.name, NAME);
        if let Some(title) = &spec.title {
            field(title, TITLE);
        }
        field(&spec.description, DESCRIPTION);
        if let Some(namespace) = &spec.namespace {
            field(&namespace.name, NAMESPACE);
            field(&namespace.description, NAMESPACE_DESCRIPTION);
        }
        parameters(&spec.parameters, 0, &mut field);
        let mut fresh = Vec::new();
        let mut terms = Vec::with_capacity(weights.len());
        for (term, weight) in weights {
            match self.postings.get_mut(&term) {
                Some(postings) => postings.push((doc, weight)),
                None => {
                    self.postings.insert(term.clone(), vec![(doc, weight)]);
                    fresh.push(term.clone());
                }
            }
            terms.push(term);
        }
        let name_words: Vec<(u64, String)> = words(&spec.name)
            .into_iter()
            .take(MAX_NAME_WORDS)
            .map(|w| (word_hash(&w), w))
            .collect();
        let turn = turn.unwrap_or_else(|| {
            self.next_order += 1;
            self.next_order
        });
        let slot = doc as usize;
        if slot == self.names.len() {
            self.names.push(Some(spec.name.clone()));
            self.name_words.push(name_words);
            self.lengths.push(length);
            self.doc_terms.push(terms);
            self.order.push(turn);
        } else {
            self.names[slot] = Some(spec.name.clone());
            self.name_words[slot] = name_words;
            self.lengths[slot] = length;
            self.doc_terms[slot] = terms;
            self.order[slot] = turn;
        }
        self.slots.insert(spec.name.clone(), doc);
        self.live += 1;
        self.total_length += length;
        fresh
    }

    /// A word no tool uses, cut into two words tools do (`flowchart` →
    /// `flow` + `chart`), the longer first half first.
    /// Words longer than 40 bytes are not tried: no two indexed words make
    /// them, and each split costs the word's length.
    fn compound<'w>(&self, word: &'w str) -> Option<(&'w str, &'w str)> {
        if word.len() < 6 || word.len() > MAX_COMPOUND || !word.is_ascii() {
            return None;
        }
        (3..=word.len() - 3)
            .rev()
            .map(|at| word.split_at(at))
            .find(|(left, right)| {
                self.postings.contains_key(*left) && self.postings.contains_key(*right)
            })
    }

    /// The postings of `term` (with `true`: the word itself), and of the
    /// indexed words it starts, each with the weight of its match, while
    /// the prefix matches' `budget` of postings lasts.
    fn matches<'i>(
        &'i self,
        term: &str,
        budget: &mut usize,
        mut each: impl FnMut(&'i [(u32, f32)], f32, bool),
    ) {
        if let Some(postings) = self.postings.get(term) {
            each(postings, 1.0, true);
        }
        if term.len() < 3 {
            return;
        }
        let start = self.terms.partition_point(|t| t.as_str() <= term);
        for longer in self.terms[start..]
            .iter()
            .take_while(|t| t.starts_with(term))
            .take(16)
        {
            let postings = &self.postings[longer];
            let Some(left) = budget.checked_sub(postings.len()) else {
                *budget = 0;
                return;
            };
            *budget = left;
            each(postings, PREFIX, false);
        }
    }
}

impl ToolIndex {
    /// The terms of `query` by unit (an identifier it names, then a word
    /// of it), each with its weight.
    fn query_units(&self, query: &str) -> Vec<Vec<(String, f32)>> {
        // Bounded whatever the caller passes: the first bytes and words.
        let (rest, found) = entities(clip(query, MAX_QUERY_BYTES));
        let mut asked = words(&rest);
        asked.truncate(MAX_QUERY_WORDS);
        let mut units: Vec<Vec<(String, f32)>> = Vec::with_capacity(asked.len() + found.len());
        for entity in found.into_iter().take(MAX_QUERY_WORDS) {
            let mut terms: Vec<(String, f32)> = kind_words(entity.kind)
                .iter()
                .map(|w| (stem(w), ENTITY))
                .collect();
            if let Some(site) = &entity.site {
                // A site's name is a few words; a hostile URL's is not.
                let site = words(site).into_iter().take(MAX_SITE_WORDS);
                terms.extend(site.map(|w| (w, 1.0)));
            }
            units.push(terms);
        }
        for word in asked {
            let mut terms = Vec::new();
            let known = self.postings.contains_key(&word);
            let weight = if known { SYNONYM } else { 1.0 };
            for synonym in synonyms(&word) {
                terms.push((stem(synonym), weight));
            }
            if !known {
                if let Some((left, right)) = self.compound(&word) {
                    terms.push((left.to_owned(), COMPOUND));
                    terms.push((right.to_owned(), COMPOUND));
                }
            }
            terms.push((word, 1.0));
            units.push(terms);
        }
        units
    }

    /// The best `limit` documents for `query` with their scores, best
    /// first, and the query's ceiling: what a tool matching each of its
    /// units at its rarest term would score (before the name cover and the
    /// coverage), the measure of how strong a match is.
    pub(crate) fn ranked(&self, query: &str, limit: usize) -> (Vec<SearchHit>, f32) {
        if self.live == 0 || limit == 0 {
            return (Vec::new(), 0.0);
        }
        let units = self.query_units(query);
        let docs = self.live as f32;
        let idf = |n: usize| ((docs - n as f32 + 0.5) / (n as f32 + 0.5) + 1.0).ln();
        let ceiling: f32 = units
            .iter()
            .map(|unit| {
                unit.iter()
                    .filter_map(|(t, w)| self.postings.get(t).map(|p| w * idf(p.len())))
                    .fold(0.0, f32::max)
            })
            .sum::<f32>()
            * (K1 + 1.0);
        let units_asked = units.len();
        // Each term once, at its highest weight, with the units it stands
        // for: a bit each for the first 64 units (a query's identifiers
        // come first, then its words), which the coverage reads. A word
        // asked twice is two units: a request that repeats a word (an
        // instruction and its query) means it more.
        let counted = units_asked.min(64);
        let mut terms: Vec<(String, f32, u64)> = units
            .into_iter()
            .enumerate()
            .flat_map(|(at, unit)| {
                let bit = 1u64.checked_shl(at as u32).unwrap_or(0);
                unit.into_iter()
                    .map(move |(term, weight)| (term, weight, bit))
            })
            .collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        terms.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.2 |= later.2;
            }
            same
        });
        let average = (self.total_length / docs).max(f32::EPSILON);
        let mut scores = vec![0f32; self.names.len()];
        // Which of the query's units each tool's text holds.
        let mut held = vec![0u64; self.names.len()];
        let mut budget = MAX_PREFIX_POSTINGS;
        for (term, term_weight, bits) in &terms {
            self.matches(term, &mut budget, |postings, weight, exact| {
                let weight = weight * term_weight;
                let idf = idf(postings.len());
                for &(doc, tf) in postings {
                    let norm = K1 * (1.0 - B + B * self.lengths[doc as usize] / average);
                    scores[doc as usize] += weight * idf * tf * (K1 + 1.0) / (tf + norm);
                }
                // Held where the tool's own text says it: a word of its
                // name, title, description or a parameter's name weighs at
                // least a description word; one only in its namespace's
                // description or a parameter's weighs less. A prefix match
                // holds nothing. (A second pass over the list: in the loop
                // above, the check cost more than it saves, 1.20x against
                // 1.14x the instructions of a search without the coverage.)
                if exact && *bits != 0 {
                    for &(doc, tf) in postings {
                        if tf >= DESCRIPTION {
                            held[doc as usize] |= bits;
                        }
                    }
                }
            });
        }
        // A tool whose name the query covers (`create` and `directory`
        // of `create_directory` for "make a folder") is what was asked for.
        // Each name word is looked up among the query's terms by its hash
        // (a long query's terms are many, and so are the tools it scores),
        // the words compared only with the terms of that hash.
        let mut asked: Vec<(u64, &str)> = terms
            .iter()
            .map(|(t, ..)| (word_hash(t), t.as_str()))
            .collect();
        asked.sort_unstable();
        let hashes: Vec<u64> = asked.iter().map(|(h, _)| *h).collect();
        let is_asked = |hash: u64, word: &str| {
            let Ok(at) = hashes.binary_search(&hash) else {
                return false;
            };
            let from = hashes[..at].partition_point(|h| *h < hash);
            asked[from..]
                .iter()
                .take_while(|(h, _)| *h == hash)
                .any(|(_, t)| *t == word)
        };
        let mut hits: Vec<(u32, f32)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(d, s)| {
                let name = &self.name_words[d];
                let covered = name.iter().filter(|(hash, w)| is_asked(*hash, w)).count();
                let cover = covered as f32 / name.len().max(units_asked).max(1) as f32;
                // A tool that holds more of what was asked is what was
                // asked for, however rare its one matching word.
                let coverage = held[d].count_ones() as f32 / counted.max(1) as f32;
                (
                    d as u32,
                    *s * (1.0 + NAME_COVER * cover) * (1.0 + COVERAGE * coverage),
                )
            })
            .collect();
        // Equal scores in the order the tools came in (a replaced tool
        // keeps its turn).
        let by_score = |a: &(u32, f32), b: &(u32, f32)| {
            b.1.total_cmp(&a.1)
                .then(self.order[a.0 as usize].cmp(&self.order[b.0 as usize]))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, by_score);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(by_score);
        let hits = hits
            .into_iter()
            .filter_map(|(doc, score)| {
                Some(SearchHit {
                    name: self.names[doc as usize].clone()?,
                    score,
                })
            })
            .collect();
        (hits, ceiling)
    }
}

impl ToolSearch for ToolIndex {
    fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.ranked(query, limit).0
    }
}

/// Reads the property names and descriptions of a schema.
fn parameters(schema: &Value, depth: usize, field: &mut impl FnMut(&str, f32)) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if depth > 0 {
        if let Some(text) = object.get("description").and_then(Value::as_str) {
            field(text, PARAMETER_DESCRIPTION);
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            field(name, PARAMETER);
            parameters(property, depth + 1, field);
        }
    }
    if let Some(items) = object.get("items") {
        parameters(items, depth + 1, field);
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = object.get(keyword).and_then(Value::as_array) {
            for branch in branches {
                parameters(branch, depth + 1, field);
            }
        }
    }
}

/// A query word's synonym counts this much (in full when the word
/// itself is not in any tool's text: the synonym is all there is).
const SYNONYM: f32 = 0.7;
/// Each half of a query word split into two indexed words (`flowchart`).
const COMPOUND: f32 = 0.8;
/// Each word an identifier stands for (`ABC-123`: issue, ticket …).
const ENTITY: f32 = 0.7;
/// How much a tool gains when the query covers its name's words.
const NAME_COVER: f32 = 1.0;
/// How much a tool gains when its text holds every unit of the query (a
/// word, or an identifier it names), in proportion to the share it holds:
/// BM25 alone lets one rare word outweigh the rest of the request.
/// Chosen on the tune data (ToolRet's `apigen`, the search benchmark's
/// tune part), 1 to 5 within a point of each other there.
const COVERAGE: f32 = 2.0;

/// The synonyms of a query word (by its stem), from a table of the
/// lexicon's stems built once.
fn synonyms(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    static BY_STEM: OnceLock<HashMap<String, Vec<&'static str>>> = OnceLock::new();
    let by_stem = BY_STEM.get_or_init(|| {
        let mut by_stem: HashMap<String, Vec<&'static str>> = HashMap::new();
        for (said, meant) in SYNONYMS {
            by_stem
                .entry(stem(said))
                .or_default()
                .extend(meant.iter().copied());
        }
        by_stem
    });
    by_stem.get(word).into_iter().flatten().copied()
}

/// A search word's 64-bit FNV-1a hash: how a name's words are looked up
/// among a query's terms.
fn word_hash(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The search words of a text: lower case, split at anything but a letter
/// or digit and at camelCase humps, stop words dropped, plurals and verb
/// endings cut (`issues` → `issue`, `created` → `creat`, `creating` → `creat`).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let lower = word.to_lowercase();
            if lower.chars().count() > 1 && !STOP_WORDS.contains(&lower.as_str()) {
                out.push(stem(&lower));
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                flush(&mut word, &mut out);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            word.push(c);
        } else {
            previous_lower = false;
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Words ending in `s` the stemmer leaves whole: cut, they would be
/// another word.
const NOT_PLURALS: &[&str] = &["news"];

/// A light English stemmer: enough that a query's word form meets the
/// tool's (`list files` finds `list_file`).
fn stem(word: &str) -> String {
    // A word whose `s` is not a plural's, and whose cut form is another
    // word (`news` is not `new`).
    if NOT_PLURALS.contains(&word) {
        return word.to_owned();
    }
    let cut = |suffix: &str, min: usize| {
        word.strip_suffix(suffix)
            .filter(|stem| stem.chars().count() >= min)
    };
    let mut stem = word;
    if let Some(cut) = cut("ies", 2) {
        return format!("{cut}y");
    }
    for (suffix, min) in [("ing", 3), ("ed", 3), ("es", 3), ("s", 3)] {
        if let Some(cut) = cut(suffix, min) {
            if suffix == "s" && (cut.ends_with('s') || cut.ends_with('u')) {
                break;
            }
            if suffix == "es" && !["s", "x", "z", "ch", "sh"].iter().any(|e| cut.ends_with(e)) {
                continue;
            }
            stem = cut;
            break;
        }
    }
    // `create`, `creates` and `created` meet at `creat`.
    match stem.strip_suffix('e') {
        Some(cut) if cut.chars().count() >= 3 => cut.to_owned(),
        _ => stem.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_split_names_and_cut_endings() {
        assert_eq!(words("list_open_orders"), ["list", "open", "order"]);
        assert_eq!(words("getCustomerById"), ["customer", "id"]);
        assert_eq!(words("Creating issues"), words("created issue"));
        assert_eq!(words("the repositories"), ["repository"]);
        assert_eq!(words("branches"), ["branch"]);
    }

    #[test]
    fn parameters_and_prefixes_count() {
        let index = ToolIndex::new(&[
            ToolSpecification::new("fetch", "Fetches a URL.").with_parameters(json!({
                "type": "object",
                "properties": {"url": {"type": "string", "description": "The address to download"}}
            })),
            ToolSpecification::new("read_file", "Reads a file from disk."),
        ]);
        assert_eq!(index.search("download a page", 2)[0].name, "fetch");
        assert_eq!(index.search("read", 2)[0].name, "read_file");
        // `repo` starts `repository`.
        let index = ToolIndex::new(&[
            ToolSpecification::new("fork", "Forks a repository."),
            ToolSpecification::new("now", "The time."),
        ]);
        assert_eq!(index.search("repo", 5).len(), 1);
    }

    #[test]
    fn news_is_not_new() {
        assert_eq!(words("the latest news"), ["latest", "news"]);
        let index = ToolIndex::new(&[
            ToolSpecification::new("web_search", "Search the web."),
            ToolSpecification::new("create_issue", "Open an issue in a repository."),
        ]);
        // `news` means the web; `new` means making something, not searching.
        assert_eq!(index.search("latest news on rust", 1)[0].name, "web_search");
        let hits = index.search("make a new issue", 5);
        assert_eq!(hits[0].name, "create_issue");
        assert!(hits.iter().all(|h| h.name != "web_search"), "{hits:?}");
    }

    #[test]
    fn the_tool_holding_more_of_the_request_wins() {
        let index = ToolIndex::new(&[
            ToolSpecification::new("rename_file", "Rename a file."),
            ToolSpecification::new(
                "alter_table",
                "Alter a table: add, drop or rename a column, or change its type.",
            ),
            ToolSpecification::new("create_table", "Create a table with columns."),
            ToolSpecification::new("drop_table", "Drop a table."),
            ToolSpecification::new(
                "describe_table",
                "Describe a table's columns and their types.",
            ),
            ToolSpecification::new("query_table", "Run a query against a table."),
            ToolSpecification::new("insert_rows", "Insert rows into a table."),
        ]);
        // `rename` is the rarest word asked, and the file tool's short
        // text holds little else: by BM25 alone it came first (2.46
        // against 2.27). The table tool holds `rename`, `column` and
        // `table`, three of the five words.
        let hits = index.search("rename the price column in the sales table", 2);
        assert_eq!(hits[0].name, "alter_table", "{hits:?}");
        assert_eq!(hits[1].name, "rename_file", "{hits:?}");
        // Asked for a file, the file tool still comes first.
        assert_eq!(index.search("rename the file", 1)[0].name, "rename_file");
    }

    #[test]
    fn what_a_namespace_says_is_not_what_its_tools_hold() {
        // Every tool of `crm` has its namespace's words at a low weight;
        // held there, they would lift a meeting tool over the email tool
        // for a request to send an email.
        let crm = toolbox_core::spec::Namespace::new(
            "crm",
            "Customer records: contacts, deals, notes, meetings, emails and tasks for each account.",
        );
        let mut specs: Vec<ToolSpecification> = [
            ("list_deals", "List the open deals."),
            ("add_note", "Add a note to a record."),
            ("log_meeting", "Log a meeting."),
            ("get_contact", "Get a contact."),
        ]
        .into_iter()
        .map(|(name, description)| {
            ToolSpecification::new(name, description).with_namespace(crm.clone())
        })
        .collect();
        specs.push(ToolSpecification::new(
            "send_email",
            "Send an email to a recipient.",
        ));
        let index = ToolIndex::new(&specs);
        let hits = index.search("send an email to the contact about the meeting notes", 2);
        assert_eq!(hits[0].name, "send_email", "{hits:?}");
    }

    #[test]
    fn asking_to_be_told_is_not_asking_to_post() {
        // "tell me" asks for information: the lexicon no longer reads
        // `tell` as posting a message (it hurt on ToolRet's apibank and
        // apigen, BENCHMARKS.md).
        let index = ToolIndex::new(&[
            ToolSpecification::new("post_message", "Post a message to a channel."),
            ToolSpecification::new("query_history_today", "Events that happened on a date."),
        ]);
        let hits = index.search("can you tell me what happened on april 21", 5);
        assert_eq!(hits[0].name, "query_history_today", "{hits:?}");
        assert!(hits.iter().all(|h| h.name != "post_message"), "{hits:?}");
        // Asking to post still finds the posting tool.
        let hits = index.search("post a message saying hi", 1);
        assert_eq!(hits[0].name, "post_message");
    }

    #[test]
    fn a_users_words_reach_the_tools_words() {
        let index = ToolIndex::new(&[
            ToolSpecification::new("create_directory", "Creates a directory."),
            ToolSpecification::new("generate_flow_diagram", "Draws a flow diagram of steps."),
            ToolSpecification::new("call_graph", "The functions called by a function."),
            ToolSpecification::new("list_processes", "Lists running processes."),
        ]);
        // `folder` and `make` are in no tool's text: their synonyms count
        // in full, and the tool whose name they cover comes first.
        assert_eq!(
            index.search("make a folder called backups", 1)[0].name,
            "create_directory"
        );
        // A word no tool uses, cut into two that tools do.
        assert_eq!(
            index.search("a flowchart of the approval", 1)[0].name,
            "generate_flow_diagram"
        );
        // One-letter words and fillers find nothing.
        assert!(index
            .search("could you please do a thing for me", 5)
            .is_empty());
        assert_eq!(words("what's a b c"), Vec::<String>::new());
    }

    #[test]
    fn identifiers_point_at_products_not_words() {
        let index = ToolIndex::new(&[
            ToolSpecification::new("API-retrieve-a-block", "Retrieve a block of a Notion page."),
            ToolSpecification::new("jira_create_issue_link", "Link two Jira issues."),
            ToolSpecification::new("slack_post_message", "Post a message to a Slack channel."),
            ToolSpecification::new("post_comment", "Post a comment on a pull request."),
            ToolSpecification::new("format_range", "Format cells of an Excel spreadsheet."),
            ToolSpecification::new("read_config", "Read the server's config."),
            ToolSpecification::new("fetch", "Fetch a web page by its URL."),
        ]);
        let first = |query: &str| index.search(query, 1)[0].name.clone();
        // `API-10` is an issue key, not the word `api`; nor is `block` of
        // a key's text what matters.
        assert_eq!(
            first("mark that API-10 blocks API-12"),
            "jira_create_issue_link"
        );
        assert_eq!(
            first("drop a note in #general: office closed"),
            "slack_post_message"
        );
        assert_eq!(first("bold header row in data.xlsx"), "format_range");
        assert_eq!(first("what's at https://example.com/a"), "fetch");
        // A file's name is not a word of the query.
        assert!(index
            .search("config.yaml", 5)
            .iter()
            .all(|h| h.name != "read_config"));
    }

    #[test]
    fn removed_tools_are_not_found() {
        let mut index = ToolIndex::new(&[
            ToolSpecification::new("a_tool", "Sends mail."),
            ToolSpecification::new("b_tool", "Sends mail too."),
        ]);
        assert!(index.remove("a_tool"));
        assert!(!index.remove("a_tool"));
        let hits = index.search("mail", 5);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].name, "b_tool");
        index.insert(&ToolSpecification::new("a_tool", "Sends mail."));
        assert_eq!(index.search("mail", 5).len(), 2);
        assert_eq!(index.len(), 2);
    }

    #[test]
    fn replacing_a_tool_again_and_again_does_not_grow_the_index() {
        let mut index = ToolIndex::new(&[
            ToolSpecification::new("send_mail", "Sends mail."),
            ToolSpecification::new("post_mail", "Sends mail."),
        ]);
        assert_eq!(index.search("mail", 2)[0].name, "send_mail");
        for round in 0..1_000 {
            index.insert(&ToolSpecification::new(
                "send_mail",
                format!("Sends mail. word{round}"),
            ));
        }
        // Two slots and the words the two tools use now, not a slot and a
        // word for every version ever inserted.
        assert_eq!(index.names.len(), 2);
        assert_eq!(index.len(), 2);
        assert!(index.postings.contains_key("word999"));
        assert!(!index.postings.contains_key("word998"));
        assert_eq!(index.terms.len(), index.postings.len());
        // A replaced tool keeps its place among equally good matches.
        index.insert(&ToolSpecification::new("send_mail", "Sends mail."));
        assert_eq!(index.search("mail", 2)[0].name, "send_mail");
        // A removed tool's slot is taken by the next tool added.
        assert!(index.remove("post_mail"));
        index.insert(&ToolSpecification::new("read_mail", "Reads mail."));
        assert_eq!(index.names.len(), 2);
        assert_eq!(index.search("read", 1)[0].name, "read_mail");
        // A word only a removed tool used is no longer half of a compound.
        index.insert(&ToolSpecification::new("flow_tool", "A flow."));
        index.insert(&ToolSpecification::new("chart_tool", "A chart."));
        assert_eq!(index.search("flowchart", 5).len(), 2);
        assert!(index.remove("chart_tool"));
        assert_eq!(index.names.len(), 4);
        for name in ["send_mail", "read_mail", "flow_tool"] {
            assert!(index.remove(name));
        }
        assert!(index.is_empty());
        assert!(index.search("mail", 5).is_empty());
        assert!(index.postings.is_empty() && index.terms.is_empty());
    }

    /// The vocabulary is what the postings hold, sorted, once.
    fn vocabulary_is_sound(index: &ToolIndex) {
        let mut keys: Vec<&String> = index.postings.keys().collect();
        keys.sort_unstable();
        assert_eq!(index.terms.iter().collect::<Vec<_>>(), keys);
    }

    #[test]
    fn equal_matches_keep_the_order_the_tools_came_in() {
        let mail = |name: &str| ToolSpecification::new(name, "Sends mail.");
        let order = |index: &ToolIndex| -> Vec<String> {
            index
                .search("mail", 5)
                .into_iter()
                .map(|h| h.name)
                .collect()
        };
        let mut index = ToolIndex::new(&[mail("a"), mail("b"), mail("c")]);
        assert!(index.remove("b") && index.remove("c"));
        index.insert(&mail("b"));
        index.insert(&mail("c"));
        assert_eq!(order(&index), ["a", "b", "c"]);
        // A new tool comes after the tools already there, whichever slot it
        // takes; a replaced one keeps its turn.
        assert!(index.remove("a"));
        index.insert(&mail("d"));
        assert_eq!(order(&index), ["b", "c", "d"]);
        index.insert(&mail("b"));
        assert_eq!(order(&index), ["b", "c", "d"]);
        vocabulary_is_sound(&index);
    }

    #[test]
    fn of_two_tools_of_one_name_the_index_keeps_the_later() {
        let mut index = ToolIndex::new(&[
            ToolSpecification::new("dup", "old alpha"),
            ToolSpecification::new("dup", "new beta"),
        ]);
        assert_eq!(index.len(), 1);
        assert!(index.search("alpha", 5).is_empty());
        assert_eq!(index.search("beta", 5).len(), 1);
        vocabulary_is_sound(&index);
        assert!(index.remove("dup"));
        assert!(index.is_empty());
        assert!(index.search("beta", 5).is_empty());
    }

    #[test]
    fn inserting_and_removing_keep_the_vocabulary_sorted() {
        let mut index = ToolIndex::new(&[ToolSpecification::new("m_tool", "middle words")]);
        for (name, text) in [
            ("a_tool", "apple zebra"),
            ("z_tool", "aardvark middle zzz"),
            ("m_tool", "mango"),
            ("b_tool", "banana apple"),
        ] {
            index.insert(&ToolSpecification::new(name, text));
            vocabulary_is_sound(&index);
        }
        assert!(index.remove("a_tool"));
        vocabulary_is_sound(&index);
        assert_eq!(index.search("zeb", 5).len(), 0);
        assert_eq!(index.search("aard", 5)[0].name, "z_tool");
    }

    #[test]
    fn hostile_names_and_urls_are_read_only_so_far() {
        let long_name = vec!["word"; 5_000].join("_");
        let index = ToolIndex::new(&[ToolSpecification::new(long_name.as_str(), "A tool.")]);
        assert_eq!(index.name_words[0].len(), MAX_NAME_WORDS);
        let roots: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        let url = format!("https://{}.com/", roots.join("-"));
        assert!(check_query(&url).is_ok());
        let terms: usize = index.query_units(&url).iter().map(Vec::len).sum();
        assert!(terms < 16, "{terms} terms");
    }
}
