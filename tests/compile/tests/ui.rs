//! Compile-time behaviour of `#[tool]` and `#[tool_box]`: what compiles, and
//! the exact error for every rule (`TRYBUILD=overwrite` regenerates the
//! `.stderr` files; review them before committing).
//!
//! rustc's wording changes between releases, so the `.stderr` snapshots are
//! compared on the toolchain they were written with ([`SNAPSHOT_RUSTC`]);
//! on any other, the failing cases must still fail and the passing ones
//! pass, but their text is not compared.

/// The rustc release the `.stderr` files were written with.
const SNAPSHOT_RUSTC: &str = "rustc 1.95.";

fn rustc_version() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default()
}

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/tool_box/pass/*.rs");
    cases.pass("tests/ui/tool/pass/*.rs");
    if rustc_version().starts_with(SNAPSHOT_RUSTC) {
        cases.compile_fail("tests/ui/tool_box/fail/*.rs");
        cases.compile_fail("tests/ui/tool/fail/*.rs");
    } else {
        eprintln!(
            "the UI snapshots are for {SNAPSHOT_RUSTC}x; this is {}: checking that each case fails, not its text",
            rustc_version().trim()
        );
        // Without a snapshot beside it, trybuild records the text instead
        // of comparing it, in the temporary copy. Nothing else runs that
        // could read the environment meanwhile: this binary's other test
        // only reads files.
        #[allow(clippy::disallowed_methods)]
        std::env::set_var("TRYBUILD", "overwrite");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for group in ["tests/ui/tool_box/fail", "tests/ui/tool/fail"] {
            let copy = std::env::temp_dir().join(format!(
                "toolbox-ui-{}-{}",
                std::process::id(),
                group.replace('/', "-")
            ));
            std::fs::create_dir_all(&copy).unwrap();
            for entry in std::fs::read_dir(dir.join(group)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "rs") {
                    std::fs::copy(&path, copy.join(path.file_name().unwrap())).unwrap();
                }
            }
            cases.compile_fail(copy.join("*.rs"));
        }
    }
}

/// A user never reads a private path: no snapshot names `__private`
/// (ours or serde's), whichever rule it shows.
#[test]
fn no_diagnostic_names_a_private_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for group in ["tests/ui/tool_box/fail", "tests/ui/tool/fail"] {
        for entry in std::fs::read_dir(dir.join(group)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "stderr") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains("__private"),
                    "{} names a private path",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} snapshots found");
}
