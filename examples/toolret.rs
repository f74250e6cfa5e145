//! Tool search on a public benchmark: four subsets of ToolRet (ACL 2025,
//! arXiv 2503.01763) as mirrored in the public repository
//! `LittleDinoC/MFTR`, each subset its own catalogue, every query judged
//! against its labelled tools. `scripts/fetch_toolret` puts the subsets into
//! the git-ignored `.interop/toolret/` (the data has no licence, so it is
//! never committed) with the paper's BM25 baseline (the `bm25s` package)
//! ranked over the same texts.
//!
//! Rankers, in one run over the same tools and queries:
//!
//! - `lexical`: toolbox's [`ToolIndex`] over the tools converted to
//!   [`ToolSpecification`]s (name, description, parameters as JSON Schema);
//! - `model`: the model alone ([`SemanticIndex`](toolbox::catalog::semantic::SemanticIndex)),
//!   feature `semantic`;
//! - `hybrid`: the default ranking of a catalogue given a model,
//!   `Catalog::new(..).with_semantic(..)`, feature `semantic`;
//! - `BM25s`: the paper's BM25 baseline over each tool's documentation as
//!   JSON text (read from `bm25s.json`, computed by the script);
//! - `dense`: the paper's other baseline, all-MiniLM-L6-v2 over the same
//!   JSON text through toolbox's `Embedder`, cosine, feature `semantic`.
//!
//! Two variants: the query alone, and the query with the paper's
//! instruction put before it. Measures: NDCG@10 with binary relevance (the
//! paper's), recall@1/@5/@10 (the share of a query's labelled tools found),
//! and MRR (the first labelled tool's reciprocal rank within the top 10).
//! apibank, gorilla-huggingface and toolink are reported (and their mean);
//! apigen is the part rankers may be tuned on, printed apart.
//!
//! ```sh
//! scripts/fetch_toolret
//! cargo run --release --example toolret                      # lexical and BM25s
//! scripts/fetch_model
//! cargo run --release --features semantic --example toolret  # every ranker
//! cargo run --release --features semantic --example toolret -- --subset apigen
//! ```
//!
//! `--subset NAME` (repeatable) runs some subsets only, `--variant query` or
//! `--variant instruction` one variant only, `--misses RANKER` lists that
//! ranker's misses at 10 on apigen (the tune subset), `--spec TOOL_ID`
//! prints one tool's specification and document. `TOOLRET_DIR` names
//! another data directory, `TOOLBOX_MODEL` another model.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use toolbox::catalog::{ToolIndex, ToolSearch};
use toolbox::ToolSpecification;

/// The subsets reported, then the one to tune on.
const REPORT: [&str; 3] = ["apibank", "gorilla-huggingface", "toolink"];
const TUNE: &str = "apigen";
/// The rankers, in the tables' order.
const RANKERS: [&str; 5] = ["lexical", "model", "hybrid", "BM25s", "dense"];
/// How deep each ranking is judged.
const DEPTH: usize = 10;

/// One tool: its data set id, the specification a user of toolbox would
/// serve, and the text the paper's baselines read.
struct Tool {
    id: String,
    spec: ToolSpecification,
    /// What the dense baseline embeds (feature `semantic`).
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    document: String,
}

/// One query and the ids of its labelled tools.
struct Query {
    id: String,
    query: String,
    instruction: String,
    relevant: HashSet<String>,
}

impl Query {
    /// The text searched for in `variant`.
    fn text(&self, variant: Variant) -> String {
        match variant {
            Variant::Query => self.query.clone(),
            Variant::Instruction => format!("{} {}", self.instruction, self.query),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
enum Variant {
    Query,
    Instruction,
}

impl Variant {
    fn key(self) -> &'static str {
        match self {
            Variant::Query => "query",
            Variant::Instruction => "instruction",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Variant::Query => "query alone",
            Variant::Instruction => "the paper's instruction, then the query",
        }
    }
}

/// One subset, converted.
struct Subset {
    name: String,
    /// Where its files are (and the semantic rankers' vectors are kept).
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    dir: PathBuf,
    tools: Vec<Tool>,
    queries: Vec<Query>,
    /// bm25s's ranking of each query, by variant.
    bm25s: HashMap<Variant, HashMap<String, Vec<String>>>,
}

impl Subset {
    fn load(dir: &Path, name: &str) -> Result<Subset, String> {
        let dir = dir.join(name);
        let tools_json = read_json(&dir.join("tools.json"))?;
        let documents = read_json(&dir.join("documents.json"))?;
        let mut tools = Vec::new();
        let mut names = HashSet::new();
        for (i, tool) in tools_json.as_array().into_iter().flatten().enumerate() {
            let at = || format!("{}: tool {i}", dir.join("tools.json").display());
            let id = tool["id"]
                .as_str()
                .ok_or_else(|| format!("{}: no id", at()))?;
            let mut spec = specification(&tool["documentation"])
                .map_err(|e| format!("{} (`{id}`): {e}", at()))?;
            // Two tools whose names read alike once made legal stay apart.
            let base = spec.name.clone();
            let mut n = 2;
            while !names.insert(spec.name.clone()) {
                spec.name = format!("{base}_{n}");
                n += 1;
            }
            let document = documents[id]
                .as_str()
                .ok_or_else(|| format!("{}: documents.json has no `{id}`", dir.display()))?
                .to_owned();
            tools.push(Tool {
                id: id.to_owned(),
                spec,
                document,
            });
        }
        if tools.is_empty() {
            return Err(format!("{}: no tools", dir.join("tools.json").display()));
        }
        let ids: HashSet<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        let mut queries = Vec::new();
        for (i, query) in read_json(&dir.join("queries.json"))?
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = || format!("{}: query {i}", dir.join("queries.json").display());
            let text = |key: &str| {
                query[key]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{}: no `{key}`", at()))
            };
            let mut relevant = HashSet::new();
            for label in query["labels"].as_array().into_iter().flatten() {
                if label["relevance"].as_i64().unwrap_or(1) <= 0 {
                    continue;
                }
                let id = label["id"]
                    .as_str()
                    .ok_or_else(|| format!("{}: a label without an id", at()))?;
                if !ids.contains(id) {
                    return Err(format!(
                        "{}: labelled tool `{id}` is not in tools.json",
                        at()
                    ));
                }
                relevant.insert(id.to_owned());
            }
            if relevant.is_empty() {
                return Err(format!("{}: no labelled tool", at()));
            }
            queries.push(Query {
                id: text("id")?,
                query: text("query")?,
                instruction: text("instruction")?,
                relevant,
            });
        }
        let bm25s_json = read_json(&dir.join("bm25s.json"))?;
        let mut bm25s = HashMap::new();
        for variant in [Variant::Query, Variant::Instruction] {
            let ranked: HashMap<String, Vec<String>> =
                serde_json::from_value(bm25s_json[variant.key()].clone()).map_err(|e| {
                    format!(
                        "{}: `{}`: {e}",
                        dir.join("bm25s.json").display(),
                        variant.key()
                    )
                })?;
            if let Some(q) = queries.iter().find(|q| !ranked.contains_key(&q.id)) {
                return Err(format!(
                    "{}: no `{}` ranking of query `{}` (run scripts/fetch_toolret again)",
                    dir.join("bm25s.json").display(),
                    variant.key(),
                    q.id
                ));
            }
            bm25s.insert(variant, ranked);
        }
        Ok(Subset {
            name: name.to_owned(),
            dir,
            tools,
            queries,
            bm25s,
        })
    }

    /// The tool ids of a ranking by names.
    fn ids(&self, by_name: &HashMap<&str, &str>, names: &[String]) -> Vec<String> {
        names
            .iter()
            .filter_map(|n| by_name.get(n.as_str()).map(|id| (*id).to_owned()))
            .collect()
    }

    fn label(&self) -> String {
        format!(
            "{} ({} / {})",
            self.name,
            thousands(self.tools.len()),
            thousands(self.queries.len())
        )
    }
}

fn thousands(n: usize) -> String {
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (scripts/fetch_toolret puts ToolRet's subsets there)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// The conversion: each subset's documentation as a tool specification.
// ---------------------------------------------------------------------------

/// A tool's documentation as the [`ToolSpecification`] one would serve:
/// its name made legal (`^[a-zA-Z0-9_-]{1,64}$`), its description, its
/// parameters as a JSON Schema object. The four subsets document tools in
/// four shapes:
///
/// - apibank: `parameters` a list of `{name, schema: {type, default},
///   description}` (one tool: a signature text), `responses` its result
///   (the output schema);
/// - apigen: `parameters` an object of `{type, description, default}`, a
///   type with `optional` not required;
/// - gorilla-huggingface: a model, `api_arguments` its arguments (an
///   object, a list, or a text), `domain` and `functionality` what it does
///   (added to the description);
/// - toolink: a Python function, `func_description` its signature.
fn specification(doc: &Value) -> Result<ToolSpecification, String> {
    let name = doc["name"]
        .as_str()
        .ok_or("the documentation has no name")?;
    let mut description = doc["description"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .trim_matches('"')
        .trim()
        .to_owned();
    let mut properties = Map::new();
    let mut required = Vec::new();
    match &doc["parameters"] {
        // apibank
        Value::Array(list) => {
            for parameter in list {
                let Some(name) = parameter["name"].as_str() else {
                    continue;
                };
                properties.insert(
                    name.to_owned(),
                    property(
                        parameter["schema"]["type"].as_str(),
                        &parameter["description"],
                        &parameter["schema"]["default"],
                    ),
                );
            }
        }
        // apigen
        Value::Object(map) => {
            for (name, parameter) in map {
                let kind = parameter["type"].as_str();
                properties.insert(
                    name.clone(),
                    property(kind, &parameter["description"], &parameter["default"]),
                );
                if !kind.unwrap_or_default().contains("optional") {
                    required.push(name.clone());
                }
            }
        }
        // apibank's one tool documented as a signature: "(date: datetime)"
        Value::String(signature) => signature_parameters(signature, &mut properties),
        _ => {}
    }
    // toolink: "```python\ndef multiply(shape1, shape2):\n ..."
    if let Some(code) = doc["func_description"].as_str() {
        if let Some(start) = code.find("def ") {
            let rest = &code[start..];
            if let (Some(open), Some(close)) = (rest.find('('), rest.find("):")) {
                if open < close {
                    signature_parameters(&rest[open..=close], &mut properties);
                }
            }
        }
    }
    // gorilla-huggingface
    if doc.get("api_call").is_some() {
        let mut what: Vec<&str> = Vec::new();
        for key in ["domain", "functionality"] {
            if let Some(text) = doc[key].as_str().filter(|t| !t.is_empty() && *t != "N/A") {
                what.push(text);
            }
        }
        if !what.is_empty() {
            description = format!("{description}\n{}.", what.join(": "));
        }
        match &doc["api_arguments"] {
            Value::Object(map) => {
                for (name, value) in map {
                    let text = match value {
                        Value::String(s) => Value::String(s.clone()),
                        other => Value::String(other.to_string()),
                    };
                    properties.insert(name.clone(), property(None, &text, &Value::Null));
                }
            }
            Value::Array(list) => {
                let identifiers: Vec<&str> = list
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|s| is_identifier(s))
                    .collect();
                if identifiers.len() == list.len() {
                    for name in identifiers {
                        properties.insert(name.to_owned(), json!({}));
                    }
                } else {
                    let texts: Vec<String> = list
                        .iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .collect();
                    description = format!("{description}\nArguments: {}", texts.join("; "));
                }
            }
            Value::String(text) if !text.is_empty() && text != "N/A" => {
                description = format!("{description}\nArguments: {text}");
            }
            _ => {}
        }
    }
    let mut parameters = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        parameters["required"] = json!(required);
    }
    let mut spec =
        ToolSpecification::new(legal_name(name), description).with_parameters(parameters);
    // apibank: what the tool returns
    if let Some(responses) = doc["responses"].as_object() {
        let mut out = Map::new();
        for (name, response) in responses {
            out.insert(
                name.clone(),
                property(
                    response["type"].as_str(),
                    &response["description"],
                    &Value::Null,
                ),
            );
        }
        spec.output_schema = Some(json!({"type": "object", "properties": out}));
    }
    Ok(spec)
}

/// One parameter's schema from a documented type (`str`, `int, optional`,
/// `List[int]`, …), description and default.
fn property(kind: Option<&str>, description: &Value, default: &Value) -> Value {
    let mut schema = Map::new();
    let base = kind
        .unwrap_or_default()
        .split([',', '['])
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let json_type = match base.as_str() {
        "str" | "string" | "datetime" | "date" => Some("string"),
        "int" | "integer" => Some("integer"),
        "float" | "number" | "double" => Some("number"),
        "bool" | "boolean" => Some("boolean"),
        "list" | "array" | "tuple" | "set" => Some("array"),
        "dict" | "object" | "mapping" => Some("object"),
        _ => None,
    };
    if let Some(json_type) = json_type {
        schema.insert("type".to_owned(), json!(json_type));
    }
    if let Some(text) = description
        .as_str()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        schema.insert("description".to_owned(), json!(text));
    }
    match default {
        Value::Null => {}
        Value::String(s) if s.is_empty() => {}
        other => {
            schema.insert("default".to_owned(), other.clone());
        }
    }
    Value::Object(schema)
}

/// The parameters of a signature, `(a, b: int = 2, *args)`: each name, its
/// annotation as the type.
fn signature_parameters(signature: &str, properties: &mut Map<String, Value>) {
    let inner = signature
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(':')
        .trim_end_matches(')');
    for part in inner.split(',') {
        let part = part.split('=').next().unwrap_or_default();
        let mut pieces = part.splitn(2, ':');
        let name = pieces
            .next()
            .unwrap_or_default()
            .trim()
            .trim_start_matches('*');
        if !is_identifier(name) || name == "self" {
            continue;
        }
        let kind = pieces.next().map(str::trim);
        properties.insert(name.to_owned(), property(kind, &Value::Null, &Value::Null));
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `name` as a legal tool name: backticks dropped, every other character
/// outside `[a-zA-Z0-9_-]` an underscore (`facebook/bart-base` →
/// `facebook_bart-base`), at most 64 characters.
fn legal_name(name: &str) -> String {
    let mapped: String = name
        .chars()
        .filter(|&c| c != '`')
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = mapped.trim_matches('_');
    let legal = if trimmed.is_empty() { "tool" } else { trimmed };
    legal.chars().take(64).collect()
}

// ---------------------------------------------------------------------------
// Measures
// ---------------------------------------------------------------------------

/// A ranker's sums over a subset's queries.
#[derive(Clone, Copy, Default)]
struct Scores {
    n: usize,
    ndcg: f64,
    at1: f64,
    at5: f64,
    at10: f64,
    reciprocal: f64,
    time: Duration,
}

impl Scores {
    fn add(&mut self, ranked: &[String], relevant: &HashSet<String>) {
        let ranked = &ranked[..ranked.len().min(DEPTH)];
        let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
        let dcg: f64 = ranked
            .iter()
            .enumerate()
            .filter(|(_, id)| relevant.contains(*id))
            .map(|(i, _)| gain(i))
            .sum();
        let ideal: f64 = (0..relevant.len().min(DEPTH)).map(gain).sum();
        let found = |k: usize| {
            ranked
                .iter()
                .take(k)
                .filter(|id| relevant.contains(*id))
                .count() as f64
                / relevant.len() as f64
        };
        self.n += 1;
        self.ndcg += dcg / ideal;
        self.at1 += found(1);
        self.at5 += found(5);
        self.at10 += found(10);
        if let Some(i) = ranked.iter().position(|id| relevant.contains(id)) {
            self.reciprocal += 1.0 / (i + 1) as f64;
        }
    }

    fn mean(&self, sum: f64) -> f64 {
        sum / self.n.max(1) as f64
    }

    /// NDCG@10 in the paper's scale (× 100).
    fn ndcg(&self) -> f64 {
        100.0 * self.mean(self.ndcg)
    }
}

/// Every ranker's scores for one subset and variant (absent: not run).
type Results = BTreeMap<(String, Variant), BTreeMap<&'static str, Scores>>;

fn judge(
    subset: &Subset,
    variant: Variant,
    ranker: &'static str,
    rank: &mut dyn FnMut(&Query) -> Result<Vec<String>, String>,
    results: &mut Results,
    misses: Option<&str>,
) -> Result<(), String> {
    let mut scores = Scores::default();
    let started = Instant::now();
    for query in &subset.queries {
        let ranked = rank(query)?;
        if misses == Some(ranker)
            && subset.name == TUNE
            && !ranked
                .iter()
                .take(DEPTH)
                .any(|id| query.relevant.contains(id))
        {
            let names = |ids: &mut dyn Iterator<Item = &String>| -> Vec<String> {
                ids.filter_map(|id| subset.tools.iter().find(|t| &t.id == id))
                    .map(|t| t.spec.name.clone())
                    .collect()
            };
            println!(
                "miss {ranker} ({}): {} => {:?} (wanted {:?})",
                variant.key(),
                query.text(variant),
                names(&mut ranked.iter().take(5)),
                names(&mut query.relevant.iter())
            );
        }
        scores.add(&ranked, &query.relevant);
    }
    scores.time = started.elapsed();
    results
        .entry((subset.name.clone(), variant))
        .or_default()
        .insert(ranker, scores);
    Ok(())
}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

struct Options {
    subsets: Vec<String>,
    variants: Vec<Variant>,
    misses: Option<String>,
    spec: Option<String>,
    dump: Option<PathBuf>,
}

fn options() -> Result<Options, String> {
    let mut subsets = Vec::new();
    let mut variants = Vec::new();
    let mut misses = None;
    let mut spec = None;
    let mut dump = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--subset" => {
                let name = value()?;
                if !REPORT.contains(&name.as_str()) && name != TUNE {
                    return Err(format!(
                        "no subset `{name}`: apibank, apigen, gorilla-huggingface or toolink"
                    ));
                }
                subsets.push(name);
            }
            "--variant" => variants.push(match value()?.as_str() {
                "query" => Variant::Query,
                "instruction" => Variant::Instruction,
                other => return Err(format!("no variant `{other}`: query or instruction")),
            }),
            "--misses" => {
                let ranker = value()?;
                if !RANKERS.contains(&ranker.as_str()) {
                    return Err(format!("no ranker `{ranker}`: one of {RANKERS:?}"));
                }
                misses = Some(ranker);
            }
            "--spec" => spec = Some(value()?),
            "--dump" => dump = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown argument `{other}`: --subset NAME, --variant query|instruction, --misses RANKER, --spec TOOL_ID, --dump FILE"
                ))
            }
        }
    }
    if subsets.is_empty() {
        subsets = REPORT
            .iter()
            .chain([&TUNE])
            .map(|s| (*s).to_owned())
            .collect();
    }
    if variants.is_empty() {
        variants = vec![Variant::Query, Variant::Instruction];
    }
    Ok(Options {
        subsets,
        variants,
        misses,
        spec,
        dump,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let dir = std::env::var_os("TOOLRET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".interop/toolret"));
    if let Ok(source) = std::fs::read_to_string(dir.join("source")) {
        println!("ToolRet subsets from LittleDinoC/MFTR {}", source.trim());
    }
    if let Some(id) = &options.spec {
        for name in &options.subsets {
            let subset = Subset::load(&dir, name)?;
            if let Some(tool) = subset.tools.iter().find(|t| &t.id == id) {
                println!("{}", serde_json::to_string_pretty(&tool.spec)?);
                println!("{}", tool.document);
                return Ok(());
            }
        }
        return Err(format!("no tool `{id}` in {:?}", options.subsets).into());
    }
    #[cfg(feature = "semantic")]
    let model = semantic::Model::load()?;
    let mut results = Results::new();
    let mut labels = BTreeMap::new();
    let mut dump = String::new();
    for name in &options.subsets {
        let subset = Subset::load(&dir, name)?;
        labels.insert(subset.name.clone(), subset.label());
        let by_name: HashMap<&str, &str> = subset
            .tools
            .iter()
            .map(|t| (t.spec.name.as_str(), t.id.as_str()))
            .collect();
        let specs: Vec<ToolSpecification> = subset.tools.iter().map(|t| t.spec.clone()).collect();
        let lexical = ToolIndex::new(&specs);
        #[cfg(feature = "semantic")]
        let mut rankers = model.rankers(&subset)?;
        for &variant in &options.variants {
            let misses = options.misses.as_deref();
            judge(
                &subset,
                variant,
                "lexical",
                &mut |q| {
                    let hits = lexical.search(&q.text(variant), DEPTH);
                    let names: Vec<String> = hits.into_iter().map(|h| h.name).collect();
                    Ok(subset.ids(&by_name, &names))
                },
                &mut results,
                misses,
            )?;
            judge(
                &subset,
                variant,
                "BM25s",
                &mut |q| Ok(subset.bm25s[&variant][&q.id].clone()),
                &mut results,
                misses,
            )?;
            #[cfg(feature = "semantic")]
            rankers.judge(&subset, &by_name, variant, &mut results, misses)?;
            if options.dump.is_some() {
                for q in &subset.queries {
                    let text = q.text(variant);
                    let (hits, ceiling) =
                        toolbox::catalog::internal::lexical_ranked(&lexical, &text, 50);
                    let ids = |hits: Vec<toolbox::catalog::SearchHit>| -> Vec<(String, f32)> {
                        hits.into_iter()
                            .map(|h| (by_name[h.name.as_str()].to_owned(), h.score))
                            .collect()
                    };
                    let lexical_hits = ids(hits);
                    #[allow(unused_mut)]
                    let mut line = serde_json::json!({
                        "subset": subset.name,
                        "variant": variant.key(),
                        "relevant": q.relevant,
                        "ceiling": ceiling,
                        "lexical": lexical_hits,
                    });
                    #[cfg(feature = "semantic")]
                    {
                        // The model's first 100, and its cosine of each lexical hit.
                        let lexical_ids: HashSet<&str> =
                            lexical_hits.iter().map(|(id, _)| id.as_str()).collect();
                        let model: Vec<(String, f32)> = ids(rankers.model.search(
                            toolbox::catalog::internal::clip(
                                &text,
                                toolbox::catalog::MAX_QUERY_BYTES,
                            ),
                            usize::MAX,
                        ))
                        .into_iter()
                        .enumerate()
                        .filter(|(i, (id, _))| *i < 100 || lexical_ids.contains(id.as_str()))
                        .map(|(_, hit)| hit)
                        .collect();
                        line["model"] = serde_json::json!(model);
                        line["hybrid"] = serde_json::json!(ids(rankers.hybrid.search(&text, 10)));
                    }
                    dump.push_str(&line.to_string());
                    dump.push('\n');
                }
            }
        }
        eprintln!("toolret: {} done", subset.name);
    }
    if let Some(path) = &options.dump {
        std::fs::write(path, dump)?;
    }
    for &variant in &options.variants {
        print_variant(&results, &labels, variant);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The tables
// ---------------------------------------------------------------------------

/// A measure: its name, how it reads from the scores, its decimals.
type Measure = (&'static str, fn(&Scores) -> f64, usize);

const MEASURES: [Measure; 5] = [
    ("NDCG@10 (x100)", Scores::ndcg, 1),
    ("recall@1", |s| s.mean(s.at1), 3),
    ("recall@5", |s| s.mean(s.at5), 3),
    ("recall@10", |s| s.mean(s.at10), 3),
    ("MRR", |s| s.mean(s.reciprocal), 3),
];

fn score(results: &Results, subset: &str, variant: Variant, ranker: &str) -> Option<Scores> {
    results
        .get(&(subset.to_owned(), variant))
        .and_then(|r| r.get(ranker))
        .copied()
}

/// A ranker's mean of `f` over the three report subsets, where each ran.
fn report_mean(
    results: &Results,
    variant: Variant,
    ranker: &str,
    f: fn(&Scores) -> f64,
) -> Option<f64> {
    let values: Option<Vec<f64>> = REPORT
        .iter()
        .map(|s| score(results, s, variant, ranker).as_ref().map(f))
        .collect();
    values.map(|v| v.iter().sum::<f64>() / v.len() as f64)
}

fn cells(values: impl Iterator<Item = Option<f64>>, precision: usize) -> String {
    values
        .map(|v| match v {
            Some(v) => format!(" {v:>8.precision$}"),
            None => format!(" {:>8}", "-"),
        })
        .collect()
}

fn print_variant(results: &Results, labels: &BTreeMap<String, String>, variant: Variant) {
    println!();
    println!("=== ToolRet, {} ===", variant.title());
    let ran = |name: &str| results.contains_key(&(name.to_owned(), variant));
    let all_report = REPORT.iter().all(|s| ran(s));
    for (measure, f, precision) in MEASURES {
        let header: String = RANKERS.iter().map(|r| format!(" {r:>8}")).collect();
        println!("{measure:<40}{header}");
        let row = |name: &str, label: &str| {
            let values = RANKERS
                .iter()
                .map(|r| score(results, name, variant, r).as_ref().map(f));
            println!("{label:<40}{}", cells(values, precision));
        };
        for name in REPORT.iter().filter(|s| ran(s)) {
            row(name, &labels[*name]);
        }
        if all_report {
            let values = RANKERS.iter().map(|r| report_mean(results, variant, r, f));
            println!(
                "{:<40}{}",
                "mean of the three report subsets",
                cells(values, precision)
            );
        }
        if ran(TUNE) {
            row(TUNE, &format!("{} [tune]", labels[TUNE]));
        }
        println!();
    }
    let per_query = |s: &Scores| s.time.as_secs_f64() * 1e3 / s.n.max(1) as f64;
    let header: String = ["lexical", "model", "hybrid"]
        .iter()
        .map(|r| format!(" {r:>8}"))
        .collect();
    println!("{:<40}{header}", "ms a query (this machine, this run)");
    for name in REPORT.iter().chain([&TUNE]).filter(|s| ran(s)) {
        let values = ["lexical", "model", "hybrid"]
            .iter()
            .map(|r| score(results, name, variant, r).as_ref().map(per_query));
        println!("{name:<40}{}", cells(values, 2));
    }
    println!();
    // Issue 56, acceptance 2, on NDCG@10.
    let ndcg = Scores::ndcg;
    let verdict = |ratio: f64, goal: f64| if ratio >= goal { "met" } else { "NOT met" };
    println!("ratios of NDCG@10 (issue 56's goals):");
    for (other, goal) in [("BM25s", 1.3), ("dense", 1.15)] {
        if let (Some(hybrid), Some(base)) = (
            report_mean(results, variant, "hybrid", ndcg),
            report_mean(results, variant, other, ndcg),
        ) {
            let ratio = hybrid / base;
            println!(
                "  hybrid / {other}, mean of the three: {ratio:.3} (goal >= {goal:.2}: {})",
                verdict(ratio, goal)
            );
        }
    }
    for (ours, other) in [("hybrid", "model"), ("lexical", "BM25s")] {
        let mut parts = Vec::new();
        for name in REPORT.iter().chain([&TUNE]).filter(|s| ran(s)) {
            if let (Some(a), Some(b)) = (
                score(results, name, variant, ours),
                score(results, name, variant, other),
            ) {
                let ratio = a.ndcg() / b.ndcg();
                let mark = if *name == TUNE {
                    "tune".to_owned()
                } else {
                    verdict(ratio, 1.0).to_owned()
                };
                parts.push(format!("{name} {ratio:.3} ({mark})"));
            }
        }
        if !parts.is_empty() {
            println!(
                "  {ours} / {other} per subset (goal >= 1): {}",
                parts.join(", ")
            );
        }
    }
}

#[cfg(feature = "semantic")]
mod semantic {
    use std::collections::HashMap;
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::Instant;

    use toolbox::catalog::semantic::{Embedder, Embeddings, SemanticIndex};
    use toolbox::catalog::{Catalog, ToolSearch};
    use toolbox::ToolSpecification;

    use super::{judge, Query, Results, Subset, Variant, DEPTH};

    type Error = Box<dyn std::error::Error>;

    /// all-MiniLM-L6-v2 (or `TOOLBOX_MODEL`).
    pub(crate) struct Model {
        embedder: Arc<Embedder>,
    }

    impl Model {
        pub(crate) fn load() -> Result<Model, Error> {
            let dir = std::env::var("TOOLBOX_MODEL").unwrap_or_else(|_| {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/.interop/model/all-MiniLM-L6-v2"
                )
                .to_owned()
            });
            let embedder = Embedder::load(&dir)
                .map_err(|e| format!("{e} (scripts/fetch_model puts all-MiniLM-L6-v2 there)"))?;
            println!("model {dir}, {} threads", embedder.threads());
            Ok(Model {
                embedder: Arc::new(embedder),
            })
        }

        /// The model alone, the hybrid catalogue and the dense baseline
        /// over one subset; every vector kept in the subset's directory,
        /// so a second run embeds nothing it embedded before.
        pub(crate) fn rankers(&self, subset: &Subset) -> Result<Rankers, Error> {
            let specs: Vec<ToolSpecification> =
                subset.tools.iter().map(|t| t.spec.clone()).collect();
            let started = Instant::now();
            let path = subset.dir.join("model.embeddings");
            let mut store = Embeddings::load(&path, &self.embedder)?;
            let model = SemanticIndex::with_embeddings(self.embedder.clone(), &specs, &mut store)?;
            let embedded = model.embedded();
            let hybrid = Catalog::new(specs)?.with_semantic(self.embedder.clone(), &mut store)?;
            store.save(&path)?;
            let mut cache = Vectors::load(subset.dir.join("dense.vectors"), &self.embedder);
            let texts: Vec<&str> = subset.tools.iter().map(|t| t.document.as_str()).collect();
            let documents = cache.embed(&self.embedder, &texts)?;
            cache.save()?;
            eprintln!(
                "toolret: {}: {embedded} tools embedded for the model, {} documents for the dense baseline, in {:.1?}",
                subset.name,
                cache.added,
                started.elapsed()
            );
            Ok(Rankers {
                model,
                hybrid,
                documents,
                cache,
                embedder: self.embedder.clone(),
            })
        }
    }

    pub(crate) struct Rankers {
        pub(crate) model: SemanticIndex,
        pub(crate) hybrid: Catalog,
        documents: Vec<Vec<f32>>,
        cache: Vectors,
        embedder: Arc<Embedder>,
    }

    /// The dense baseline's query, as the paper's code writes it for a
    /// model without a prompt of its own.
    fn dense_text(query: &Query, variant: Variant) -> String {
        match variant {
            Variant::Query => query.query.clone(),
            Variant::Instruction => {
                format!("Instruct: {}\nQuery: {}", query.instruction, query.query)
            }
        }
    }

    impl Rankers {
        pub(crate) fn judge(
            &mut self,
            subset: &Subset,
            by_name: &HashMap<&str, &str>,
            variant: Variant,
            results: &mut Results,
            misses: Option<&str>,
        ) -> Result<(), String> {
            let names = |hits: Vec<toolbox::catalog::SearchHit>| -> Vec<String> {
                let names: Vec<String> = hits.into_iter().map(|h| h.name).collect();
                subset.ids(by_name, &names)
            };
            judge(
                subset,
                variant,
                "model",
                &mut |q| Ok(names(self.model.search(&q.text(variant), DEPTH))),
                results,
                misses,
            )?;
            judge(
                subset,
                variant,
                "hybrid",
                &mut |q| Ok(names(self.hybrid.search(&q.text(variant), DEPTH))),
                results,
                misses,
            )?;
            // The dense baseline's queries, embedded in one batch (and kept).
            let texts: Vec<String> = subset
                .queries
                .iter()
                .map(|q| dense_text(q, variant))
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = self
                .cache
                .embed(&self.embedder, &refs)
                .map_err(|e| e.to_string())?;
            self.cache.save().map_err(|e| e.to_string())?;
            let by_id: HashMap<&str, &Vec<f32>> = subset
                .queries
                .iter()
                .map(|q| q.id.as_str())
                .zip(&vectors)
                .collect();
            judge(
                subset,
                variant,
                "dense",
                &mut |q| {
                    let query = by_id[q.id.as_str()];
                    let mut scored: Vec<(f32, usize)> = self
                        .documents
                        .iter()
                        .enumerate()
                        .map(|(i, d)| (d.iter().zip(query).map(|(a, b)| a * b).sum(), i))
                        .collect();
                    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    Ok(scored
                        .into_iter()
                        .take(DEPTH)
                        .map(|(_, i)| subset.tools[i].id.clone())
                        .collect())
                },
                results,
                misses,
            )
        }
    }

    /// Vectors of texts by the texts' FNV-1a, for one model, in a file:
    /// the dense baseline's documents and queries.
    struct Vectors {
        path: PathBuf,
        model: u64,
        dimensions: usize,
        vectors: HashMap<u64, Vec<f32>>,
        added: usize,
    }

    const MAGIC: &[u8; 16] = b"toolret-dense-1\n";

    fn key(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    impl Vectors {
        /// What `path` holds for `embedder`'s model (nothing where it
        /// holds another's, or cannot be read).
        fn load(path: PathBuf, embedder: &Embedder) -> Vectors {
            let mut vectors = Vectors {
                path,
                model: embedder.fingerprint(),
                dimensions: embedder.dimensions(),
                vectors: HashMap::new(),
                added: 0,
            };
            let Ok(bytes) = std::fs::read(&vectors.path) else {
                return vectors;
            };
            let header = MAGIC.len() + 8;
            if bytes.len() < header
                || &bytes[..MAGIC.len()] != MAGIC
                || bytes[MAGIC.len()..header] != vectors.model.to_le_bytes()
            {
                return vectors;
            }
            let entry = 8 + 4 * vectors.dimensions;
            for chunk in bytes[header..].chunks_exact(entry) {
                let key = u64::from_le_bytes(chunk[..8].try_into().expect("8 bytes"));
                let vector = chunk[8..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect();
                vectors.vectors.insert(key, vector);
            }
            vectors
        }

        /// Each text's vector, the ones not held embedded now.
        fn embed(&mut self, embedder: &Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
            let mut missing: Vec<&str> = texts
                .iter()
                .copied()
                .filter(|t| !self.vectors.contains_key(&key(t)))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            for (text, vector) in missing.iter().zip(embedder.embed(&missing)?) {
                self.vectors.insert(key(text), vector);
            }
            self.added += missing.len();
            Ok(texts
                .iter()
                .map(|t| self.vectors[&key(t)].clone())
                .collect())
        }

        fn save(&self) -> Result<(), Error> {
            let write = |path: &Path| -> std::io::Result<()> {
                let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
                file.write_all(MAGIC)?;
                file.write_all(&self.model.to_le_bytes())?;
                for (key, vector) in &self.vectors {
                    file.write_all(&key.to_le_bytes())?;
                    for x in vector {
                        file.write_all(&x.to_le_bytes())?;
                    }
                }
                file.flush()
            };
            // Written aside, then renamed: a run beside this one reads the
            // old file or the new one, never half of one.
            let aside = self
                .path
                .with_extension(format!("part{}", std::process::id()));
            write(&aside)
                .and_then(|()| std::fs::rename(&aside, &self.path))
                .map_err(|e| format!("{}: {e}", self.path.display()).into())
        }
    }
}
