//! Enums (serde's `EnumAccess` and `VariantAccess`) and serde_json's
//! `RawValue` map.

use super::*;

/// An enum's variant: its name, and its content unless it came as a bare
/// string.
pub(super) struct Variant<'r, 'de> {
    pub(super) name: Cow<'de, str>,
    pub(super) content: Option<Src<'r, 'de>>,
}

pub(super) struct Content<'r, 'de> {
    pub(super) name: Cow<'de, str>,
    pub(super) content: Option<Src<'r, 'de>>,
}

impl<'r, 'de> de::EnumAccess<'de> for Variant<'r, 'de> {
    type Error = ReadError;
    type Variant = Content<'r, 'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Content<'r, 'de>), ReadError> {
        let variant = seed.deserialize(Key {
            key: self.name.clone(),
            raw: None,
        })?;
        Ok((
            variant,
            Content {
                name: self.name,
                content: self.content,
            },
        ))
    }
}

impl<'de> de::VariantAccess<'de> for Content<'_, 'de> {
    type Error = ReadError;

    fn unit_variant(self) -> Result<(), ReadError> {
        let result = match self.content {
            None => Ok(()),
            Some(src) => <()>::deserialize(Reader(src)),
        };
        result.map_err(|error| error.at_key(Some(&self.name)))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, ReadError> {
        let result = match self.content {
            Some(src) => seed.deserialize(Reader(src)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        };
        result.map_err(|error| error.at_key(Some(&self.name)))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let result = match self.content {
            Some(src) => {
                let from_value = matches!(src, Src::Value(_));
                match got(src) {
                    Ok(Got::Seq(Seq::Value(_, 0))) => visitor.visit_unit(),
                    Ok(Got::Seq(seq)) => visit_seq(seq, visitor),
                    Ok(other) if from_value => Err(other.invalid(&"tuple variant")),
                    Ok(other) => Err(other.invalid(&visitor)),
                    Err(error) => Err(error),
                }
            }
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        };
        result.map_err(|error| error.at_key(Some(&self.name)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let result = match self.content {
            Some(src) => {
                let from_value = matches!(src, Src::Value(_));
                match got(src) {
                    Ok(Got::Map(map)) => visit_map(map, visitor),
                    Ok(Got::Seq(seq)) if !from_value => visit_seq(seq, visitor),
                    Ok(other) if from_value => Err(other.invalid(&"struct variant")),
                    Ok(other) => Err(other.invalid(&visitor)),
                    Err(error) => Err(error),
                }
            }
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        };
        result.map_err(|error| error.at_key(Some(&self.name)))
    }
}

// ---------------------------------------------------------------------------
// `RawValue`.

/// The map serde_json hands `RawValue`'s visitor: one entry, its marker
/// and the raw text.
pub(super) struct RawMap<'de> {
    pub(super) raw: Option<Cow<'de, str>>,
}

impl<'de> de::MapAccess<'de> for RawMap<'de> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        if self.raw.is_none() {
            return Ok(None);
        }
        seed.deserialize(RAW_TOKEN.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        match self.raw.take() {
            Some(Cow::Borrowed(raw)) => {
                seed.deserialize(de::value::BorrowedStrDeserializer::new(raw))
            }
            Some(Cow::Owned(raw)) => seed.deserialize(raw.into_deserializer()),
            None => Err(de::Error::custom("value is missing")),
        }
    }
}
