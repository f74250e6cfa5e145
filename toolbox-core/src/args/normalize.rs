//! Undoing on the way in what lowering changed in meaning.
//!
//! Lowering a schema for a provider sometimes has to say something else
//! than the tool's own schema: OpenAI strict mode requires every property,
//! so an optional one becomes "required, may be `null`", and the model says
//! "absent" with `null`; Gemini's `parameters` cannot close an object, so
//! the model may add keys the tool never declared. [`normalize`] takes the
//! tool's *original* schema and turns such arguments back into what the
//! tool accepts, and says what it changed:
//!
//! - a `null` for a property the original leaves optional and does not let
//!   be `null` is removed ("absent"), in every dialect: that `null` has no
//!   other meaning the tool could take;
//! - for a dialect that cannot close objects, a key the original does not
//!   declare where it closes the object (`additionalProperties: false`) is
//!   removed.
//!
//! Nothing else is touched: a `null` the tool accepts stays `null`, a
//! required property's `null` stays and is refused with the usual error.
//!
//! ```
//! use serde_json::json;
//! use toolbox_core::args::normalize;
//! use toolbox_core::schema::Dialect;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "query": {"type": "string"},
//!         "limit": {"type": "integer", "default": 10},
//!         "page": {"type": ["integer", "null"]}
//!     },
//!     "required": ["query"]
//! });
//! let mut arguments = json!({"query": "rust", "limit": null, "page": null});
//! let changed = normalize(&schema, Dialect::OpenAiStrict, &mut arguments);
//! assert_eq!(arguments, json!({"query": "rust", "page": null}));
//! assert_eq!(changed[0].to_string(), "`limit`: `null` taken as absent");
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::dialect::Dialect;

/// One change [`normalize`] made to a call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adjustment {
    /// Where, as an argument path (`filters.limit`, `items[2].name`).
    pub path: String,
    /// What was done there.
    pub change: Change,
}

/// What [`normalize`] did at one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// A `null` for an optional property that may not be `null` was removed.
    NullAsAbsent,
    /// A key the schema does not declare, in an object it closes, was removed.
    UndeclaredDropped,
}

impl fmt::Display for Adjustment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.change {
            Change::NullAsAbsent => "`null` taken as absent",
            Change::UndeclaredDropped => "undeclared key dropped",
        };
        write!(f, "`{}`: {what}", self.path)
    }
}

/// How far [`normalize`] follows references without descending into the
/// value (a schema that refers to itself at the same value).
const MAX_REFERENCE_HOPS: usize = 32;

/// Turns arguments a model sent under the schema lowered for `dialect` back
/// into arguments `schema` (the tool's original schema) takes, in place,
/// and returns what it changed.
pub fn normalize(schema: &Value, dialect: Dialect, arguments: &mut Value) -> Vec<Adjustment> {
    let mut normalizer = Normalizer {
        root: schema,
        drop_undeclared: !dialect.closes_objects(),
        changes: Vec::new(),
    };
    normalizer.node(&[schema], arguments, "");
    normalizer.changes
}

/// Whether `value` holds a `null` anywhere (the cheap test before a
/// normalization on the error path).
pub(crate) fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(map) => map.values().any(has_null),
        _ => false,
    }
}

struct Normalizer<'s> {
    root: &'s Value,
    drop_undeclared: bool,
    changes: Vec<Adjustment>,
}

/// The schemas that apply to one value: `all` must each hold, one of each
/// group of `any` must.
#[derive(Default)]
struct Views<'s> {
    all: Vec<&'s Map<String, Value>>,
    any: Vec<&'s Map<String, Value>>,
}

impl<'s> Normalizer<'s> {
    fn node(&mut self, schemas: &[&'s Value], value: &mut Value, path: &str) {
        match value {
            Value::Object(map) => {
                let views = self.views(schemas, Some(&*map));
                self.object(&views, map, path);
            }
            Value::Array(items) => {
                let views = self.views(schemas, None);
                for (index, item) in items.iter_mut().enumerate() {
                    let element: Vec<&Value> = views
                        .all
                        .iter()
                        .chain(&views.any)
                        .filter_map(|view| element_schema(view, index))
                        .collect();
                    if !element.is_empty() {
                        self.node(&element, item, &format!("{path}[{index}]"));
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, views: &Views<'s>, map: &mut Map<String, Value>, path: &str) {
        let every = || views.all.iter().chain(&views.any).copied();
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let declared: Vec<&Map<String, Value>> = every()
                .filter(|view| property(view, &key).is_some())
                .collect();
            // The key is the model's text: written as every echoed model
            // text is (control characters escaped, cut when long).
            let at = crate::path::join(path, &crate::echo::echo(&key));
            // An undeclared key is dropped (or kept) whatever its value,
            // `null` included: Gemini's `parameters` cannot close objects,
            // so `{"query": "q", "x_extra": null}` is valid there.
            if !declared.is_empty() && map.get(&key).is_some_and(Value::is_null) {
                let required_by_all = views.all.iter().any(|view| requires(view, &key));
                let optional_somewhere = declared.iter().any(|view| !requires(view, &key));
                let null_taken = declared.iter().any(|view| {
                    property(view, &key).is_some_and(|p| crate::schema::accepts_null(self.root, p))
                });
                if !declared.is_empty() && !required_by_all && optional_somewhere && !null_taken {
                    map.remove(&key);
                    self.changes.push(Adjustment {
                        path: at,
                        change: Change::NullAsAbsent,
                    });
                }
                continue;
            }
            if declared.is_empty() {
                let closed = every()
                    .any(|view| view.get("additionalProperties") == Some(&Value::Bool(false)));
                let patterned = every().any(|view| view.contains_key("patternProperties"));
                if self.drop_undeclared && closed && !patterned {
                    map.remove(&key);
                    self.changes.push(Adjustment {
                        path: at,
                        change: Change::UndeclaredDropped,
                    });
                    continue;
                }
                let extra: Vec<&Value> = every()
                    .filter_map(|view| view.get("additionalProperties"))
                    .filter(|schema| schema.is_object())
                    .collect();
                if let Some(child) = map.get_mut(&key) {
                    if !extra.is_empty() {
                        self.node(&extra, child, &at);
                    }
                }
                continue;
            }
            let children: Vec<&Value> = declared
                .iter()
                .filter_map(|view| property(view, &key))
                .collect();
            if let Some(child) = map.get_mut(&key) {
                self.node(&children, child, &at);
            }
        }
    }

    /// Every schema node that applies to a value: references followed,
    /// `allOf` branches included, and of each `anyOf` / `oneOf` the
    /// branches the value could match (by their `const` tags and types).
    fn views(&self, schemas: &[&'s Value], value: Option<&Map<String, Value>>) -> Views<'s> {
        let mut views = Views::default();
        for schema in schemas {
            self.collect(schema, value, &mut views, false, MAX_REFERENCE_HOPS);
        }
        views
    }

    fn collect(
        &self,
        schema: &'s Value,
        value: Option<&Map<String, Value>>,
        views: &mut Views<'s>,
        alternative: bool,
        hops: usize,
    ) {
        let Some(object) = schema.as_object() else {
            return;
        };
        if hops == 0 {
            return;
        }
        if alternative {
            views.any.push(object);
        } else {
            views.all.push(object);
        }
        if let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            self.collect(target, value, views, alternative, hops - 1);
        }
        for branch in object
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.collect(branch, value, views, alternative, hops - 1);
        }
        for key in ["anyOf", "oneOf"] {
            let Some(branches) = object.get(key).and_then(Value::as_array) else {
                continue;
            };
            let fitting: Vec<&Value> = branches
                .iter()
                .filter(|b| self.could_match(b, value, MAX_REFERENCE_HOPS))
                .collect();
            // One fitting branch is the value's schema; several are alternatives.
            let alternative = alternative || fitting.len() > 1;
            for branch in fitting {
                self.collect(branch, value, views, alternative, hops - 1);
            }
        }
    }

    /// Whether an object value could be the one `schema` describes: its
    /// type is an object, and every tag (`const` or one-value `enum`
    /// property) it has matches.
    fn could_match(&self, schema: &Value, value: Option<&Map<String, Value>>, hops: usize) -> bool {
        let Some(object) = schema.as_object() else {
            return schema != &Value::Bool(false);
        };
        if hops == 0 {
            return true;
        }
        if let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            if !self.could_match(target, value, hops - 1) {
                return false;
            }
        }
        let Some(value) = value else {
            // An array: any branch that may be an array.
            return object.get("type").is_none_or(|t| type_includes(t, "array"));
        };
        if object
            .get("type")
            .is_some_and(|t| !type_includes(t, "object"))
        {
            return false;
        }
        let Some(properties) = object.get("properties").and_then(Value::as_object) else {
            return true;
        };
        properties.iter().all(|(name, property)| {
            let tag = crate::schema::constant(property);
            match (tag, value.get(name)) {
                (Some(tag), Some(found)) => tag == found,
                (Some(_), None) => !requires(object, name),
                (None, _) => true,
            }
        })
    }

    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        crate::schema::resolve_ref(self.root, reference)
    }
}

fn property<'s>(view: &'s Map<String, Value>, key: &str) -> Option<&'s Value> {
    view.get("properties")?.as_object()?.get(key)
}

fn requires(view: &Map<String, Value>, key: &str) -> bool {
    view.get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|k| k == key))
}

fn element_schema(view: &Map<String, Value>, index: usize) -> Option<&Value> {
    match view.get("prefixItems").and_then(Value::as_array) {
        Some(prefix) if index < prefix.len() => prefix.get(index),
        _ => view.get("items").filter(|items| items.is_object()),
    }
}

fn type_includes(t: &Value, name: &str) -> bool {
    match t {
        Value::Array(types) => types.iter().any(|t| t == name),
        t => t == name,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn changed(schema: Value, dialect: Dialect, mut value: Value) -> (Value, Vec<String>) {
        let changes = normalize(&schema, dialect, &mut value);
        (value, changes.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn an_undeclared_null_goes_like_any_undeclared_value() {
        // A struct whose deserializer refuses unknown fields.
        let schema = json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": false
        });
        let (value, changes) = changed(
            schema,
            Dialect::GeminiParameters,
            json!({"query": "nzc", "x_extra": null}),
        );
        assert_eq!(value, json!({"query": "nzc"}));
        assert_eq!(changes, ["`x_extra`: undeclared key dropped"]);
        // An externally tagged enum: one key per variant object.
        let schema = json!({
            "oneOf": [
                {"type": "object", "properties": {"Move": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": false}}, "required": ["Move"], "additionalProperties": false},
                {"type": "string", "enum": ["Stop"]}
            ]
        });
        let (value, changes) = changed(
            schema,
            Dialect::GeminiParameters,
            json!({"Move": {"x": 1, "y_extra": null}, "x_extra": null}),
        );
        assert_eq!(value, json!({"Move": {"x": 1}}));
        assert_eq!(
            changes,
            [
                "`Move.y_extra`: undeclared key dropped",
                "`x_extra`: undeclared key dropped"
            ]
        );
    }

    #[test]
    fn a_models_key_is_written_escaped() {
        let schema = json!({
            "type": "object",
            "properties": {"a\nb": {"type": "integer"}},
            "additionalProperties": false
        });
        let (_, changes) = changed(schema.clone(), Dialect::OpenAiStrict, json!({"a\nb": null}));
        assert_eq!(changes, ["`a\\nb`: `null` taken as absent"]);
        let (_, changes) = changed(schema, Dialect::GeminiParameters, json!({"x\ry\u{7}": 1}));
        assert_eq!(changes, ["`x\\ry\\u0007`: undeclared key dropped"]);
    }

    #[test]
    fn nulls_become_absent_only_where_the_schema_refuses_null_and_allows_absence() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "b": {"type": "integer", "default": 3},
                "c": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "d": {},
                "nested": {"$ref": "#/$defs/Nested"}
            },
            "required": ["a"],
            "$defs": {"Nested": {"type": "object", "properties": {"x": {"type": "string"}}}}
        });
        let (value, changes) = changed(
            schema,
            Dialect::OpenAiStrict,
            json!({"a": null, "b": null, "c": null, "d": null, "nested": {"x": null}}),
        );
        assert_eq!(
            value,
            json!({"a": null, "c": null, "d": null, "nested": {}})
        );
        assert_eq!(
            changes,
            [
                "`b`: `null` taken as absent",
                "`nested.x`: `null` taken as absent"
            ]
        );
    }

    #[test]
    fn a_tagged_branch_is_chosen_by_its_tag() {
        let schema = json!({
            "type": "object",
            "properties": {"patch": {"oneOf": [
                {"type": "object", "properties": {"op": {"const": "set"}, "limit": {"type": "integer"}}, "required": ["op"]},
                {"type": "object", "properties": {"op": {"const": "clear"}, "limit": {"type": ["integer", "null"]}}, "required": ["op"]}
            ]}},
            "required": ["patch"]
        });
        let (value, _) = changed(
            schema.clone(),
            Dialect::OpenAiStrict,
            json!({"patch": {"op": "set", "limit": null}}),
        );
        assert_eq!(value, json!({"patch": {"op": "set"}}));
        let (value, _) = changed(
            schema,
            Dialect::OpenAiStrict,
            json!({"patch": {"op": "clear", "limit": null}}),
        );
        assert_eq!(value, json!({"patch": {"op": "clear", "limit": null}}));
    }

    #[test]
    fn undeclared_keys_go_only_where_the_dialect_cannot_close_objects() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "items": {"type": "array", "items": {
                "type": "object", "properties": {"b": {"type": "integer"}}, "additionalProperties": false
            }}},
            "additionalProperties": false
        });
        let arguments = json!({"a": 1, "z": 2, "items": [{"b": 1, "y": 2}]});
        let (value, changes) =
            changed(schema.clone(), Dialect::GeminiParameters, arguments.clone());
        assert_eq!(value, json!({"a": 1, "items": [{"b": 1}]}));
        assert_eq!(
            changes,
            [
                "`z`: undeclared key dropped",
                "`items[0].y`: undeclared key dropped"
            ]
        );
        let (value, changes) = changed(schema, Dialect::OpenAiStrict, arguments.clone());
        assert_eq!(value, arguments);
        assert!(changes.is_empty());
    }

    #[test]
    fn recursion_through_the_root_is_followed() {
        let schema = json!({
            "type": "object",
            "properties": {"label": {"type": "string"}, "child": {"$ref": "#"}, "weight": {"type": "number"}},
            "required": ["label"]
        });
        let (value, _) = changed(
            schema,
            Dialect::OpenAiStrict,
            json!({"label": "a", "child": {"label": "b", "weight": null, "child": null}}),
        );
        assert_eq!(value, json!({"label": "a", "child": {"label": "b"}}));
    }
}
