//! Helpers for users' tests and CI: a surface check of a whole tool set
//! against a provider's rules, a schema snapshot assertion, and a harness to
//! call tools with JSON.
//!
//! ```
//! use serde_json::json;
//! use toolbox_core::provider::Provider;
//! use toolbox_core::testing::{check_surface, ToolHarness};
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

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use crate::provider::{lower, name_problem, validate, validate_request, Provider};
use crate::{Context, ToolBox, ToolBoxExt, ToolHandler, ToolResponse};

/// One problem of a tool surface.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SurfaceViolation {
    /// The tool's name; empty for a limit the tools break together (a
    /// provider's limit on one request).
    pub tool: String,
    /// Where in its argument schema, empty for the tool itself.
    pub path: String,
    /// What the provider would refuse.
    pub rule: String,
}

/// The result of [`check_surface`]: every problem, readable.
#[derive(Clone, Debug)]
pub struct SurfaceReport {
    provider: Provider,
    tools: usize,
    violations: Vec<SurfaceViolation>,
}

impl SurfaceReport {
    /// Whether the surface is inside the provider's rules.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// Every problem found.
    pub fn violations(&self) -> &[SurfaceViolation] {
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
/// `provider`: each name legal and unique, each schema lowered and then
/// inside the provider's dialect, and the tools together inside the
/// provider's limits on one request.
pub fn check_surface<B: ToolBox + ?Sized>(toolbox: &B, provider: Provider) -> SurfaceReport {
    let dialect = provider.dialect();
    let specs = toolbox.specifications(&Context::new());
    let mut violations = Vec::new();
    let mut lowered = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for spec in &specs {
        let mut flag = |path: String, rule: String| {
            violations.push(SurfaceViolation {
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
        match lower(&spec.parameters, dialect) {
            Err(error) => flag(error.path, error.message),
            Ok(schema) => {
                for violation in validate(&schema, dialect) {
                    flag(violation.path, violation.rule);
                }
                lowered.push(schema);
            }
        }
    }
    for problem in validate_request(&lowered, dialect) {
        violations.push(SurfaceViolation {
            tool: String::new(),
            path: String::new(),
            rule: problem,
        });
    }
    SurfaceReport {
        provider,
        tools: specs.len(),
        violations,
    }
}

/// Asserts that the specifications of `toolbox` equal the JSON snapshot at
/// `path`. A missing snapshot is written (and the assertion passes); set
/// `TOOLBOX_UPDATE_SNAPSHOTS=1` to rewrite one after an intended change.
#[track_caller]
pub fn assert_schema_snapshot<B: ToolBox + ?Sized>(toolbox: &B, path: impl AsRef<Path>) {
    let path = path.as_ref();
    let specs = toolbox.specifications(&Context::new());
    let actual = serde_json::to_string_pretty(&specs)
        .unwrap_or_else(|e| panic!("specifications do not serialize: {e}"))
        + "\n";
    let update = std::env::var_os("TOOLBOX_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
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
        _ => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
            }
            std::fs::write(path, actual)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
    }
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
