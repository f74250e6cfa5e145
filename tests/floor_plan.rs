//! The floor plan of every library crate of the workspace, read from its
//! source and manifests: the crates depend on each other as declared in
//! [`CRATE_GRAPH`] (never on one above them), files reach their siblings by
//! module path (never through the crate root's re-exports), a crate's
//! top-level modules import each other without loops, and toolbox-core
//! stays the small contract the others build on.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Which workspace crate may use which (its `[dependencies]`), bottom up:
/// a crate names only crates listed before it. toolbox-core is the tool
/// contract and the lifecycle; the model-facing families sit above it,
/// each in its own crate; the facade (`toolbox-sdk`) re-exports them all.
const CRATE_GRAPH: [(&str, &[&str]); 10] = [
    ("toolbox-macros", &[]),
    ("toolbox-core", &[]),
    ("toolbox-provider", &["toolbox-core"]),
    ("toolbox-catalog", &["toolbox-core", "toolbox-provider"]),
    (
        "toolbox-turn",
        &["toolbox-core", "toolbox-provider", "toolbox-catalog"],
    ),
    (
        "toolbox-code",
        &[
            "toolbox-core",
            "toolbox-provider",
            "toolbox-catalog",
            "toolbox-turn",
        ],
    ),
    ("toolbox-surface", &["toolbox-core", "toolbox-provider"]),
    ("toolbox-registry", &["toolbox-core"]),
    (
        "toolbox-mcp",
        &["toolbox-core", "toolbox-provider", "toolbox-surface"],
    ),
    (
        "toolbox-sdk",
        &[
            "toolbox-core",
            "toolbox-provider",
            "toolbox-catalog",
            "toolbox-turn",
            "toolbox-code",
            "toolbox-surface",
            "toolbox-macros",
            "toolbox-registry",
            "toolbox-mcp",
        ],
    ),
];

/// The library crates whose floor plan is checked: every crate of the
/// graph but the facade (`toolbox-sdk`, whose files only the header and
/// length checks read).
fn crates() -> impl Iterator<Item = &'static str> {
    CRATE_GRAPH
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| *name != "toolbox-sdk")
}

/// The workspace crates a manifest's `section` (`dependencies`,
/// `dev-dependencies`) names.
fn workspace_deps(manifest: &str, section: &str) -> BTreeSet<String> {
    let header = format!("[{section}]");
    let mut names = BTreeSet::new();
    let mut inside = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
        } else if inside && line.starts_with("toolbox") {
            let name = line.split([' ', '=']).next().unwrap_or_default();
            // `toolbox = { package = "toolbox-sdk", .. }`: the facade.
            let name = match line.split_once("package = \"") {
                Some((_, rest)) => rest.split('"').next().unwrap_or(name),
                None => name,
            };
            names.insert(name.to_owned());
        }
    }
    names
}

fn manifest(krate: &str) -> String {
    let dir = match krate {
        "toolbox-sdk" => String::new(),
        other => format!("{other}/"),
    };
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{dir}Cargo.toml")))
        .unwrap()
}

#[test]
fn the_crates_depend_on_each_other_as_declared() {
    let mut wrong = Vec::new();
    for (at, (krate, allowed)) in CRATE_GRAPH.iter().enumerate() {
        let below: BTreeSet<&str> = CRATE_GRAPH[..at].iter().map(|(name, _)| *name).collect();
        for name in *allowed {
            assert!(
                below.contains(name),
                "CRATE_GRAPH lets {krate} use {name}, which is not below it"
            );
        }
        let manifest = manifest(krate);
        let uses = workspace_deps(&manifest, "dependencies");
        let declared: BTreeSet<String> = allowed.iter().map(|name| name.to_string()).collect();
        if uses != declared {
            wrong.push(format!("{krate} uses {uses:?}, declared {declared:?}"));
        }
        // Tests may use what is below, and the macros (a leaf); the
        // macros' own doc tests use the facade.
        for name in workspace_deps(&manifest, "dev-dependencies") {
            let fine = below.contains(name.as_str())
                || name == "toolbox-macros"
                || (*krate == "toolbox-macros" && name == "toolbox-sdk");
            if !fine {
                wrong.push(format!("{krate}'s tests use {name}, which sits above it"));
            }
        }
    }
    assert!(wrong.is_empty(), "the crate graph:\n{}", wrong.join("\n"));
    // Every library member of the workspace is in the graph.
    let listed: BTreeSet<&str> = CRATE_GRAPH.iter().map(|(name, _)| *name).collect();
    let workspace = manifest("toolbox-sdk");
    let members = workspace
        .lines()
        .find_map(|line| line.trim().strip_prefix("members = ["))
        .unwrap();
    for member in members
        .split(',')
        .map(|m| m.trim().trim_matches(|c| c == '"' || c == ']'))
    {
        if !member.is_empty() && !member.starts_with("tests/") {
            assert!(listed.contains(member), "{member} is not in CRATE_GRAPH");
        }
    }
}

#[test]
fn the_crate_graph_reader_sees_each_form() {
    let manifest = "[dependencies]\ntoolbox-core = { workspace = true }\nserde = \"1\"\n\n[dev-dependencies]\ntoolbox = { package = \"toolbox-sdk\", path = \"..\" }\n";
    let names = |section| {
        workspace_deps(manifest, section)
            .into_iter()
            .collect::<Vec<_>>()
    };
    assert_eq!(names("dependencies"), ["toolbox-core"]);
    assert_eq!(names("dev-dependencies"), ["toolbox-sdk"]);
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name).join("src")
}

/// The top-level modules declared in `lib.rs` with a file or folder of
/// their own (`mod x;`), and the names declared inline there (re-export
/// modules such as `arguments`), which are root paths, not modules.
fn modules(src: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let (mut files, mut inline) = (BTreeSet::new(), BTreeSet::new());
    for line in lib.lines().map(str::trim) {
        let rest = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .or_else(|| line.strip_prefix("pub(crate) mod "));
        let Some(rest) = rest else { continue };
        if let Some(name) = rest.strip_suffix(';') {
            files.insert(name.to_owned());
        } else if let Some(name) = rest.strip_suffix(" {") {
            inline.insert(name.to_owned());
        }
    }
    (files, inline)
}

/// Every `.rs` file of the crate but `lib.rs`, with the top-level module it
/// belongs to.
fn files(src: &Path, modules: &BTreeSet<String>) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for module in modules {
        let file = src.join(format!("{module}.rs"));
        if file.exists() {
            out.push((module.clone(), file));
        }
        let folder = src.join(module);
        if folder.is_dir() {
            out.extend(
                rs_files(&folder)
                    .into_iter()
                    .map(|path| (module.clone(), path)),
            );
        }
    }
    out
}

/// The first segment after each `crate::` in the code of `text` (comment
/// lines left out, `use crate::{a, b::c}` read as `a` and `b`), with its
/// line number.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code: String = text
        .lines()
        .map(|line| match line.trim_start().starts_with("//") {
            true => "",
            false => line.split(" // ").next().unwrap_or(line),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with('$') {
            continue; // a macro's `$crate::` path is a public one
        }
        let line = code[..at].matches('\n').count() + 1;
        let after = &code[at + "crate::".len()..];
        let Some(group) = after.strip_prefix('{') else {
            out.push((line, ident(after)));
            continue;
        };
        // The items of the group at its top level, each's first segment.
        let (mut depth, mut item_start) = (0usize, true);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if depth == 0 && item_start && !c.is_whitespace() => {
                    out.push((line, ident(&group[i..])));
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    out.retain(|(_, name)| !name.is_empty());
    out
}

struct Plan {
    /// `file:line: crate::Name` for every path through the root.
    through_root: Vec<String>,
    /// module → the sibling modules it imports.
    edges: BTreeMap<String, BTreeSet<String>>,
}

fn plan(krate: &str) -> Plan {
    let src = crate_src(krate);
    let (modules, inline) = modules(&src);
    let mut through_root = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let files = files(&src, &modules);
    // `macro_rules!` macros live at the crate root whichever file defines
    // them: their root paths are their only paths.
    let macros: BTreeSet<String> = files
        .iter()
        .flat_map(|(_, path)| {
            let text = fs::read_to_string(path).unwrap();
            text.match_indices("macro_rules! ")
                .map(|(at, found)| {
                    text[at + found.len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // Items defined in lib.rs itself (a crate whose root module is its
    // main concept, as `Provider` is toolbox-provider's) are reached by
    // their one path.
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let defined: BTreeSet<String> = lib
        .lines()
        .map(str::trim_start)
        .filter_map(|line| {
            let rest = line
                .strip_prefix("pub ")
                .or_else(|| line.strip_prefix("pub(crate) "))?;
            let (_, name) = [
                "enum ", "struct ", "fn ", "trait ", "type ", "const ", "static ",
            ]
            .iter()
            .find_map(|kind| rest.strip_prefix(kind).map(|name| (kind, name)))?;
            Some(
                name.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            )
        })
        .collect();
    for (module, path) in files {
        let text = fs::read_to_string(&path).unwrap();
        let shown = format!("{krate}/src/{}", path.strip_prefix(&src).unwrap().display());
        for (line, name) in crate_paths(&text) {
            if macros.contains(&name) || defined.contains(&name) {
                continue;
            }
            if modules.contains(&name) {
                if name != module {
                    edges.entry(module.clone()).or_default().insert(name);
                }
            } else {
                let kind = if inline.contains(&name) {
                    "a re-export module"
                } else {
                    "a root re-export"
                };
                through_root.push(format!("{shown}:{line}: crate::{name} ({kind})"));
            }
        }
    }
    Plan {
        through_root,
        edges,
    }
}

/// Whether `to` is reachable from `from`.
fn reaches(edges: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(at) = stack.pop() {
        for next in edges.get(&at).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}

#[test]
fn siblings_are_imported_by_module_path() {
    let through_root: Vec<String> = crates()
        .flat_map(|krate| plan(krate).through_root)
        .collect();
    assert!(
        through_root.is_empty(),
        "files reach siblings through their crate's root; import them by module path:\n{}",
        through_root.join("\n")
    );
}

#[test]
fn no_crate_has_an_import_loop() {
    let mut loops = Vec::new();
    for krate in crates() {
        let plan = plan(krate);
        let modules: BTreeSet<&String> = plan
            .edges
            .keys()
            .chain(plan.edges.values().flatten())
            .collect();
        for a in &modules {
            for b in &modules {
                if a < b && reaches(&plan.edges, a, b) && reaches(&plan.edges, b, a) {
                    loops.push(format!("{krate}: {a} <-> {b} (edges: {:?})", plan.edges));
                }
            }
        }
    }
    assert!(
        loops.is_empty(),
        "import loops between a crate's modules:\n{}",
        loops.join("\n")
    );
}

#[test]
fn every_crate_is_read() {
    for krate in crates() {
        let src = crate_src(krate);
        let (modules, _) = modules(&src);
        // Each file or folder beside lib.rs is a module the reader found.
        let on_disk: BTreeSet<String> = fs::read_dir(&src)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_dir() || path.extension().is_some_and(|e| e == "rs"))
            .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|name| name != "lib")
            .collect();
        assert_eq!(
            modules, on_disk,
            "{krate}: the reader's modules against src/"
        );
        assert!(
            modules.len() < 4 || !plan(krate).edges.is_empty(),
            "{krate}: no import between modules was read"
        );
    }
}

#[test]
fn the_reader_sees_imports_in_every_form() {
    let paths = crate_paths(
        "use crate::args::echo;\n// crate::ignored\nuse crate::{\n    Arguments, error::ToolError,\n};\nlet x = crate::schema::f::<T>();\n",
    );
    let names: Vec<&str> = paths.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["args", "Arguments", "error", "schema"]);
}

/// Every `.rs` file under `dir`, recursively, in path order.
fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A file's lines of code: neither blank nor a comment (doc comments
/// included), its unit tests (`#[cfg(test)] mod tests { .. }`) left out.
fn lines_of_code(text: &str) -> usize {
    let library = text
        .find("\n#[cfg(test)]\nmod tests {")
        .map_or(text, |at| &text[..at]);
    library
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .count()
}

/// The most lines of code a library file holds: past it, a file holds
/// more than one concept and is cut at its seams.
const MAX_LINES_OF_CODE: usize = 700;

#[test]
fn every_library_file_holds_one_concept_said_in_its_header() {
    let mut too_long = Vec::new();
    let mut no_header = Vec::new();
    let crates = crates().map(crate_src);
    let facade = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for src in crates.chain([facade]) {
        for path in rs_files(&src) {
            if path.file_name().is_some_and(|name| name == "tests.rs") {
                continue; // a module's unit tests, in a file of their own
            }
            let text = fs::read_to_string(&path).unwrap();
            let shown = path
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .unwrap()
                .display()
                .to_string();
            let code = lines_of_code(&text);
            if code > MAX_LINES_OF_CODE {
                too_long.push(format!("{shown}: {code} lines of code"));
            }
            if !text.trim_start().starts_with("//!") {
                no_header.push(shown);
            }
        }
    }
    assert!(
        too_long.is_empty(),
        "library files over {MAX_LINES_OF_CODE} lines of code; cut them at their seams:\n{}",
        too_long.join("\n")
    );
    assert!(
        no_header.is_empty(),
        "library files without a `//!` header saying what they hold:\n{}",
        no_header.join("\n")
    );
}

#[test]
fn the_line_count_leaves_out_comments_blank_lines_and_unit_tests() {
    let text = "//! Header.\n\n/// Doc.\nfn a() {}\n// note\nfn b() {}\n\n#[cfg(test)]\nmod tests {\n    fn c() {}\n}\n";
    assert_eq!(lines_of_code(text), 2);
}

/// The names a crate root makes public: its `pub mod`s and each name of
/// its `pub use`s (an item's `cfg` counted as present).
fn root_names(lib: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let code: String = lib
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    for statement in code.split(';') {
        let statement = statement.trim();
        let statement = statement
            .rsplit_once(']')
            .filter(|_| statement.starts_with("#["))
            .map_or(statement, |(_, rest)| rest.trim());
        if let Some(name) = statement.strip_prefix("pub mod ") {
            names.insert(name.trim().to_owned());
        } else if let Some(path) = statement.strip_prefix("pub use ") {
            let listed = match path.split_once('{') {
                Some((_, group)) => group.trim_end_matches('}').to_owned(),
                None => path.rsplit("::").next().unwrap_or(path).to_owned(),
            };
            for item in listed.split(',') {
                let name = item.rsplit(" as ").next().unwrap_or(item).trim();
                let name = name.rsplit("::").next().unwrap_or(name);
                if !name.is_empty() {
                    names.insert(name.to_owned());
                }
            }
        }
    }
    names
}

#[test]
fn toolbox_mcp_root_names_what_most_programs_name() {
    let lib = fs::read_to_string(crate_src("toolbox-mcp").join("lib.rs")).unwrap();
    let names = root_names(&lib);
    for family in ["client", "server", "auth"] {
        assert!(names.contains(family), "no `{family}` family in {names:?}");
    }
    assert!(
        names.len() <= 12,
        "toolbox-mcp's root makes {} names public (at most 12): {names:?}",
        names.len()
    );
}

#[test]
fn the_root_reader_counts_every_public_name() {
    let names = root_names(
        "mod private;\npub mod client;\n#[cfg(feature = \"x\")]\npub use a::{B, c::D};\npub use e::F as G;\n",
    );
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(names, ["B", "D", "G", "client"]);
}

/// With `autotests = false`, a new file in `tests/` builds only if a
/// target names it: each is a module of `integration.rs` or a `[[test]]`
/// path of the crate's manifest, for the facade and toolbox-mcp.
#[test]
fn every_test_file_is_built() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in [".", "toolbox-mcp"] {
        let dir = root.join(krate);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let integration = std::fs::read_to_string(dir.join("tests/integration.rs")).unwrap();
        let mut left_out = Vec::new();
        for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let file = path.file_name().unwrap().to_str().unwrap().to_owned();
            let module = format!("#[path = \"{file}\"]");
            let target = format!("path = \"tests/{file}\"");
            if !integration.contains(&module) && !manifest.contains(&target) {
                left_out.push(format!("{krate}/tests/{file}"));
            }
        }
        assert!(
            left_out.is_empty(),
            "built by no test target (add it to tests/integration.rs as a module, or a [[test]] to Cargo.toml): {left_out:?}"
        );
    }
}

/// The lines of code of a crate's library (see [`lines_of_code`]; files of
/// unit tests aside).
fn crate_lines(krate: &str) -> usize {
    rs_files(&crate_src(krate))
        .iter()
        .filter(|path| path.file_name().is_some_and(|name| name != "tests.rs"))
        .map(|path| lines_of_code(&fs::read_to_string(path).unwrap()))
        .sum()
}

#[test]
fn toolbox_core_stays_the_small_contract() {
    let core = crate_lines("toolbox-core");
    let all: usize = crates().map(crate_lines).sum();
    assert!(
        core <= 10_000,
        "toolbox-core holds {core} lines of code (at most 10,000): move what speaks to models into the crates above it"
    );
    assert!(
        core * 100 <= all * 35,
        "toolbox-core holds {core} of the library crates' {all} lines of code, over 35 %"
    );
    // No model-facing family and no optional heavy dependency in it.
    let (modules, _) = modules(&crate_src("toolbox-core"));
    for family in ["provider", "catalog", "turn", "code", "program", "testing"] {
        assert!(
            !modules.contains(family),
            "toolbox-core has a `{family}` module again"
        );
    }
    let manifest = manifest("toolbox-core");
    for heavy in ["candle", "tokenizers", "rquickjs", "rayon"] {
        assert!(
            !manifest.contains(heavy),
            "toolbox-core depends on {heavy} again"
        );
    }
}

/// The items a crate root re-exports with `pub use` at its top level: the
/// names a reader of its front page meets (modules, inline modules' own
/// items and re-exported crates such as `serde` aside).
fn root_items(lib: &str) -> BTreeSet<String> {
    // Only the top level: inline modules' bodies left out.
    let (mut depth, mut top) = (0usize, String::new());
    for line in lib.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        if depth == 0 {
            top.push_str(line);
            top.push('\n');
        }
        depth += line.matches('{').count();
        depth -= line.matches('}').count().min(depth);
    }
    let modules: BTreeSet<String> = root_names(&top)
        .into_iter()
        .filter(|name| top.contains(&format!("pub mod {name}")))
        .collect();
    root_names(&top)
        .into_iter()
        .filter(|name| !modules.contains(name))
        .filter(|name| !["serde", "serde_json", "schemars"].contains(&name.as_str()))
        .collect()
}

#[test]
fn toolbox_core_root_names_at_most_25_items() {
    let lib = fs::read_to_string(crate_src("toolbox-core").join("lib.rs")).unwrap();
    let names = root_items(&lib);
    assert!(
        names.contains("ToolBox") && names.contains("ToolResponse") && names.contains("Context"),
        "the reader missed the contract's names: {names:?}"
    );
    assert!(
        names.len() <= 25,
        "toolbox-core's root re-exports {} items (at most 25): {names:?}",
        names.len()
    );
}
