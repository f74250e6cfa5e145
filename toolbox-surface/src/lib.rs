//! Helpers for users' tests and CI: a surface check of a whole tool set
//! against a provider's rules, a schema snapshot assertion, and a harness to
//! call tools with JSON.
//!
//! ```
//! use serde_json::json;
//! use toolbox_provider::Provider;
//! use toolbox_surface::{check_surface, ToolHarness};
//! use toolbox_core::{tool_fn, FnToolBox};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Pair { a: i64, b: i64 }
//!
//! let tools = FnToolBox::new([tool_fn("add", "Adds", |p: Pair| async move { p.a + p.b })]).unwrap();
//! check_surface(&tools, Provider::OpenAiChat { strict: true }).assert_clean();
//!
//! let harness = ToolHarness::new(tools);
//! let outcome = harness.call_blocking("add", json!({"a": 1, "b": 2}));
//! assert_eq!(outcome.response.content, "3");
//! assert_eq!(outcome.events, ["start add", "success add"]);
//! ```

mod lock;
#[cfg(test)]
mod verdicts;

pub use lock::{
    compare_surfaces, read_surface_lock, surface_lock_text, Compatibility, SurfaceChange,
};

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use toolbox_core::Context;
use toolbox_core::ToolBox;
use toolbox_core::ToolBoxExt;
use toolbox_core::ToolHandler;
use toolbox_core::ToolResponse;
use toolbox_provider::{name_problem, validate, Provider, Violation};

/// The result of [`check_surface`]: every problem, readable.
#[derive(Clone, Debug)]
pub struct SurfaceReport {
    provider: Provider,
    tools: usize,
    violations: Vec<Violation>,
}

impl SurfaceReport {
    /// Whether the surface is inside the provider's rules.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// Every problem found.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Panics with the readable report unless the surface is clean: for tests.
    #[track_caller]
    pub fn assert_clean(&self) {
        if !self.is_clean() {
            panic!("{self}");
        }
    }
}

impl fmt::Display for SurfaceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(
                f,
                "{} tools, all inside {}",
                self.tools,
                self.provider.dialect().label()
            );
        }
        writeln!(
            f,
            "{} problem(s) in {} tools for {}:",
            self.violations.len(),
            self.tools,
            self.provider.dialect().label()
        )?;
        for v in &self.violations {
            if v.tool.is_empty() {
                writeln!(f, "  - the request: {}", v.rule)?;
            } else if v.path.is_empty() {
                writeln!(f, "  - tool `{}`: {}", v.tool, v.rule)?;
            } else {
                writeln!(f, "  - tool `{}`, at `{}`: {}", v.tool, v.path, v.rule)?;
            }
        }
        Ok(())
    }
}

/// Checks every tool `toolbox` offers (in an empty context) against
/// `provider`, as [`Provider::definitions`] would be given them: every
/// refusal of `definitions` (a tool only code may call where the provider
/// runs no code, a schema that cannot be lowered, the tools together past
/// the provider's limits on one request), found by the same code, and
/// beyond those each name legal and unique, each description and
/// namespace given, each example fitting, each lowered schema inside the
/// provider's dialect. Like `definitions`, a model provider is not checked
/// on an MCP Apps tool whose visibility leaves out the model (it is never
/// offered one).
pub fn check_surface<B: ToolBox + ?Sized>(toolbox: &B, provider: Provider) -> SurfaceReport {
    let dialect = provider.dialect();
    let ctx = Context::new();
    let specs = toolbox.specifications(&ctx);
    let specs = provider.offered(&specs);
    let screened = provider.screen(specs.iter());
    let mut violations = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (spec, screen) in specs.iter().zip(&screened.tools) {
        let mut flag = |path: String, rule: String| {
            violations.push(Violation {
                tool: spec.name.clone(),
                path,
                rule,
            })
        };
        if let Some(problem) = name_problem(&spec.name, dialect) {
            flag(String::new(), problem);
        }
        if !seen.insert(spec.name.as_str()) {
            flag(
                String::new(),
                format!("two tools are named `{}`", spec.name),
            );
        }
        if spec.description.trim().is_empty() {
            flag(String::new(), "no description: the model needs one".into());
        }
        if let Some(namespace) = &spec.namespace {
            if let Some(problem) = namespace.problem() {
                flag(
                    String::new(),
                    format!("namespace `{}`: {problem}", namespace.name),
                );
            }
        }
        // Each example is read by the code that reads a call's arguments.
        for (i, example) in spec.examples.iter().enumerate() {
            if let Err(error) = toolbox.check(&spec.name, example.into(), &ctx) {
                let (path, reason) = match &error {
                    toolbox_core::ToolError::InvalidArguments { path, reason } => {
                        (path.clone(), reason.clone())
                    }
                    other => (String::new(), other.to_string()),
                };
                let at = if path.is_empty() {
                    format!("examples[{i}]")
                } else {
                    format!("examples[{i}].{path}")
                };
                flag(
                    at,
                    format!("the example does not fit the tool's arguments: {reason}"),
                );
            }
        }
        if let Some(refusal) = &screen.caller {
            violations.extend(refusal.violations());
        }
        match &screen.parameters {
            Err(refusal) => violations.extend(refusal.violations()),
            Ok(schema) => {
                violations.extend(validate(schema, dialect).into_iter().map(|v| Violation {
                    tool: spec.name.clone(),
                    ..v
                }))
            }
        }
    }
    if let Some(refusal) = &screened.request {
        violations.extend(refusal.violations());
    }
    SurfaceReport {
        provider,
        tools: specs.len(),
        violations,
    }
}

/// Checks every tool of the program that registered itself
/// ([`toolbox_core::discover`]) against each of `providers`, box by box: one
/// test line for the whole discovered surface.
///
/// ```
/// use toolbox_provider::Provider;
/// toolbox_surface::check_discovered(&[Provider::OpenAiChat { strict: true }]).assert_clean();
/// ```
pub fn check_discovered(providers: &[Provider]) -> DiscoveredReport {
    let mut reports = Vec::new();
    let mut boxes = 0;
    for item in toolbox_core::discover::discovered() {
        let Some(source) = (item.build)() else {
            continue;
        };
        boxes += 1;
        for provider in providers {
            let report = check_surface(&*source, *provider);
            if !report.is_clean() {
                reports.push(format!(
                    "{} ({}): {report}",
                    item.module_path,
                    item.location()
                ));
            }
        }
    }
    DiscoveredReport { boxes, reports }
}

/// The result of [`check_discovered`].
#[derive(Clone, Debug)]
pub struct DiscoveredReport {
    boxes: usize,
    reports: Vec<String>,
}

impl DiscoveredReport {
    /// Whether every discovered box is inside every provider's rules.
    pub fn is_clean(&self) -> bool {
        self.reports.is_empty()
    }

    /// How many discovered boxes were checked.
    pub fn boxes(&self) -> usize {
        self.boxes
    }

    /// Panics with every report unless all are clean: for tests.
    #[track_caller]
    pub fn assert_clean(&self) {
        if !self.is_clean() {
            panic!("{self}");
        }
    }
}

impl fmt::Display for DiscoveredReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(f, "{} discovered boxes, all clean", self.boxes);
        }
        for report in &self.reports {
            writeln!(f, "{report}")?;
        }
        Ok(())
    }
}

/// Asserts that the specifications of `toolbox` equal the JSON snapshot at
/// `path`. A missing snapshot is written (and the assertion passes), except
/// in CI (`CI` set), where it fails; set `TOOLBOX_UPDATE_SNAPSHOTS=1` to
/// rewrite one after an intended change. [`assert_surface_lock`] says, in
/// addition, which differences break clients.
#[track_caller]
pub fn assert_schema_snapshot<B: ToolBox + ?Sized>(toolbox: &B, path: impl AsRef<Path>) {
    schema_snapshot(toolbox, path.as_ref(), updating(), in_ci());
}

#[track_caller]
fn schema_snapshot<B: ToolBox + ?Sized>(toolbox: &B, path: &Path, update: bool, ci: bool) {
    let specs = toolbox.specifications(&Context::new());
    let actual = serde_json::to_string_pretty(&specs)
        .unwrap_or_else(|e| panic!("specifications do not serialize: {e}"))
        + "\n";
    match std::fs::read_to_string(path) {
        Ok(expected) if !update => {
            if expected != actual {
                let (line, want, got) = expected
                    .lines()
                    .zip(actual.lines())
                    .enumerate()
                    .find(|(_, (a, b))| a != b)
                    .map(|(i, (a, b))| (i + 1, a.to_owned(), b.to_owned()))
                    .unwrap_or_else(|| {
                        (
                            expected.lines().count().min(actual.lines().count()) + 1,
                            "(end)".into(),
                            "(end)".into(),
                        )
                    });
                panic!(
                    "the tool schemas differ from the snapshot {} at line {line}:\n  snapshot: {want}\n  now:      {got}\nrerun with TOOLBOX_UPDATE_SNAPSHOTS=1 if the change is intended",
                    path.display()
                );
            }
        }
        Err(_) if !update && ci => panic!(
            "the snapshot {} is missing, and CI is set: a snapshot nobody committed checks nothing; run the test once with TOOLBOX_UPDATE_SNAPSHOTS=1 and commit the file",
            path.display()
        ),
        _ => write_file(path, &actual),
    }
}

/// Whether the tests run in CI (the `CI` variable, as CI services set it).
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn updating() -> bool {
    std::env::var_os("TOOLBOX_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1")
}

fn write_file(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// Asserts that the tool surface of `toolbox` (a box, a registry's
/// resolution) is the one locked in the JSON file at `path`: every tool's
/// name, description, title, effects and argument and result schemas. On
/// a difference the failure lists each change with its tool, its JSON path
/// and whether it breaks the clients that call the tools today
/// ([`compare_surfaces`]); `TOOLBOX_UPDATE_SNAPSHOTS=1` rewrites the lock.
/// A missing lock is written, except in CI (`CI` set), where it fails.
///
/// ```no_run
/// # let tools = toolbox_core::EmptyToolBox;
/// toolbox_surface::assert_surface_lock(&tools, "tools.lock.json");
/// ```
#[track_caller]
pub fn assert_surface_lock<B: ToolBox + ?Sized>(toolbox: &B, path: impl AsRef<Path>) {
    if let Err(report) = surface_lock(toolbox, path.as_ref(), updating(), in_ci()) {
        panic!("{report}");
    }
}

/// [`assert_surface_lock`] with the environment's answers given.
fn surface_lock<B: ToolBox + ?Sized>(
    toolbox: &B,
    path: &Path,
    update: bool,
    ci: bool,
) -> Result<(), String> {
    let specs = toolbox.specifications(&Context::new());
    let actual = surface_lock_text(&specs);
    let mut specs = specs;
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let locked = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) if !update && ci => {
            return Err(format!(
                "the surface lock {} is missing, and CI is set: a lock nobody committed checks nothing; run the test once with TOOLBOX_UPDATE_SNAPSHOTS=1 and commit the file",
                path.display()
            ))
        }
        Err(_) => {
            write_file(path, &actual);
            return Ok(());
        }
    };
    if update {
        write_file(path, &actual);
        return Ok(());
    }
    let old = read_surface_lock(&locked).map_err(|_| {
        format!(
            "the surface lock {} is not a lock file (`{{\"tools\": [..]}}`); rewrite it with TOOLBOX_UPDATE_SNAPSHOTS=1",
            path.display()
        )
    })?;
    let changes = compare_surfaces(&old, &specs);
    if changes.is_empty() {
        return Ok(());
    }
    let breaking = changes
        .iter()
        .filter(|c| c.class == Compatibility::Breaking)
        .count();
    let mut report = format!(
        "the tool surface differs from the lock {}: {breaking} breaking, {} compatible change(s)\n",
        path.display(),
        changes.len() - breaking
    );
    for change in &changes {
        report.push_str(&format!("  - {change}\n"));
    }
    report.push_str("rerun with TOOLBOX_UPDATE_SNAPSHOTS=1 to accept them (a breaking change breaks every client that calls the tools as they are now)");
    Err(report)
}

/// What a harness call returned and which lifecycle events it saw.
#[derive(Clone, Debug, PartialEq)]
pub struct HarnessOutcome {
    /// The response.
    pub response: ToolResponse,
    /// `start {name}`, then `success {name}` or `error {name}: {report}`.
    pub events: Vec<String>,
}

/// Calls a box's tools with JSON and records the lifecycle events.
pub struct ToolHarness<B> {
    toolbox: B,
}

impl<B: ToolBox> ToolHarness<B> {
    /// A harness around `toolbox`.
    pub fn new(toolbox: B) -> Self {
        ToolHarness { toolbox }
    }

    /// Calls `name` with `arguments` in an empty context.
    pub async fn call(&self, name: &str, arguments: Value) -> HarnessOutcome {
        self.call_in(name, arguments, &Context::new()).await
    }

    /// Calls `name` with `arguments` in `ctx`.
    pub async fn call_in(&self, name: &str, arguments: Value, ctx: &Context) -> HarnessOutcome {
        let events = Arc::new(Mutex::new(Vec::new()));
        let (e1, e2, e3) = (events.clone(), events.clone(), events.clone());
        let handler = ToolHandler::empty()
            .on_start(move |e| push(&e1, format!("start {}", e.name)))
            .on_success(move |e| push(&e2, format!("success {}", e.name)))
            .on_error(move |e| push(&e3, format!("error {}: {}", e.name, e.error.report())));
        let response = self.toolbox.call(name, &arguments, ctx, &handler).await;
        let events = events.lock().map(|e| e.clone()).unwrap_or_default();
        HarnessOutcome { response, events }
    }

    /// [`call`](Self::call) from synchronous code (not inside a runtime).
    pub fn call_blocking(&self, name: &str, arguments: Value) -> HarnessOutcome {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("cannot start a runtime for the harness: {e}"))
            .block_on(self.call(name, arguments))
    }
}

fn push(events: &Mutex<Vec<String>>, event: String) {
    if let Ok(mut events) = events.lock() {
        events.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolbox_core::boxes::tool_fn;
    use toolbox_core::boxes::FnToolBox;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct City {
        city: String,
    }

    fn tools() -> FnToolBox {
        FnToolBox::new([tool_fn(
            "weather",
            "Weather",
            |c: City| async move { c.city },
        )])
        .unwrap()
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("toolbox-{name}-{}.json", std::process::id()))
    }

    #[test]
    fn in_ci_a_missing_lock_or_snapshot_fails_instead_of_being_written() {
        let path = scratch("missing-lock");
        let _ = std::fs::remove_file(&path);
        let error = surface_lock(&tools(), &path, false, true).unwrap_err();
        assert!(error.starts_with("the surface lock "), "{error}");
        assert!(error.ends_with("is missing, and CI is set: a lock nobody committed checks nothing; run the test once with TOOLBOX_UPDATE_SNAPSHOTS=1 and commit the file"), "{error}");
        assert!(!path.exists());
        let failure =
            std::panic::catch_unwind(|| schema_snapshot(&tools(), &path, false, true)).unwrap_err();
        let message = failure.downcast_ref::<String>().unwrap();
        assert!(message.contains("is missing, and CI is set"), "{message}");
        assert!(!path.exists());
        // Outside CI it is written, and then holds.
        surface_lock(&tools(), &path, false, false).unwrap();
        surface_lock(&tools(), &path, false, true).unwrap();
        let _ = std::fs::remove_file(&path);
    }
}

/// What generated `check(..)` tests call (through the facade's
/// `macro_support`); not a public API.
#[doc(hidden)]
pub mod macro_support {
    use toolbox_core::ToolBox;

    pub use toolbox_provider::Provider;

    /// What a generated `check(..)` test runs: the surface against each
    /// provider, panicking with every report that is not clean.
    #[track_caller]
    pub fn check_surfaces<B: ToolBox + ?Sized>(toolbox: &B, providers: &[Provider]) {
        let reports: Vec<String> = providers
            .iter()
            .map(|provider| crate::check_surface(toolbox, *provider))
            .filter(|report| !report.is_clean())
            .map(|report| report.to_string())
            .collect();
        if !reports.is_empty() {
            panic!("{}", reports.join("\n"));
        }
    }
}
