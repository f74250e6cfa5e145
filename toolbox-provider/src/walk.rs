//! The one traversal of a JSON Schema: which keywords hold subschemas and
//! how each child is addressed. Lowering (every dialect), validation (every
//! dialect) and the reference scans all walk schemas through it.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use toolbox_core::internal::join;

/// How a child schema hangs off its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge<'k> {
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
    pub fn argument_path(self, path: &str) -> String {
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
    pub fn schema_path(self, path: &str) -> String {
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
    pub fn nests(self) -> bool {
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
pub fn children(object: &Map<String, Value>) -> Vec<(Edge<'_>, &Value)> {
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
pub fn map_children<E>(
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
pub fn schema_keys(object: &Map<String, Value>) -> Vec<String> {
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

/// The names a node's `required` lists.
pub fn required(object: &Map<String, Value>) -> BTreeSet<&str> {
    object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `#/$defs/Name` (or `#/definitions/Name`) → `Name`.
pub fn def_name(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The names of every local definition `value` refers to, its
/// subschemas included.
pub fn references(value: &Value, found: &mut BTreeSet<String>) {
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

/// The name the cycle check gives the root (`"$ref": "#"`).
pub const ROOT: &str = "#";

/// The local references of `value` as graph nodes: a definition's name,
/// or [`ROOT`] for `#`. Definitions nested in `value` are not entered.
fn edges(value: &Value, found: &mut BTreeSet<String>) {
    let Some(object) = value.as_object() else {
        return;
    };
    match object.get("$ref").and_then(Value::as_str) {
        Some("#") => {
            found.insert(ROOT.to_owned());
        }
        Some(reference) => {
            if let Some(name) = def_name(reference) {
                found.insert(name.to_owned());
            }
        }
        None => {}
    }
    for (edge, child) in children(object) {
        if !matches!(edge, Edge::Def(..)) {
            edges(child, found);
        }
    }
}

/// Every reference cycle reachable from the root, once each: the
/// definitions of one strongly connected group (a recursive type and those
/// it recurses through), in name order, [`ROOT`] first where the root is
/// in it.
pub fn cycles(root: &Value) -> Vec<Vec<String>> {
    let defs = root
        .get("$defs")
        .or_else(|| root.get("definitions"))
        .and_then(Value::as_object);
    let targets = |node: &str| -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let schema = if node == ROOT {
            Some(root)
        } else {
            defs.and_then(|d| d.get(node))
        };
        if let Some(schema) = schema {
            edges(schema, &mut found);
        }
        found.retain(|n| n == ROOT || defs.is_some_and(|d| d.contains_key(n)));
        found
    };
    // The nodes reachable from the root, and their edges.
    let mut graph: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    let mut pending = vec![ROOT.to_owned()];
    while let Some(node) = pending.pop() {
        if graph.contains_key(&node) {
            continue;
        }
        let out = targets(&node);
        pending.extend(out.iter().cloned());
        graph.insert(node, out);
    }
    // A node is on a cycle with the nodes that reach it and that it reaches.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = graph
            .get(from)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        while let Some(node) = stack.pop() {
            if seen.insert(node.to_owned()) {
                stack.extend(graph.get(node).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    let reaches: std::collections::BTreeMap<&str, BTreeSet<String>> =
        graph.keys().map(|n| (n.as_str(), reach(n))).collect();
    let mut grouped = BTreeSet::new();
    let mut out = Vec::new();
    for node in graph.keys() {
        if grouped.contains(node) || !reaches[node.as_str()].contains(node) {
            continue;
        }
        let group: Vec<String> = graph
            .keys()
            .filter(|other| {
                reaches[node.as_str()].contains(*other) && reaches[other.as_str()].contains(node)
            })
            .cloned()
            .collect();
        grouped.extend(group.iter().cloned());
        out.push(group);
    }
    out
}

/// A cycle as text: `` `Tree` `` or `` `A` → `B` → `A` ``, the root as
/// "the root".
pub fn describe_cycle(cycle: &[String]) -> String {
    let name = |n: &String| {
        if n == ROOT {
            "the root".to_owned()
        } else {
            format!("`{n}`")
        }
    };
    let names: Vec<String> = cycle.iter().map(name).collect();
    match names.as_slice() {
        [one] => one.clone(),
        _ => format!("{} → {}", names.join(" → "), names[0]),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_cycle_is_found_once() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}, "me": {"$ref": "#"}, "a": {"$ref": "#/$defs/A"}, "leaf": {"$ref": "#/$defs/Leaf"}},
            "$defs": {
                "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}},
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
                "Leaf": {"type": "string"},
                "Unused": {"type": "object", "properties": {"u": {"$ref": "#/$defs/Unused"}}}
            }
        });
        let cycles: Vec<String> = cycles(&schema).iter().map(|c| describe_cycle(c)).collect();
        assert_eq!(cycles, ["the root", "`A` → `B` → `A`", "`Tree`"]);
    }
}
