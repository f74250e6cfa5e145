//! Validators, one per dialect, from the same rule tables lowering applies
//! (each provider's documented rules): what a provider would refuse.

use serde::Serialize;
use serde_json::{Map, Value};

use super::rules::{gemini_parameter_format, is_gemini_parameter_name, DialectRules};
use super::walk;
use toolbox_core::internal::join;
use toolbox_core::schema::Dialect;

/// One rule a schema or a tool surface breaks: what [`validate`] finds in
/// one schema, and what `check_surface`
/// finds in a box's tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The tool's name when a box's tools were checked; empty when one
    /// schema was (and for a limit the tools break together). Not
    /// serialized when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool: String,
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
            checker.node(schema, "", 0);
            if matches!(
                dialect,
                Dialect::AnthropicStrict | Dialect::GeminiParameters
            ) {
                for cycle in walk::cycles(schema) {
                    checker.flag(
                        "",
                        format!(
                            "{}: recursive schemas are not supported ({})",
                            dialect.rules().name,
                            walk::describe_cycle(&cycle)
                        ),
                    );
                }
            }
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
}

fn is_object_type(object: &Map<String, Value>) -> bool {
    object.get("type").is_some_and(|t| {
        t == "object"
            || t.as_array()
                .is_some_and(|a| a.iter().any(|t| t == "object"))
    })
}

impl Checker {
    /// Whether every node must say its type.
    fn needs_types(&self) -> bool {
        matches!(
            self.dialect,
            Dialect::OpenAiStrict | Dialect::AnthropicStrict | Dialect::GeminiParameters
        )
    }

    fn flag(&mut self, path: &str, rule: impl Into<String>) {
        self.violations.push(Violation {
            tool: String::new(),
            path: path.to_owned(),
            rule: rule.into(),
        });
    }

    fn node(&mut self, value: &Value, path: &str, depth: usize) {
        let Some(object) = value.as_object() else {
            if !value.is_boolean() {
                self.flag(path, "a schema must be an object");
            } else if *value == Value::Bool(true) && self.needs_types() {
                self.flag(
                    path,
                    format!("{}: a node must say its type", self.dialect.rules().name),
                );
            }
            return;
        };
        if self.needs_types() && !super::lower::has_type(object) {
            self.flag(
                path,
                format!("{}: a node must say its type", self.dialect.rules().name),
            );
        }
        self.table(object, path);
        match self.dialect {
            Dialect::OpenAiStrict => self.openai_strict(object, path, depth),
            Dialect::AnthropicStrict => self.anthropic_strict(object, path),
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
            let required = walk::required(object);
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

    fn anthropic_strict(&mut self, object: &Map<String, Value>, path: &str) {
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
/// Anthropic strict tool use's limits on one request: strict tools,
/// optional parameters and parameters with a union (`anyOf` or a type
/// array), counted over every tool's schema.
pub const ANTHROPIC_STRICT_LIMITS: RequestLimits = RequestLimits {
    tools: 20,
    optional: 24,
    unions: 16,
};

/// How much one request may carry in a dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLimits {
    /// Tools.
    pub tools: usize,
    /// Optional parameters (properties left out of `required`), all tools together.
    pub optional: usize,
    /// Parameters whose schema is a union (`anyOf` or a type array), all tools together.
    pub unions: usize,
}

/// The limits `dialect` puts on a whole request, that no one schema
/// breaks: [`ANTHROPIC_STRICT_LIMITS`] for Anthropic strict, none elsewhere.
pub fn request_limits(dialect: Dialect) -> Option<RequestLimits> {
    (dialect == Dialect::AnthropicStrict).then_some(ANTHROPIC_STRICT_LIMITS)
}

/// Every limit of `dialect` on one request that the lowered `schemas` of
/// its tools break together, as the provider words it.
pub fn validate_request(schemas: &[Value], dialect: Dialect) -> Vec<String> {
    let Some(limits) = request_limits(dialect) else {
        return Vec::new();
    };
    let (mut optional, mut unions) = (0, 0);
    for schema in schemas {
        count_parameters(schema, &mut optional, &mut unions);
    }
    let name = dialect.rules().name;
    let mut problems = Vec::new();
    if schemas.len() > limits.tools {
        problems.push(format!(
            "{name}: {} tools in one request; at most {} strict tools are allowed",
            schemas.len(),
            limits.tools
        ));
    }
    if optional > limits.optional {
        problems.push(format!(
            "{name}: {optional} optional parameters across the request's tools; at most {} are allowed",
            limits.optional
        ));
    }
    if unions > limits.unions {
        problems.push(format!(
            "{name}: {unions} parameters with `anyOf` or a type array across the request's tools; at most {} are allowed",
            limits.unions
        ));
    }
    problems
}

fn count_parameters(schema: &Value, optional: &mut usize, unions: &mut usize) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        let required = walk::required(object);
        for (name, property) in properties {
            if !required.contains(name.as_str()) {
                *optional += 1;
            }
            if property.get("anyOf").is_some() || property.get("type").is_some_and(Value::is_array)
            {
                *unions += 1;
            }
        }
    }
    for (_, child) in walk::children(object) {
        count_parameters(child, optional, unions);
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
            toolbox_core::spec::is_valid_tool_name(name),
            "1 to 64 of a-z, A-Z, 0-9, `_` and `-`",
        ),
    };
    (!ok).then(|| format!("`{name}` is not a legal tool name ({rule})"))
}
