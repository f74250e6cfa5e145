//! Sequences and maps: serde's `SeqAccess` and `MapAccess` over an array or
//! object, as a value or as text.

use super::*;

pub(super) enum Seq<'r, 'de> {
    /// The items left, and how many there were (the array's level is
    /// entered while [`visit_seq`] reads it).
    Value(std::slice::Iter<'de, Value>, usize),
    Text(&'r mut Cursor<'de>),
}

pub(super) struct SeqReader<'r, 'de> {
    pub(super) src: Seq<'r, 'de>,
    pub(super) index: usize,
    /// The array's level, entered for the visit.
    pub(super) level: SeqLevel,
}

/// Where a sequence stands with the value's levels.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum SeqLevel {
    /// Text, which counts its own depth.
    Text,
    /// An array of the value, its level entered.
    Entered,
    /// An array past the limit: not entered, and its read refused.
    TooDeep,
}

impl<'r, 'de> SeqReader<'r, 'de> {
    /// A sequence to visit, its level entered (an array of the value; text
    /// counts its own depth). One past the limit is refused by its first
    /// read, so the visit has no failure of its own to handle.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn enter(src: Seq<'r, 'de>) -> Self {
        let level = match src {
            Seq::Value(..) if enter_level().is_ok() => SeqLevel::Entered,
            Seq::Value(..) => SeqLevel::TooDeep,
            Seq::Text(_) => SeqLevel::Text,
        };
        SeqReader {
            src,
            index: 0,
            level,
        }
    }

    /// Leaves after a visit that failed with `error`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn abandon(self, error: ReadError) -> ReadError {
        if self.level == SeqLevel::Entered {
            leave_level();
        }
        error
    }

    /// The next item, if any.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn next(&mut self) -> Result<Option<Src<'_, 'de>>, ReadError> {
        if self.level == SeqLevel::TooDeep {
            return Err(too_deep());
        }
        let src = match &mut self.src {
            Seq::Value(items, _) => match items.next() {
                Some(item) => Src::Value(item),
                None => return Ok(None),
            },
            Seq::Text(cursor) => {
                match cursor.peek() {
                    Some(b']') => return Ok(None),
                    Some(b',') if self.index > 0 => {
                        cursor.eat();
                        if matches!(cursor.peek(), Some(b']') | None) {
                            return Err(ReadError::syntax());
                        }
                    }
                    Some(_) if self.index == 0 => {}
                    _ => return Err(ReadError::syntax()),
                }
                Src::Text(cursor)
            }
        };
        self.index += 1;
        Ok(Some(src))
    }

    /// Every item read: for a value, none left (serde_json's check); for
    /// text, the closing bracket.
    #[inline]
    pub(super) fn end(self) -> Result<(), ReadError> {
        match self.level {
            SeqLevel::Entered => leave_level(),
            SeqLevel::TooDeep => return Err(too_deep()),
            SeqLevel::Text => {}
        }
        match self.src {
            Seq::Value(items, _) if items.len() == 0 => Ok(()),
            Seq::Value(_, len) => Err(de::Error::invalid_length(len, &"fewer elements in array")),
            Seq::Text(cursor) => cursor.leave(b']'),
        }
    }
}

impl<'de> de::SeqAccess<'de> for SeqReader<'_, 'de> {
    type Error = ReadError;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        let Some(src) = self.next()? else {
            return Ok(None);
        };
        match seed.deserialize(Reader(src)) {
            Ok(value) => Ok(Some(value)),
            Err(error) => Err(error.at_index(self.index - 1)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        match &self.src {
            Seq::Value(items, _) => Some(items.len()),
            Seq::Text(_) => None,
        }
    }
}

pub(super) enum MapSrc<'r, 'de> {
    Value {
        entries: serde_json::map::Iter<'de>,
        /// The current entry (its key names the path of an error).
        entry: Option<(&'de str, &'de Value)>,
        len: usize,
        /// The level the object is.
        _level: Level,
    },
    Text {
        cursor: &'r mut Cursor<'de>,
        first: bool,
        /// The current key.
        key: Option<Cow<'de, str>>,
    },
}

pub(super) struct MapReader<'r, 'de>(pub(super) MapSrc<'r, 'de>);

impl<'de> MapReader<'_, 'de> {
    /// The next key, if any.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn next_key(&mut self) -> Result<Option<Key<'de>>, ReadError> {
        match &mut self.0 {
            MapSrc::Value { entries, entry, .. } => {
                let Some((key, value)) = entries.next() else {
                    return Ok(None);
                };
                *entry = Some((key, value));
                Ok(Some(Key {
                    key: Cow::Borrowed(key),
                    raw: None,
                }))
            }
            MapSrc::Text { cursor, first, key } => {
                match cursor.peek() {
                    Some(b'}') => return Ok(None),
                    Some(b'"') if *first => {}
                    Some(b',') if !*first => {
                        cursor.eat();
                        if cursor.peek() != Some(b'"') {
                            return Err(ReadError::syntax());
                        }
                    }
                    _ => return Err(ReadError::syntax()),
                }
                *first = false;
                let (name, raw) = cursor.string()?;
                *key = Some(name.clone());
                Ok(Some(Key {
                    key: name,
                    raw: Some(raw),
                }))
            }
        }
    }

    /// The current entry's value.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn value(&mut self) -> Result<Src<'_, 'de>, ReadError> {
        match &mut self.0 {
            MapSrc::Value { entry, .. } => match entry {
                Some((_, value)) => Ok(Src::Value(value)),
                None => Err(de::Error::custom("value is missing")),
            },
            MapSrc::Text { cursor, .. } => {
                if cursor.peek() != Some(b':') {
                    return Err(ReadError::syntax());
                }
                cursor.eat();
                Ok(Src::Text(cursor))
            }
        }
    }

    /// The current entry is done with.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn forget_key(&mut self) {
        match &mut self.0 {
            MapSrc::Value { entry, .. } => *entry = None,
            MapSrc::Text { key, .. } => *key = None,
        }
    }

    /// An error under the current entry: its path names the key.
    #[cold]
    #[inline(never)]
    pub(super) fn key_failed(&mut self, error: ReadError) -> ReadError {
        let error = match &self.0 {
            MapSrc::Value { entry, .. } => error.at_key(entry.map(|(key, _)| key)),
            MapSrc::Text { key, .. } => error.at_key(key.as_deref()),
        };
        self.forget_key();
        error
    }

    /// Every entry read: for a value, none left (serde_json's check); for
    /// text, the closing brace.
    #[inline]
    pub(super) fn end(self) -> Result<(), ReadError> {
        match self.0 {
            MapSrc::Value { entries, .. } if entries.len() == 0 => Ok(()),
            MapSrc::Value { len, .. } => {
                Err(de::Error::invalid_length(len, &"fewer elements in map"))
            }
            MapSrc::Text { cursor, .. } => cursor.leave(b'}'),
        }
    }
}

impl<'de> de::MapAccess<'de> for MapReader<'_, 'de> {
    type Error = ReadError;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        let Some(key) = self.next_key()? else {
            return Ok(None);
        };
        match seed.deserialize(key) {
            Ok(value) => Ok(Some(value)),
            Err(error) => Err(self.key_failed(error)),
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let src = self.value()?;
        match seed.deserialize(Reader(src)) {
            Ok(value) => {
                self.forget_key();
                Ok(value)
            }
            Err(error) => Err(self.key_failed(error)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        match &self.0 {
            MapSrc::Value { entries, .. } => Some(entries.len()),
            MapSrc::Text { .. } => None,
        }
    }
}
