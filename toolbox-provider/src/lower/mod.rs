//! Lowering a JSON Schema (draft 2020-12, as schemars emits it) into each
//! provider's dialect.

mod gemini;
mod strict;

use std::cell::Cell;
use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::rules::{gemini_parameter_format, is_gemini_parameter_name, DialectRules, Fix};
use super::walk::{self, def_name, Edge};
use toolbox_core::internal::join;
use toolbox_core::schema::Dialect;

/// Why a schema cannot be expressed in a dialect.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if path.is_empty() { String::new() } else { format!("`{path}`: ") })]
pub struct LowerError {
    /// Where in the argument object (`filters.tags`), empty for the root.
    pub path: String,
    /// What cannot be expressed and what to do instead.
    pub message: String,
}

/// Lowers a tool's argument schema into `dialect`.
///
/// The rule is soundness: either the schema is refused with a named reason,
/// or every value valid under the lowered schema is taken by the tool once
/// [`normalize`](toolbox_core::args::normalize) has undone what lowering had
/// to change (OpenAI strict's `null` for "absent", the keys a dialect that
/// cannot close objects lets a model add). A constraint the dialect cannot
/// express moves into the description, never vanishes.
pub fn lower(schema: &Value, dialect: Dialect) -> Result<Value, LowerError> {
    // Where `oneOf` becomes `anyOf`, a tagged union's tag is required, so a
    // value still fits exactly one branch of the original.
    let tagged = match dialect {
        Dialect::OpenAiStrict | Dialect::AnthropicStrict | Dialect::GeminiParameters => {
            super::tags::require_tags(schema)
        }
        _ => None,
    };
    let schema = tagged.as_ref().unwrap_or(schema);
    let mut root = schema.clone();
    let Some(object) = root.as_object_mut() else {
        return Err(LowerError {
            path: String::new(),
            message: "the argument schema must be a JSON object".into(),
        });
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err(LowerError {
            path: String::new(),
            message: "the root of a tool's argument schema must be `\"type\": \"object\"`".into(),
        });
    }
    if dialect != Dialect::Mcp {
        object.remove("$schema");
    }
    object.remove("title");
    if !dialect.expresses_recursion() {
        if let Some(cycle) = walk::cycles(&root).first() {
            return Err(LowerError {
                path: String::new(),
                message: format!(
                    "the schema is recursive ({}), which {} cannot express; bound the depth with distinct types",
                    walk::describe_cycle(cycle),
                    dialect.label()
                ),
            });
        }
    }
    let Some(object) = root.as_object_mut() else {
        return Ok(root);
    };
    let lowering = Lowering {
        dialect,
        root: schema,
        depth: Cell::new(0),
        nodes: Cell::new(0),
    };
    match dialect {
        Dialect::OpenAi | Dialect::Anthropic | Dialect::Mcp => {
            object.entry("properties").or_insert_with(|| json!({}));
            Ok(root)
        }
        Dialect::GeminiJsonSchema => {
            let mut lowered = lowering.gemini_json(root, "")?;
            if let Some(object) = lowered.as_object_mut() {
                object.entry("properties").or_insert_with(|| json!({}));
            }
            Ok(lowered)
        }
        Dialect::GeminiParameters => {
            let mut lowered = lowering.gemini_parameters(root, "", &mut Vec::new())?;
            let Some(object) = lowered.as_object_mut() else {
                return Ok(lowered);
            };
            if object.contains_key("anyOf") {
                return Err(lowering.error(
                    "",
                    "a choice between several shapes at the root cannot be expressed in Gemini `parameters`, whose root is one object; move the choice into a property",
                ));
            }
            object.insert("type".into(), json!("object"));
            object.entry("properties").or_insert_with(|| json!({}));
            // The declaration carries the description; the legacy form has none at the root.
            object.remove("description");
            object.remove("nullable");
            Ok(lowered)
        }
        Dialect::OpenAiStrict | Dialect::AnthropicStrict => {
            let mut lowered = lowering.strict(root, "", &mut Vec::new())?;
            prune_defs(&mut lowered);
            Ok(lowered)
        }
    }
}

struct Lowering<'s> {
    dialect: Dialect,
    /// The schema as given: its `$defs`, and the root for `#`.
    root: &'s Value,
    /// How deep the walk is now, and how many schema nodes it has produced:
    /// lowering stays linear in its output, and both are bounded.
    depth: Cell<usize>,
    nodes: Cell<usize>,
}

/// The deepest a lowered schema may nest.
pub const MAX_LOWERING_DEPTH: usize = 64;
/// The most schema nodes a lowering may produce (inlined `$ref`s count
/// each time they are inlined).
pub const MAX_LOWERED_NODES: usize = 20_000;

/// Constraints a dialect without them keeps as description text.
const CONSTRAINTS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
    "contains",
];

/// Which keywords of a node belong to which JSON type, for splitting a
/// type array into one branch per type.
const TYPE_KEYWORDS: &[(&str, &[&str])] = &[
    ("string", &["format", "minLength", "maxLength", "pattern"]),
    ("integer", &["format", "minimum", "maximum"]),
    ("number", &["format", "minimum", "maximum"]),
    ("array", &["items", "minItems", "maxItems"]),
    (
        "object",
        &[
            "properties",
            "required",
            "minProperties",
            "maxProperties",
            "propertyOrdering",
            "additionalProperties",
        ],
    ),
];

/// Leaves one level of the walk when dropped.
struct Level<'a>(&'a Cell<usize>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl Lowering<'_> {
    fn error(&self, path: &str, message: impl Into<String>) -> LowerError {
        LowerError {
            path: path.to_owned(),
            message: message.into(),
        }
    }

    /// Enters one schema node: refuses a walk that nests too deep (a cycle
    /// the reference check cannot see) or that has produced too much.
    fn enter(&self, path: &str) -> Result<Level<'_>, LowerError> {
        let depth = self.depth.get() + 1;
        let nodes = self.nodes.get() + 1;
        if depth > MAX_LOWERING_DEPTH {
            return Err(self.error(
                path,
                format!(
                    "the schema nests deeper than {MAX_LOWERING_DEPTH} levels once its references are inlined for {}; a recursive type cannot be expressed there",
                    self.dialect.label()
                ),
            ));
        }
        if nodes > MAX_LOWERED_NODES {
            return Err(self.error(
                path,
                format!(
                    "the schema grows past {MAX_LOWERED_NODES} nodes once its references are inlined for {}; share fewer described references or simplify the types",
                    self.dialect.label()
                ),
            ));
        }
        self.depth.set(depth);
        self.nodes.set(nodes);
        Ok(Level(&self.depth))
    }

    /// A node that takes any JSON value (`true`, `{}`, a description
    /// alone), which the strict dialects and Gemini's `parameters` cannot
    /// say: refused by name.
    fn untyped(&self, path: &str) -> LowerError {
        let name = if path.is_empty() {
            "the arguments"
        } else {
            "it"
        };
        self.error(
            path,
            format!(
                "{name} may be any JSON value, which {} cannot express; give it a type (a struct, an enum, a string…)",
                self.dialect.label()
            ),
        )
    }

    /// The target of a local reference, by name (`#/$defs/Name`) or the
    /// root (`#`).
    fn target(
        &self,
        reference: &str,
        path: &str,
    ) -> Result<(String, Map<String, Value>), LowerError> {
        if reference == "#" {
            let mut root = self.root.as_object().cloned().unwrap_or_default();
            root.remove("$defs");
            root.remove("definitions");
            root.remove("$schema");
            root.remove("title");
            return Ok((walk::ROOT.to_owned(), root));
        }
        let name = def_name(reference).ok_or_else(|| {
            self.error(
                path,
                format!("`{reference}` is not a local reference to `$defs`"),
            )
        })?;
        let target = toolbox_core::internal::resolve_ref(self.root, reference)
            .and_then(Value::as_object)
            .ok_or_else(|| self.error(path, format!("`{reference}` points at no definition")))?;
        Ok((name.to_owned(), target.clone()))
    }

    /// Inlines a `$ref` that has siblings (or every `$ref`, for Gemini's
    /// `parameters`): both apply, so their fields are united.
    fn inline_ref(
        &self,
        object: &mut Map<String, Value>,
        path: &str,
        stack: &mut Vec<String>,
    ) -> Result<bool, LowerError> {
        let Some(reference) = object
            .get("$ref")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(false);
        };
        if object.len() == 1 && !matches!(self.dialect, Dialect::GeminiParameters) {
            return Ok(false);
        }
        let (name, target) = self.target(&reference, path)?;
        let recursive = name == walk::ROOT || stack.contains(&name);
        if recursive && self.dialect.expresses_recursion() {
            // A recursive reference stays a reference; what annotates it
            // beside the `$ref` cannot stay (a dialect that forbids siblings).
            if object
                .iter()
                .all(|(k, v)| k == "$ref" || is_annotation_only(&json!({ k: v })))
            {
                object.retain(|k, _| k == "$ref");
                return Ok(false);
            }
        }
        if recursive {
            return Err(self.error(
                path,
                format!(
                    "`{name}` is recursive, which {} cannot express",
                    self.dialect.label()
                ),
            ));
        }
        object.remove("$ref");
        self.unite(object, target, path)?;
        stack.push(name);
        Ok(true)
    }

    /// Unites `other` into `object` as both holding of one value: their
    /// properties and required names together, a description kept from
    /// `object`, anything else set once or equal in both.
    fn unite(
        &self,
        object: &mut Map<String, Value>,
        other: Map<String, Value>,
        path: &str,
    ) -> Result<(), LowerError> {
        for (key, value) in other {
            match (key.as_str(), object.get_mut(&key)) {
                (_, None) => {
                    object.insert(key, value);
                }
                ("properties", Some(Value::Object(mine))) => {
                    let Value::Object(theirs) = value else {
                        continue;
                    };
                    for (name, schema) in theirs {
                        match mine.get(&name) {
                            None => {
                                mine.insert(name, schema);
                            }
                            Some(existing) if *existing == schema => {}
                            // The same property described twice: the
                            // nearer (a `$ref`'s sibling) says more of it.
                            Some(existing) if is_annotation_only(existing) => {
                                let mut merged = schema.as_object().cloned().unwrap_or_default();
                                for (k, v) in existing.as_object().into_iter().flatten() {
                                    merged.insert(k.clone(), v.clone());
                                }
                                mine.insert(name, Value::Object(merged));
                            }
                            Some(_) if is_annotation_only(&schema) => {}
                            Some(_) => {
                                return Err(self.error(
                                    &join(path, &name),
                                    format!(
                                        "`{name}` is constrained by two schemas at once (`allOf` or a `$ref` beside fields), which {} cannot express; flatten the struct",
                                        self.dialect.label()
                                    ),
                                ));
                            }
                        }
                    }
                }
                ("required", Some(Value::Array(mine))) => {
                    for name in value.as_array().into_iter().flatten() {
                        if !mine.contains(name) {
                            mine.push(name.clone());
                        }
                    }
                }
                ("description" | "title" | "default" | "examples" | "$comment", Some(_)) => {}
                (_, Some(mine)) if *mine == value => {}
                (_, Some(_)) => {
                    return Err(self.error(
                        path,
                        format!(
                            "`{key}` is given two values by `allOf` or a `$ref` beside fields, which {} cannot express; flatten the struct",
                            self.dialect.label()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Merges `allOf` into the node: every branch holds of the same value,
    /// so their fields are united (a branch's `$ref` resolved first).
    fn flatten_all_of(
        &self,
        object: &mut Map<String, Value>,
        path: &str,
    ) -> Result<(), LowerError> {
        for _ in 0..MAX_LOWERING_DEPTH {
            let Some(Value::Array(branches)) = object.remove("allOf") else {
                return Ok(());
            };
            for branch in branches {
                let Value::Object(mut branch) = branch else {
                    if branch == Value::Bool(false) {
                        return Err(self.error(path, "an `allOf` branch `false` accepts no value"));
                    }
                    continue;
                };
                if let Some(reference) = branch.remove("$ref").as_ref().and_then(Value::as_str) {
                    let (_, target) = self.target(reference, path)?;
                    self.unite(&mut branch, target, path)?;
                }
                self.unite(object, branch, path)?;
            }
        }
        Ok(())
    }

    /// A tuple whose items all have one schema is an array of that schema
    /// with a fixed length, which every dialect can say.
    fn homogeneous_tuple(object: &mut Map<String, Value>) {
        let Some(Value::Array(prefix)) = object.get("prefixItems") else {
            return;
        };
        let Some(first) = prefix.first().cloned() else {
            return;
        };
        if !prefix.iter().all(|p| *p == first) {
            return;
        }
        let length = prefix.len();
        if !object.get("items").is_none_or(|i| *i == Value::Bool(false)) {
            return;
        }
        object.remove("prefixItems");
        object.insert("items".into(), first);
        object.entry("minItems").or_insert_with(|| json!(length));
        object.entry("maxItems").or_insert_with(|| json!(length));
    }

    /// Applies the dialect's table to one node: refuses what cannot be
    /// expressed, renames, and moves what is kept as text into the
    /// description; a constraint outside a dialect's keys is described,
    /// an unknown format on a string too.
    fn apply_rules(&self, object: &mut Map<String, Value>, path: &str) -> Result<(), LowerError> {
        let rules = self.dialect.rules();
        let mut described = Vec::new();
        for (key, fix) in rules.keywords {
            let Some(value) = object.get(*key) else {
                continue;
            };
            match fix {
                Fix::Refuse(reason) => {
                    return Err(self.error(path, reason.message(key, self.dialect)));
                }
                Fix::Rename(to) => {
                    let value = value.clone();
                    object.remove(*key);
                    object.insert((*to).into(), value);
                }
                Fix::Describe => {
                    described.push(format!("{key}: {value}"));
                    object.remove(*key);
                }
            }
        }
        for key in CONSTRAINTS {
            if object.contains_key(*key) && !rules.accepts_key(key) {
                if let Some(value) = object.remove(*key) {
                    described.push(format!("{key}: {value}"));
                }
            }
        }
        if self.dialect == Dialect::AnthropicStrict {
            if let Some(min) = object.get("minItems").and_then(Value::as_u64) {
                if min > 1 {
                    object.remove("minItems");
                    described.push(format!("minItems: {min}"));
                }
            }
        }
        if let Some(format) = object
            .get("format")
            .and_then(Value::as_str)
            .map(str::to_owned)
        {
            let ty = object.get("type").and_then(Value::as_str);
            let accepted = match self.dialect {
                Dialect::GeminiParameters => gemini_parameter_format(ty, &format),
                _ => rules.accepts_format(&format),
            };
            if !accepted {
                object.remove("format");
                // A string's format says what the text is; a number's
                // (`uint32`, `double`) only restates its range and type.
                if object.get("type").is_some_and(|t| {
                    t == "string"
                        || t.as_array()
                            .is_some_and(|a| a.iter().any(|t| t == "string"))
                }) {
                    described.push(format!("format: {format}"));
                }
            }
        }
        if !described.is_empty() {
            append_note(object, format!("{{{}}}", described.join(", ")));
        }
        Ok(())
    }
}

fn append_note(object: &mut Map<String, Value>, note: String) {
    let description = match object.get("description").and_then(Value::as_str) {
        Some(text) => format!("{text} {note}"),
        None => note,
    };
    object.insert("description".into(), Value::String(description));
}

/// Whether a node says what kind of value it holds.
pub(crate) fn has_type(object: &Map<String, Value>) -> bool {
    [
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "properties",
        "items",
        "prefixItems",
        "not",
    ]
    .iter()
    .any(|key| object.contains_key(*key))
}

/// Whether a schema only annotates (describes) without constraining.
fn is_annotation_only(schema: &Value) -> bool {
    schema.as_object().is_some_and(|o| {
        o.keys().all(|k| {
            matches!(
                k.as_str(),
                "description" | "title" | "default" | "examples" | "$comment"
            )
        })
    })
}

/// One `anyOf` branch per type of a type array, each with the keywords of
/// its type (taken off the node); what is common stays on the node.
fn split_types(object: &mut Map<String, Value>, types: &[Value]) -> Vec<Value> {
    let mut branches = Vec::new();
    for ty in types {
        let mut branch = Map::new();
        branch.insert("type".into(), ty.clone());
        let keywords = TYPE_KEYWORDS
            .iter()
            .find(|(name, _)| ty == *name)
            .map_or(&[][..], |(_, keys)| *keys);
        for key in keywords {
            if let Some(value) = object.get(*key) {
                branch.insert((*key).into(), value.clone());
            }
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            let fitting: Vec<Value> = values
                .iter()
                .filter(|v| match ty.as_str() {
                    Some("string") => v.is_string(),
                    Some("integer") => v.is_i64() || v.is_u64(),
                    Some("number") => v.is_number(),
                    Some("boolean") => v.is_boolean(),
                    _ => false,
                })
                .cloned()
                .collect();
            branch.insert("enum".into(), Value::Array(fitting));
        }
        branches.push(Value::Object(branch));
    }
    for (_, keys) in TYPE_KEYWORDS {
        for key in *keys {
            object.remove(*key);
        }
    }
    object.remove("enum");
    branches
}

/// Makes an optional property nullable (OpenAI strict requires every
/// property, so "may be absent" becomes "may be null"), unless it already
/// accepts `null` ([`accepts_null`](toolbox_core::internal::accepts_null), references
/// into `root` followed).
fn make_nullable(root: &Value, property: Value) -> Value {
    if toolbox_core::internal::accepts_null(root, &property) {
        return property;
    }
    let Value::Object(mut object) = property else {
        return property;
    };
    let with_null = |values: &mut Vec<Value>, null: Value| {
        if !values.contains(&null) {
            values.push(null);
        }
    };
    let typed = match object.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            object.insert("type".into(), json!([t, "null"]));
            true
        }
        Some(Value::Array(types)) => {
            with_null(types, json!("null"));
            true
        }
        _ => false,
    };
    if typed {
        if let Some(Value::Array(values)) = object.get_mut("enum") {
            with_null(values, Value::Null);
        }
        return Value::Object(object);
    }
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return Value::Object(object);
    }
    let description = object.remove("description");
    let mut wrapped = Map::new();
    if let Some(description) = description {
        wrapped.insert("description".into(), description);
    }
    wrapped.insert(
        "anyOf".into(),
        json!([Value::Object(object), {"type": "null"}]),
    );
    Value::Object(wrapped)
}

/// Drops `$defs` entries nothing reachable from the root refers to any
/// more (after inlining).
fn prune_defs(root: &mut Value) {
    let Some(object) = root.as_object_mut() else {
        return;
    };
    let Some(Value::Object(defs)) = object.remove("$defs") else {
        return;
    };
    let mut used = BTreeSet::new();
    walk::references(&Value::Object(object.clone()), &mut used);
    let mut pending: Vec<String> = used.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        let mut found = BTreeSet::new();
        if let Some(def) = defs.get(&name) {
            walk::references(def, &mut found);
        }
        for name in found {
            if used.insert(name.clone()) {
                pending.push(name);
            }
        }
    }
    let kept: Map<String, Value> = defs
        .into_iter()
        .filter(|(name, _)| used.contains(name))
        .collect();
    if !kept.is_empty() {
        object.insert("$defs".into(), Value::Object(kept));
    }
}
