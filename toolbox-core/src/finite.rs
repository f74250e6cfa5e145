//! Finding a non-finite float in a tool's result: `serde_json` writes NaN
//! and infinities as `null`, silently. The result is walked again (only
//! when its JSON holds a `null`) and the float's path named.

use std::fmt;

use serde::ser::{self, Serialize};

/// Where `value` holds a NaN or an infinity, with what it is, if anywhere.
pub(crate) fn non_finite<T: Serialize + ?Sized>(value: &T) -> Option<(String, &'static str)> {
    match serde_path_to_error::serialize(value, Walker) {
        Ok(()) => None,
        Err(error) => {
            let path = error.path().to_string();
            match error.into_inner() {
                Found::NonFinite(what) => Some((path, what)),
                Found::Other => None,
            }
        }
    }
}

#[derive(Debug)]
enum Found {
    NonFinite(&'static str),
    Other,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::NonFinite(what) => f.write_str(what),
            Found::Other => f.write_str("not serializable"),
        }
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Found::Other
    }
}

fn float(v: f64) -> Result<(), Found> {
    if v.is_nan() {
        Err(Found::NonFinite("NaN"))
    } else if v.is_infinite() {
        Err(Found::NonFinite(if v > 0.0 {
            "infinity"
        } else {
            "-infinity"
        }))
    } else {
        Ok(())
    }
}

/// A serializer that writes nothing and fails on the first non-finite float.
struct Walker;

macro_rules! ignore {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, _: $ty) -> Result<(), Found> { Ok(()) })*
    };
}

impl ser::Serializer for Walker {
    type Ok = ();
    type Error = Found;
    type SerializeSeq = Walker;
    type SerializeTuple = Walker;
    type SerializeTupleStruct = Walker;
    type SerializeTupleVariant = Walker;
    type SerializeMap = Walker;
    type SerializeStruct = Walker;
    type SerializeStructVariant = Walker;

    ignore!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );

    fn serialize_f32(self, v: f32) -> Result<(), Found> {
        float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Found> {
        float(v)
    }
    fn serialize_none(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Found> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Found> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Walker, Found> {
        Ok(Walker)
    }
    fn serialize_tuple(self, _: usize) -> Result<Walker, Found> {
        Ok(Walker)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Walker, Found> {
        Ok(Walker)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Walker, Found> {
        Ok(Walker)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Walker, Found> {
        Ok(Walker)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Walker, Found> {
        Ok(Walker)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Walker, Found> {
        Ok(Walker)
    }
}

/// The compound halves of [`Walker`]: each element or field is walked.
macro_rules! walk_elements {
    ($($trait:ident::$method:ident),* $(,)?) => {$(
        impl ser::$trait for Walker {
            type Ok = ();
            type Error = Found;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
                value.serialize(Walker)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        }
    )*};
}

walk_elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

macro_rules! walk_fields {
    ($($trait:ident),* $(,)?) => {$(
        impl ser::$trait for Walker {
            type Ok = ();
            type Error = Found;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _: &'static str,
                value: &T,
            ) -> Result<(), Found> {
                value.serialize(Walker)
            }
            fn end(self) -> Result<(), Found> {
                Ok(())
            }
        }
    )*};
}

walk_fields!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Walker {
    type Ok = ();
    type Error = Found;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Found> {
        // Walked so that the path tracker around us sees the key's text.
        key.serialize(Walker)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        value.serialize(Walker)
    }
    fn end(self) -> Result<(), Found> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::non_finite;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Reading {
        celsius: f64,
        history: Vec<f32>,
    }

    #[test]
    fn non_finite_floats_are_found_with_their_path() {
        assert_eq!(non_finite(&1.5), None);
        assert_eq!(non_finite(&f64::NAN), Some((".".to_owned(), "NaN")));
        let reading = Reading {
            celsius: 20.0,
            history: vec![1.0, f32::INFINITY],
        };
        assert_eq!(
            non_finite(&reading),
            Some(("history[1]".to_owned(), "infinity"))
        );
        let map = BTreeMap::from([("t", f64::NEG_INFINITY)]);
        assert_eq!(non_finite(&map), Some(("t".to_owned(), "-infinity")));
        assert_eq!(non_finite(&Option::<f64>::None), None);
    }
}
