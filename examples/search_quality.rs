//! How well tool search finds what a person means: every ranker over the
//! tools of 25 real MCP servers (`tests/fixtures/search/servers/`, each a
//! `tools/list` of a published package), judged on 415 tasks phrased as
//! people state them (`tests/fixtures/search/queries.txt`, labelled easy or
//! hard, each with every acceptable tool), split by each task's text, and
//! 117 more tasks for tuning only (`tests/fixtures/search/tune.txt`).
//!
//! Prints recall@1, recall@5 and MRR by difficulty, for the held-back
//! `report` part (the figures in BENCHMARKS.md) and for the `tune` part
//! rankers may be tuned on; `--misses` lists each ranker's misses on the
//! tune part, and `--dump FILE` writes each tune task's lexical and
//! semantic scores as JSON lines (for trying fusions offline). With the
//! `semantic` feature the semantic ranker (the model
//! alone) and the hybrid ranking are judged beside the lexical one, the
//! model read from `TOOLBOX_MODEL` (default:
//! `.interop/model/all-MiniLM-L6-v2`, where `scripts/fetch_model` puts the
//! registry-shipped all-MiniLM-L6-v2).
//!
//! `--corpus DIR` judges another corpus of the same layout (`servers.json`,
//! `servers/`, `queries.txt`, `tune.txt`), every task of its `queries.txt`
//! reported (and dumped or listed by `--dump` and `--misses`):
//! `scripts/fetch_mcptoolbench` writes MCPToolBench++'s single-call tasks
//! so, tasks and tools no one here wrote.
//!
//! ```sh
//! cargo run --example search_quality
//! scripts/fetch_model && cargo run --release --features semantic --example search_quality
//! scripts/fetch_mcptoolbench && cargo run --release --features semantic --example search_quality -- --corpus .interop/mcptoolbench
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolbox::catalog::{ToolIndex, ToolSearch};
use toolbox::{Namespace, ToolSpecification};

/// A ranker and its name in the report.
type Ranker = (&'static str, Box<dyn ToolSearch>);

/// One labelled task.
struct Task {
    query: String,
    hard: bool,
    tune: bool,
    tools: Vec<String>,
}

/// The corpus: every tool, namespaced as `McpServers` names them.
fn tools(dir: &Path) -> Result<Vec<ToolSpecification>, String> {
    let index: Value = read_json(&dir.join("servers.json"))?;
    let mut specs = Vec::new();
    for (file, server) in index.as_object().into_iter().flatten() {
        if file.starts_with('_') {
            continue;
        }
        let module = server["module"]
            .as_str()
            .ok_or(format!("{file}: no module"))?;
        let namespace = Namespace::new(
            module,
            server["description"]
                .as_str()
                .ok_or(format!("{file}: no description"))?,
        );
        let listing = read_json(&dir.join("servers").join(format!("{file}.json")))?;
        for tool in listing["tools"].as_array().into_iter().flatten() {
            let name = tool["name"]
                .as_str()
                .ok_or(format!("{file}: a tool without a name"))?;
            let mut spec = ToolSpecification::new(
                format!("{module}_{name}"),
                tool["description"].as_str().unwrap_or_default().trim(),
            )
            .with_parameters(tool["inputSchema"].clone())
            .with_namespace(namespace.clone());
            spec.title = tool["title"].as_str().map(str::to_owned);
            specs.push(spec);
        }
    }
    Ok(specs)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// FNV-1a: the split is fixed by each task's text.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The labelled tasks: queries.txt split by each task's text (all of it
/// reported where `split` is off), and tune.txt all tune; an unknown tool
/// is an error naming its line.
fn tasks(dir: &Path, specs: &[ToolSpecification], split: bool) -> Result<Vec<Task>, String> {
    let mut tasks = read_tasks(&dir.join("queries.txt"), specs, |query| {
        split && fnv(query) % 5 < 2
    })?;
    tasks.extend(read_tasks(&dir.join("tune.txt"), specs, |_| true)?);
    Ok(tasks)
}

/// One file of labelled tasks, each put on its side by `tune`.
fn read_tasks(
    path: &Path,
    specs: &[ToolSpecification],
    tune: impl Fn(&str) -> bool,
) -> Result<Vec<Task>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut tasks = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), number + 1);
        let mut fields = line.split('|');
        let (Some(difficulty), Some(query), Some(tools), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(format!(
                "{}: expected `e|task|tools` or `h|task|tools`",
                at()
            ));
        };
        let hard = match difficulty {
            "e" => false,
            "h" => true,
            other => return Err(format!("{}: difficulty `{other}` is neither e nor h", at())),
        };
        let tools: Vec<String> = tools.split(',').map(|t| t.trim().to_owned()).collect();
        for tool in &tools {
            if !specs.iter().any(|s| &s.name == tool) {
                return Err(format!("{}: no tool `{tool}` in the corpus", at()));
            }
        }
        tasks.push(Task {
            query: query.to_owned(),
            hard,
            tune: tune(query),
            tools,
        });
    }
    Ok(tasks)
}

/// Recall@1, recall@5 and MRR (over the top 10) of one ranker's answers.
#[derive(Default, Clone, Copy)]
struct Scores {
    n: usize,
    at1: usize,
    at5: usize,
    reciprocal: f64,
}

impl Scores {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(rank) = rank {
            self.at1 += usize::from(rank == 0);
            self.at5 += usize::from(rank < 5);
            self.reciprocal += 1.0 / (rank + 1) as f64;
        }
    }

    fn ratio(&self, hits: usize) -> f64 {
        hits as f64 / self.n.max(1) as f64
    }
}

/// A ranker's scores on one part: all, easy, hard.
fn judge(ranker: &dyn ToolSearch, tasks: &[&Task]) -> [Scores; 3] {
    let mut scores = [Scores::default(); 3];
    for task in tasks {
        let hits = ranker.search(&task.query, 10);
        let rank = hits.iter().position(|h| task.tools.contains(&h.name));
        scores[0].add(rank);
        scores[if task.hard { 2 } else { 1 }].add(rank);
    }
    scores
}

fn report(name: &str, part: &str, scores: &[Scores; 3]) {
    let [all, easy, hard] = scores;
    // A difficulty with no task (another corpus may label none hard).
    let at5 = |s: &Scores| {
        if s.n == 0 {
            "-".to_owned()
        } else {
            format!("{:.3}", s.ratio(s.at5))
        }
    };
    println!(
        "{part:<6} {name:<9} recall@1 {:.3}  recall@5 {:.3}  MRR {:.3}  recall@5 easy {} / hard {}  ({} tasks)",
        all.ratio(all.at1),
        all.ratio(all.at5),
        all.reciprocal / all.n.max(1) as f64,
        at5(easy),
        at5(hard),
        all.n
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Another corpus of the same layout (`--corpus DIR`): all its
    // queries.txt reported, its tune.txt (which may be empty) tune.
    let mut corpus = None;
    let mut dump_to = None;
    let mut misses = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        // A value, not the next flag (`--dump --misses` names no file).
        let mut value = |what: &str| {
            args.next()
                .filter(|v| !v.starts_with("--"))
                .ok_or(format!("`{arg}` needs {what}"))
        };
        match arg.as_str() {
            "--misses" => misses = true,
            "--dump" => dump_to = Some(value("a file to write")?),
            "--corpus" => corpus = Some(PathBuf::from(value("a directory")?)),
            other => {
                return Err(format!(
                    "unknown argument `{other}`: --corpus DIR, --dump FILE, --misses"
                )
                .into())
            }
        }
    }
    let dir = corpus
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search"));
    let specs = tools(&dir)?;
    let tasks = tasks(&dir, &specs, corpus.is_none())?;
    let servers: BTreeMap<&str, usize> = specs.iter().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(s.namespace.as_ref().map_or("", |n| n.name.as_str()))
            .or_default() += 1;
        m
    });
    println!(
        "{} tools of {} servers; {} tasks ({} hard)",
        specs.len(),
        servers.len(),
        tasks.len(),
        tasks.iter().filter(|t| t.hard).count()
    );
    #[allow(unused_mut)] // without `semantic`, the lexical ranker alone
    let mut rankers: Vec<Ranker> = vec![("lexical", Box::new(ToolIndex::new(&specs)))];
    #[cfg(feature = "semantic")]
    rankers.extend(semantic::rankers(&specs)?);
    for (part, tune) in [("report", false), ("tune", true)] {
        let chosen: Vec<&Task> = tasks.iter().filter(|t| t.tune == tune).collect();
        if chosen.is_empty() {
            continue;
        }
        for (name, ranker) in &rankers {
            report(name, part, &judge(ranker.as_ref(), &chosen));
        }
    }
    // What `--dump` and `--misses` read: the tune part, or every task of
    // another corpus (nothing is tuned on it, and its tune.txt may be empty).
    let studied: Vec<&Task> = tasks
        .iter()
        .filter(|t| t.tune || corpus.is_some())
        .collect();
    if let Some(path) = &dump_to {
        dump(path, &specs, &rankers, &studied)?;
    }
    if misses {
        for (name, ranker) in &rankers {
            for task in &studied {
                let hits = ranker.search(&task.query, 5);
                if !hits.iter().any(|h| task.tools.contains(&h.name)) {
                    let found: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
                    println!(
                        "miss {name}: {} => {:?} (wanted {:?})",
                        task.query, found, task.tools
                    );
                }
            }
        }
    }
    Ok(())
}

/// Each of `tasks` with every ranker's top 50 (name and score), the
/// lexical ranker's ceiling, and each other ranker's score of every
/// lexical hit too (what the hybrid fuses), one JSON object a line.
fn dump(
    path: &str,
    specs: &[ToolSpecification],
    rankers: &[Ranker],
    tasks: &[&Task],
) -> Result<(), Box<dyn std::error::Error>> {
    let lexical_index = ToolIndex::new(specs);
    let mut out = String::new();
    for task in tasks {
        let (lexical, ceiling) =
            toolbox::catalog::internal::lexical_ranked(&lexical_index, &task.query, 50);
        let lexical: Vec<String> = lexical.into_iter().map(|h| h.name).collect();
        let mut line = serde_json::json!({
            "query": task.query,
            "hard": task.hard,
            "tools": task.tools,
            "ceiling": ceiling,
        });
        for (name, ranker) in rankers {
            let hits: Vec<(String, f32)> = ranker
                .search(&task.query, usize::MAX)
                .into_iter()
                .enumerate()
                .filter(|(i, hit)| *i < 50 || lexical.contains(&hit.name))
                .map(|(_, h)| (h.name, h.score))
                .collect();
            line[*name] = serde_json::json!(hits);
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    std::fs::write(path, out)?;
    Ok(())
}

#[cfg(feature = "semantic")]
mod semantic {
    use std::sync::Arc;
    use std::time::Instant;

    use toolbox::catalog::semantic::{Embedder, Embeddings, HybridSearch, SemanticIndex};
    use toolbox::ToolSpecification;

    /// The model alone and the hybrid ranking.
    pub(crate) fn rankers(
        specs: &[ToolSpecification],
    ) -> Result<Vec<super::Ranker>, Box<dyn std::error::Error>> {
        let dir = std::env::var("TOOLBOX_MODEL").unwrap_or_else(|_| {
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/.interop/model/all-MiniLM-L6-v2"
            )
            .to_owned()
        });
        let started = Instant::now();
        let embedder = Arc::new(Embedder::load(&dir)?);
        let loaded = started.elapsed();
        // The tools' vectors are kept between runs beside the model (a
        // change of text or model embeds again).
        let saved = std::path::Path::new(&dir).join("search_quality.embeddings");
        let mut store = Embeddings::load(&saved, &embedder)?;
        let started = Instant::now();
        let semantic = SemanticIndex::with_embeddings(embedder.clone(), specs, &mut store)?;
        let embedded = started.elapsed();
        println!(
            "model {dir}: loaded in {loaded:.2?}; {} tools ({} embedded) in {embedded:.2?}",
            semantic.len(),
            semantic.embedded()
        );
        if let Err(error) = store.save(&saved) {
            eprintln!("the tools' vectors are not kept for the next run: {error}");
        }
        let hybrid = HybridSearch::new(embedder, specs, &mut store)?;
        Ok(vec![
            ("semantic", Box::new(semantic)),
            ("hybrid", Box::new(hybrid)),
        ])
    }
}
