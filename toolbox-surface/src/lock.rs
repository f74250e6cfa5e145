//! A tool surface's lock file, and what a change to it means for the
//! clients that already call it.
//!
//! [`compare_surfaces`] classifies every difference between two listings in
//! the terms of the JSON a client sends and receives: **breaking** when a
//! call or a reading that worked before may fail now (a tool or argument
//! removed, an optional argument made required, a type narrowed, an enum
//! value removed, an object closed, an output field removed, an effect made
//! more dangerous), **compatible** otherwise (a tool or an optional argument
//! added, a type widened, an enum value added, a description changed).
//! `$ref`s are followed, so renaming a definition changes nothing.
//!
//! ```
//! use serde_json::json;
//! use toolbox_surface::{compare_surfaces, Compatibility};
//! use toolbox_core::ToolSpecification;
//!
//! let old = [ToolSpecification::new("search", "Searches").with_parameters(json!({
//!     "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]
//! }))];
//! let new = [ToolSpecification::new("search", "Searches").with_parameters(json!({
//!     "type": "object",
//!     "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
//!     "required": ["query", "limit"]
//! }))];
//! let changes = compare_surfaces(&old, &new);
//! assert_eq!(changes[0].to_string(), "breaking: tool `search`, `limit`: a required argument was added");
//! assert_eq!(changes[0].class, Compatibility::Breaking);
//! ```

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use toolbox_core::internal::join;
use toolbox_core::ToolAnnotations;
use toolbox_core::ToolSpecification;
use toolbox_provider::internal::walk;

/// Whether a change can break a client that worked before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Compatibility {
    /// A call or a reading that worked before may fail now.
    Breaking,
    /// Everything that worked before still works.
    Compatible,
}

impl fmt::Display for Compatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compatibility::Breaking => "breaking",
            Compatibility::Compatible => "compatible",
        })
    }
}

/// One difference between two tool surfaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceChange {
    /// The tool.
    pub tool: String,
    /// Where: an argument path (`filters.tags[]`), `output.…` for the
    /// result, empty for the tool itself.
    pub path: String,
    /// What changed, in a sentence.
    pub what: String,
    /// Whether it breaks clients.
    pub class: Compatibility,
}

impl fmt::Display for SurfaceChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: tool `{}`: {}", self.class, self.tool, self.what)
        } else {
            write!(
                f,
                "{}: tool `{}`, `{}`: {}",
                self.class, self.tool, self.path, self.what
            )
        }
    }
}

/// A surface lock's text: `{"tools": [..]}`, the tools sorted by name,
/// pretty-printed, one final newline. What [`assert_surface_lock`]
/// writes, and what a pinned MCP box keeps (toolbox-mcp's `pin_file`):
/// one file serves both.
///
/// [`assert_surface_lock`]: super::assert_surface_lock
pub fn surface_lock_text(tools: &[ToolSpecification]) -> String {
    let mut tools = tools.to_vec();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "tools": tools }))
        .unwrap_or_else(|_| "{\"tools\": []}".to_owned());
    text.push('\n');
    text
}

/// The tools of a surface lock's text (see [`surface_lock_text`]).
///
/// ```
/// use toolbox_surface::{read_surface_lock, surface_lock_text};
/// use toolbox_core::ToolSpecification;
///
/// let tools = [ToolSpecification::new("search", "Searches")];
/// assert_eq!(read_surface_lock(&surface_lock_text(&tools)).unwrap(), tools);
/// assert_eq!(
///     read_surface_lock("[]").unwrap_err(),
///     "not a surface lock: expected `{\"tools\": [..]}`"
/// );
/// ```
pub fn read_surface_lock(text: &str) -> Result<Vec<ToolSpecification>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("not a surface lock: {e}"))?;
    let Some(tools) = value.get("tools") else {
        return Err("not a surface lock: expected `{\"tools\": [..]}`".to_owned());
    };
    serde_json::from_value(tools.clone()).map_err(|e| format!("not a surface lock: `tools`: {e}"))
}

/// Every difference between the `old` and the `new` listing, breaking
/// ones first, then by tool and path.
pub fn compare_surfaces(
    old: &[ToolSpecification],
    new: &[ToolSpecification],
) -> Vec<SurfaceChange> {
    let mut out = Changes::default();
    for before in old {
        match new.iter().find(|s| s.name == before.name) {
            None => out.push(
                &before.name,
                "",
                "the tool was removed (or renamed)",
                Compatibility::Breaking,
            ),
            Some(after) => compare_tool(before, after, &mut out),
        }
    }
    for after in new {
        if !old.iter().any(|s| s.name == after.name) {
            out.push(
                &after.name,
                "",
                "a tool was added",
                Compatibility::Compatible,
            );
        }
    }
    let mut changes = out.0;
    changes.sort_by(|a, b| (a.class, &a.tool, &a.path).cmp(&(b.class, &b.tool, &b.path)));
    changes
}

#[derive(Default)]
struct Changes(Vec<SurfaceChange>);

impl Changes {
    fn push(&mut self, tool: &str, path: &str, what: impl Into<String>, class: Compatibility) {
        self.0.push(SurfaceChange {
            tool: tool.to_owned(),
            path: path.to_owned(),
            what: what.into(),
            class,
        });
    }
}

fn compare_tool(before: &ToolSpecification, after: &ToolSpecification, out: &mut Changes) {
    let tool = &before.name;
    if before.description != after.description {
        out.push(
            tool,
            "",
            "the description changed",
            Compatibility::Compatible,
        );
    }
    if before.title != after.title {
        out.push(tool, "", "the title changed", Compatibility::Compatible);
    }
    compare_effects(
        tool,
        before.annotations.as_ref(),
        after.annotations.as_ref(),
        out,
    );
    let mut input = Walk {
        tool,
        old_root: &before.parameters,
        new_root: &after.parameters,
        direction: Direction::Input,
        seen: BTreeSet::new(),
        out,
    };
    input.node(&before.parameters, &after.parameters, "", 0);
    match (&before.output_schema, &after.output_schema) {
        (Some(old), Some(new)) => {
            let mut output = Walk {
                tool,
                old_root: old,
                new_root: new,
                direction: Direction::Output,
                seen: BTreeSet::new(),
                out,
            };
            output.node(old, new, "output", 0);
        }
        (Some(_), None) => out.push(
            tool,
            "output",
            "the output schema was removed",
            Compatibility::Breaking,
        ),
        (None, Some(_)) => out.push(
            tool,
            "output",
            "an output schema was added",
            Compatibility::Compatible,
        ),
        (None, None) => {}
    }
}

/// Effects a client relies on: being made more dangerous breaks it.
fn compare_effects(
    tool: &str,
    old: Option<&ToolAnnotations>,
    new: Option<&ToolAnnotations>,
    out: &mut Changes,
) {
    let default = ToolAnnotations::default();
    let (old, new) = (old.unwrap_or(&default), new.unwrap_or(&default));
    let flag = |v: Option<bool>| v == Some(true);
    // (name, dangerous when set?)
    for (name, before, after, danger_when_set) in [
        ("read_only", flag(old.read_only), flag(new.read_only), false),
        (
            "destructive",
            flag(old.destructive),
            flag(new.destructive),
            true,
        ),
        (
            "idempotent",
            flag(old.idempotent),
            flag(new.idempotent),
            false,
        ),
        (
            "open_world",
            flag(old.open_world),
            flag(new.open_world),
            true,
        ),
    ] {
        if before == after {
            continue;
        }
        let (verb, more_dangerous) = if after {
            ("added", danger_when_set)
        } else {
            ("dropped", !danger_when_set)
        };
        let class = if more_dangerous {
            Compatibility::Breaking
        } else {
            Compatibility::Compatible
        };
        out.push(tool, "", format!("the `{name}` effect was {verb}"), class);
    }
}

/// Which way values flow: a client sends arguments (the tool accepting
/// less breaks it) and reads results (the tool sending other fields does).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Input,
    Output,
}

/// How deep two schemas are compared (recursive types stop here).
const MAX_DEPTH: usize = 32;

struct Walk<'a, 's> {
    tool: &'a str,
    old_root: &'s Value,
    new_root: &'s Value,
    direction: Direction,
    /// Pairs of references already compared (recursion).
    seen: BTreeSet<(String, String)>,
    out: &'a mut Changes,
}

/// One schema node with its references followed and its `null` branch
/// (schemars' `Option`) taken off.
struct Node<'s> {
    object: Option<&'s Map<String, Value>>,
    nullable: bool,
    /// The `$ref` followed to get here, for recursion.
    reference: Option<&'s str>,
}

fn resolve<'s>(root: &'s Value, schema: &'s Value) -> Node<'s> {
    let mut current = schema;
    let mut reference = None;
    for _ in 0..MAX_DEPTH {
        let Some(object) = current.as_object() else {
            break;
        };
        if let Some(target) = object.get("$ref").and_then(Value::as_str) {
            if let Some(found) = toolbox_core::internal::resolve_ref(root, target) {
                if object.len() == 1
                    || object
                        .keys()
                        .all(|k| matches!(k.as_str(), "$ref" | "description" | "title" | "default"))
                {
                    reference = Some(target);
                    current = found;
                    continue;
                }
            }
        }
        // `anyOf: [X, {"type": "null"}]` is X, nullable.
        if let Some(branches) = object.get("anyOf").and_then(Value::as_array) {
            let (nulls, others): (Vec<&Value>, Vec<&Value>) = branches
                .iter()
                .partition(|b| b.get("type").is_some_and(|t| t == "null"));
            if !nulls.is_empty() && others.len() == 1 {
                current = others[0];
                continue;
            }
        }
        break;
    }
    let object = current.as_object();
    // The one nullable rule, asked of the node as written (its `null`
    // branch included).
    let nullable = toolbox_core::internal::accepts_null(root, schema);
    Node {
        object,
        nullable,
        reference,
    }
}

/// The JSON types a node allows, `None` for any (no `type`).
fn types(node: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let mut set: BTreeSet<String> = match node.get("type")? {
        Value::String(t) => [t.clone()].into(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => return None,
    };
    set.remove("null");
    Some(set)
}

/// Whether type `t` is allowed by `set` (`integer` within `number`).
fn covers(set: &BTreeSet<String>, t: &str) -> bool {
    set.contains(t) || (t == "integer" && set.contains("number"))
}

fn closed(node: &Map<String, Value>) -> bool {
    node.get("additionalProperties") == Some(&Value::Bool(false))
}

impl Walk<'_, '_> {
    /// A change that lets through more than before: compatible for
    /// arguments, breaking for results (a client reads what it did not
    /// expect).
    fn widened(&mut self, path: &str, what: String) {
        let class = match self.direction {
            Direction::Input => Compatibility::Compatible,
            Direction::Output => Compatibility::Breaking,
        };
        self.out.push(self.tool, path, what, class);
    }

    /// A change that lets through less than before: breaking for arguments
    /// (a call that worked is refused), compatible for results.
    fn narrowed(&mut self, path: &str, what: String) {
        let class = match self.direction {
            Direction::Input => Compatibility::Breaking,
            Direction::Output => Compatibility::Compatible,
        };
        self.out.push(self.tool, path, what, class);
    }

    fn node(&mut self, old: &Value, new: &Value, path: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let (a, b) = (resolve(self.old_root, old), resolve(self.new_root, new));
        if let (Some(x), Some(y)) = (a.reference, b.reference) {
            if !self.seen.insert((x.to_owned(), y.to_owned())) {
                return;
            }
        }
        let at = if path.is_empty() {
            "the arguments"
        } else {
            "the value"
        };
        match (a.nullable, b.nullable) {
            (true, false) => self.narrowed(path, format!("{at} may no longer be `null`")),
            (false, true) => self.widened(path, format!("{at} may now be `null`")),
            _ => {}
        }
        let (Some(x), Some(y)) = (a.object, b.object) else {
            return;
        };
        if path.starts_with("output") || !path.is_empty() {
            let (dx, dy) = (x.get("description"), y.get("description"));
            if dx != dy && !path.is_empty() && self.direction == Direction::Input {
                self.out.push(
                    self.tool,
                    path,
                    "the description changed",
                    Compatibility::Compatible,
                );
            }
        }
        self.types(x, y, path);
        self.enums(x, y, path);
        self.bounds(x, y, path);
        self.properties(x, y, path, depth);
        self.items(x, y, path, depth);
        self.branches(x, y, path, depth);
    }

    fn types(&mut self, x: &Map<String, Value>, y: &Map<String, Value>, path: &str) {
        match (types(x), types(y)) {
            (Some(old), Some(new)) => {
                let lost: Vec<&String> = old.iter().filter(|t| !covers(&new, t)).collect();
                let gained: Vec<&String> = new.iter().filter(|t| !covers(&old, t)).collect();
                if !lost.is_empty() {
                    self.narrowed(
                        path,
                        format!(
                            "the type was narrowed from {} to {}",
                            list(&old),
                            list(&new)
                        ),
                    );
                } else if !gained.is_empty() {
                    self.widened(
                        path,
                        format!("the type was widened from {} to {}", list(&old), list(&new)),
                    );
                }
            }
            (None, Some(new)) if !new.is_empty() => self.narrowed(
                path,
                format!("the type was narrowed from any value to {}", list(&new)),
            ),
            (Some(old), None) if !old.is_empty() => self.widened(
                path,
                format!("the type was widened from {} to any value", list(&old)),
            ),
            _ => {}
        }
    }

    fn enums(&mut self, x: &Map<String, Value>, y: &Map<String, Value>, path: &str) {
        let values = |o: &Map<String, Value>| -> Option<Vec<Value>> {
            if let Some(c) = o.get("const") {
                return Some(vec![c.clone()]);
            }
            o.get("enum")
                .and_then(Value::as_array)
                .map(|e| e.iter().filter(|v| !v.is_null()).cloned().collect())
        };
        match (values(x), values(y)) {
            (Some(old), Some(new)) => {
                for v in old.iter().filter(|v| !new.contains(v)) {
                    self.narrowed(path, format!("the value {v} was removed"));
                }
                for v in new.iter().filter(|v| !old.contains(v)) {
                    self.widened(path, format!("the value {v} was added"));
                }
            }
            (None, Some(_)) => self.narrowed(path, "the value is now limited to a list".to_owned()),
            (Some(_), None) => {
                self.widened(path, "the value is no longer limited to a list".to_owned())
            }
            (None, None) => {}
        }
    }

    fn bounds(&mut self, x: &Map<String, Value>, y: &Map<String, Value>, path: &str) {
        // (keyword, a larger value narrows)
        for (key, larger_narrows) in [
            ("minimum", true),
            ("exclusiveMinimum", true),
            ("minLength", true),
            ("minItems", true),
            ("minProperties", true),
            ("maximum", false),
            ("exclusiveMaximum", false),
            ("maxLength", false),
            ("maxItems", false),
            ("maxProperties", false),
        ] {
            let (old, new) = (
                x.get(key).and_then(Value::as_f64),
                y.get(key).and_then(Value::as_f64),
            );
            let narrowed = match (old, new) {
                (Some(o), Some(n)) if o != n => (n > o) == larger_narrows,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                _ => continue,
            };
            let what = match (old, new) {
                (Some(o), Some(n)) => format!("`{key}` changed from {o} to {n}"),
                (None, Some(n)) => format!("`{key}` {n} was added"),
                (Some(o), None) => format!("`{key}` {o} was removed"),
                (None, None) => continue,
            };
            if narrowed {
                self.narrowed(path, what)
            } else {
                self.widened(path, what)
            }
        }
        match (x.get("pattern"), y.get("pattern")) {
            (a, b) if a == b => {}
            (_, Some(p)) => self.narrowed(path, format!("the pattern is now {p}")),
            (Some(_), None) => self.widened(path, "the pattern was removed".to_owned()),
            _ => {}
        }
    }

    fn properties(
        &mut self,
        x: &Map<String, Value>,
        y: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let empty = Map::new();
        let old = x
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let new = y
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let (old_required, new_required) = (walk::required(x), walk::required(y));
        let input = self.direction == Direction::Input;
        for (name, before) in old {
            let at = join(path, name);
            match new.get(name) {
                None if input => self.out.push(
                    self.tool,
                    &at,
                    "the argument was removed (or renamed)",
                    Compatibility::Breaking,
                ),
                None => self.out.push(
                    self.tool,
                    &at,
                    "the field was removed from the result",
                    Compatibility::Breaking,
                ),
                Some(after) => {
                    match (
                        old_required.contains(name.as_str()),
                        new_required.contains(name.as_str()),
                    ) {
                        (false, true) if input => self.out.push(
                            self.tool,
                            &at,
                            "an optional argument was made required",
                            Compatibility::Breaking,
                        ),
                        (true, false) if input => self.out.push(
                            self.tool,
                            &at,
                            "a required argument was made optional",
                            Compatibility::Compatible,
                        ),
                        (true, false) => self.out.push(
                            self.tool,
                            &at,
                            "the field may now be absent from the result",
                            Compatibility::Breaking,
                        ),
                        (false, true) => self.out.push(
                            self.tool,
                            &at,
                            "the field is now always in the result",
                            Compatibility::Compatible,
                        ),
                        _ => {}
                    }
                    self.node(before, after, &at, depth + 1);
                }
            }
        }
        for name in new.keys().filter(|k| !old.contains_key(*k)) {
            let at = join(path, name);
            if !input {
                self.out.push(
                    self.tool,
                    &at,
                    "a field was added to the result",
                    Compatibility::Compatible,
                );
            } else if new_required.contains(name.as_str()) {
                self.out.push(
                    self.tool,
                    &at,
                    "a required argument was added",
                    Compatibility::Breaking,
                );
            } else {
                self.out.push(
                    self.tool,
                    &at,
                    "an optional argument was added",
                    Compatibility::Compatible,
                );
            }
        }
        if input {
            match (closed(x), closed(y)) {
                (false, true) if types(x).is_some_and(|t| t.contains("object")) || x.contains_key("properties") => {
                    self.out.push(self.tool, path, "the object was closed (`additionalProperties: false`): undeclared keys are refused", Compatibility::Breaking)
                }
                (true, false) => self.out.push(self.tool, path, "the object was opened to undeclared keys", Compatibility::Compatible),
                _ => {}
            }
        }
        if let (Some(a), Some(b)) = (
            x.get("additionalProperties").filter(|s| s.is_object()),
            y.get("additionalProperties").filter(|s| s.is_object()),
        ) {
            self.node(a, b, &join(path, "*"), depth + 1);
        }
    }

    fn items(&mut self, x: &Map<String, Value>, y: &Map<String, Value>, path: &str, depth: usize) {
        if let (Some(a), Some(b)) = (x.get("items"), y.get("items")) {
            self.node(a, b, &format!("{path}[]"), depth + 1);
        }
    }

    /// Unions (data enums): branches paired by their tag where they have
    /// one (a `const` property), else by position.
    fn branches(
        &mut self,
        x: &Map<String, Value>,
        y: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let branches = |o: &Map<String, Value>| -> Vec<Value> {
            ["anyOf", "oneOf"]
                .iter()
                .filter_map(|k| o.get(*k).and_then(Value::as_array))
                .flatten()
                .filter(|b| !b.get("type").is_some_and(|t| t == "null"))
                .cloned()
                .collect()
        };
        let (old, new) = (branches(x), branches(y));
        if old.is_empty() && new.is_empty() {
            return;
        }
        let tag = |root: &Value, branch: &Value| -> Option<String> {
            let node = resolve(root, branch);
            let properties = node.object?.get("properties")?.as_object()?;
            properties
                .iter()
                .find_map(|(k, p)| p.get("const").map(|c| format!("{k}={c}")))
        };
        let old_tags: Vec<Option<String>> = old.iter().map(|b| tag(self.old_root, b)).collect();
        let new_tags: Vec<Option<String>> = new.iter().map(|b| tag(self.new_root, b)).collect();
        let tagged = old_tags.iter().chain(&new_tags).all(Option::is_some);
        if tagged {
            for (i, t) in old_tags.iter().enumerate() {
                match new_tags.iter().position(|n| n == t) {
                    Some(j) => self.node(&old[i], &new[j], path, depth + 1),
                    None => self.narrowed(
                        path,
                        format!("the variant `{}` was removed", t.as_deref().unwrap_or("?")),
                    ),
                }
            }
            for t in new_tags.iter().filter(|t| !old_tags.contains(t)) {
                self.widened(
                    path,
                    format!("the variant `{}` was added", t.as_deref().unwrap_or("?")),
                );
            }
            return;
        }
        for (i, (a, b)) in old.iter().zip(&new).enumerate() {
            self.node(a, b, &format!("{path}<{i}>"), depth + 1);
        }
        if old.len() > new.len() {
            self.narrowed(
                path,
                format!(
                    "{} of {} alternatives were removed",
                    old.len() - new.len(),
                    old.len()
                ),
            );
        } else if new.len() > old.len() {
            self.widened(
                path,
                format!("{} alternatives were added", new.len() - old.len()),
            );
        }
    }
}

fn list(types: &BTreeSet<String>) -> String {
    let names: Vec<&str> = types.iter().map(String::as_str).collect();
    format!("`{}`", names.join(" | "))
}
