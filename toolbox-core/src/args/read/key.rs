//! Map keys (and enum variant names) as serde_json hands them over: a
//! string, or a number or boolean written in one.

use super::*;

/// A map key (and an enum's variant name) as serde_json hands it over:
/// a string, or a number or boolean written in one. `raw` is the text
/// between the quotes when the key came as text (`Some(None)` when it had
/// escapes), `None` when it came from a `Value`.
pub(super) struct Key<'de> {
    pub(super) key: Cow<'de, str>,
    pub(super) raw: Option<Option<&'de str>>,
}

macro_rules! numeric_keys {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            self.number(visitor)
        }
    )*};
}

macro_rules! exact_keys {
    ($($method:ident $ty:ty => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            let text = self.number_text()?;
            match serde_json::from_str::<$ty>(text) {
                Ok(value) => visitor.$visit(value),
                Err(error) if error.is_data() => {
                    Err(unnamed(ReadError::new(Kind::Data(without_position(error)))))
                }
                Err(_) => Err(self.not_a_number()),
            }
        }
    )*};
}

impl<'de> Key<'de> {
    /// The key's text if it can be a number (what serde_json reads), or
    /// the error it gives when it cannot.
    pub(super) fn number_text(&self) -> Result<&str, ReadError> {
        let text = match self.raw {
            None => &*self.key,
            Some(Some(raw)) => raw,
            Some(None) => return Err(self.not_a_number()),
        };
        let numeric = text
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'));
        if numeric && matches!(text.as_bytes().first(), Some(b'0'..=b'9' | b'-')) {
            Ok(text)
        } else {
            Err(self.not_a_number())
        }
    }

    #[cold]
    pub(super) fn not_a_number(&self) -> ReadError {
        match self.raw {
            None => unnamed(de::Error::custom("expected key to be a number in quotes")),
            Some(_) => text_only("expected key to be a number in quotes"),
        }
    }

    /// A key read as a number: from the value's key string as
    /// serde_json's `Value` reader does, from the raw text between the
    /// quotes as its text reader does.
    pub(super) fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.parsed()? {
            // `serde_path_to_error` names a key read as an integer, not one
            // read as a float.
            number @ Num::F64(_) => number.visit(visitor).map_err(unnamed),
            number => number.visit(visitor),
        }
    }

    /// The key as a number, as serde_json reads it.
    #[inline(never)]
    pub(super) fn parsed(&self) -> Result<Num, ReadError> {
        number_of(self.number_text()?).map_err(|_| self.not_a_number())
    }
}

/// An error a key raised before its visitor saw it: the path cannot name
/// the key (`serde_path_to_error` writes `?`).
#[cold]
pub(super) fn unnamed(mut error: ReadError) -> ReadError {
    error.0.unnamed_key = true;
    error
}

#[cold]
pub(super) fn text_only(message: &str) -> ReadError {
    ReadError::new(Kind::TextOnly(format!("invalid value: {message}")))
}

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = ReadError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visit_cow(self.key, visitor)
    }

    numeric_keys!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f64);

    exact_keys! {
        deserialize_u128 u128 => visit_u128,
        deserialize_i128 i128 => visit_i128,
        deserialize_f32 f32 => visit_f32,
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.raw {
            None | Some(None) => match &*self.key {
                "true" if self.raw.is_none() => visitor.visit_bool(true),
                "false" if self.raw.is_none() => visitor.visit_bool(false),
                key => Err(unnamed(de::Error::invalid_type(
                    Unexpected::Str(key),
                    &visitor,
                ))),
            },
            Some(Some("true")) => visitor.visit_bool(true),
            Some(Some("false")) => visitor.visit_bool(false),
            Some(Some(raw)) if raw.starts_with(['t', 'f']) => {
                Err(text_only("expected a boolean key"))
            }
            Some(Some(raw)) => Err(unnamed(de::Error::invalid_type(
                Unexpected::Str(raw),
                &visitor,
            ))),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match (self.key, self.raw) {
            (Cow::Borrowed(s), Some(_)) => visitor.visit_borrowed_bytes(s.as_bytes()),
            (Cow::Owned(s), Some(_)) => visitor.visit_byte_buf(s.into_bytes()),
            (key, None) => visit_cow(key, visitor),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        // Map keys cannot be null.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        visitor.visit_enum(Variant {
            name: self.key,
            content: None,
        })
    }

    serde::forward_to_deserialize_any! {
        char str string unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}
