//! Lowering for OpenAI strict and Anthropic strict: every property
//! required (optionals made nullable), every object closed, choices that
//! can never be sent refused.

use super::*;

impl Lowering<'_> {
    /// OpenAI strict and Anthropic strict.
    pub(super) fn strict(
        &self,
        value: Value,
        path: &str,
        stack: &mut Vec<String>,
    ) -> Result<Value, LowerError> {
        let Value::Object(mut object) = value else {
            return match value {
                Value::Bool(true) => Err(self.untyped(path)),
                other => Ok(other),
            };
        };
        let _level = self.enter(path)?;
        let openai = self.dialect == Dialect::OpenAiStrict;
        self.flatten_all_of(&mut object, path)?;
        let inlined = self.inline_ref(&mut object, path, stack)?;
        Self::homogeneous_tuple(&mut object);
        self.apply_rules(&mut object, path)?;
        if object
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
        {
            return Err(self.error(
                path,
                crate::rules::Reason::Map.message("additionalProperties", self.dialect),
            ));
        }
        if !has_type(&object) {
            return Err(self.untyped(path));
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
                        make_nullable(self.root, property)
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
            self.closed_choice(&object, path)?;
        }
        if inlined {
            stack.pop();
        }
        Ok(Value::Object(object))
    }

    /// Refuses a closed object whose fields and whose choice of closed
    /// objects can never be sent together (a `#[serde(flatten)]`ed enum
    /// beside fields of its own): every branch requires a key the object
    /// does not declare, or lacks one the object requires, so the lowered
    /// schema would admit no value and the tool could never be called.
    pub(super) fn closed_choice(
        &self,
        object: &Map<String, Value>,
        path: &str,
    ) -> Result<(), LowerError> {
        let Some(branches) = object.get("anyOf").and_then(Value::as_array) else {
            return Ok(());
        };
        let keys = |node: &Map<String, Value>, field: &str| -> BTreeSet<String> {
            match node.get(field) {
                Some(Value::Object(properties)) => properties.keys().cloned().collect(),
                Some(Value::Array(required)) => required
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => BTreeSet::new(),
            }
        };
        let declared = keys(object, "properties");
        let required = keys(object, "required");
        let resolve = |branch: &'_ Value| -> Option<Map<String, Value>> {
            let node = branch.as_object()?;
            match node.get("$ref").and_then(Value::as_str) {
                Some(reference) => toolbox_core::internal::resolve_ref(self.root, reference)?
                    .as_object()
                    .cloned(),
                None => Some(node.clone()),
            }
        };
        let mut possible = false;
        for branch in branches {
            let Some(node) = resolve(branch) else {
                return Ok(());
            };
            let closed_object =
                node.get("type") == Some(&json!("object")) || node.contains_key("properties");
            if !closed_object {
                return Ok(());
            }
            let (own, needs) = (keys(&node, "properties"), keys(&node, "required"));
            if needs.is_subset(&declared) && required.is_subset(&own) {
                possible = true;
            }
        }
        if possible || branches.is_empty() {
            return Ok(());
        }
        Err(self.error(
            path,
            format!(
                "its fields and its choice of objects (a `#[serde(flatten)]`ed enum) can never be sent together under {}, where every object is closed: no value would be accepted; give the choice a field of its own instead of flattening it",
                self.dialect.label()
            ),
        ))
    }
}
