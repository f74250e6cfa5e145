//! JSON Schemas of arguments and results, from schemars.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The argument schema of a tool whose arguments deserialize into `T`:
/// draft 2020-12, without `$schema` and `title` (noise to a model). `()`
/// gives an empty object. Fails when `T` is not an object.
pub fn arguments_schema<T: JsonSchema + ?Sized>() -> Result<Value, String> {
    // Only the schema generation is generic; the checks are compiled once.
    object_schema(root_schema::<T>(), &T::schema_name())
}

fn object_schema(mut schema: Value, type_name: &str) -> Result<Value, String> {
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
    let generator = SchemaSettings::draft2020_12().into_generator();
    strip_root(generator.into_root_schema_for::<T>().to_value())
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
