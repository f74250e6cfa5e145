//! Tool embeddings: computed once, keyed by what was embedded, saved to and
//! loaded from a file the application names; and the semantic index that
//! ranks tools by cosine similarity to the query's embedding.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::embed::{fnv, Embedder, FNV_START};
use super::{tool_texts, ModelError, VIEWS};
use crate::index::{clip, SearchHit, ToolSearch, MAX_QUERY_BYTES};
use toolbox_core::ToolSpecification;

/// The key of a vector: the fingerprint of the text embedded.
fn text_key(text: &str) -> u64 {
    fnv(FNV_START, text.as_bytes())
}

/// The first bytes of an embeddings file.
const MAGIC: &[u8; 16] = b"toolbox-embed-1\n";

/// Tool embeddings by the fingerprint of the text embedded, for one model:
/// a restart, or a server that lists its tools again, embeds only what
/// changed. Each tool has two texts embedded (its description, and its
/// first sentence as a request), so two vectors. A catalogue keeps in it
/// only the vectors of the tools it serves ([`retain`](Self::retain)).
///
/// The file is binary: a header naming the model's fingerprint and the
/// vector length, then each entry's key and vector, little-endian.
#[derive(Clone, Debug)]
pub struct Embeddings {
    model: u64,
    dimensions: usize,
    vectors: HashMap<u64, Vec<f32>>,
}

impl Embeddings {
    /// No embeddings yet, for `embedder`'s model.
    pub fn new(embedder: &Embedder) -> Self {
        Embeddings {
            model: embedder.fingerprint(),
            dimensions: embedder.dimensions(),
            vectors: HashMap::new(),
        }
    }

    /// The embeddings saved in `path` for `embedder`'s model.
    ///
    /// A file that does not exist yet, or that holds another model's
    /// vectors, gives none (the tools are embedded again). A damaged file
    /// (not an embeddings file, cut short, vectors of the wrong length or
    /// not of unit length) does not stop a start either: it is read as
    /// empty, with a warning naming it and what was wrong, and the next
    /// [`save`](Self::save) replaces it. Only a file that exists but
    /// cannot be read (permissions, a directory) is an error naming it.
    pub fn load(path: impl AsRef<Path>, embedder: &Embedder) -> Result<Self, ModelError> {
        let path = path.as_ref();
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::new(embedder)),
            Err(e) => {
                return Err(ModelError::Embeddings {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })
            }
        };
        match Self::parse(&bytes, embedder) {
            Ok(Some(store)) => Ok(store),
            Ok(None) => {
                tracing::info!(target: "toolbox::catalog", path = %path.display(), "the embeddings file holds another model's vectors; the tools are embedded again");
                Ok(Self::new(embedder))
            }
            Err(problem) => {
                tracing::warn!(target: "toolbox::catalog", path = %path.display(), %problem, "the embeddings file is damaged and is read as empty; the tools are embedded again");
                Ok(Self::new(embedder))
            }
        }
    }

    /// The embeddings an embeddings file's bytes hold: `None` for another
    /// model's, an error saying what is wrong for a damaged file.
    fn parse(bytes: &[u8], embedder: &Embedder) -> Result<Option<Self>, String> {
        if !bytes.starts_with(MAGIC) && !MAGIC.starts_with(bytes) {
            return Err("not a toolbox embeddings file".to_owned());
        }
        if bytes.len() < 32 {
            return Err(format!(
                "cut short: {} bytes, not a whole header",
                bytes.len()
            ));
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let (model, dimensions) = (word(16), word(24));
        if model != embedder.fingerprint() {
            return Ok(None);
        }
        if dimensions != embedder.dimensions() as u64 {
            return Err(format!(
                "its vectors have {dimensions} numbers; the model's have {}",
                embedder.dimensions()
            ));
        }
        let dimensions = embedder.dimensions();
        let entry = 8 + 4 * dimensions;
        let body = &bytes[32..];
        if !body.len().is_multiple_of(entry) {
            return Err(format!(
                "cut short: {} bytes after the header, not a whole number of {entry}-byte entries",
                body.len()
            ));
        }
        let mut vectors = HashMap::with_capacity(body.len() / entry);
        for (i, chunk) in body.chunks_exact(entry).enumerate() {
            let key = u64::from_le_bytes(chunk[..8].try_into().unwrap_or([0; 8]));
            let vector: Vec<f32> = chunk[8..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            // Every vector saved is of unit length (or zero): anything else
            // is not what was written.
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if !(norm == 0.0 || (norm - 1.0).abs() < 1e-3) {
                return Err(format!("entry {i}'s vector is not of unit length ({norm})"));
            }
            vectors.insert(key, vector);
        }
        Ok(Some(Embeddings {
            model,
            dimensions,
            vectors,
        }))
    }

    /// Saves the embeddings to `path`: written whole to a new temporary
    /// file in the same directory, flushed to disk and renamed over it, so
    /// a reader sees the old file or the new one, never part of one, and
    /// no other file is touched. An existing file keeps its permissions.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        let path = path.as_ref();
        let mut bytes = Vec::with_capacity(32 + self.vectors.len() * (8 + 4 * self.dimensions));
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&self.model.to_le_bytes());
        bytes.extend_from_slice(&(self.dimensions as u64).to_le_bytes());
        let mut keys: Vec<&u64> = self.vectors.keys().collect();
        keys.sort_unstable();
        for key in keys {
            bytes.extend_from_slice(&key.to_le_bytes());
            for x in &self.vectors[key] {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let write = || -> std::io::Result<()> {
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            file.write_all(&bytes)?;
            if let Ok(existing) = std::fs::metadata(path) {
                file.as_file().set_permissions(existing.permissions())?;
            }
            file.as_file().sync_all()?;
            file.persist(path).map_err(|e| e.error)?;
            Ok(())
        };
        write().map_err(|e| ModelError::Embeddings {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Keeps `vector` as `spec`'s embedding, for vectors computed elsewhere
    /// (a batch job, another process with the same model): an index built
    /// with this store uses it for each of the tool's texts instead of
    /// embedding the tool (a text two tools share keeps the vector given
    /// last). The vector is scaled to unit length; one of the wrong length
    /// is refused.
    pub fn insert(&mut self, spec: &ToolSpecification, vector: Vec<f32>) -> Result<(), ModelError> {
        if vector.len() != self.dimensions {
            return Err(ModelError::Inference(format!(
                "the vector for tool `{}` has {} numbers; the model's have {}",
                spec.name,
                vector.len(),
                self.dimensions
            )));
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        let vector = if norm > 0.0 {
            vector.into_iter().map(|x| x / norm).collect()
        } else {
            vector
        };
        for text in tool_texts(spec) {
            self.vectors.insert(text_key(&text), vector.clone());
        }
        Ok(())
    }

    /// Keeps only the vectors of `specs`' texts, dropping what was embedded
    /// for tools no longer served (removed, or described differently), so
    /// the store and the file it is saved to hold what is in use.
    /// [`Catalog::with_semantic`](crate::Catalog::with_semantic)
    /// does this itself; an application that shares one store between
    /// several indexes retains the union of their tools.
    pub fn retain<'s>(&mut self, specs: impl IntoIterator<Item = &'s ToolSpecification>) {
        let keys = specs
            .into_iter()
            .flat_map(|spec| tool_texts(spec).map(|text| text_key(&text)))
            .collect();
        self.retain_keys(&keys);
    }

    fn retain_keys(&mut self, keys: &HashSet<u64>) {
        self.vectors.retain(|key, _| keys.contains(key));
    }

    /// How many vectors it holds (two a tool, fewer where two tools'
    /// texts are the same).
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }
}

/// Tools ranked by the cosine similarity of their embedding to the query's.
/// The query's identifiers are embedded as the words of what they are
/// (`can WEB-77 go to Done` as `can issue WEB-77 go to Done`, `data.xlsx`
/// as `spreadsheet`, `#general` as `channel`): the model would read their
/// pieces as words. A query of at most 32 words is then framed as a
/// request, `I want to …` (`switch to the staging cluster`), unless it
/// opens in the first person already (`we need …`, `let me …`): the model
/// pools a bare phrase's few words poorly.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolbox_catalog::semantic::{Embedder, Embeddings, SemanticIndex};
/// use toolbox_catalog::ToolSearch;
/// use toolbox_core::ToolSpecification;
/// let embedder = Arc::new(Embedder::load("models/all-MiniLM-L6-v2")?);
/// let tools = [ToolSpecification::new("create_pull_request", "Opens a pull request.")];
/// let mut saved = Embeddings::load("tools.embeddings", &embedder)?;
/// let index = SemanticIndex::with_embeddings(embedder, &tools, &mut saved)?;
/// saved.save("tools.embeddings")?;
/// assert_eq!(index.search("propose my change for review", 1)[0].name, "create_pull_request");
/// # Ok::<(), toolbox_catalog::semantic::ModelError>(())
/// ```
pub struct SemanticIndex {
    embedder: Arc<Embedder>,
    names: Vec<String>,
    /// Every tool's unit vectors (one a text, [`VIEWS`] a tool), one after
    /// another, each number scaled to an `i8` by its vector's scale: a
    /// query reads a quarter of the bytes (10,000 tools: 7.7 MB, not 30.7
    /// MB, streamed past the model's weights), and a similarity moves by
    /// under 0.002.
    vectors: Vec<i8>,
    /// Each vector's scale: its largest magnitude over 127.
    scales: Vec<f32>,
    embedded: usize,
}

impl std::fmt::Debug for SemanticIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticIndex")
            .field("tools", &self.names.len())
            .field("embedder", &self.embedder)
            .finish()
    }
}

impl SemanticIndex {
    /// An index over `specs`, each embedded now.
    pub fn new<'s>(
        embedder: Arc<Embedder>,
        specs: impl IntoIterator<Item = &'s ToolSpecification>,
    ) -> Result<Self, ModelError> {
        let mut store = Embeddings::new(&embedder);
        Self::with_embeddings(embedder, specs, &mut store)
    }

    /// An index over `specs` that takes each tool's vectors from `store`
    /// where the same text was embedded before, embeds the others and adds
    /// them to `store` (save it to keep them). The store keeps what it
    /// held for other tools too ([`Embeddings::retain`] drops it).
    pub fn with_embeddings<'s>(
        embedder: Arc<Embedder>,
        specs: impl IntoIterator<Item = &'s ToolSpecification>,
        store: &mut Embeddings,
    ) -> Result<Self, ModelError> {
        Self::build(embedder, specs, store, false)
    }

    /// [`with_embeddings`](Self::with_embeddings), the store then holding
    /// only `specs`' vectors where `retain` is set.
    pub(super) fn build<'s>(
        embedder: Arc<Embedder>,
        specs: impl IntoIterator<Item = &'s ToolSpecification>,
        store: &mut Embeddings,
        retain: bool,
    ) -> Result<Self, ModelError> {
        if store.model != embedder.fingerprint() {
            *store = Embeddings::new(&embedder);
        }
        let tools: Vec<(String, [String; VIEWS])> = specs
            .into_iter()
            .map(|s| (s.name.clone(), tool_texts(s)))
            .collect();
        let keys: Vec<[u64; VIEWS]> = tools
            .iter()
            .map(|(_, texts)| texts.each_ref().map(|text| text_key(text)))
            .collect();
        // Each text missing from the store, once (two tools may share one).
        let mut missing: HashMap<u64, &str> = HashMap::new();
        let mut embedded = 0;
        for ((_, texts), keys) in tools.iter().zip(&keys) {
            let mut new = false;
            for (text, key) in texts.iter().zip(keys) {
                if !store.vectors.contains_key(key) {
                    missing.insert(*key, text);
                    new = true;
                }
            }
            embedded += usize::from(new);
        }
        let (new_keys, texts): (Vec<u64>, Vec<&str>) = missing.into_iter().unzip();
        for (key, vector) in new_keys.into_iter().zip(embedder.embed(&texts)?) {
            store.vectors.insert(key, vector);
        }
        let mut vectors = Vec::with_capacity(tools.len() * VIEWS * embedder.dimensions());
        let mut scales = Vec::with_capacity(tools.len() * VIEWS);
        for ((name, _), keys) in tools.iter().zip(&keys) {
            for key in keys {
                let vector = store.vectors.get(key).ok_or_else(|| {
                    ModelError::Inference(format!("the model gave no vector for tool `{name}`"))
                })?;
                scales.push(quantize(vector, &mut vectors));
            }
        }
        if retain {
            store.retain_keys(&keys.iter().flatten().copied().collect());
        }
        Ok(SemanticIndex {
            embedder,
            names: tools.into_iter().map(|(name, _)| name).collect(),
            vectors,
            scales,
            embedded,
        })
    }

    /// How many tools were embedded when it was built (the others came
    /// from the saved embeddings).
    pub fn embedded(&self) -> usize {
        self.embedded
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The unit vector of the tool named `name`'s description (its first
    /// text), as the index holds it (each number within 0.1 % of the
    /// vector's largest of the model's).
    pub fn vector(&self, name: &str) -> Option<Vec<f32>> {
        let i = VIEWS * self.names.iter().position(|n| n == name)?;
        let dimensions = self.vectors.len() / self.scales.len();
        let scale = self.scales[i];
        Some(
            self.vectors[i * dimensions..(i + 1) * dimensions]
                .iter()
                .map(|&x| f32::from(x) * scale)
                .collect(),
        )
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Each tool's similarity to `query` (the better of its texts'), in the
    /// index's order, and whether the query was framed as a request
    /// ([`framed_query`](super::framed_query)); `None` when the query cannot be
    /// embedded (logged) or what a search reads of it ([`MAX_QUERY_BYTES`])
    /// is blank.
    pub(super) fn similarities(&self, query: &str) -> Option<(Vec<f32>, bool)> {
        // What any search reads of a query (a model would read about 256
        // word pieces, but the tokenizer would first read all of it).
        let query = clip(query, MAX_QUERY_BYTES);
        if query.trim().is_empty() {
            return None;
        }
        // Identifiers read as what they are (`WEB-77` as `issue WEB-77`,
        // `data.xlsx` as `spreadsheet`): the model would read their pieces
        // as words (BENCHMARKS.md).
        let query = crate::entity::spelled_out(query);
        // A short query framed as a request ("I want to …").
        let framed = super::framed_query(&query);
        let query = match self.embedder.embed(&[framed.as_deref().unwrap_or(&query)]) {
            Ok(mut vectors) => vectors.pop()?,
            Err(error) => {
                tracing::warn!(target: "toolbox::catalog", %error, "the query could not be embedded");
                return None;
            }
        };
        let dimensions = query.len().max(1);
        let (query, query_scale) = quantize_query(&query);
        // Each tool's better view, scored in blocks on the model's own
        // threads: the scan streams every tool's vectors once, 2.7-3.7 ms
        // of a 10,000-tool query on one core (BENCHMARKS.md).
        let tool = VIEWS * dimensions;
        debug_assert_eq!(self.vectors.len(), self.names.len() * tool);
        debug_assert_eq!(self.scales.len(), self.names.len() * VIEWS);
        let mut scores = vec![0.0f32; self.names.len()];
        self.embedder.install(|| {
            scores
                .par_chunks_mut(SCAN_BLOCK)
                .zip(self.vectors.par_chunks(SCAN_BLOCK * tool))
                .zip(self.scales.par_chunks(SCAN_BLOCK * VIEWS))
                .for_each(|((scores, vectors), scales)| {
                    for ((score, views), scales) in scores
                        .iter_mut()
                        .zip(vectors.chunks_exact(tool))
                        .zip(scales.chunks_exact(VIEWS))
                    {
                        *score = views
                            .chunks_exact(dimensions)
                            .zip(scales)
                            .map(|(text, scale)| dot(text, &query) as f32 * (scale * query_scale))
                            .fold(f32::MIN, f32::max);
                    }
                });
        });
        Some((scores, framed.is_some()))
    }

    pub(super) fn name(&self, i: usize) -> &str {
        &self.names[i]
    }
}

/// Appends `vector` to `out` as `i8`s scaled by its largest magnitude, and
/// returns the scale that turns them back.
fn quantize(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let largest = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        out.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let scale = largest / 127.0;
    // In range by construction: |x| / scale ≤ 127.
    out.extend(vector.iter().map(|x| (x / scale).round() as i8));
    scale
}

/// The query as `i16`s scaled by its largest magnitude (a step of 1/32,767
/// of it, far finer than the tools' `i8`s), and the scale that turns them
/// back.
fn quantize_query(vector: &[f32]) -> (Vec<i16>, f32) {
    let largest = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return (vec![0; vector.len()], 0.0);
    }
    let scale = largest / f32::from(i16::MAX);
    // In range by construction: |x| / scale ≤ 32,767.
    (
        vector.iter().map(|x| (x / scale).round() as i16).collect(),
        scale,
    )
}

/// How many tools a thread of the scan scores at a time.
const SCAN_BLOCK: usize = 512;

/// The dot product of a quantized tool vector and the quantized query, in
/// integers summed in sixteen lanes, which the compiler turns into packed
/// multiply-adds (`pmaddwd`). It cannot overflow: each chunk of 512
/// numbers is summed in `i32`s (127 × 32,767 × 512 < `i32::MAX`), the
/// chunks in an `i64`.
fn dot(tool: &[i8], query: &[i16]) -> i64 {
    let mut total = 0i64;
    for (tool, query) in tool.chunks(512).zip(query.chunks(512)) {
        let mut lanes = [0i32; 16];
        let (tool_lanes, tool_rest) = tool.as_chunks::<16>();
        let (query_lanes, query_rest) = query.as_chunks::<16>();
        for (x, y) in tool_lanes.iter().zip(query_lanes) {
            for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
                *lane += i32::from(*x) * i32::from(*y);
            }
        }
        let rest: i32 = tool_rest
            .iter()
            .zip(query_rest)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum();
        total += lanes.iter().map(|&l| i64::from(l)).sum::<i64>() + i64::from(rest);
    }
    total
}

/// The `limit` best of `scores`, best first, as (index, score).
pub(super) fn best(scores: &[f32], limit: usize) -> Vec<(usize, f32)> {
    let mut ranked: Vec<(usize, f32)> = scores.iter().copied().enumerate().collect();
    let by_score = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if ranked.len() > limit && limit > 0 {
        ranked.select_nth_unstable_by(limit - 1, by_score);
    }
    ranked.truncate(limit);
    ranked.sort_unstable_by(by_score);
    ranked
}

impl ToolSearch for SemanticIndex {
    fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        if limit == 0 {
            return Vec::new();
        }
        // `None` for a blank query too.
        let Some((scores, _)) = self.similarities(query) else {
            return Vec::new();
        };
        best(&scores, limit)
            .into_iter()
            .map(|(i, score)| SearchHit {
                name: self.names[i].clone(),
                score,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{dot, quantize, quantize_query};

    /// A unit vector of `n` numbers from a simple generator.
    fn unit(n: usize, seed: u32) -> Vec<f32> {
        let mut state = seed;
        let raw: Vec<f32> = (0..n)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect();
        let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        raw.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn quantized_similarity_is_within_two_thousandths_of_the_exact_one() {
        for seed in 0..50 {
            let (tool, query) = (unit(387, seed), unit(387, seed + 1_000));
            let exact: f32 = tool.iter().zip(&query).map(|(a, b)| a * b).sum();
            let mut held = Vec::new();
            let scale = quantize(&tool, &mut held);
            assert_eq!(held.len(), 387);
            let (query, query_scale) = quantize_query(&query);
            let quantized = dot(&held, &query) as f32 * scale * query_scale;
            assert!(
                (exact - quantized).abs() < 0.002,
                "seed {seed}: {exact} against {quantized}"
            );
        }
        let mut held = Vec::new();
        assert_eq!(quantize(&[0.0; 4], &mut held), 0.0);
        assert_eq!(held, [0; 4]);
        assert_eq!(quantize_query(&[0.0; 4]), (vec![0; 4], 0.0));
        // The largest sums a long vector can give do not overflow.
        let long = 2_000;
        assert_eq!(
            dot(&vec![127; long], &vec![i16::MAX; long]),
            127 * i64::from(i16::MAX) * long as i64
        );
        assert_eq!(
            dot(&vec![-127; long], &vec![i16::MAX; long]),
            -127 * i64::from(i16::MAX) * long as i64
        );
    }
}
