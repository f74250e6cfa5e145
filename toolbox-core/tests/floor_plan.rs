//! The floor plan of toolbox-core, read from its source: files reach their
//! siblings by module path (never through the root's re-exports), and the
//! modules import each other without loops, except the one the design
//! draws (`toolbox` ↔ `lifecycle`: the trait's `call` runs the lifecycle,
//! which dispatches through the trait).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The one loop the design allows.
const ALLOWED_LOOP: [&str; 2] = ["lifecycle", "toolbox"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules declared in `lib.rs` with a file or folder of
/// their own (`mod x;`), and the names declared inline there (re-export
/// modules such as `arguments`), which are root paths, not modules.
fn modules() -> (BTreeSet<String>, BTreeSet<String>) {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
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
fn files(modules: &BTreeSet<String>) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for module in modules {
        let file = src().join(format!("{module}.rs"));
        if file.exists() {
            out.push((module.clone(), file));
        }
        let folder = src().join(module);
        if folder.is_dir() {
            let mut stack = vec![folder];
            while let Some(dir) = stack.pop() {
                for entry in fs::read_dir(dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "rs") {
                        out.push((module.clone(), path));
                    }
                }
            }
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

fn plan() -> Plan {
    let (modules, inline) = modules();
    let mut through_root = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let files = files(&modules);
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
    for (module, path) in files {
        let text = fs::read_to_string(&path).unwrap();
        let shown = path.strip_prefix(src()).unwrap().display().to_string();
        for (line, name) in crate_paths(&text) {
            if macros.contains(&name) {
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
    let plan = plan();
    assert!(
        plan.through_root.is_empty(),
        "core files reach siblings through the crate root; import them by module path:\n{}",
        plan.through_root.join("\n")
    );
}

#[test]
fn the_only_import_loop_is_toolbox_and_lifecycle() {
    let plan = plan();
    let modules: BTreeSet<&String> = plan
        .edges
        .keys()
        .chain(plan.edges.values().flatten())
        .collect();
    let mut loops = Vec::new();
    for a in &modules {
        for b in &modules {
            if a < b && reaches(&plan.edges, a, b) && reaches(&plan.edges, b, a) {
                let pair = [a.as_str(), b.as_str()];
                if pair != ALLOWED_LOOP {
                    loops.push(format!("{a} <-> {b}"));
                }
            }
        }
    }
    assert!(
        loops.is_empty(),
        "import loops between core modules (edges: {:?}):\n{}",
        plan.edges,
        loops.join("\n")
    );
}

#[test]
fn the_reader_sees_imports_in_every_form() {
    let paths = crate_paths(
        "use crate::args::echo;\n// crate::ignored\nuse crate::{\n    Arguments, error::ToolError,\n};\nlet x = crate::schema::f::<T>();\n",
    );
    let names: Vec<&str> = paths.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["args", "Arguments", "error", "schema"]);
}
