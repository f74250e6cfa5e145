//! Lowering a JSON Schema (draft 2020-12, as schemars emits it) into each
//! provider's dialect.

use std::cell::Cell;
use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::rules::{gemini_parameter_format, is_gemini_parameter_name, Fix};
use super::walk::{self, def_name, Edge};
use super::{join, Dialect};

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
pub fn lower(schema: &Value, dialect: Dialect) -> Result<Value, LowerError> {
    let mut root = schema.clone();
    let Some(object) = root.as_object_mut() else {
        return Err(LowerError {
            path: String::new(),
            message: "the argument schema must be a JSON object".into(),
        });
    };
    object.remove("$schema");
    object.remove("title");
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err(LowerError {
            path: String::new(),
            message: "the root of a tool's argument schema must be `\"type\": \"object\"`".into(),
        });
    }
    let defs = object
        .get("$defs")
        .or_else(|| object.get("definitions"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let lowering = Lowering {
        dialect,
        defs,
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
            if let Some(object) = lowered.as_object_mut() {
                object.entry("properties").or_insert_with(|| json!({}));
                // The declaration carries the description; the legacy form has none at the root.
                object.remove("description");
            }
            Ok(lowered)
        }
        Dialect::OpenAiStrict | Dialect::AnthropicStrict => {
            let mut lowered = lowering.strict(root, "", &mut Vec::new())?;
            prune_defs(&mut lowered);
            Ok(lowered)
        }
    }
}

struct Lowering {
    dialect: Dialect,
    defs: Map<String, Value>,
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

/// Leaves one level of the walk when dropped.
struct Level<'a>(&'a Cell<usize>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl Lowering {
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

    /// Inlines a `$ref` that has siblings (the siblings win), so descriptions
    /// survive dialects that forbid siblings.
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
        let name = def_name(&reference).ok_or_else(|| {
            self.error(
                path,
                format!("`{reference}` is not a local reference to `$defs`"),
            )
        })?;
        if stack.iter().any(|s| s == name) {
            return Err(self.error(
                path,
                format!(
                    "`{name}` is recursive, which {} cannot express",
                    self.dialect.label()
                ),
            ));
        }
        let target = self
            .defs
            .get(name)
            .and_then(Value::as_object)
            .ok_or_else(|| self.error(path, format!("`{reference}` points at no definition")))?;
        object.remove("$ref");
        for (key, value) in target {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
        stack.push(name.to_owned());
        Ok(true)
    }

    /// Applies the dialect's table to one node: refuses what cannot be
    /// expressed, drops what is not understood, renames, and moves what is
    /// kept as text into the description; unknown formats and keys go.
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
                Fix::Drop => {
                    object.remove(*key);
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
        if self.dialect == Dialect::AnthropicStrict {
            if let Some(min) = object.get("minItems").and_then(Value::as_u64) {
                if min > 1 {
                    object.remove("minItems");
                    described.push(format!("minItems: {min}"));
                }
            }
        }
        if !described.is_empty() {
            let note = format!("{{{}}}", described.join(", "));
            let description = match object.get("description").and_then(Value::as_str) {
                Some(text) => format!("{text} {note}"),
                None => note,
            };
            object.insert("description".into(), Value::String(description));
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if !rules.accepts_format(format) {
                object.remove("format");
            }
        }
        Ok(())
    }

    /// OpenAI strict and Anthropic strict.
    fn strict(
        &self,
        value: Value,
        path: &str,
        stack: &mut Vec<String>,
    ) -> Result<Value, LowerError> {
        let Value::Object(mut object) = value else {
            return Ok(value);
        };
        let _level = self.enter(path)?;
        let openai = self.dialect == Dialect::OpenAiStrict;
        // A one-branch `allOf` (how some generators attach siblings to a
        // `$ref`) is merged first, so a `$ref` it carries is inlined below.
        if let Some(Value::Array(branches)) = object.get("allOf") {
            if branches.len() == 1 {
                if let Some(Value::Array(mut branches)) = object.remove("allOf") {
                    if let Some(Value::Object(only)) = branches.pop() {
                        for (key, value) in only {
                            object.entry(key).or_insert(value);
                        }
                    }
                }
            }
        }
        let inlined = self.inline_ref(&mut object, path, stack)?;
        self.apply_rules(&mut object, path)?;
        if object
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
        {
            return Err(self.error(
                path,
                super::rules::Reason::Map.message("additionalProperties", self.dialect),
            ));
        }
        let is_object = object
            .get("type")
            .map_or(object.contains_key("properties"), |t| {
                t == "object"
                    || t.as_array()
                        .is_some_and(|a| a.iter().any(|t| t == "object"))
            });
        // Definitions are lowered under `$defs`, each with its own stack.
        if let Some(definitions) = object.remove("definitions") {
            object.entry("$defs").or_insert(definitions);
        }
        let required: BTreeSet<String> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        for key in walk::schema_keys(&object) {
            walk::map_children(&mut object, &key, |edge, child| match edge {
                Edge::Def(_, name) => {
                    self.strict(child, &edge.argument_path(path), &mut vec![name.to_owned()])
                }
                Edge::Property(name) => {
                    let property = self.strict(child, &edge.argument_path(path), stack)?;
                    Ok(if openai && !required.contains(name) {
                        nullable(property)
                    } else {
                        property
                    })
                }
                _ => self.strict(child, &edge.argument_path(path), stack),
            })?;
        }
        match object.get("properties").and_then(Value::as_object) {
            Some(properties) if openai => {
                let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
                object.insert("required".into(), Value::Array(all));
            }
            Some(_) => {}
            None if is_object => {
                object.insert("properties".into(), json!({}));
                if openai {
                    object.insert("required".into(), json!([]));
                }
            }
            None => {}
        }
        if is_object {
            object.insert("additionalProperties".into(), Value::Bool(false));
        }
        if inlined {
            stack.pop();
        }
        Ok(Value::Object(object))
    }

    /// Gemini `parametersJsonSchema`: plain JSON Schema minus what the
    /// backend does not understand.
    fn gemini_json(&self, value: Value, path: &str) -> Result<Value, LowerError> {
        let Value::Object(mut object) = value else {
            return Ok(value);
        };
        let _level = self.enter(path)?;
        if let Some(constant) = object.remove("const") {
            object.insert("enum".into(), Value::Array(vec![constant]));
        }
        self.apply_rules(&mut object, path)?;
        // Only what the dialect keeps is lowered; the rest goes below.
        let rules = self.dialect.rules();
        for key in walk::schema_keys(&object) {
            if rules.accepts_key(&key) {
                walk::map_children(&mut object, &key, |edge, child| {
                    self.gemini_json(child, &edge.argument_path(path))
                })?;
            }
        }
        object.retain(|key, _| rules.accepts_key(key));
        Ok(Value::Object(object))
    }

    /// Gemini legacy `parameters`: an OpenAPI 3.0 subset, refs inlined,
    /// `nullable` instead of null unions, string enums only.
    fn gemini_parameters(
        &self,
        value: Value,
        path: &str,
        stack: &mut Vec<String>,
    ) -> Result<Value, LowerError> {
        let Value::Object(mut object) = value else {
            return Ok(value);
        };
        let _level = self.enter(path)?;
        let inlined = self.inline_ref(&mut object, path, stack)?;
        self.apply_rules(&mut object, path)?;
        let mut nullable = false;
        if let Some(Value::Array(types)) = object.get("type").cloned() {
            let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            nullable = non_null.len() < types.len();
            match non_null.as_slice() {
                [one] => {
                    object.insert("type".into(), (*one).clone());
                }
                _ => {
                    return Err(self.error(
                        path,
                        "a value of several types cannot be expressed in Gemini's `parameters`",
                    ));
                }
            }
        }
        if let Some(Value::Array(branches)) = object.get("anyOf") {
            nullable |= branches
                .iter()
                .any(|b| b.get("type").is_some_and(|t| t == "null"));
            if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
                branches.retain(|b| !b.get("type").is_some_and(|t| t == "null"));
            }
        }
        if let Some(Value::Object(properties)) = object.get("properties") {
            if let Some(name) = properties.keys().find(|k| !is_gemini_parameter_name(k)) {
                return Err(self.error(
                    &join(path, name),
                    format!("`{name}` is not a legal Gemini parameter name: start with a letter or `_`, then only letters, digits and `_`, at most 64"),
                ));
            }
        }
        let rules = self.dialect.rules();
        for key in walk::schema_keys(&object) {
            if rules.accepts_key(&key) {
                walk::map_children(&mut object, &key, |edge, child| {
                    self.gemini_parameters(child, &edge.argument_path(path), stack)
                })?;
            }
        }
        // One non-null branch is the value itself; several stand alone,
        // since Gemini refuses siblings next to `anyOf`.
        match object.remove("anyOf") {
            Some(Value::Array(mut rest)) if rest.len() == 1 => {
                if let Some(Value::Object(only)) = rest.pop() {
                    for (key, value) in only {
                        object.entry(key).or_insert(value);
                    }
                }
            }
            Some(branches @ Value::Array(_)) => {
                object.retain(|key, _| key == "nullable");
                object.insert("anyOf".into(), branches);
            }
            Some(other) => {
                object.insert("anyOf".into(), other);
            }
            None => {}
        }
        if let Some(constant) = object.remove("const") {
            object.insert("enum".into(), Value::Array(vec![constant]));
        }
        if let Some(Value::Array(values)) = object.get("enum").cloned() {
            let had_null = values.iter().any(Value::is_null);
            nullable |= had_null;
            let strings: Vec<Value> = values
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| match v {
                    Value::String(_) => v.clone(),
                    other => Value::String(other.to_string()),
                })
                .collect();
            object.insert("enum".into(), Value::Array(strings));
            object.insert("type".into(), Value::String("string".into()));
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if !gemini_parameter_format(object.get("type").and_then(Value::as_str), format) {
                object.remove("format");
            }
        }
        if !object.contains_key("items") && object.get("type").is_some_and(|t| t == "array") {
            object.insert("items".into(), json!({"type": "string"}));
        }
        if nullable {
            object.insert("nullable".into(), Value::Bool(true));
        }
        object.retain(|key, _| rules.accepts_key(key));
        if inlined {
            stack.pop();
        }
        Ok(Value::Object(object))
    }
}

/// Makes an optional property nullable (OpenAI strict requires every
/// property, so "may be absent" becomes "may be null").
fn nullable(property: Value) -> Value {
    let Value::Object(mut object) = property else {
        return property;
    };
    if is_nullable(&object) {
        return Value::Object(object);
    }
    match object.get("type").cloned() {
        Some(Value::String(t)) => {
            object.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(values)) = object.get_mut("enum") {
                values.push(Value::Null);
            }
            Value::Object(object)
        }
        Some(Value::Array(mut types)) => {
            types.push(json!("null"));
            object.insert("type".into(), Value::Array(types));
            Value::Object(object)
        }
        _ => {
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
    }
}

fn is_nullable(object: &Map<String, Value>) -> bool {
    match object.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => object
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|b| b.iter().any(|b| b.get("type").is_some_and(|t| t == "null"))),
    }
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
