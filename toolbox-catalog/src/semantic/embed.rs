//! The embedder: a sentence-transformers BERT model loaded from a
//! directory, texts in, unit vectors out.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams};

use super::ModelError;

/// The longest input read, in word pieces (as sentence-transformers reads
/// all-MiniLM-L6-v2).
const MAX_TOKENS: usize = 256;
/// How many texts go through the model at once.
const BATCH: usize = 32;

/// How token vectors become one text vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

/// A sentence-transformers model on the CPU: [`embed`](Embedder::embed)
/// turns texts into unit vectors whose dot product is their cosine
/// similarity.
///
/// ```no_run
/// use toolbox_catalog::semantic::Embedder;
/// let embedder = Embedder::load("models/all-MiniLM-L6-v2")?;
/// let vectors = embedder.embed(&["open a pull request", "merge a branch"])?;
/// assert_eq!(vectors[0].len(), embedder.dimensions());
/// # Ok::<(), toolbox_catalog::semantic::ModelError>(())
/// ```
pub struct Embedder {
    model: BertModel,
    /// The threads the model runs on: candle's matrix products, the
    /// tokenizer's batches and the semantic index's scan of the tool
    /// vectors are installed here, not on the global pool.
    pool: rayon::ThreadPool,
    tokenizer: Tokenizer,
    pooling: Pooling,
    dimensions: usize,
    fingerprint: u64,
    dir: PathBuf,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .field("dimensions", &self.dimensions)
            .field("pooling", &self.pooling)
            .field("threads", &self.threads())
            .finish()
    }
}

/// FNV-1a over bytes, continuing from `hash`.
pub(super) fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// FNV-1a's starting value.
pub(super) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn read(dir: &Path, file: &'static str) -> Result<Vec<u8>, ModelError> {
    std::fs::read(dir.join(file)).map_err(|source| ModelError::Missing {
        dir: dir.to_owned(),
        file,
        source,
    })
}

impl Embedder {
    /// Loads the model in `dir`: `config.json` (a BERT configuration),
    /// `tokenizer.json`, `model.safetensors`, and `1_Pooling/config.json`
    /// where there is one (mean pooling otherwise). A missing file, a
    /// truncated tensor or one of the wrong shape is an error naming the
    /// file.
    ///
    /// The model runs on threads of its own, as many as rayon's global pool
    /// would have (`RAYON_NUM_THREADS`, else the CPUs the process may use);
    /// [`with_threads`](Self::with_threads) chooses another count. The
    /// process environment is read, never written: candle reads
    /// `RAYON_NUM_THREADS` before every matrix product and, where it is
    /// unset, counts the cores from `/proc/cpuinfo` each time on Linux (5 %
    /// to a third of a query's embedding, more with more cores), so a
    /// service that searches often starts with it set.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, ModelError> {
        let dir = dir.as_ref();
        let config_bytes = read(dir, "config.json")?;
        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|e| ModelError::invalid(&dir.join("config.json"), "BERT configuration", e))?;
        let tokenizer_bytes = read(dir, "tokenizer.json")?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| ModelError::invalid(&dir.join("tokenizer.json"), "tokenizer", e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(config.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(|e| ModelError::invalid(&dir.join("tokenizer.json"), "tokenizer", e))?;
        let pooling = pooling(dir)?;
        let weights_path = dir.join("model.safetensors");
        let weights = read(dir, "model.safetensors")?;
        let tensors = candle_core::safetensors::load_buffer(&weights, &Device::Cpu)
            .map_err(|e| ModelError::invalid(&weights_path, "safetensors file", e))?;
        let builder = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let model = BertModel::load(builder, &config).map_err(|e| {
            ModelError::invalid(
                &weights_path,
                "BERT model of the shape config.json gives",
                e,
            )
        })?;
        let mut fingerprint = fnv(FNV_START, &config_bytes);
        fingerprint = fnv(fingerprint, &tokenizer_bytes);
        fingerprint = fnv(fingerprint, &(weights.len() as u64).to_le_bytes());
        fingerprint = fnv(fingerprint, &weights[..weights.len().min(1 << 16)]);
        let embedder = Embedder {
            model,
            pool: thread_pool(None)?,
            tokenizer,
            pooling,
            dimensions: config.hidden_size,
            fingerprint,
            dir: dir.to_owned(),
        };
        // One pass now, so a model that cannot run fails here, not at the
        // first search.
        let started = Instant::now();
        embedder.embed(&["a tool"])?;
        warn_if_unoptimized(started.elapsed());
        Ok(embedder)
    }

    /// The same model on `threads` threads of its own (at least 1), for a
    /// process that shares its cores with other work. An error only when
    /// the threads cannot be started.
    pub fn with_threads(mut self, threads: usize) -> Result<Self, ModelError> {
        self.pool = thread_pool(Some(threads.max(1)))?;
        Ok(self)
    }

    /// Runs `work` on the model's threads (its rayon calls use them).
    pub(super) fn install<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        self.pool.install(work)
    }

    /// How many threads the model runs on.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The length of each vector.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// What identifies this model's vectors (its configuration, tokenizer
    /// and weights): vectors saved under another model are not reused.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The unit vector of each text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        // candle and tokenizers return errors for bad input; a panic deep in
        // either still reaches the caller as an error, never across the API.
        let run = || self.pool.install(|| self.embed_all(texts));
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Err(ModelError::Inference(format!("the model panicked: {what}")))
        })
    }

    fn embed_all(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut out = vec![Vec::new(); texts.len()];
        // Similar lengths batch together: less padding to compute.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let failed = |e: &dyn std::fmt::Display| ModelError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(&e))?;
        let longest = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut ids = Vec::with_capacity(texts.len() * longest);
        let mut mask = Vec::with_capacity(texts.len() * longest);
        for encoding in &encodings {
            let n = encoding.get_ids().len();
            ids.extend(encoding.get_ids().iter().copied());
            ids.extend(std::iter::repeat_n(0, longest - n));
            mask.extend(std::iter::repeat_n(1u32, n));
            mask.extend(std::iter::repeat_n(0u32, longest - n));
        }
        let shape = (texts.len(), longest);
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu).map_err(|e| failed(&e))?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu).map_err(|e| failed(&e))?;
        let types = ids.zeros_like().map_err(|e| failed(&e))?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(|e| failed(&e))?;
        let pooled = match self.pooling {
            Pooling::Cls => hidden.get_on_dim(1, 0),
            Pooling::Mean => (|| {
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
                let counts = mask.sum(1)?.clamp(1e-9, f32::MAX)?;
                summed.broadcast_div(&counts)
            })(),
        }
        .map_err(|e| failed(&e))?;
        let rows: Vec<Vec<f32>> = pooled.to_vec2().map_err(|e| failed(&e))?;
        Ok(rows.into_iter().map(normalized).collect())
    }
}

/// The embedder's own thread pool: `threads` threads, or as many as
/// rayon's global pool would have.
fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, ModelError> {
    let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("toolbox-embed-{i}"));
    if let Some(threads) = threads {
        builder = builder.num_threads(threads);
    }
    builder.build().map_err(|e| ModelError::Threads {
        threads,
        reason: e.to_string(),
    })
}

/// The longest first pass over a three-word text that is not reported as
/// unoptimized. On 2 loaded cores it took 10–15 ms in release, 15–22 ms
/// in a debug build with candle's crates optimized, and 560 ms without
/// (candle, its matrix kernels and the tokenizer are about 50 times slower
/// unoptimized).
const UNOPTIMIZED_PASS: Duration = Duration::from_millis(100);

/// Whether a model whose first pass took `pass` runs unoptimized: a build
/// with debug assertions (the usual sign of `cargo build` without
/// `--release`) and a pass slower than [`UNOPTIMIZED_PASS`]. The pass is
/// timed because a debug build may optimize candle's crates (the profile
/// override docs/providers.md gives), and then runs near release speed.
fn runs_unoptimized(debug_assertions: bool, pass: Duration) -> bool {
    debug_assertions && pass > UNOPTIMIZED_PASS
}

/// Warns, once a process, that the model runs unoptimized and what to add
/// to Cargo.toml.
fn warn_if_unoptimized(pass: Duration) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if runs_unoptimized(cfg!(debug_assertions), pass) && !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            target: "toolbox::catalog",
            first_pass_ms = pass.as_millis() as u64,
            "the semantic model runs unoptimized (a debug build): embedding is about 50 times \
             slower than in release; optimize dependencies in debug builds too, in Cargo.toml: \
             [profile.dev.package.\"*\"] opt-level = 3, debug-assertions = false, \
             overflow-checks = false (see the semantic feature in docs/providers.md)"
        );
    }
}

/// `vector` scaled to length 1 (a zero vector stays zero).
fn normalized(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

/// The pooling `1_Pooling/config.json` asks for; mean without one.
fn pooling(dir: &Path) -> Result<Pooling, ModelError> {
    let path = dir.join("1_Pooling/config.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(Pooling::Mean);
    };
    let config: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| ModelError::invalid(&path, "pooling configuration", e))?;
    let on = |key: &str| config[key].as_bool() == Some(true);
    match (on("pooling_mode_mean_tokens"), on("pooling_mode_cls_token")) {
        (true, false) => Ok(Pooling::Mean),
        (false, true) => Ok(Pooling::Cls),
        _ => Err(ModelError::invalid(
            &path,
            "pooling configuration",
            "only mean pooling or the CLS token is supported, one of them",
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::runs_unoptimized;

    #[test]
    fn only_a_slow_debug_build_is_reported_unoptimized() {
        let unoptimized = Duration::from_millis(560);
        let optimized = Duration::from_millis(20);
        assert!(runs_unoptimized(true, unoptimized));
        assert!(!runs_unoptimized(true, optimized), "the profile override");
        assert!(!runs_unoptimized(false, unoptimized), "a release build");
        assert!(!runs_unoptimized(false, optimized));
    }
}
