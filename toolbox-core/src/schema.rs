//! JSON Schemas of arguments and results, from schemars.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

pub use crate::dialect::Dialect;
use crate::path::JsonPath;

/// The argument schema of a tool whose arguments deserialize into `T`:
/// draft 2020-12, without `$schema` and `title` (noise to a model). `()`
/// gives an empty object. Fails when `T` is not an object.
pub fn arguments_schema<T: JsonSchema + ?Sized>() -> Result<Value, String> {
    // Only the schema generation is generic; the checks are compiled once.
    object_schema(root_schema::<T>(), &T::schema_name())
}

/// A tool's parameters: `T`'s object schema, or the empty object's when
/// `T` is not an object (which the macro refuses at compile time).
pub(crate) fn parameters_of<T: JsonSchema>() -> Value {
    parameters_schema(root_schema::<T>(), &T::schema_name())
}

fn parameters_schema(schema: Value, type_name: &str) -> Value {
    object_schema(schema, type_name).unwrap_or_else(|_| empty_object_schema())
}

fn object_schema(mut schema: Value, type_name: &str) -> Result<Value, String> {
    // Any JSON value (`serde_json::Value`): intake makes it an object.
    if schema == Value::Bool(true) || schema.as_object().is_some_and(Map::is_empty) {
        return Ok(serde_json::json!({"type": "object", "properties": {}}));
    }
    let Some(object) = schema.as_object_mut() else {
        return Err(format!(
            "the arguments of a tool must be a struct (a JSON object); `{type_name}` is not"
        ));
    };
    match object.get("type").and_then(Value::as_str) {
        Some("object") => {
            object
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            Ok(schema)
        }
        Some("null") => Ok(empty_object_schema()),
        other => Err(format!(
            "the arguments of a tool must be a struct (a JSON object); `{type_name}` is {}",
            other.map_or_else(|| "not an object".to_owned(), |t| format!("a JSON {t}"))
        )),
    }
}

/// The schema of a tool's result, or `None` for text (strings and `()`),
/// which goes to the model as is.
pub fn output_schema<T: JsonSchema + ?Sized>() -> Option<Value> {
    let schema = root_schema::<T>();
    match schema.get("type").and_then(Value::as_str) {
        Some("string") | Some("null") => None,
        _ => Some(schema),
    }
}

/// `{"type":"object","properties":{}}`.
pub fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

fn root_schema<T: JsonSchema + ?Sized>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with_transform(CloseSerdeObjects)
        .into_generator();
    strip_root(generator.into_root_schema_for::<T>().to_value())
}

/// The std types whose serde form is an object that refuses unknown fields
/// while schemars leaves it open: `Duration` (`secs`, `nanos`) and
/// `SystemTime` (`secs_since_epoch`, `nanos_since_epoch`). Closed here, the
/// schema admits what the deserializer admits.
const CLOSED_SERDE_OBJECTS: [[&str; 2]; 2] =
    [["nanos", "secs"], ["nanos_since_epoch", "secs_since_epoch"]];

/// Closes the objects of [`CLOSED_SERDE_OBJECTS`], wherever they are.
#[derive(Clone, Copy)]
struct CloseSerdeObjects;

impl schemars::transform::Transform for CloseSerdeObjects {
    fn transform(&mut self, schema: &mut schemars::Schema) {
        if let Some(object) = schema.as_object_mut() {
            let keys: Option<Vec<&str>> =
                object
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| {
                        let mut keys: Vec<&str> = p.keys().map(String::as_str).collect();
                        keys.sort_unstable();
                        keys
                    });
            let closes =
                keys.is_some_and(|keys| CLOSED_SERDE_OBJECTS.iter().any(|known| keys == known));
            if closes && !object.contains_key("additionalProperties") {
                object.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
        }
        schemars::transform::transform_subschemas(self, schema);
    }
}

fn strip_root(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

/// Sets the description of the argument `name` in an object schema.
pub(crate) fn describe_property(
    schema: &mut Value,
    name: &str,
    description: &str,
) -> Result<(), String> {
    let properties = schema.get_mut("properties").and_then(Value::as_object_mut);
    match properties
        .and_then(|p| p.get_mut(name))
        .and_then(Value::as_object_mut)
    {
        Some(property) => {
            property.insert(
                "description".to_owned(),
                Value::String(description.to_owned()),
            );
            Ok(())
        }
        None => {
            let known: Vec<String> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
                .unwrap_or_default();
            Err(if known.is_empty() {
                format!("there is no argument `{name}`: the tool takes no arguments")
            } else {
                format!(
                    "there is no argument `{name}`; the arguments are {}",
                    known.join(", ")
                )
            })
        }
    }
}

/// The node a local `$ref` points at: `#` (the root), `#/$defs/Name`,
/// `#/definitions/Name` or any JSON pointer into `root`. The one `$ref`
/// resolver of the library: lowering, normalization, the surface lock and
/// the argument check all follow references through it.
pub(crate) fn resolve_ref<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// How many `$ref`s [`accepts_null`] follows before it stops (and
/// answers "yes", the cautious answer for a cycle).
const NULL_REFERENCE_HOPS: usize = 32;

/// Whether `schema` lets a value be `null`: the one nullable rule of the
/// library. Lowering asks it before making an optional property nullable,
/// normalization before taking a `null` as absent, the surface lock to see
/// a property become nullable or stop being so. `true` and `{}` do; a
/// node's `type`, `enum` and `const` must each allow `null` where present
/// (OpenAPI's `nullable: true` allows it); a `$ref`'s target and every
/// `allOf` branch must, and one `anyOf` / `oneOf` branch must.
pub(crate) fn accepts_null(root: &Value, schema: &Value) -> bool {
    accepts_null_within(root, schema, NULL_REFERENCE_HOPS)
}

fn accepts_null_within(root: &Value, schema: &Value, hops: usize) -> bool {
    let Some(object) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if hops == 0 {
        return true;
    }
    if object.get("nullable") == Some(&Value::Bool(true)) {
        return true;
    }
    let type_allows = |t: &Value| match t {
        Value::String(t) => t == "null",
        Value::Array(types) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    if object.get("type").is_some_and(|t| !type_allows(t)) {
        return false;
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        if !values.iter().any(Value::is_null) {
            return false;
        }
    }
    if object.get("const").is_some_and(|c| !c.is_null()) {
        return false;
    }
    let follow = |branch: &Value| accepts_null_within(root, branch, hops - 1);
    if let Some(target) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve_ref(root, r))
    {
        if !follow(target) {
            return false;
        }
    }
    if let Some(branches) = object.get("allOf").and_then(Value::as_array) {
        if !branches.iter().all(follow) {
            return false;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = object.get(key).and_then(Value::as_array) {
            if !branches.iter().any(follow) {
                return false;
            }
        }
    }
    true
}

/// A property's constant value, `const` or a one-value `enum`: the tag of
/// a tagged union's branch, for normalization (which branch a value is)
/// and lowering (which tag to require).
pub(crate) fn constant(property: &Value) -> Option<&Value> {
    property.get("const").or_else(|| {
        property
            .get("enum")
            .and_then(Value::as_array)
            .filter(|values| values.len() == 1)
            .and_then(|values| values.first())
    })
}

/// Checks arguments against a tool's JSON Schema, for boxes that have no
/// Rust type to deserialize into: the keywords tool schemas use (`type`,
/// `enum`, `const`, `properties`, `required`, `additionalProperties`,
/// `items`, `anyOf`/`oneOf`/`allOf`, local `$ref`, numeric and length
/// bounds); other keywords are not checked. The error names the JSON path
/// of the first value that does not fit.
pub fn check_arguments(schema: &Value, arguments: &Value) -> Result<(), crate::error::ToolError> {
    let mut path = JsonPath::root();
    match fits(schema, arguments, schema, 0, &mut path) {
        Ok(()) => Ok(()),
        Err(reason) => Err(crate::error::ToolError::invalid_arguments(
            path.to_string(),
            reason,
        )),
    }
}

/// `Ok` when `value` fits `schema`; else why not, with `path` left at the
/// offending value.
fn fits(
    schema: &Value,
    value: &Value,
    root: &Value,
    depth: usize,
    path: &mut JsonPath,
) -> Result<(), String> {
    let got = || crate::echo::received(value);
    let Some(schema) = schema.as_object() else {
        return if schema == &Value::Bool(false) {
            Err("no value is allowed here".to_owned())
        } else {
            Ok(())
        };
    };
    if depth > 64 {
        return Err("the schema nests too deep to check".to_owned());
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        match resolve_ref(root, reference) {
            Some(target) => fits(target, value, root, depth + 1, path)?,
            None => {
                return Err(format!(
                    "the schema's reference `{reference}` cannot be resolved"
                ))
            }
        }
    }
    if let Some(types) = schema.get("type") {
        let matches = |t: &Value| match t.as_str() {
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("null") => value.is_null(),
            Some("number") => value.is_number(),
            Some("integer") => value.as_i64().is_some() || value.as_u64().is_some(),
            _ => true,
        };
        let ok = match types {
            Value::Array(options) => options.iter().any(matches),
            single => matches(single),
        };
        if !ok {
            let wanted = match types {
                Value::Array(options) => options
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" or "),
                single => single.as_str().unwrap_or("?").to_owned(),
            };
            return Err(format!("got {}, expected JSON type {wanted}", got()));
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(value) {
            let list: Vec<String> = allowed.iter().take(20).map(Value::to_string).collect();
            return Err(format!(
                "got {}, expected one of {}",
                got(),
                list.join(", ")
            ));
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            return Err(format!("got {}, expected {constant}", got()));
        }
    }
    for (key, all) in [("anyOf", false), ("oneOf", false), ("allOf", true)] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            if all {
                for branch in branches {
                    fits(branch, value, root, depth + 1, path)?;
                }
            } else {
                let mut scratch = JsonPath::root();
                if !branches
                    .iter()
                    .any(|b| fits(b, value, root, depth + 1, &mut scratch).is_ok())
                {
                    return Err(format!(
                        "got {}, which fits none of the allowed shapes",
                        got()
                    ));
                }
            }
        }
    }
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        if bound("minimum").is_some_and(|m| n < m)
            || bound("maximum").is_some_and(|m| n > m)
            || bound("exclusiveMinimum").is_some_and(|m| n <= m)
            || bound("exclusiveMaximum").is_some_and(|m| n >= m)
        {
            return Err(format!("got {}, which is out of the allowed range", got()));
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as f64;
        if bound("minLength").is_some_and(|m| length < m)
            || bound("maxLength").is_some_and(|m| length > m)
        {
            return Err(format!(
                "got {}, whose length is out of the allowed range",
                got()
            ));
        }
    }
    if let Some(items) = value.as_array() {
        let count = items.len() as f64;
        if bound("minItems").is_some_and(|m| count < m)
            || bound("maxItems").is_some_and(|m| count > m)
        {
            return Err(format!("got {}, a count out of the allowed range", got()));
        }
        if let Some(item_schema) = schema.get("items") {
            for (index, item) in items.iter().enumerate() {
                path.push_index(index);
                fits(item_schema, item, root, depth + 1, path)?;
                path.pop();
            }
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            if let Some(missing) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|k| !object.contains_key(*k))
            {
                return Err(format!("missing field `{}`", crate::echo::echo(missing)));
            }
        }
        for (key, field) in object {
            path.push_key(key.as_str());
            match properties.and_then(|p| p.get(key)) {
                Some(property) => fits(property, field, root, depth + 1, path)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let known: Vec<String> = properties
                            .map(|p| p.keys().map(|k| format!("`{k}`")).collect())
                            .unwrap_or_default();
                        return Err(if known.is_empty() {
                            format!(
                                "unknown field `{}`, there are no fields",
                                crate::echo::echo(key)
                            )
                        } else {
                            format!(
                                "unknown field `{}`, expected one of {}",
                                crate::echo::echo(key),
                                known.join(", ")
                            )
                        });
                    }
                    Some(extra @ Value::Object(_)) => fits(extra, field, root, depth + 1, path)?,
                    _ => {}
                },
            }
            path.pop();
        }
    }
    Ok(())
}

#[cfg(test)]
mod closed_tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Wait {
        timeout: std::time::Duration,
        at: Option<std::time::SystemTime>,
    }

    #[test]
    fn std_objects_that_refuse_unknown_fields_are_closed() {
        let schema = parameters_of::<Wait>();
        let text = schema.to_string();
        for name in ["Duration", "SystemTime"] {
            assert_eq!(
                schema["$defs"][name]["additionalProperties"],
                Value::Bool(false),
                "{text}"
            );
        }
        // serde refuses the unknown field the schema now refuses.
        let refused = serde_json::from_value::<std::time::Duration>(
            serde_json::json!({"secs": 1, "nanos": 0, "x": ""}),
        );
        assert!(refused.is_err());
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_local_reference_form_resolves_and_a_missing_one_is_named() {
        let root = json!({
            "type": "object",
            "$defs": {"Name": {"type": "string"}, "a/b": {"type": "integer"}},
            "definitions": {"Old": {"type": "boolean"}},
            "properties": {"tree": {"$ref": "#"}, "name": {"$ref": "#/$defs/Name"}}
        });
        assert_eq!(resolve_ref(&root, "#"), Some(&root));
        assert_eq!(
            resolve_ref(&root, "#/$defs/Name"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            resolve_ref(&root, "#/$defs/a~1b"),
            Some(&json!({"type": "integer"}))
        );
        assert_eq!(
            resolve_ref(&root, "#/definitions/Old"),
            Some(&json!({"type": "boolean"}))
        );
        assert_eq!(
            resolve_ref(&root, "#/properties/name/$ref"),
            Some(&json!("#/$defs/Name"))
        );
        assert_eq!(resolve_ref(&root, "#/$defs/Missing"), None);
        assert_eq!(resolve_ref(&root, "other.json#/x"), None);

        // The argument check follows the same references, the root's too.
        assert!(check_arguments(&root, &json!({"name": "x", "tree": {"name": "y"}})).is_ok());
        let error = check_arguments(&root, &json!({"tree": {"name": 3}})).unwrap_err();
        assert!(error.to_string().contains("tree.name"), "{error}");
        let broken = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/Gone"}}});
        let error = check_arguments(&broken, &json!({"x": 1})).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the schema's reference `#/$defs/Gone` cannot be resolved"),
            "{error}"
        );
    }
}

#[cfg(test)]
mod nullable_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_one_nullable_rule_follows_types_enums_references_and_branches() {
        let root = json!({
            "$defs": {
                "Maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "Never": {"type": "integer"},
                "Loop": {"$ref": "#/$defs/Loop"}
            }
        });
        let accepts = |schema: Value| accepts_null(&root, &schema);
        assert!(accepts(json!({})));
        assert!(accepts(json!(true)));
        assert!(!accepts(json!(false)));
        assert!(accepts(json!({"type": ["string", "null"]})));
        assert!(accepts(json!({"type": "null"})));
        assert!(!accepts(json!({"type": "string"})));
        // `type` allows `null` but `enum` does not: `null` is refused.
        assert!(!accepts(
            json!({"type": ["string", "null"], "enum": ["a", "b"]})
        ));
        assert!(accepts(
            json!({"type": ["string", "null"], "enum": ["a", null]})
        ));
        assert!(!accepts(json!({"const": "circle"})));
        assert!(accepts(json!({"type": "string", "nullable": true})));
        assert!(accepts(json!({"$ref": "#/$defs/Maybe"})));
        assert!(!accepts(json!({"$ref": "#/$defs/Never"})));
        assert!(
            accepts(json!({"$ref": "#/$defs/Loop"})),
            "a cycle ends cautiously"
        );
        assert!(!accepts(
            json!({"allOf": [{"$ref": "#/$defs/Maybe"}, {"type": "string"}]})
        ));
        assert!(accepts(
            json!({"oneOf": [{"type": "integer"}, {"$ref": "#/$defs/Maybe"}]})
        ));
        assert!(!accepts(
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        ));
    }
}
