//! Large tool sets, in one run: the request bytes of the tool definitions
//! of a 516-tool, 54-namespace catalogue of real MCP schemas, eager and
//! deferred, per provider (printed before the timings); tool search over
//! 1,000 and 10,000 tools with the index against a linear scan of the
//! same tools; the index's build time and the memory it holds.
#![allow(missing_docs)] // criterion's macros generate undocumented items
#![allow(unsafe_code)] // the counting allocator forwards to the system's

#[path = "../tests/support/catalog.rs"]
mod fixture;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use toolbox::catalog::{Catalog, Revealed, ToolIndex, ToolSearch};
use toolbox::provider::Provider;
use toolbox::ToolSpecification;

/// Counts the bytes held, for the index's memory.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const PROVIDERS: [(&str, Provider); 6] = [
    (
        "OpenAI Responses",
        Provider::OpenAiResponses { strict: false },
    ),
    ("OpenAI Chat", Provider::OpenAiChat { strict: false }),
    ("Anthropic", Provider::Anthropic { strict: false }),
    ("Gemini", Provider::Gemini),
    ("Gemini parameters", Provider::GeminiLegacy),
    ("MCP", Provider::Mcp),
];

fn bytes(catalog: &Catalog, provider: Provider, revealed: &Revealed) -> usize {
    catalog
        .definitions(provider, revealed)
        .expect("the catalogue lowers")
        .to_string()
        .len()
}

/// The request bytes of the tool definitions, eager and deferred, per
/// provider (over the tools the provider can be offered: Gemini's
/// `parameters` cannot express one tool's map).
fn report_bytes() {
    let all = fixture::large(6);
    println!(
        "request bytes of the tool definitions, {} tools in 54 namespaces:",
        all.len()
    );
    println!("| provider | tools | eager | deferred | deferred / eager | after one search (5 revealed) | hosted search |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, provider) in PROVIDERS {
        let deferred: Vec<ToolSpecification> = all
            .iter()
            .filter(|s| provider.definition(s).is_ok())
            .cloned()
            .collect();
        let tools = deferred.len();
        let eager: Vec<ToolSpecification> = deferred
            .iter()
            .cloned()
            .map(|s| s.with_deferred(false))
            .collect();
        let eager = Catalog::new(eager).expect("a catalogue");
        let deferred = Catalog::new(deferred).expect("a catalogue");
        // Five tools revealed by one search, as after a search step.
        let mut revealed = Revealed::new();
        for hit in deferred.search("acme github open a new issue", 5) {
            revealed.insert(hit.name);
        }
        let e = bytes(&eager, provider, &Revealed::new());
        let d = bytes(&deferred, provider, &Revealed::new());
        let after = bytes(&deferred, provider, &revealed);
        let hosted = match provider {
            Provider::OpenAiResponses { .. } | Provider::Anthropic { .. } => bytes(
                &deferred.clone().hosted_search(true),
                provider,
                &Revealed::new(),
            )
            .to_string(),
            _ => "—".to_owned(),
        };
        println!(
            "| {name} | {tools} | {e} | {d} | {:.2} % | {after} | {hosted} |",
            100.0 * d as f64 / e as f64
        );
    }
}

/// The baseline: each tool's words read again for every query, scored by
/// how many query words they contain.
fn linear_scan<'s>(specs: &'s [ToolSpecification], query: &str, limit: usize) -> Vec<&'s str> {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
            .map(str::to_lowercase)
            .collect()
    };
    let query = words(query);
    let mut scored: Vec<(usize, &str)> = specs
        .iter()
        .map(|spec| {
            let mut text = format!("{} {}", spec.name, spec.description);
            if let Some(properties) = spec.parameters["properties"].as_object() {
                for (key, value) in properties {
                    text.push(' ');
                    text.push_str(key);
                    if let Some(d) = value["description"].as_str() {
                        text.push(' ');
                        text.push_str(d);
                    }
                }
            }
            let doc = words(&text);
            (
                query.iter().filter(|q| doc.contains(q)).count(),
                spec.name.as_str(),
            )
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by_key(|s| std::cmp::Reverse(s.0));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, name)| name)
        .collect()
}

fn bench_search(c: &mut Criterion) {
    report_bytes();
    let query = "list the open pull requests of a repository";
    let mut group = c.benchmark_group("catalog_search");
    for size in [1_000usize, 10_000] {
        let specs: Vec<ToolSpecification> = fixture::large(size.div_ceil(86))
            .into_iter()
            .take(size)
            .collect();
        let index = ToolIndex::new(&specs);
        assert!(!index.search(query, 5).is_empty());
        group.bench_function(format!("index/{size}"), |b| {
            b.iter(|| index.search(black_box(query), 5))
        });
        group.bench_function(format!("linear_scan/{size}"), |b| {
            b.iter(|| linear_scan(&specs, black_box(query), 5))
        });
    }
    group.finish();

    // Hostile queries a model can send (issue 54): each against the
    // ordinary query in the same run; a search reads at most
    // MAX_QUERY_BYTES and MAX_QUERY_WORDS of any of them.
    let specs: Vec<ToolSpecification> = fixture::large(117).into_iter().take(10_000).collect();
    let index = ToolIndex::new(&specs);
    let long_word = "x".repeat(400_000);
    let many_words = "ab ".repeat(1_000_000);
    let unicode: String = (0..100_000u32)
        .map(|i| char::from_u32(0x4e00 + i % 2_000).unwrap())
        .collect();
    let mut group = c.benchmark_group("catalog_hostile_query");
    for (name, query) in [
        ("ordinary", query),
        ("one_400kb_word", long_word.as_str()),
        ("a_million_words", many_words.as_str()),
        ("unicode_300kb", unicode.as_str()),
    ] {
        group.bench_function(format!("index/10000/{name}"), |b| {
            b.iter(|| index.search(black_box(query), 5))
        });
    }
    group.finish();

    // A hostile catalogue (an untrusted MCP server's tools): 2,000 tools
    // whose descriptions each hold the same 192 words and 16 longer words
    // starting with each, and whose names are 32 two-letter camelCase
    // words, searched by a query of those 32 name words and 32 compounds
    // of the 192; beside an ordinary catalogue of 2,000 and its query.
    let base: Vec<String> = (0..192u32)
        .map(|i| {
            let n = i * 11;
            let letter = |k: u32| char::from(b'a' + (k % 26) as u8);
            format!(
                "{}{}{}q",
                letter(n),
                letter(n / 26 + 3),
                letter(n / 676 + 7)
            )
        })
        .collect();
    let description: Vec<String> = base
        .iter()
        .flat_map(|b| {
            std::iter::once(b.clone())
                .chain((0..16u8).map(move |k| format!("{b}{}", char::from(b'a' + k))))
        })
        .collect();
    let description = description.join(" ");
    let name_words: Vec<String> = (0..32u8)
        .map(|i| format!("Z{}", char::from(b'a' + i % 26)) + if i >= 26 { "z" } else { "" })
        .collect();
    let hostile: Vec<ToolSpecification> = (0..2_000)
        .map(|i| ToolSpecification::new(format!("{}{i}", name_words.concat()), &description))
        .collect();
    let hostile_query = format!(
        "{} {}",
        name_words.join(" "),
        (0..32)
            .map(|i| format!("{}{}", base[i], base[i + 64]))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let ordinary: Vec<ToolSpecification> = fixture::large(24).into_iter().take(2_000).collect();
    let hostile_index = ToolIndex::new(&hostile);
    let ordinary_index = ToolIndex::new(&ordinary);
    let mut group = c.benchmark_group("catalog_hostile_catalogue");
    group.bench_function("ordinary/2000", |b| {
        b.iter(|| ordinary_index.search(black_box(query), 5))
    });
    group.bench_function("hostile/2000", |b| {
        b.iter(|| hostile_index.search(black_box(&hostile_query), 5))
    });
    group.finish();

    let specs: Vec<ToolSpecification> = fixture::large(117).into_iter().take(10_000).collect();
    let before = HELD.load(Ordering::Relaxed);
    let index = ToolIndex::new(&specs);
    let held = HELD.load(Ordering::Relaxed) - before;
    println!(
        "the index over {} tools holds {:.1} MB ({} bytes a tool)",
        index.len(),
        held as f64 / 1e6,
        held / index.len() as isize
    );
    drop(index);
    let mut group = c.benchmark_group("catalog_build");
    group.sample_size(10);
    group.bench_function("index/10000", |b| {
        b.iter(|| ToolIndex::new(black_box(&specs)))
    });
    group.finish();
}

/// Semantic search (feature `semantic`, the model of `scripts/fetch_model`
/// or `TOOLBOX_MODEL`): embedding 1,000 tools, a query against 10,000
/// (embedding the query included) beside the lexical index and the hybrid
/// ranking, the saved embeddings' reload, and the memory a tool's vector
/// holds. The 10,000-tool index reuses the 1,000 vectors (tool i gets tool
/// i mod 1,000's): a query's cost does not depend on the vectors' values.
#[cfg(feature = "semantic")]
fn bench_semantic(c: &mut Criterion) {
    use std::sync::Arc;
    use std::time::Instant;
    use toolbox::catalog::semantic::{Embedder, Embeddings, HybridSearch, SemanticIndex};

    let dir = std::env::var("TOOLBOX_MODEL").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/.interop/model/all-MiniLM-L6-v2"
        )
        .to_owned()
    });
    let embedder = Arc::new(Embedder::load(&dir).expect("the model loads (scripts/fetch_model)"));
    let specs: Vec<ToolSpecification> = fixture::large(117).into_iter().take(10_000).collect();
    let mut store = Embeddings::new(&embedder);
    let started = Instant::now();
    let first = SemanticIndex::with_embeddings(embedder.clone(), &specs[..1_000], &mut store)
        .expect("1,000 tools embed");
    println!(
        "embedding 1,000 tools: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (i, spec) in specs.iter().enumerate().skip(1_000) {
        let vector = first.vector(&specs[i % 1_000].name).expect("embedded");
        store
            .insert(spec, vector)
            .expect("a vector of the model's length");
    }
    let before = HELD.load(Ordering::Relaxed);
    let semantic = SemanticIndex::with_embeddings(embedder.clone(), &specs, &mut store)
        .expect("the 10,000-tool index");
    let held = HELD.load(Ordering::Relaxed) - before;
    assert_eq!(semantic.embedded(), 0);
    println!(
        "the semantic index over {} tools holds {:.1} MB ({} bytes a tool)",
        semantic.len(),
        held as f64 / 1e6,
        held / semantic.len() as isize
    );
    let file =
        std::env::temp_dir().join(format!("toolbox-bench-{}.embeddings", std::process::id()));
    store.save(&file).expect("the embeddings are saved");
    let started = Instant::now();
    let mut reloaded = Embeddings::load(&file, &embedder).expect("the embeddings reload");
    let again = SemanticIndex::with_embeddings(embedder.clone(), &specs, &mut reloaded)
        .expect("the index from the saved embeddings");
    println!(
        "reloading 10,000 tools' embeddings ({:.1} MB) and building the index: {:.0} ms ({} embedded)",
        std::fs::metadata(&file).map_or(0, |m| m.len()) as f64 / 1e6,
        started.elapsed().as_secs_f64() * 1e3,
        again.embedded()
    );
    let _ = std::fs::remove_file(&file);
    let hybrid = HybridSearch::new(embedder.clone(), &specs, &mut store).expect("the hybrid");
    let lexical = ToolIndex::new(&specs);
    let query = "list the open pull requests of a repository";
    let mut group = c.benchmark_group("semantic_search");
    group.sample_size(30);
    group.bench_function("lexical/10000", |b| {
        b.iter(|| lexical.search(black_box(query), 5))
    });
    group.bench_function("query_embedding", |b| {
        b.iter(|| embedder.embed(&[black_box(query)]))
    });
    group.bench_function("semantic/10000", |b| {
        b.iter(|| semantic.search(black_box(query), 5))
    });
    group.bench_function("hybrid/10000", |b| {
        b.iter(|| hybrid.search(black_box(query), 5))
    });
    // A query as long as ToolRet's (47 tokens on average; this one has 33
    // words): the embedding's cost grows with the query's word pieces.
    let long = "I'm putting together a travel app that listens to street conversations; \
                find me a model that takes a short audio clip and tells which language \
                the people in it are speaking.";
    group.bench_function("lexical/10000/toolret_query", |b| {
        b.iter(|| lexical.search(black_box(long), 5))
    });
    group.bench_function("semantic/10000/toolret_query", |b| {
        b.iter(|| semantic.search(black_box(long), 5))
    });
    group.bench_function("hybrid/10000/toolret_query", |b| {
        b.iter(|| hybrid.search(black_box(long), 5))
    });
    group.finish();
}

#[cfg(not(feature = "semantic"))]
fn bench_semantic(_: &mut Criterion) {}

criterion_group!(benches, bench_search, bench_semantic);
criterion_main!(benches);
