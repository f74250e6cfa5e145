//! Validators, one per dialect, from the same rule tables lowering applies
//! (each provider's documented rules): what a provider would refuse.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::rules::{gemini_parameter_format, is_gemini_parameter_name};
use super::walk;
use super::{join, Dialect};

/// One rule a schema breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Where: the argument path (`filters.tags[]`), a keyword under it
    /// (`filters.additionalProperties`), or `$defs.Name…`; empty for the root.
    pub path: String,
    /// The rule, in the provider's terms.
    pub rule: String,
}

/// Every rule of `dialect` that `schema` breaks.
pub fn validate(schema: &Value, dialect: Dialect) -> Vec<Violation> {
    let mut checker = Checker {
        dialect,
        violations: Vec::new(),
        properties: 0,
        enum_values: 0,
        defs: schema
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    };
    match schema.as_object() {
        None => checker.flag("", "the schema must be a JSON object"),
        Some(root) => {
            if root.get("type").and_then(Value::as_str) != Some("object") {
                checker.flag("", "the root must be `\"type\": \"object\"`");
            }
            if matches!(dialect, Dialect::OpenAiStrict) && root.contains_key("anyOf") {
                checker.flag("", "the root must not be `anyOf`");
            }
            if !matches!(dialect, Dialect::Mcp | Dialect::OpenAi | Dialect::Anthropic)
                && root.contains_key("$schema")
            {
                checker.flag("$schema", "`$schema` must be stripped");
            }
            checker.node(schema, "", 0, &mut Vec::new());
        }
    }
    if dialect == Dialect::OpenAiStrict {
        if checker.properties > 5000 {
            checker.flag(
                "",
                format!(
                    "{} properties in total; OpenAI allows at most 5000",
                    checker.properties
                ),
            );
        }
        if checker.enum_values > 1000 {
            checker.flag(
                "",
                format!(
                    "{} enum values in total; OpenAI allows at most 1000",
                    checker.enum_values
                ),
            );
        }
    }
    checker.violations
}

struct Checker {
    dialect: Dialect,
    violations: Vec<Violation>,
    properties: usize,
    enum_values: usize,
    defs: Map<String, Value>,
}

fn is_object_type(object: &Map<String, Value>) -> bool {
    object.get("type").is_some_and(|t| {
        t == "object"
            || t.as_array()
                .is_some_and(|a| a.iter().any(|t| t == "object"))
    })
}

impl Checker {
    fn flag(&mut self, path: &str, rule: impl Into<String>) {
        self.violations.push(Violation {
            path: path.to_owned(),
            rule: rule.into(),
        });
    }

    fn node(&mut self, value: &Value, path: &str, depth: usize, refs: &mut Vec<String>) {
        let Some(object) = value.as_object() else {
            if !value.is_boolean() {
                self.flag(path, "a schema must be an object");
            }
            return;
        };
        self.table(object, path);
        match self.dialect {
            Dialect::OpenAiStrict => self.openai_strict(object, path, depth),
            Dialect::AnthropicStrict => self.anthropic_strict(object, path, refs),
            Dialect::GeminiParameters => self.gemini_parameters(object, path),
            Dialect::GeminiJsonSchema | Dialect::OpenAi | Dialect::Anthropic | Dialect::Mcp => {}
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            self.enum_values += values.len();
        }
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            self.properties += properties.len();
        }
        for (edge, child) in walk::children(object) {
            self.node(
                child,
                &edge.schema_path(path),
                depth + usize::from(edge.nests()),
                refs,
            );
        }
    }

    /// The dialect's table: keywords it does not take, keys outside its
    /// subset, formats it does not know.
    fn table(&mut self, object: &Map<String, Value>, path: &str) {
        let rules = self.dialect.rules();
        for key in object.keys() {
            if let Some(rule) = rules.flags_key(key) {
                self.flag(&join(path, key), rule);
            }
        }
        if let (Some(format), Some(_)) =
            (object.get("format").and_then(Value::as_str), rules.formats)
        {
            if !rules.accepts_format(format) {
                self.flag(
                    &join(path, "format"),
                    format!(
                        "{}: {}",
                        rules.name,
                        rules.format_verdict.replace("{}", format)
                    ),
                );
            }
        }
    }

    fn closed_objects(&mut self, object: &Map<String, Value>, path: &str, provider: &str) {
        if !(is_object_type(object) || object.contains_key("properties")) {
            return;
        }
        if object.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.flag(
                path,
                format!("{provider}: every object must set `additionalProperties: false`"),
            );
        }
    }

    fn maps(&mut self, object: &Map<String, Value>, path: &str, provider: &str) {
        if object
            .get("additionalProperties")
            .is_some_and(Value::is_object)
        {
            self.flag(
                &join(path, "additionalProperties"),
                format!("{provider}: maps cannot be expressed"),
            );
        }
    }

    fn openai_strict(&mut self, object: &Map<String, Value>, path: &str, depth: usize) {
        let provider = "OpenAI strict";
        self.closed_objects(object, path, provider);
        if is_object_type(object) && !object.contains_key("properties") {
            self.flag(
                path,
                "OpenAI strict: an object schema must have `properties` (use `{}`)",
            );
        }
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            let required: BTreeSet<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for key in properties.keys() {
                if !required.contains(key.as_str()) {
                    self.flag(&join(path, key), "OpenAI strict: every property must be listed in `required` (make optional ones nullable)");
                }
            }
        }
        self.maps(object, path, provider);
        if object.contains_key("$ref") && object.len() > 1 {
            self.flag(path, "OpenAI strict: `$ref` cannot have sibling keywords");
        }
        if depth > 10 {
            self.flag(path, "OpenAI strict: nesting deeper than 10 levels");
        }
    }

    fn anthropic_strict(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        refs: &mut Vec<String>,
    ) {
        let provider = "Anthropic strict";
        self.closed_objects(object, path, provider);
        if let Some(min) = object.get("minItems").and_then(Value::as_u64) {
            if min > 1 {
                self.flag(
                    &join(path, "minItems"),
                    "Anthropic strict: `minItems` may only be 0 or 1",
                );
            }
        }
        self.maps(object, path, provider);
        if let Some(Value::Array(all_of)) = object.get("allOf") {
            if all_of.iter().any(|b| b.get("$ref").is_some()) {
                self.flag(
                    &join(path, "allOf"),
                    "Anthropic strict: `allOf` with `$ref` is not supported",
                );
            }
        }
        if let Some(name) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(walk::def_name)
        {
            if refs.iter().any(|r| r == name) {
                self.flag(
                    path,
                    "Anthropic strict: recursive schemas are not supported",
                );
            } else if let Some(def) = self.defs.get(name).cloned() {
                refs.push(name.to_owned());
                let mut nested = Checker {
                    dialect: self.dialect,
                    violations: Vec::new(),
                    properties: 0,
                    enum_values: 0,
                    defs: self.defs.clone(),
                };
                nested.node(&def, path, 0, refs);
                // Only the recursion finding matters here; the definition is
                // checked on its own under `$defs`.
                self.violations.extend(
                    nested
                        .violations
                        .into_iter()
                        .filter(|v| v.rule.contains("recursive")),
                );
                refs.pop();
            }
        }
    }

    fn gemini_parameters(&mut self, object: &Map<String, Value>, path: &str) {
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            for name in properties.keys() {
                if !is_gemini_parameter_name(name) {
                    self.flag(
                        &join(path, name),
                        format!("Gemini `parameters`: `{name}` is not a legal parameter name"),
                    );
                }
            }
        }
        match object.get("type") {
            Some(Value::Array(_)) => self.flag(
                &join(path, "type"),
                "Gemini `parameters`: `type` must be a single value (use `nullable`)",
            ),
            Some(Value::String(t)) if t == "array" && !object.contains_key("items") => {
                self.flag(path, "Gemini `parameters`: an array needs `items`")
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            if object.get("type").is_some_and(|t| t != "string")
                || values.iter().any(|v| !v.is_string())
            {
                self.flag(
                    &join(path, "enum"),
                    "Gemini `parameters`: `enum` is only allowed for strings",
                );
            }
        }
        if object.contains_key("anyOf") && object.keys().any(|k| k != "anyOf" && k != "nullable") {
            self.flag(
                path,
                "Gemini `parameters`: `anyOf` must be the only field set",
            );
        }
        if let (Some(t), Some(format)) = (
            object.get("type").and_then(Value::as_str),
            object.get("format").and_then(Value::as_str),
        ) {
            if !gemini_parameter_format(Some(t), format) {
                self.flag(
                    &join(path, "format"),
                    format!("Gemini `parameters`: format `{format}` is not supported for `{t}`"),
                );
            }
        }
    }
}
/// Why `name` is not a legal tool name for the provider of `dialect`.
pub fn name_problem(name: &str, dialect: Dialect) -> Option<String> {
    let (ok, rule) = match dialect {
        Dialect::GeminiJsonSchema | Dialect::GeminiParameters => {
            let mut chars = name.chars();
            (
                name.len() <= 128
                    && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && chars.all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c)),
                "Gemini: start with a letter or `_`, then letters, digits, `_`, `.`, `:` or `-`, at most 128",
            )
        }
        Dialect::Mcp => (
            !name.is_empty()
                && name.len() <= 128
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
            "MCP: 1 to 128 of A-Z, a-z, 0-9, `_`, `-` and `.`",
        ),
        _ => (
            crate::is_valid_tool_name(name),
            "1 to 64 of a-z, A-Z, 0-9, `_` and `-`",
        ),
    };
    (!ok).then(|| format!("`{name}` is not a legal tool name ({rule})"))
}
