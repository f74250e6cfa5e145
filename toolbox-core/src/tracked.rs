//! A deserializer over a borrowed `serde_json::Value` that knows where it is:
//! on failure the error carries the JSON path (`filters.tags[1]`) of the
//! offending value. The path is built only while an error travels up, so a
//! successful deserialization allocates nothing for it, and a type's
//! `Deserialize` impl is instantiated once, for this deserializer alone.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde_json::{Map, Value};

/// A deserialization error and where it happened, boxed so that results
/// on the success path stay one word wide.
#[derive(Debug)]
pub(crate) struct PathError(Box<ErrorInner>);

#[derive(Debug)]
struct ErrorInner {
    /// Segments innermost first: keys and `[index]`es.
    segments: Vec<Segment>,
    message: String,
}

#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

impl PathError {
    fn within(mut self, segment: Segment) -> Self {
        self.0.segments.push(segment);
        self
    }

    /// `filters.tags[1]`, or empty for the root.
    pub(crate) fn path(&self) -> String {
        let mut path = String::new();
        for segment in self.0.segments.iter().rev() {
            match segment {
                Segment::Key(key) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Segment::Index(index) => {
                    path.push('[');
                    path.push_str(&index.to_string());
                    path.push(']');
                }
            }
        }
        path
    }

    pub(crate) fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for PathError {}

impl de::Error for PathError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        PathError(Box::new(ErrorInner {
            segments: Vec::new(),
            message: message.to_string(),
        }))
    }
}

/// The deserializer: a borrowed value.
pub(crate) struct Tracked<'a>(pub(crate) &'a Value);

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Unexpected::Unsigned(u)
            } else if let Some(i) = n.as_i64() {
                Unexpected::Signed(i)
            } else {
                Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// Numbers visit only the number methods.
macro_rules! numbers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
            match self.0 {
                Value::Number(n) => {
                    if let Some(u) = n.as_u64() {
                        visitor.visit_u64(u)
                    } else if let Some(i) = n.as_i64() {
                        visitor.visit_i64(i)
                    } else {
                        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                    }
                }
                other => Err(invalid_type(other, &visitor)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Tracked<'de> {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Value::String(variant) => visitor.visit_enum(Enum {
                variant,
                value: None,
            }),
            Value::Object(map) if map.len() == 1 => {
                let Some((variant, value)) = map.iter().next() else {
                    return Err(de::Error::custom("an enum object needs exactly one key"));
                };
                visitor
                    .visit_enum(Enum {
                        variant,
                        value: Some(value),
                    })
                    .map_err(|e| e.within(Segment::Key(variant.clone())))
            }
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"a string or an object with one key",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_unit()
    }

    // The typed entry points call only the visitor method their JSON type
    // needs, so a `Deserialize` impl instantiates little besides what it uses.

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.deserialize_unit(visitor)
    }

    numbers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    serde::forward_to_deserialize_any! {
        char bytes byte_buf
    }
}

fn invalid_type<'de, V: Visitor<'de>>(value: &Value, visitor: &V) -> PathError {
    de::Error::invalid_type(unexpected(value), visitor)
}

fn visit_array<'de, V: Visitor<'de>>(
    items: &'de [Value],
    visitor: V,
) -> Result<V::Value, PathError> {
    let mut access = Seq {
        items: items.iter(),
        index: 0,
    };
    let value = visitor.visit_seq(&mut access)?;
    if access.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(
            items.len(),
            &"fewer elements in the array",
        ))
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    map: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, PathError> {
    let mut access = Object {
        entries: map.iter(),
        current: None,
    };
    visitor.visit_map(&mut access)
}

struct Seq<'de> {
    items: std::slice::Iter<'de, Value>,
    index: usize,
}

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = PathError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, PathError> {
        match self.items.next() {
            None => Ok(None),
            Some(item) => {
                let index = self.index;
                self.index += 1;
                match seed.deserialize(Tracked(item)) {
                    Ok(value) => Ok(Some(value)),
                    Err(error) => Err(error.within(Segment::Index(index))),
                }
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Object<'de> {
    entries: serde_json::map::Iter<'de>,
    current: Option<(&'de String, &'de Value)>,
}

impl<'de> MapAccess<'de> for Object<'de> {
    type Error = PathError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, PathError> {
        match self.entries.next() {
            None => Ok(None),
            Some((key, value)) => {
                self.current = Some((key, value));
                match seed.deserialize(BorrowedKey(key)) {
                    Ok(value) => Ok(Some(value)),
                    Err(error) => Err(error.within(Segment::Key(key.clone()))),
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, PathError> {
        match self.current.take() {
            Some((key, value)) => match seed.deserialize(Tracked(value)) {
                Ok(value) => Ok(value),
                Err(error) => Err(error.within(Segment::Key(key.clone()))),
            },
            None => Err(de::Error::custom(
                "a map value was asked for before its key",
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// Integer-typed object keys (`BTreeMap<u32, _>`) parse the key text.
macro_rules! integer_keys {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
            self.integer(visitor)
        }
    )*};
}

/// An object key: a borrowed string, also readable as a number (maps with
/// integer keys).
struct BorrowedKey<'de>(&'de str);

impl<'de> de::Deserializer<'de> for BorrowedKey<'de> {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any f32 f64
    }

    integer_keys!(
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128
    );
}

impl<'de> BorrowedKey<'de> {
    fn integer<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        if let Ok(u) = self.0.parse::<u64>() {
            visitor.visit_u64(u)
        } else if let Ok(i) = self.0.parse::<i64>() {
            visitor.visit_i64(i)
        } else {
            visitor.visit_borrowed_str(self.0)
        }
    }
}

struct Enum<'de> {
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for Enum<'de> {
    type Error = PathError;
    type Variant = Variant<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Variant<'de>), PathError> {
        let variant = seed.deserialize(BorrowedKey(self.variant))?;
        Ok((variant, Variant(self.value)))
    }
}

struct Variant<'de>(Option<&'de Value>);

impl<'de> VariantAccess<'de> for Variant<'de> {
    type Error = PathError;

    fn unit_variant(self) -> Result<(), PathError> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(other),
                &"a unit variant",
            )),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, PathError> {
        match self.0 {
            Some(value) => seed.deserialize(Tracked(value)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Some(Value::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(other),
                &"a tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"a tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Some(Value::Object(map)) => visit_object(map, visitor),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(other),
                &"a struct variant",
            )),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"a struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Deserialize;
    use serde_json::json;

    use crate::deserialize_arguments;

    #[derive(Debug, Deserialize, PartialEq)]
    enum Action {
        Stop,
        Move { x: i32, y: i32 },
        Say(String),
        Pair(u8, u8),
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Shape {
        Circle { radius: f64 },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(untagged)]
    enum IdOrName {
        Id(u64),
        Name(String),
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Meters(f64);

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Everything {
        actions: Vec<Action>,
        shape: Shape,
        who: IdOrName,
        counts: HashMap<String, u32>,
        by_id: BTreeMap<u32, String>,
        length: Meters,
        maybe: Option<bool>,
        pair: (u8, String),
        #[serde(default)]
        unit: (),
    }

    fn everything() -> serde_json::Value {
        json!({
            "actions": ["Stop", {"Move": {"x": 1, "y": -2}}, {"Say": "hi"}, {"Pair": [1, 2]}],
            "shape": {"kind": "circle", "radius": 1.5},
            "who": "ada",
            "counts": {"a": 1},
            "by_id": {"7": "seven"},
            "length": 2,
            "maybe": null,
            "pair": [3, "x"]
        })
    }

    #[test]
    fn every_serde_shape_deserializes() {
        let parsed: Everything = deserialize_arguments(&everything()).unwrap();
        assert_eq!(
            parsed.actions,
            [
                Action::Stop,
                Action::Move { x: 1, y: -2 },
                Action::Say("hi".into()),
                Action::Pair(1, 2)
            ]
        );
        assert_eq!(parsed.shape, Shape::Circle { radius: 1.5 });
        assert_eq!(parsed.who, IdOrName::Name("ada".into()));
        assert_eq!(parsed.counts["a"], 1);
        assert_eq!(parsed.by_id[&7], "seven");
        assert_eq!(parsed.length, Meters(2.0));
        assert_eq!(parsed.maybe, None);
        assert_eq!(parsed.pair, (3, "x".into()));
    }

    fn error_at(pointer: &str, value: serde_json::Value) -> String {
        let mut arguments = everything();
        *arguments.pointer_mut(pointer).unwrap() = value;
        deserialize_arguments::<Everything>(&arguments)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_carry_the_path_of_the_offending_value() {
        assert_eq!(
            error_at("/actions/1/Move/y", json!("down")),
            "invalid arguments at `actions[1].Move.y`: invalid type: string \"down\", expected i32"
        );
        assert_eq!(
            error_at("/actions/3/Pair/1", json!(256)),
            "invalid arguments at `actions[3].Pair[1]`: invalid value: integer `256`, expected u8"
        );
        assert_eq!(
            error_at("/actions/0", json!("Jump")),
            "invalid arguments at `actions[0]`: unknown variant `Jump`, expected one of `Stop`, `Move`, `Say`, `Pair`"
        );
        assert_eq!(
            error_at("/counts/a", json!(-1)),
            "invalid arguments at `counts.a`: invalid value: integer `-1`, expected u32"
        );
        assert_eq!(
            error_at("/shape", json!({"kind": "square"})),
            "invalid arguments at `shape.kind`: unknown variant `square`, expected `circle`"
        );
        assert_eq!(
            error_at("/who", json!(true)),
            "invalid arguments at `who`: data did not match any variant of untagged enum IdOrName"
        );
        assert_eq!(
            error_at("/pair", json!([1, "x", 3])),
            "invalid arguments at `pair`: invalid length 3, expected fewer elements in the array"
        );
        assert_eq!(
            error_at("/length", json!("far")),
            "invalid arguments at `length`: invalid type: string \"far\", expected f64"
        );
    }
}
