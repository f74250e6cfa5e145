//! The one traversal of a JSON Schema: which keywords hold subschemas and
//! how each child is addressed. Lowering (every dialect), validation (every
//! dialect) and the reference scans all walk schemas through it.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::join;

/// How a child schema hangs off its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge<'k> {
    /// `properties.{name}`: one argument.
    Property(&'k str),
    /// `$defs.{name}` / `definitions.{name}`.
    Def(&'k str, &'k str),
    /// `patternProperties.{pattern}`.
    Pattern(&'k str),
    /// `items`: every element of an array.
    Items,
    /// `additionalProperties`, `not`, `if`, `then`, `else`, `propertyNames`.
    Keyword(&'k str),
    /// `anyOf[i]`, `oneOf[i]`, `allOf[i]`, `prefixItems[i]`.
    Branch(&'k str, usize),
}

impl Edge<'_> {
    /// Where the child is in the arguments: a branch is the same value as
    /// its parent, an element is `path[]`; definitions are addressed from
    /// the root (`$defs.Name`).
    pub(crate) fn argument_path(self, path: &str) -> String {
        match self {
            Edge::Property(name) => join(path, name),
            Edge::Def(_, name) => format!("$defs.{name}"),
            Edge::Items => format!("{path}[]"),
            Edge::Branch(..) => path.to_owned(),
            Edge::Pattern(pattern) => join(&join(path, "patternProperties"), pattern),
            Edge::Keyword(key) => join(path, key),
        }
    }

    /// Where the child is in the schema, for a report that names the
    /// keyword (`a.oneOf[1]`, `$defs.Name`).
    pub(crate) fn schema_path(self, path: &str) -> String {
        match self {
            Edge::Property(name) => join(path, name),
            Edge::Def(key, name) => join(&join(path, key), name),
            Edge::Pattern(pattern) => join(&join(path, "patternProperties"), pattern),
            Edge::Items => format!("{path}[]"),
            Edge::Keyword(key) => join(path, key),
            Edge::Branch(key, index) => format!("{}[{index}]", join(path, key)),
        }
    }

    /// Whether the child is one level deeper in the value (a property, an
    /// element, a keyword's schema), not the same value seen another way.
    pub(crate) fn nests(self) -> bool {
        matches!(self, Edge::Property(_) | Edge::Items | Edge::Keyword(_))
    }
}

const KEYWORDS: &[&str] = &[
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
];
const BRANCHES: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Every child schema of a schema node, in the node's key order.
pub(crate) fn children(object: &Map<String, Value>) -> Vec<(Edge<'_>, &Value)> {
    let mut out = Vec::new();
    for (key, child) in object {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                for (name, schema) in child.as_object().into_iter().flatten() {
                    let edge = match key.as_str() {
                        "properties" => Edge::Property(name),
                        "patternProperties" => Edge::Pattern(name),
                        _ => Edge::Def(key, name),
                    };
                    out.push((edge, schema));
                }
            }
            "items" if child.is_object() => out.push((Edge::Items, child)),
            k if KEYWORDS.contains(&k) && child.is_object() => out.push((Edge::Keyword(k), child)),
            k if BRANCHES.contains(&k) => {
                for (index, branch) in child.as_array().into_iter().flatten().enumerate() {
                    out.push((Edge::Branch(k, index), branch));
                }
            }
            _ => {}
        }
    }
    out
}

/// Rebuilds the child schemas held under `key` with `f`, keeping every key
/// where it was. `key` is one of the keywords [`children`] knows.
pub(crate) fn map_children<E>(
    object: &mut Map<String, Value>,
    key: &str,
    mut f: impl FnMut(Edge<'_>, Value) -> Result<Value, E>,
) -> Result<(), E> {
    let Some(child) = object.get_mut(key) else {
        return Ok(());
    };
    match (key, child) {
        ("properties" | "$defs" | "definitions" | "patternProperties", Value::Object(map)) => {
            for (name, schema) in map.iter_mut() {
                let edge = match key {
                    "properties" => Edge::Property(name),
                    "patternProperties" => Edge::Pattern(name),
                    _ => Edge::Def(key, name),
                };
                *schema = f(edge, std::mem::take(schema))?;
            }
        }
        ("items", schema @ Value::Object(_)) => *schema = f(Edge::Items, std::mem::take(schema))?,
        (k, Value::Array(branches)) if BRANCHES.contains(&k) => {
            let k = BRANCHES
                .iter()
                .copied()
                .find(|b| *b == k)
                .unwrap_or("anyOf");
            for (index, branch) in branches.iter_mut().enumerate() {
                *branch = f(Edge::Branch(k, index), std::mem::take(branch))?;
            }
        }
        (k, schema @ Value::Object(_)) if KEYWORDS.contains(&k) => {
            let k = KEYWORDS.iter().copied().find(|w| *w == k).unwrap_or("not");
            *schema = f(Edge::Keyword(k), std::mem::take(schema))?;
        }
        _ => {}
    }
    Ok(())
}

/// The keys of a node that hold subschemas, in the node's order.
pub(crate) fn schema_keys(object: &Map<String, Value>) -> Vec<String> {
    object
        .keys()
        .filter(|k| {
            matches!(
                k.as_str(),
                "properties" | "$defs" | "definitions" | "patternProperties" | "items"
            ) || KEYWORDS.contains(&k.as_str())
                || BRANCHES.contains(&k.as_str())
        })
        .cloned()
        .collect()
}

/// `#/$defs/Name` (or `#/definitions/Name`) → `Name`.
pub(crate) fn def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The names of every local definition `value` refers to, its
/// subschemas included.
pub(crate) fn references(value: &Value, found: &mut BTreeSet<String>) {
    let Some(object) = value.as_object() else {
        return;
    };
    if let Some(name) = object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(def_name)
    {
        found.insert(name.to_owned());
    }
    for (_, child) in children(object) {
        references(child, found);
    }
}
