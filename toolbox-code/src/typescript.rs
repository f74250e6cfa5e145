//! TypeScript declarations generated from tools' JSON Schemas: what a
//! model writing code against the tools reads. Input and output schemas
//! both; descriptions kept as doc comments, examples as `@example` lines;
//! `$ref`s into `$defs` / `definitions` resolved (a recursive type stops at
//! `unknown`); the whole bounded in size.
//!
//! ```
//! use serde_json::json;
//! use toolbox_code::typescript;
//! use toolbox_core::ToolSpecification;
//!
//! let spec = ToolSpecification::new("get_inventory", "Units in stock for a SKU.")
//!     .with_parameters(json!({
//!         "type": "object",
//!         "properties": {
//!             "sku": {"type": "string", "description": "The stock-keeping unit."},
//!             "warehouse": {"enum": ["north", "south"]}
//!         },
//!         "required": ["sku"]
//!     }))
//!     .with_output_schema(json!({
//!         "type": "object",
//!         "properties": {"units": {"type": "integer"}},
//!         "required": ["units"]
//!     }));
//! let ts = typescript::declaration(&spec);
//! assert!(ts.contains("/** Units in stock for a SKU. */"));
//! assert!(ts.contains("get_inventory(input: {"));
//! assert!(ts.contains("/** The stock-keeping unit. */ sku: string;"));
//! assert!(ts.contains("warehouse?: \"north\" | \"south\";"));
//! assert!(ts.ends_with("}): { units: number; };"));
//! ```

use std::fmt::Write;

use serde_json::{Map, Value};

use toolbox_core::ToolSpecification;

/// What [`declarations`] writes when it declared some tools by name only.
pub const SHORTENED: &str = "more, declared by name only";

/// How deep a type is written out (`$ref`s followed included) before the
/// rest is `unknown`.
pub const MAX_TYPE_DEPTH: usize = 8;

/// About how many bytes one type is written out in before the rest is
/// `unknown` (an object's further properties `[key: string]: unknown`):
/// `$ref`s are followed each time they are met, and a small schema whose
/// properties each point back at it would otherwise be written out in
/// exponential size.
pub const MAX_TYPE_BYTES: usize = 16 * 1024;

/// The most schemas one type reads, whatever they write.
const MAX_TYPE_NODES: usize = 4 * 1024;

/// What is left of one type's size bounds.
struct Budget {
    bytes: usize,
    nodes: usize,
}

impl Budget {
    fn new() -> Self {
        Budget {
            bytes: MAX_TYPE_BYTES,
            nodes: MAX_TYPE_NODES,
        }
    }

    fn spent(&self) -> bool {
        self.bytes == 0 || self.nodes == 0
    }

    fn charge(&mut self, written: usize) {
        self.bytes = self.bytes.saturating_sub(written);
    }
}

/// One tool's declaration: a method of the `tools` object, its description
/// and examples as a doc comment, its input type from `parameters` and its
/// return type from `output_schema` (`unknown` without one).
pub fn declaration(spec: &ToolSpecification) -> String {
    let mut out = String::new();
    let mut doc: Vec<String> = spec
        .description
        .lines()
        .map(str::trim_end)
        .map(|line| line.replace("*/", "*\\/"))
        .collect();
    while doc.last().is_some_and(|line| line.trim().is_empty()) {
        doc.pop();
    }
    for example in &spec.examples {
        doc.push(format!("@example {}({example})", property_key(&spec.name)));
    }
    match doc.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(out, "/** {one} */");
        }
        lines => {
            out.push_str("/**\n");
            for line in lines {
                let _ = writeln!(out, " * {line}");
            }
            out.push_str(" */\n");
        }
    }
    let input = render(&spec.parameters, &spec.parameters, 0);
    let input = if input == "{}" || input == "unknown" {
        "input?: {}".to_owned()
    } else {
        format!("input: {input}")
    };
    let output = spec
        .output_schema
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), |schema| render(schema, schema, 0));
    let _ = write!(out, "{}({input}): {output};", property_key(&spec.name));
    out
}

/// The `tools` object declared with every tool as one of its methods, in
/// the order given; tools past `max_bytes` are declared by name alone
/// (`(input?: object) => unknown`) and said to be found with `search`.
pub fn declarations(specs: &[ToolSpecification], max_bytes: usize) -> String {
    declare(specs, max_bytes).0
}

/// [`declarations`], and how many tools it declared by name only.
pub(crate) fn declare(specs: &[ToolSpecification], max_bytes: usize) -> (String, usize) {
    let mut out = String::from("declare const tools: {\n");
    let mut shortened = Vec::new();
    for spec in specs {
        let full = declaration(spec);
        if out.len() + full.len() > max_bytes {
            shortened.push(spec);
            continue;
        }
        for line in full.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !shortened.is_empty() {
        let _ = writeln!(
            out,
            "  // {} {SHORTENED}: `search(\"what you need\")` gives each one's declaration",
            shortened.len()
        );
        for spec in &shortened {
            let _ = writeln!(
                out,
                "  {}(input?: object): unknown;",
                property_key(&spec.name)
            );
        }
    }
    out.push_str("};\n");
    (out, shortened.len())
}

/// `name` as a property key: bare where it is an identifier, quoted where
/// not (`"my-tool"`).
fn property_key(name: &str) -> String {
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// The TypeScript type of `schema`, `$ref`s resolved against `root`,
/// at most [`MAX_TYPE_DEPTH`] deep and about [`MAX_TYPE_BYTES`] long.
pub fn render(schema: &Value, root: &Value, depth: usize) -> String {
    render_within(schema, root, depth, &mut Budget::new())
}

fn render_within(schema: &Value, root: &Value, depth: usize, budget: &mut Budget) -> String {
    if depth > MAX_TYPE_DEPTH || budget.spent() {
        return "unknown".to_owned();
    }
    budget.nodes -= 1;
    let written = render_node(schema, root, depth, budget);
    budget.charge(written.len());
    written
}

fn render_node(schema: &Value, root: &Value, depth: usize, budget: &mut Budget) -> String {
    let Some(object) = schema.as_object() else {
        // `true` (anything) and `false` (nothing).
        return match schema {
            Value::Bool(false) => "never".to_owned(),
            _ => "unknown".to_owned(),
        };
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return match resolve(reference, root) {
            Some(target) => render_within(target, root, depth + 1, budget),
            None => "unknown".to_owned(),
        };
    }
    if let Some(constant) = object.get("const") {
        return constant.to_string();
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        return union(values.iter().map(Value::to_string).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(schemas)) = object.get(key) {
            return union(
                schemas
                    .iter()
                    .map(|s| render_within(s, root, depth + 1, budget))
                    .collect(),
            );
        }
    }
    if let Some(Value::Array(schemas)) = object.get("allOf") {
        let parts: Vec<String> = schemas
            .iter()
            .map(|s| render_within(s, root, depth + 1, budget))
            .collect();
        return match parts.len() {
            0 => "unknown".to_owned(),
            1 => parts.into_iter().next().unwrap_or_default(),
            _ => parts
                .iter()
                .map(|p| format!("({p})"))
                .collect::<Vec<_>>()
                .join(" & "),
        };
    }
    match object.get("type") {
        Some(Value::String(kind)) => typed(kind, object, root, depth, budget),
        Some(Value::Array(kinds)) => union(
            kinds
                .iter()
                .filter_map(Value::as_str)
                .map(|kind| typed(kind, object, root, depth, budget))
                .collect(),
        ),
        _ if object.contains_key("properties") => typed("object", object, root, depth, budget),
        _ => "unknown".to_owned(),
    }
}

fn typed(
    kind: &str,
    object: &Map<String, Value>,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> String {
    match kind {
        "string" => "string".to_owned(),
        "integer" | "number" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "null".to_owned(),
        "array" => match object.get("items") {
            Some(items) => {
                let item = render_within(items, root, depth + 1, budget);
                if item.contains(' ') {
                    format!("Array<{item}>")
                } else {
                    format!("{item}[]")
                }
            }
            None => "unknown[]".to_owned(),
        },
        "object" => object_type(object, root, depth, budget),
        _ => "unknown".to_owned(),
    }
}

fn object_type(
    object: &Map<String, Value>,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> String {
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields = Vec::new();
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, schema) in properties {
            if budget.spent() {
                // More properties than the bound writes: said, not dropped.
                fields.push("[key: string]: unknown;".to_owned());
                break;
            }
            let doc = schema
                .get("description")
                .and_then(Value::as_str)
                .map(|text| {
                    format!(
                        "/** {} */ ",
                        text.split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ")
                            .replace("*/", "*\\/")
                    )
                })
                .unwrap_or_default();
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let field = format!(
                "{doc}{}{optional}: {};",
                property_key(name),
                render_within(schema, root, depth + 1, budget)
            );
            budget.charge(field.len());
            fields.push(field);
        }
    }
    match object.get("additionalProperties") {
        Some(Value::Object(_)) | Some(Value::Bool(true)) if fields.is_empty() => {
            let value = object.get("additionalProperties").map_or_else(
                || "unknown".to_owned(),
                |s| render_within(s, root, depth + 1, budget),
            );
            return format!("{{ [key: string]: {value} }}");
        }
        _ => {}
    }
    if fields.is_empty() {
        return "{}".to_owned();
    }
    format!("{{ {} }}", fields.join(" "))
}

fn union(mut parts: Vec<String>) -> String {
    parts.dedup();
    match parts.len() {
        0 => "never".to_owned(),
        1 => parts.pop().unwrap_or_default(),
        _ => parts.join(" | "),
    }
}

/// The schema a local `$ref` (`#/$defs/Name`, `#/definitions/Name`, any
/// JSON pointer into the root) points at.
fn resolve<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_are_resolved_and_a_recursive_type_stops_at_unknown() {
        let schema = json!({
            "type": "object",
            "properties": {
                "owner": {"$ref": "#/$defs/Person"},
                "tree": {"$ref": "#/$defs/Node"}
            },
            "required": ["owner"],
            "$defs": {
                "Person": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}
            }
        });
        let ts = render(&schema, &schema, 0);
        assert!(
            ts.starts_with("{ owner: { name: string; }; tree?: { child?: { child?:"),
            "{ts}"
        );
        assert!(ts.contains("unknown"), "{ts}");
    }

    #[test]
    fn a_schema_whose_properties_point_back_at_it_is_written_in_bounded_size() {
        // 24 properties, each the whole schema again: 24^5 objects at the
        // depth bound (120 MB, 1.3 s) before the size bound.
        let properties: Map<String, Value> = (0..24)
            .map(|i| (format!("p{i}"), json!({"$ref": "#"})))
            .collect();
        let schema = json!({"type": "object", "properties": properties});
        let ts = render(&schema, &schema, 0);
        assert!(ts.len() < 2 * MAX_TYPE_BYTES, "{}", ts.len());
        assert!(ts.starts_with("{ p0?: { p0?: { p0?: { p0?:"), "{ts}");
        assert!(ts.contains("[key: string]: unknown;"), "{ts}");
        // Wide rather than deep: 5,000 properties with long descriptions.
        let properties: Map<String, Value> = (0..5_000)
            .map(|i| {
                let description = "word ".repeat(100);
                (
                    format!("field{i}"),
                    json!({"type": "string", "description": description}),
                )
            })
            .collect();
        let schema = json!({"type": "object", "properties": properties, "required": ["field0"]});
        let ts = render(&schema, &schema, 0);
        assert!(ts.len() < 2 * MAX_TYPE_BYTES, "{}", ts.len());
        assert!(ts.contains("field0: string;"), "{ts}");
        assert!(ts.ends_with("[key: string]: unknown; }"), "{ts}");
        // A declaration holds two such types and its description.
        let spec = ToolSpecification::new("echo", "Echoes.")
            .with_parameters(schema.clone())
            .with_output_schema(schema);
        assert!(declaration(&spec).len() < 5 * MAX_TYPE_BYTES);
    }

    #[test]
    fn nullable_unions_arrays_and_maps_read_as_typescript() {
        let schema = json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": ["string", "null"]},
            "pick": {"anyOf": [{"type": "integer"}, {"const": "all"}]},
            "labels": {"type": "object", "additionalProperties": {"type": "number"}},
            "rows": {"type": "array", "items": {"type": ["string", "null"]}}
        }});
        let ts = render(&schema, &schema, 0);
        assert!(ts.contains("tags?: string[];"), "{ts}");
        assert!(ts.contains("note?: string | null;"), "{ts}");
        assert!(ts.contains("pick?: number | \"all\";"), "{ts}");
        assert!(ts.contains("labels?: { [key: string]: number };"), "{ts}");
        assert!(ts.contains("rows?: Array<string | null>;"), "{ts}");
    }

    #[test]
    fn names_that_are_not_identifiers_are_quoted_and_the_size_is_bounded() {
        let specs: Vec<ToolSpecification> = (0..50)
            .map(|i| ToolSpecification::new(format!("tool-{i}"), "x".repeat(200)))
            .collect();
        let ts = declarations(&specs, 4_000);
        assert!(ts.contains("\"tool-0\"(input?: {}): unknown;"), "{ts}");
        assert!(ts.contains("more, declared by name only"), "{ts}");
        assert!(ts.contains("\"tool-49\"(input?: object): unknown;"), "{ts}");
        assert!(ts.len() < 4_000 + 50 * 40, "{}", ts.len());
    }
}
