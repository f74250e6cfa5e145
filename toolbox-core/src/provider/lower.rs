//! Lowering a JSON Schema (draft 2020-12, as schemars emits it) into each
//! provider's dialect.

use std::cell::Cell;
use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

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

/// Formats OpenAI strict mode accepts on strings.
pub(crate) const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Formats Anthropic strict mode accepts on strings.
pub(crate) const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keys Gemini's legacy `parameters` (OpenAPI 3.0 subset) accepts.
pub(crate) const GEMINI_PARAMETER_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "propertyOrdering",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "anyOf",
    "default",
    "example",
];
/// Keys of Gemini's `parametersJsonSchema` subset.
pub(crate) const GEMINI_JSON_SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "default",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "uniqueItems",
    "$ref",
    "$defs",
    "propertyOrdering",
];
/// Keywords Anthropic strict mode does not support: lowering moves them into
/// the description, the validator flags them.
pub(crate) const ANTHROPIC_UNSUPPORTED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

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

fn def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
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
        match object.remove("allOf") {
            Some(Value::Array(mut branches)) if branches.len() == 1 => {
                if let Some(Value::Object(only)) = branches.pop() {
                    for (key, value) in only {
                        object.entry(key).or_insert(value);
                    }
                }
            }
            Some(_) if openai => {
                return Err(self.error(
                    path,
                    "`allOf` is not supported by OpenAI strict mode; flatten the struct",
                ));
            }
            Some(all_of) => {
                object.insert("allOf".into(), all_of);
            }
            None => {}
        }
        let inlined = self.inline_ref(&mut object, path, stack)?;
        if let Some(one_of) = object.remove("oneOf") {
            object.insert("anyOf".into(), one_of);
        }
        for forbidden in [
            "not",
            "if",
            "then",
            "else",
            "dependentRequired",
            "dependentSchemas",
        ] {
            if object.contains_key(forbidden) {
                return Err(self.error(
                    path,
                    format!("`{forbidden}` is not supported by {}", self.dialect.label()),
                ));
            }
        }
        if object.contains_key("prefixItems") {
            return Err(self.error(
                path,
                format!(
                    "a tuple (`prefixItems`) cannot be expressed in {}; use a struct",
                    self.dialect.label()
                ),
            ));
        }
        if object.contains_key("patternProperties")
            || object.contains_key("propertyNames")
            || object
                .get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(false))
        {
            return Err(self.error(
                path,
                format!(
                    "a map (an object with arbitrary keys) cannot be expressed in {}; use a list of key/value structs",
                    self.dialect.label()
                ),
            ));
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            let allowed = if openai {
                OPENAI_FORMATS
            } else {
                ANTHROPIC_FORMATS
            };
            if !allowed.contains(&format) {
                object.remove("format");
            }
        }
        if openai {
            object.remove("default");
            for key in ["minLength", "maxLength", "uniqueItems"] {
                object.remove(key);
            }
        } else {
            let mut moved = Vec::new();
            for key in ANTHROPIC_UNSUPPORTED {
                if let Some(value) = object.remove(*key) {
                    moved.push(format!("{key}: {value}"));
                }
            }
            if let Some(min) = object.get("minItems").and_then(Value::as_u64) {
                if min > 1 {
                    object.remove("minItems");
                    moved.push(format!("minItems: {min}"));
                }
            }
            if !moved.is_empty() {
                let note = format!("{{{}}}", moved.join(", "));
                let description = match object.get("description").and_then(Value::as_str) {
                    Some(text) => format!("{text} {note}"),
                    None => note,
                };
                object.insert("description".into(), Value::String(description));
            }
        }
        let is_object = object
            .get("type")
            .map_or(object.contains_key("properties"), |t| {
                t == "object"
                    || t.as_array()
                        .is_some_and(|a| a.iter().any(|t| t == "object"))
            });
        if let Some(Value::Object(properties)) = object.remove("properties") {
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
            let mut lowered = Map::new();
            for (key, value) in properties {
                let mut property = self.strict(value, &join(path, &key), stack)?;
                if openai && !required.contains(&key) {
                    property = nullable(property);
                }
                lowered.insert(key, property);
            }
            if openai {
                let all: Vec<Value> = lowered.keys().cloned().map(Value::String).collect();
                object.insert("required".into(), Value::Array(all));
            }
            object.insert("properties".into(), Value::Object(lowered));
        } else if is_object {
            object.insert("properties".into(), json!({}));
            if openai {
                object.insert("required".into(), json!([]));
            }
        }
        if is_object {
            object.insert("additionalProperties".into(), Value::Bool(false));
        }
        if let Some(items) = object.remove("items") {
            object.insert(
                "items".into(),
                self.strict(items, &format!("{path}[]"), stack)?,
            );
        }
        if let Some(Value::Array(branches)) = object.remove("anyOf") {
            let lowered: Result<Vec<Value>, LowerError> = branches
                .into_iter()
                .map(|b| self.strict(b, path, stack))
                .collect();
            object.insert("anyOf".into(), Value::Array(lowered?));
        }
        for defs_key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = object.remove(defs_key) {
                let mut lowered = Map::new();
                for (name, def) in defs {
                    lowered.insert(
                        name.clone(),
                        self.strict(def, &format!("$defs.{name}"), &mut vec![name])?,
                    );
                }
                object.insert("$defs".into(), Value::Object(lowered));
            }
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
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if !OPENAI_FORMATS.contains(&format)
                && !["int32", "int64", "float", "double"].contains(&format)
            {
                object.remove("format");
            }
        }
        if object.contains_key("prefixItems") {
            return Err(self.error(
                path,
                "a tuple (`prefixItems`) cannot be expressed for Gemini; use a struct",
            ));
        }
        let keys: Vec<String> = object.keys().cloned().collect();
        for key in keys {
            let child_path = match key.as_str() {
                "properties" | "$defs" => path.to_owned(),
                _ => join(path, &key),
            };
            let value = object.remove(&key).unwrap_or(Value::Null);
            let lowered = match key.as_str() {
                "properties" | "$defs" => match value {
                    Value::Object(map) => Value::Object(
                        map.into_iter()
                            .map(|(k, v)| {
                                self.gemini_json(v, &join(&child_path, &k)).map(|v| (k, v))
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                    other => other,
                },
                "items" | "additionalProperties" => self.gemini_json(value, &child_path)?,
                "anyOf" | "oneOf" => match value {
                    Value::Array(branches) => Value::Array(
                        branches
                            .into_iter()
                            .map(|b| self.gemini_json(b, path))
                            .collect::<Result<_, _>>()?,
                    ),
                    other => other,
                },
                _ => value,
            };
            if GEMINI_JSON_SCHEMA_KEYS.contains(&key.as_str()) {
                object.insert(key, lowered);
            }
        }
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
        if let Some(one_of) = object.remove("oneOf") {
            object.insert("anyOf".into(), one_of);
        }
        if let Some(Value::Array(branches)) = object.remove("anyOf") {
            let (nulls, rest): (Vec<Value>, Vec<Value>) = branches
                .into_iter()
                .partition(|b| b.get("type").is_some_and(|t| t == "null"));
            nullable |= !nulls.is_empty();
            if rest.len() == 1 {
                let only = self.gemini_parameters(
                    rest.into_iter().next().unwrap_or_default(),
                    path,
                    stack,
                )?;
                if let Value::Object(only) = only {
                    for (key, value) in only {
                        object.entry(key).or_insert(value);
                    }
                }
            } else {
                let lowered: Result<Vec<Value>, LowerError> = rest
                    .into_iter()
                    .map(|b| self.gemini_parameters(b, path, stack))
                    .collect();
                // Gemini refuses siblings next to `anyOf`.
                object.retain(|key, _| key == "nullable");
                object.insert("anyOf".into(), Value::Array(lowered?));
            }
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
        match (
            object.get("type").and_then(Value::as_str),
            object.get("format").and_then(Value::as_str),
        ) {
            (Some("integer"), Some("int32" | "int64"))
            | (Some("number"), Some("float" | "double")) => {}
            (Some("string"), Some("date-time" | "enum")) => {}
            (_, Some(_)) => {
                object.remove("format");
            }
            _ => {}
        }
        if object.contains_key("prefixItems") {
            return Err(self.error(path, "a tuple (`prefixItems`) cannot be expressed in Gemini's `parameters`; use a struct"));
        }
        if let Some(Value::Object(properties)) = object.remove("properties") {
            let mut lowered = Map::new();
            for (key, value) in properties {
                let child = join(path, &key);
                if !is_gemini_parameter_name(&key) {
                    return Err(self.error(
                        &child,
                        format!("`{key}` is not a legal Gemini parameter name: start with a letter or `_`, then only letters, digits and `_`, at most 64"),
                    ));
                }
                lowered.insert(key, self.gemini_parameters(value, &child, stack)?);
            }
            object.insert("properties".into(), Value::Object(lowered));
        }
        if let Some(items) = object.remove("items") {
            object.insert(
                "items".into(),
                self.gemini_parameters(items, &format!("{path}[]"), stack)?,
            );
        } else if object.get("type").is_some_and(|t| t == "array") {
            object.insert("items".into(), json!({"type": "string"}));
        }
        if nullable {
            object.insert("nullable".into(), Value::Bool(true));
        }
        object.retain(|key, _| GEMINI_PARAMETER_KEYS.contains(&key.as_str()));
        if inlined {
            stack.pop();
        }
        Ok(Value::Object(object))
    }
}

/// Whether `name` is a legal parameter name in Gemini's `parameters`.
pub(crate) fn is_gemini_parameter_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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
    collect_refs(&Value::Object(object.clone()), &mut used);
    let mut pending: Vec<String> = used.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        let mut found = BTreeSet::new();
        if let Some(def) = defs.get(&name) {
            collect_refs(def, &mut found);
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

fn collect_refs(value: &Value, used: &mut BTreeSet<String>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                match (key.as_str(), child.as_str().and_then(def_name)) {
                    ("$ref", Some(name)) => {
                        used.insert(name.to_owned());
                    }
                    _ => collect_refs(child, used),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, used)),
        _ => {}
    }
}
