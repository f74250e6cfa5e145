//! Tags made required where a `oneOf` becomes an `anyOf`.
//!
//! A tagged union (serde's internally tagged enum, Pydantic's
//! `Field(discriminator=...)`) is a `oneOf` whose branches each give one
//! property a constant value. The original leaves the tag optional when it
//! has a default (Pydantic's `Literal['Query'] = 'Query'`), relying on
//! `oneOf` to reject a value that fits several branches. Dialects without
//! `oneOf` turn it into `anyOf`, which accepts such a value, and the tool
//! then refuses it ("valid under more than one of the schemas"). Requiring
//! the tag in every branch makes each value fit exactly one branch, as the
//! original intends: stricter, never looser, and always satisfiable (the
//! tag's value is a constant the model reads in the schema).

use serde_json::{Map, Value};

/// `schema` with the tag of every tagged `oneOf` required in each branch
/// (in the branch itself, or in the definition a branch refers to), or
/// `None` when nothing needed it.
pub(crate) fn require_tags(schema: &Value) -> Option<Value> {
    let mut patches = Vec::new();
    find(schema, schema, &mut String::new(), &mut patches);
    if patches.is_empty() {
        return None;
    }
    let mut patched = schema.clone();
    for (pointer, tag) in patches {
        let Some(Value::Object(branch)) = patched.pointer_mut(&pointer) else {
            continue;
        };
        let required = branch
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(required) = required {
            if !required.iter().any(|r| r.as_str() == Some(tag.as_str())) {
                required.push(Value::String(tag));
            }
        }
    }
    Some(patched)
}

/// Walks every node, recording `(pointer to the branch object, tag)` for
/// each branch of each tagged `oneOf`.
fn find(root: &Value, value: &Value, pointer: &mut String, patches: &mut Vec<(String, String)>) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Array(branches)) = object.get("oneOf") {
                tag_branches(root, branches, pointer, patches);
            }
            for (key, child) in object {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                find(root, child, pointer, patches);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&index.to_string());
                find(root, child, pointer, patches);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

fn tag_branches(root: &Value, branches: &[Value], at: &str, patches: &mut Vec<(String, String)>) {
    if branches.len() < 2 {
        return;
    }
    // Each branch as (where to patch it, its object).
    let mut resolved: Vec<(String, &Map<String, Value>)> = Vec::new();
    for (index, branch) in branches.iter().enumerate() {
        let Some(object) = branch.as_object() else {
            return;
        };
        match object.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let Some(Value::Object(target)) =
                    toolbox_core::internal::resolve_ref(root, reference)
                else {
                    return;
                };
                let pointer = reference.trim_start_matches('#');
                resolved.push((pointer.to_owned(), target));
            }
            None => resolved.push((format!("{at}/oneOf/{index}"), object)),
        }
    }
    let Some(tag) = common_tag(&resolved) else {
        return;
    };
    for (pointer, object) in resolved {
        let already = object
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|r| r.as_str() == Some(tag.as_str())));
        if !already {
            patches.push((pointer, tag.clone()));
        }
    }
}

/// The first property (in name order) that every branch declares with a
/// constant value, a different one in each branch.
fn common_tag(branches: &[(String, &Map<String, Value>)]) -> Option<String> {
    let properties = |object: &Map<String, Value>| object.get("properties")?.as_object().cloned();
    let first = properties(branches.first()?.1)?;
    let mut names: Vec<&String> = first.keys().collect();
    names.sort();
    names.into_iter().find_map(|name| {
        let mut seen: Vec<&Value> = Vec::new();
        for (_, branch) in branches {
            let property = branch.get("properties")?.get(name.as_str())?;
            let constant = toolbox_core::internal::constant(property)?;
            if seen.contains(&constant) {
                return None;
            }
            seen.push(constant);
        }
        Some(name.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tag_with_a_default_is_required_in_each_branch_inline_or_referenced() {
        let schema = json!({
            "type": "object",
            "$defs": {"Get": {"type": "object", "properties": {
                "op": {"const": "get", "default": "get"}, "key": {"type": "string"}}}},
            "properties": {"items": {"type": "array", "items": {"oneOf": [
                {"$ref": "#/$defs/Get"},
                {"type": "object", "required": ["key"], "properties": {
                    "op": {"enum": ["put"]}, "key": {"type": "string"}, "value": {"type": "string"}}}
            ]}}}
        });
        let patched = require_tags(&schema).unwrap();
        assert_eq!(
            patched.pointer("/$defs/Get/required").unwrap(),
            &json!(["op"])
        );
        assert_eq!(
            patched
                .pointer("/properties/items/items/oneOf/1/required")
                .unwrap(),
            &json!(["key", "op"])
        );
    }

    #[test]
    fn a_union_without_a_distinct_constant_is_left_alone() {
        let untagged = json!({"type": "object", "properties": {"x": {"oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "integer"}}}
        ]}}});
        assert_eq!(require_tags(&untagged), None);
        let same_tag = json!({"type": "object", "properties": {"x": {"oneOf": [
            {"type": "object", "properties": {"t": {"const": "a"}}},
            {"type": "object", "properties": {"t": {"const": "a"}, "b": {"type": "string"}}}
        ]}}});
        assert_eq!(require_tags(&same_tag), None);
        let required_already = json!({"type": "object", "properties": {"x": {"oneOf": [
            {"type": "object", "required": ["t"], "properties": {"t": {"const": "a"}}},
            {"type": "object", "required": ["t"], "properties": {"t": {"const": "b"}}}
        ]}}});
        assert_eq!(require_tags(&required_already), None);
    }
}
