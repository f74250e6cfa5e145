//! Tool search with any query: long words, many words, any Unicode. Every
//! query is answered with names of the catalogue's tools, in time linear in
//! what a search reads (libFuzzer's `-timeout` catches a slow one; a short
//! input may be repeated up to 400 KB, so long words and many words are
//! reached from small inputs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolbox::catalog::{
    check_query, internal, Catalog, ToolIndex, ToolSearch, MAX_QUERY_BYTES, MAX_QUERY_WORDS,
};
use toolbox::ToolSpecification;

fn specs() -> Vec<ToolSpecification> {
    let mut specs = Vec::new();
    for (i, word) in [
        "invoice",
        "flow",
        "chart",
        "issue",
        "calendar",
        "customer",
        "order",
        "directory",
        "über",
        "日本",
    ]
    .iter()
    .enumerate()
    {
        for action in ["create", "list", "delete", "search"] {
            specs.push(
                ToolSpecification::new(
                    format!("{action}_{word}_{i}"),
                    format!("Does {action} on a {word}; also {word}s and {action}ing."),
                )
                .with_deferred(true),
            );
        }
    }
    specs
}

fuzz_target!(|data: &[u8]| {
    let Some((&shape, rest)) = data.split_first() else {
        return;
    };
    let piece = String::from_utf8_lossy(rest);
    // Odd first byte: the rest repeated up to 400 KB (without a space: one
    // long word).
    let query = if shape % 2 == 1 && !piece.is_empty() {
        piece.repeat((400_000 / piece.len()).max(1))
    } else {
        piece.into_owned()
    };
    thread_local! {
        static INDEX: (ToolIndex, Catalog, Vec<String>) = {
            let specs = specs();
            let names = specs.iter().map(|s| s.name.clone()).collect();
            (ToolIndex::new(&specs), Catalog::new(specs).unwrap(), names)
        };
    }
    INDEX.with(|(index, catalog, names)| {
        let accepted = check_query(&query).is_ok();
        assert_eq!(
            accepted,
            query.len() <= MAX_QUERY_BYTES && query.split_whitespace().count() <= MAX_QUERY_WORDS
        );
        // What the model reads (before a short query's frame, `I want to`):
        // identifiers spelled out, a few words each (`/a` → `folder or
        // file`), the rest as it was.
        let read = internal::spelled_out(&query);
        assert!(read.len() <= 8 * query.len() + 16, "{query:?} → {read:?}");
        assert_eq!(read.trim().is_empty(), query.trim().is_empty());
        for hits in [index.search(&query, 5), catalog.search(&query, 5)] {
            assert!(hits.len() <= 5);
            for hit in hits {
                assert!(names.contains(&hit.name), "{} is no tool", hit.name);
                assert!(hit.score.is_finite());
            }
        }
    });
});
