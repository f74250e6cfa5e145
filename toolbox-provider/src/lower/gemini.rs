//! Lowering for Gemini: `parametersJsonSchema` (JSON Schema minus what the
//! backend does not understand) and the legacy `parameters` (an OpenAPI
//! 3.0 subset: refs inlined, nullable, string enums).

use super::*;

impl Lowering<'_> {
    /// Gemini `parametersJsonSchema`: plain JSON Schema minus what the
    /// backend does not understand.
    pub(super) fn gemini_json(&self, value: Value, path: &str) -> Result<Value, LowerError> {
        let Value::Object(mut object) = value else {
            return Ok(value);
        };
        let _level = self.enter(path)?;
        if let Some(constant) = object.remove("const") {
            object.insert("enum".into(), Value::Array(vec![constant]));
        }
        self.flatten_all_of(&mut object, path)?;
        Self::homogeneous_tuple(&mut object);
        self.apply_rules(&mut object, path)?;
        // Only what the dialect keeps is lowered; the rest goes below.
        let rules = self.dialect.rules();
        for key in walk::schema_keys(&object) {
            if rules.accepts_key(&key) {
                walk::map_children(&mut object, &key, |edge, child| {
                    self.gemini_json(child, &edge.argument_path(path))
                })?;
            }
        }
        object.retain(|key, _| rules.accepts_key(key));
        Ok(Value::Object(object))
    }

    /// Gemini legacy `parameters`: an OpenAPI 3.0 subset, refs inlined,
    /// `nullable` instead of null unions, one type per node (a type array
    /// becomes `anyOf`), string enums only (other values are described),
    /// and `anyOf` alone on its node (the node's own fields go into each
    /// branch).
    pub(super) fn gemini_parameters(
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
        self.flatten_all_of(&mut object, path)?;
        let inlined = self.inline_ref(&mut object, path, stack)?;
        Self::homogeneous_tuple(&mut object);
        self.apply_rules(&mut object, path)?;
        match object.get("additionalProperties") {
            Some(Value::Bool(_)) | None => {}
            Some(map) if map.as_object().is_some_and(Map::is_empty) => {}
            Some(_) => {
                return Err(self.error(
                    path,
                    crate::rules::Reason::Map.message("additionalProperties", self.dialect),
                ))
            }
        }
        let mut nullable = object.get("nullable") == Some(&Value::Bool(true));
        if let Some(Value::Array(types)) = object.get("type").cloned() {
            let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            nullable |= non_null.len() < types.len();
            match non_null.as_slice() {
                [one] => {
                    object.insert("type".into(), one.clone());
                }
                [] => {
                    object.insert("type".into(), json!("null"));
                }
                several => {
                    if object.contains_key("anyOf") {
                        return Err(self.error(
                            path,
                            "a type array beside `anyOf` cannot be expressed in Gemini's `parameters`",
                        ));
                    }
                    object.remove("type");
                    let branches = split_types(&mut object, several);
                    object.insert("anyOf".into(), Value::Array(branches));
                }
            }
        }
        if object.get("type").is_some_and(|t| t == "null") {
            return Err(self.error(
                path,
                "a value that can only be `null` cannot be expressed in Gemini's `parameters`",
            ));
        }
        if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
            let before = branches.len();
            branches.retain(|b| !b.get("type").is_some_and(|t| t == "null"));
            nullable |= branches.len() < before;
        }
        if let Some(Value::Object(properties)) = object.get("properties") {
            if let Some(name) = properties.keys().find(|k| !is_gemini_parameter_name(k)) {
                return Err(self.error(
                    &join(path, name),
                    format!("`{name}` is not a legal Gemini parameter name: start with a letter or `_`, then only letters, digits and `_`, at most 64"),
                ));
            }
        }
        if let Some(constant) = object.remove("const") {
            object.insert("enum".into(), Value::Array(vec![constant]));
        }
        if let Some(Value::Array(values)) = object.get("enum").cloned() {
            nullable |= values.iter().any(Value::is_null);
            let values: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
            self.gemini_enum(&mut object, values, path)?;
        }
        if !has_type(&object) {
            return Err(self.untyped(path));
        }
        let rules = self.dialect.rules();
        for key in walk::schema_keys(&object) {
            if rules.accepts_key(&key) {
                walk::map_children(&mut object, &key, |edge, child| {
                    self.gemini_parameters(child, &edge.argument_path(path), stack)
                })?;
            }
        }
        // One branch is the value itself; several stand alone, each with
        // the node's own fields, since Gemini refuses siblings next to `anyOf`.
        match object.remove("anyOf") {
            Some(Value::Array(mut rest)) if rest.len() == 1 => {
                if let Some(Value::Object(only)) = rest.pop() {
                    self.unite(&mut object, only, path)?;
                }
            }
            Some(Value::Array(branches)) => {
                let own: Map<String, Value> = std::mem::take(&mut object)
                    .into_iter()
                    .filter(|(key, _)| rules.accepts_key(key) && key != "nullable")
                    .collect();
                let mut distributed = Vec::new();
                for branch in branches {
                    let Value::Object(mut branch) = branch else {
                        continue;
                    };
                    // A branch of another type than the node's own holds of no value.
                    if let (Some(mine), Some(theirs)) = (own.get("type"), branch.get("type")) {
                        if mine != theirs {
                            continue;
                        }
                    }
                    self.unite(&mut branch, own.clone(), path)?;
                    branch.retain(|key, _| rules.accepts_key(key));
                    distributed.push(Value::Object(branch));
                }
                if distributed.is_empty() {
                    return Err(self.error(path, "no branch of `anyOf` fits the node's own type"));
                }
                object.insert("anyOf".into(), Value::Array(distributed));
            }
            Some(other) => {
                object.insert("anyOf".into(), other);
            }
            None => {}
        }
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if !gemini_parameter_format(object.get("type").and_then(Value::as_str), format) {
                object.remove("format");
            }
        }
        if !object.contains_key("items") && object.get("type").is_some_and(|t| t == "array") {
            object.insert("items".into(), json!({"type": "string"}));
        }
        if nullable {
            object.insert("nullable".into(), Value::Bool(true));
        }
        object.retain(|key, _| rules.accepts_key(key));
        if inlined {
            stack.pop();
        }
        Ok(Value::Object(object))
    }

    /// Gemini's `parameters` takes string enums only: strings stay an
    /// enum; numbers or booleans keep their type, their values go into the
    /// description (and the tool refuses another value with its usual error).
    pub(super) fn gemini_enum(
        &self,
        object: &mut Map<String, Value>,
        values: Vec<Value>,
        path: &str,
    ) -> Result<(), LowerError> {
        if values.iter().all(Value::is_string) {
            object.insert("enum".into(), Value::Array(values));
            object.insert("type".into(), Value::String("string".into()));
            return Ok(());
        }
        let kind = |v: &Value| match v {
            Value::Bool(_) => Some("boolean"),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
            Value::Number(_) => Some("number"),
            _ => None,
        };
        let kinds: BTreeSet<Option<&str>> = values.iter().map(kind).collect();
        let ty = match kinds.iter().collect::<Vec<_>>().as_slice() {
            [Some(one)] => *one,
            [Some("integer"), Some("number")] | [Some("number"), Some("integer")] => "number",
            _ => {
                return Err(self.error(
                    path,
                    "an enum of mixed or structured values cannot be expressed in Gemini's `parameters`; use strings",
                ))
            }
        };
        object.remove("enum");
        object.insert("type".into(), Value::String(ty.into()));
        let listed: Vec<String> = values.iter().map(Value::to_string).collect();
        append_note(object, format!("{{one of: {}}}", listed.join(", ")));
        Ok(())
    }
}
