//! The deserializer: what is at the cursor (or in the value) is decided by
//! non-generic functions; a visitor's methods only see the outcome, so the
//! code compiled per visitor is a match and a call.

use super::*;

/// The value at hand, read as far as a visitor needs: a scalar, or an
/// array or object opened for the visitor to walk.
pub(super) enum Got<'r, 'de> {
    Null,
    Bool(bool),
    Num(Num),
    /// A string; `true` when it came as text (serde_json's text reader
    /// hands strings to `deserialize_bytes` as bytes).
    Str(Cow<'de, str>, bool),
    Seq(Seq<'r, 'de>),
    Map(MapSrc<'r, 'de>),
}

impl Got<'_, '_> {
    /// The error for a visitor that wanted something else.
    #[cold]
    #[inline(never)]
    pub(super) fn invalid(&self, exp: &dyn Expected) -> ReadError {
        let unexpected = match self {
            Got::Null => Unexpected::Unit,
            Got::Bool(b) => Unexpected::Bool(*b),
            Got::Num(n) => n.unexpected(),
            Got::Str(s, _) => Unexpected::Str(s),
            Got::Seq(_) => Unexpected::Seq,
            Got::Map(_) => Unexpected::Map,
        };
        de::Error::invalid_type(unexpected, exp)
    }
}

/// Reads the value at `src` as far as [`Got`] says.
#[inline]
pub(super) fn got<'r, 'de>(src: Src<'r, 'de>) -> Result<Got<'r, 'de>, ReadError> {
    match src {
        Src::Value(value) => Ok(match value {
            Value::Null => Got::Null,
            Value::Bool(b) => Got::Bool(*b),
            Value::Number(n) => Got::Num(num_of(n)),
            Value::String(s) => Got::Str(Cow::Borrowed(s), false),
            // An empty array may be taken without a visit (a tuple
            // variant's `[]`): its level is checked here.
            Value::Array(items) if items.is_empty() => {
                check_level(value)?;
                Got::Seq(Seq::Value(items.iter(), 0))
            }
            Value::Array(items) => Got::Seq(Seq::Value(items.iter(), items.len())),
            Value::Object(map) => Got::Map(MapSrc::Value {
                entries: map.iter(),
                entry: None,
                len: map.len(),
                _level: Level::enter()?,
            }),
        }),
        Src::Text(cursor) => Ok(match cursor.peek() {
            Some(b'n') => {
                cursor.literal(b"null")?;
                Got::Null
            }
            Some(b't') => {
                cursor.literal(b"true")?;
                Got::Bool(true)
            }
            Some(b'f') => {
                cursor.literal(b"false")?;
                Got::Bool(false)
            }
            Some(b'-' | b'0'..=b'9') => Got::Num(cursor.number()?),
            Some(b'"') => Got::Str(cursor.string()?.0, true),
            Some(b'[') => {
                cursor.enter()?;
                Got::Seq(Seq::Text(cursor))
            }
            Some(b'{') => {
                cursor.enter()?;
                Got::Map(MapSrc::Text {
                    cursor,
                    first: true,
                    key: None,
                })
            }
            _ => return Err(ReadError::syntax()),
        }),
    }
}

/// The number at `src`, or the error for a visitor that expected one.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn number<'de>(mut src: Src<'_, 'de>, exp: &dyn Expected) -> Result<Num, ReadError> {
    src.skip_space();
    match src {
        Src::Value(Value::Number(n)) => Ok(num_of(n)),
        Src::Text(cursor) if matches!(cursor.current(), Some(b'-' | b'0'..=b'9')) => {
            cursor.number()
        }
        src => Err(refuse(src, exp)),
    }
}

/// The string at `src`, or the error for a visitor that expected one.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn string<'de>(
    mut src: Src<'_, 'de>,
    exp: &dyn Expected,
) -> Result<Cow<'de, str>, ReadError> {
    src.skip_space();
    match src {
        Src::Value(Value::String(s)) => Ok(Cow::Borrowed(s)),
        Src::Text(cursor) if cursor.current() == Some(b'"') => Ok(cursor.string()?.0),
        src => Err(refuse(src, exp)),
    }
}

/// The object (or, where `seq`, the array) at `src`, opened, or the
/// error for a visitor that expected it.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn open<'r, 'de>(
    mut src: Src<'r, 'de>,
    seq: bool,
    exp: &dyn Expected,
) -> Result<Opened<'r, 'de>, ReadError> {
    src.skip_space();
    match src {
        Src::Value(Value::Object(map)) => Ok(Opened::Map(MapSrc::Value {
            entries: map.iter(),
            entry: None,
            len: map.len(),
            _level: Level::enter()?,
        })),
        Src::Value(Value::Array(items)) if seq => {
            Ok(Opened::Seq(Seq::Value(items.iter(), items.len())))
        }
        Src::Text(cursor) if cursor.current() == Some(b'{') => {
            cursor.enter()?;
            Ok(Opened::Map(MapSrc::Text {
                cursor,
                first: true,
                key: None,
            }))
        }
        Src::Text(cursor) if seq && cursor.current() == Some(b'[') => {
            cursor.enter()?;
            Ok(Opened::Seq(Seq::Text(cursor)))
        }
        src => Err(refuse(src, exp)),
    }
}

/// An object or an array, opened.
pub(super) enum Opened<'r, 'de> {
    Map(MapSrc<'r, 'de>),
    Seq(Seq<'r, 'de>),
}

/// The error for a visitor that expected something other than what is at
/// `src` (read as far as the error needs).
#[cold]
#[inline(never)]
pub(super) fn refuse(src: Src<'_, '_>, exp: &dyn Expected) -> ReadError {
    match got(src) {
        Ok(got) => got.invalid(exp),
        Err(error) => error,
    }
}

/// Whether the value at `src` is `null` (read when it is).
#[inline]
pub(super) fn null(src: &mut Src<'_, '_>) -> Result<bool, ReadError> {
    match src {
        Src::Value(value) => Ok(value.is_null()),
        Src::Text(cursor) => {
            if cursor.peek() == Some(b'n') {
                cursor.literal(b"null")?;
                Ok(true)
            } else {
                Ok(false)
            }
        }
    }
}

/// An enum as serde_json reads one: a string (a unit variant) or an object
/// of one entry, the variant and its content.
#[inline]
pub(super) fn open_enum<'r, 'de>(src: Src<'r, 'de>) -> Result<Variant<'r, 'de>, ReadError> {
    match src {
        Src::Value(Value::Object(map)) => {
            let mut entries = map.iter();
            match (entries.next(), entries.next()) {
                (Some((variant, value)), None) => Ok(Variant {
                    name: Cow::Borrowed(variant.as_str()),
                    content: Some(Src::Value(value)),
                }),
                _ => Err(de::Error::invalid_value(
                    Unexpected::Map,
                    &"map with a single key",
                )),
            }
        }
        Src::Value(Value::String(variant)) => Ok(Variant {
            name: Cow::Borrowed(variant.as_str()),
            content: None,
        }),
        Src::Value(other) => Err(de::Error::invalid_type(unexpected(other), &"string or map")),
        Src::Text(cursor) => match cursor.peek() {
            Some(b'"') => Ok(Variant {
                name: cursor.string()?.0,
                content: None,
            }),
            Some(b'{') => {
                cursor.enter()?;
                if cursor.peek() != Some(b'"') {
                    return Err(ReadError::syntax());
                }
                let name = cursor.string()?.0;
                if cursor.peek() != Some(b':') {
                    return Err(ReadError::syntax());
                }
                cursor.eat();
                Ok(Variant {
                    name,
                    content: Some(Src::Text(cursor)),
                })
            }
            _ => Err(ReadError::syntax()),
        },
    }
}

/// The closing brace of an enum written as an object in text.
#[inline]
pub(super) fn close_enum(src: Src<'_, '_>, object: bool) -> Result<(), ReadError> {
    match src {
        Src::Text(cursor) if object => cursor.leave(b'}'),
        _ => Ok(()),
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn visit_cow<'de, V: Visitor<'de>>(
    s: Cow<'de, str>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    match s {
        Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
        Cow::Owned(s) => visitor.visit_string(s),
    }
}

/// A visitor's sequence, from either form: one `SeqAccess` type, so the
/// visitor's `visit_seq` is compiled once.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn visit_seq<'de, V: Visitor<'de>>(
    src: Seq<'_, 'de>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    // Entered and left explicitly rather than by a guard, so the
    // visitor's code needs no cleanup of its own on unwinding (a read
    // starts its count afresh).
    let mut seq = SeqReader::enter(src);
    match visitor.visit_seq(&mut seq) {
        Ok(value) => match seq.end() {
            Ok(()) => Ok(value),
            Err(error) => Err(error),
        },
        Err(error) => Err(seq.abandon(error)),
    }
}

/// A visitor's map, from either form: one `MapAccess` type, so the
/// visitor's `visit_map` is compiled once.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn visit_map<'de, V: Visitor<'de>>(
    src: MapSrc<'_, 'de>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    let mut map = MapReader(src);
    match visitor.visit_map(&mut map) {
        Ok(value) => match map.end() {
            Ok(()) => Ok(value),
            Err(error) => Err(error),
        },
        Err(error) => Err(error),
    }
}

macro_rules! numbers {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            match number(self.0, &visitor) {
                Ok(n) => n.visit(visitor),
                Err(error) => Err(error),
            }
        }
    )*};
}

macro_rules! strings {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            match string(self.0, &visitor) {
                Ok(s) => visit_cow(s, visitor),
                Err(error) => Err(error),
            }
        }
    )*};
}

macro_rules! seqs {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, ReadError> {
            match self.0 {
                Src::Value(Value::Array(items)) => {
                    visit_seq(Seq::Value(items.iter(), items.len()), visitor)
                }
                src => match got(src) {
                    Ok(Got::Seq(seq)) => visit_seq(seq, visitor),
                    Ok(other) => Err(other.invalid(&visitor)),
                    Err(error) => Err(error),
                },
            }
        }
    )*};
}

macro_rules! exact_numbers {
    ($($method:ident $ty:ty => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            let mut src = self.0;
            if let Src::Text(cursor) = &mut src {
                if matches!(cursor.peek(), Some(b'-' | b'0'..=b'9')) {
                    return visitor.$visit(cursor.exact::<$ty>()?);
                }
            }
            match got(src)? {
                Got::Num(n) => n.visit(visitor),
                other => Err(other.invalid(&visitor)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Reader<'_, 'de> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match got(self.0)? {
            Got::Null => visitor.visit_unit(),
            Got::Bool(b) => visitor.visit_bool(b),
            Got::Num(n) => n.visit(visitor),
            Got::Str(s, _) => visit_cow(s, visitor),
            Got::Seq(seq) => visit_seq(seq, visitor),
            Got::Map(map) => visit_map(map, visitor),
        }
    }

    numbers!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f64);

    exact_numbers! {
        deserialize_u128 u128 => visit_u128,
        deserialize_i128 i128 => visit_i128,
        deserialize_f32 f32 => visit_f32,
    }

    strings!(deserialize_char deserialize_str deserialize_string deserialize_identifier);

    seqs!(deserialize_seq() deserialize_tuple(_len: usize)
        deserialize_tuple_struct(_name: &'static str, _len: usize));

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match got(self.0)? {
            Got::Bool(b) => visitor.visit_bool(b),
            other => Err(other.invalid(&visitor)),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match got(self.0)? {
            // serde_json's text reader hands a string over as its bytes.
            Got::Str(Cow::Borrowed(s), true) => visitor.visit_borrowed_bytes(s.as_bytes()),
            Got::Str(Cow::Owned(s), true) => visitor.visit_byte_buf(s.into_bytes()),
            Got::Str(s, false) => visit_cow(s, visitor),
            Got::Seq(seq) => visit_seq(seq, visitor),
            other => Err(other.invalid(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        let mut src = self.0;
        if null(&mut src)? {
            visitor.visit_none()
        } else {
            visitor.visit_some(Reader(src))
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match got(self.0)? {
            Got::Null => visitor.visit_unit(),
            other => Err(other.invalid(&visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        if name == RAW_TOKEN {
            let raw = match self.0 {
                Src::Value(value) => {
                    check_level(value)?;
                    Cow::Owned(value.to_string())
                }
                Src::Text(cursor) => Cow::Borrowed(cursor.raw()?),
            };
            return visitor.visit_map(RawMap { raw: Some(raw) });
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match open(self.0, false, &visitor) {
            Ok(Opened::Map(map)) => visit_map(map, visitor),
            Ok(Opened::Seq(seq)) => visit_seq(seq, visitor),
            Err(error) => Err(error),
        }
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match open(self.0, true, &visitor) {
            Ok(Opened::Map(map)) => visit_map(map, visitor),
            Ok(Opened::Seq(seq)) => visit_seq(seq, visitor),
            Err(error) => Err(error),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let mut src = self.0;
        let from_value = matches!(src, Src::Value(_));
        let variant = open_enum(src.reborrow())?;
        let object = variant.content.is_some();
        // A variant with content is an object of the value: a level.
        let level = Entered::when(from_value && object)?;
        let value = match visitor.visit_enum(variant) {
            Ok(value) => value,
            Err(error) => return Err(level.leave_with(error)),
        };
        level.leave();
        close_enum(src, object)?;
        Ok(value)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Text(cursor) => cursor.skip()?,
            Src::Value(value) => check_level(value)?,
        }
        visitor.visit_unit()
    }
}
