//! One deserializer for both forms arguments come in.
//!
//! [`Reader`] reads a borrowed [`Value`] or JSON text, and it is the only
//! deserializer an argument type's `Deserialize` is ever compiled for: the
//! intake's fast path, its error path and the JSON-path re-read all go
//! through it, so each argument type's visitors are instantiated once (the
//! serde + schemars floor's count) where reading text with serde_json's
//! reader, a `Value` with its `&Value` deserializer and errors through
//! `serde_path_to_error` compiled them three times.
//!
//! It accepts what serde_json accepts, form by form: a value as
//! `T::deserialize(&Value)` does, text as `serde_json::from_str` does
//! (duplicate keys seen, map keys that are numbers read from the text,
//! skipped values checked by serde_json's own skipping, `u128` literals,
//! `f32` rounded once). serde_json does the parts where its exact
//! behaviour is the contract and nothing is generic: escaped strings,
//! numbers other than plain integers, skipping and syntax errors. Errors
//! carry the path they unwound through (keys, indices, enum variants, as
//! `serde_path_to_error` names them) and serde_json's own messages.

use std::borrow::Cow;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Expected, IgnoredAny, IntoDeserializer, Unexpected, Visitor,
};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::path::PathStep;

/// serde_json's marker for `RawValue` (`serde_json::raw::TOKEN`).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// How deep text may nest, as serde_json's parser allows.
const TEXT_DEPTH: u32 = 128;

/// Reads `T` from a borrowed value.
#[inline]
pub(crate) fn from_value<'de, T: Deserialize<'de>>(value: &'de Value) -> Result<T, ReadError> {
    T::deserialize(Reader(Src::Value(value)))
}

/// Reads `T` from JSON text, all of it.
#[inline]
pub(crate) fn from_text<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, ReadError> {
    let mut cursor = Cursor::new(text);
    let value = T::deserialize(Reader(Src::Text(&mut cursor)))?;
    cursor.end()?;
    Ok(value)
}

/// Why reading failed, and where.
pub(crate) struct ReadError(Box<Failure>);

struct Failure {
    kind: Kind,
    /// Innermost step first.
    path: Vec<PathStep>,
    /// Raised by a key deserializer before the key could be named.
    unnamed_key: bool,
}

enum Kind {
    /// The type refused what it found (serde_json's message).
    Data(serde_json::Error),
    /// The text is not JSON as far as this reader sees: serde_json's
    /// own parse says how.
    Syntax,
    /// Text that is JSON but that serde_json's text reader refuses for
    /// this type, with serde_json's message.
    TextOnly(String),
}

/// What became of a failed read, for the intake.
pub(crate) enum Failed {
    /// The type refused the data: serde_json's message and the path, root
    /// first.
    Data {
        message: String,
        path: Vec<PathStep>,
    },
    /// The text did not parse.
    Syntax,
    /// The text reader refused JSON text for this type.
    TextOnly(String),
}

impl ReadError {
    fn new(kind: Kind) -> Self {
        ReadError(Box::new(Failure {
            kind,
            path: Vec::new(),
            unnamed_key: false,
        }))
    }

    #[cold]
    fn syntax() -> Self {
        ReadError::new(Kind::Syntax)
    }

    #[cold]
    fn unnamed_key(message: impl fmt::Display) -> Self {
        let mut error = ReadError::new(Kind::Data(de::Error::custom(message)));
        error.0.unnamed_key = true;
        error
    }

    #[cold]
    fn at(mut self, step: impl FnOnce() -> PathStep) -> Self {
        if matches!(self.0.kind, Kind::Data(_)) {
            self.0.path.push(step());
        }
        self
    }

    #[cold]
    fn at_key(mut self, key: Option<&str>) -> Self {
        let unnamed = std::mem::take(&mut self.0.unnamed_key);
        self.at(|| match key {
            Some(key) if !unnamed => PathStep::Key(key.to_owned()),
            _ => PathStep::Unknown,
        })
    }

    /// What failed, for the intake to explain.
    pub(crate) fn into_failed(self) -> Failed {
        let failure = *self.0;
        match failure.kind {
            Kind::Data(error) => {
                let mut path = failure.path;
                path.reverse();
                Failed::Data {
                    message: error.to_string(),
                    path,
                }
            }
            Kind::Syntax => Failed::Syntax,
            Kind::TextOnly(message) => Failed::TextOnly(message),
        }
    }
}

impl fmt::Debug for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.kind {
            Kind::Data(error) => fmt::Display::fmt(error, f),
            Kind::Syntax => f.write_str("the text is not valid JSON"),
            Kind::TextOnly(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ReadError {}

/// Every message is serde_json's own.
impl de::Error for ReadError {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadError::new(Kind::Data(de::Error::custom(msg)))
    }

    #[cold]
    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        ReadError::new(Kind::Data(de::Error::invalid_type(unexp, exp)))
    }

    #[cold]
    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        ReadError::new(Kind::Data(de::Error::invalid_value(unexp, exp)))
    }
}

/// The value to read: a borrowed `Value`, or the text at a cursor.
enum Src<'r, 'de> {
    Value(&'de Value),
    Text(&'r mut Cursor<'de>),
}

/// The deserializer: one concrete type for both forms.
pub(crate) struct Reader<'r, 'de>(Src<'r, 'de>);

// ---------------------------------------------------------------------------
// The text cursor: not generic, compiled once.

/// A position in JSON text.
pub(crate) struct Cursor<'de> {
    text: &'de str,
    pos: usize,
    depth: u32,
}

/// A number as serde_json's text reader hands it to a visitor.
enum Num {
    U64(u64),
    I64(i64),
    F64(f64),
}

/// A token's start, for an unexpected-type error.
enum Token<'de> {
    Null,
    Bool(bool),
    Num(Num),
    Str(Cow<'de, str>),
    Seq,
    Map,
}

impl<'de> Cursor<'de> {
    fn new(text: &'de str) -> Self {
        Cursor {
            text,
            pos: 0,
            depth: 0,
        }
    }

    #[inline]
    fn bytes(&self) -> &'de [u8] {
        self.text.as_bytes()
    }

    /// Skips JSON whitespace; the next byte.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    #[inline]
    fn eat(&mut self) {
        self.pos += 1;
    }

    /// Nothing but whitespace left.
    fn end(&mut self) -> Result<(), ReadError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(ReadError::syntax()),
        }
    }

    fn enter(&mut self) -> Result<(), ReadError> {
        self.depth += 1;
        if self.depth >= TEXT_DEPTH {
            return Err(ReadError::syntax());
        }
        self.pos += 1;
        Ok(())
    }

    fn leave(&mut self, close: u8) -> Result<(), ReadError> {
        self.depth -= 1;
        if self.peek() == Some(close) {
            self.pos += 1;
            Ok(())
        } else {
            Err(ReadError::syntax())
        }
    }

    /// The string at the cursor (which is at its `"`), and its raw
    /// content when it has no escapes.
    #[inline]
    fn string(&mut self) -> Result<(Cow<'de, str>, Option<&'de str>), ReadError> {
        let bytes = self.bytes();
        let start = self.pos + 1;
        let mut at = start;
        while let Some(&b) = bytes.get(at) {
            match b {
                b'"' => {
                    self.pos = at + 1;
                    let raw = &self.text[start..at];
                    return Ok((Cow::Borrowed(raw), Some(raw)));
                }
                b'\\' => return self.escaped_string(start),
                0..=0x1f => return Err(ReadError::syntax()),
                _ => at += 1,
            }
        }
        Err(ReadError::syntax())
    }

    /// A string with escapes: its end found here, its value decoded by
    /// serde_json.
    #[cold]
    fn escaped_string(
        &mut self,
        start: usize,
    ) -> Result<(Cow<'de, str>, Option<&'de str>), ReadError> {
        let bytes = self.bytes();
        let mut at = start;
        loop {
            match bytes.get(at) {
                Some(b'"') => break,
                Some(b'\\') => at += 2,
                Some(0..=0x1f) | None => return Err(ReadError::syntax()),
                Some(_) => at += 1,
            }
        }
        let quoted = self
            .text
            .get(start - 1..=at)
            .ok_or_else(ReadError::syntax)?;
        let decoded: String = serde_json::from_str(quoted).map_err(|_| ReadError::syntax())?;
        self.pos = at + 1;
        Ok((Cow::Owned(decoded), None))
    }

    /// The extent of the number at the cursor.
    fn number_text(&mut self) -> &'de str {
        let bytes = self.bytes();
        let start = self.pos;
        let mut at = start;
        while let Some(b) = bytes.get(at) {
            if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                at += 1;
            } else {
                break;
            }
        }
        self.pos = at;
        &self.text[start..at]
    }

    /// The number at the cursor, as serde_json's reader parses it.
    #[inline]
    fn number(&mut self) -> Result<Num, ReadError> {
        let text = self.number_text();
        if let Some(number) = plain_integer(text) {
            return Ok(number);
        }
        other_number(text)
    }

    /// The literal `word` at the cursor.
    fn literal(&mut self, word: &[u8]) -> Result<(), ReadError> {
        if self.bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(ReadError::syntax())
        }
    }

    /// The token at the cursor, consumed (arrays and objects only opened
    /// over), to say what was found where something else was expected.
    #[cold]
    fn token(&mut self) -> Result<Token<'de>, ReadError> {
        Ok(match self.peek() {
            Some(b'n') => {
                self.literal(b"null")?;
                Token::Null
            }
            Some(b't') => {
                self.literal(b"true")?;
                Token::Bool(true)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                Token::Bool(false)
            }
            Some(b'-' | b'0'..=b'9') => Token::Num(self.number()?),
            Some(b'"') => Token::Str(self.string()?.0),
            Some(b'[') => Token::Seq,
            Some(b'{') => Token::Map,
            _ => return Err(ReadError::syntax()),
        })
    }

    /// An unexpected-type error for the token at the cursor.
    #[cold]
    fn invalid_type(&mut self, exp: &dyn Expected) -> ReadError {
        match self.token() {
            Ok(token) => de::Error::invalid_type(token.unexpected(), exp),
            Err(error) => error,
        }
    }

    /// Skips the value at the cursor with serde_json's own skipping.
    fn skip(&mut self) -> Result<(), ReadError> {
        let rest = &self.text[self.pos..];
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
        match stream.next() {
            Some(Ok(_)) => {
                self.pos += stream.byte_offset();
                Ok(())
            }
            _ => Err(ReadError::syntax()),
        }
    }

    /// The next value's raw text (for `RawValue`).
    fn raw(&mut self) -> Result<&'de str, ReadError> {
        self.peek();
        let start = self.pos;
        self.skip()?;
        Ok(&self.text[start..self.pos])
    }

    /// A number of a type serde_json reads with its own method (`u128`,
    /// `i128`, `f32`): the literal at the cursor read by serde_json.
    fn exact<T: Deserialize<'de>>(&mut self) -> Result<T, ReadError> {
        let text = self.number_text();
        let mut de = serde_json::Deserializer::from_str(text);
        match T::deserialize(&mut de).and_then(|value| de.end().map(|()| value)) {
            Ok(value) => Ok(value),
            Err(error) if error.is_data() => {
                Err(ReadError::new(Kind::Data(without_position(error))))
            }
            // A JSON number serde_json's text reader refuses for this type
            // (an `f32` out of range): refused, as `from_str` does.
            Err(error) if serde_json::from_str::<Number>(text).is_ok() => Err(ReadError::new(
                Kind::TextOnly(without_position(error).to_string()),
            )),
            Err(_) => Err(ReadError::syntax()),
        }
    }
}

/// A plain integer (`0`, or digits without a leading zero, maybe negative)
/// that fits, read here; anything else is serde_json's.
#[inline]
fn plain_integer(text: &str) -> Option<Num> {
    let (negative, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || digits.len() > 18 || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut value: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    match (negative, value) {
        (false, value) => Some(Num::U64(value)),
        // serde_json reads `-0` as the float -0.0.
        (true, 0) => None,
        (true, value) => Some(Num::I64(-(value as i64))),
    }
}

/// A number that is not a plain integer: serde_json parses it (floats,
/// exponents, integers past `u64`).
#[cold]
fn other_number(text: &str) -> Result<Num, ReadError> {
    let number: Number = serde_json::from_str(text).map_err(|_| ReadError::syntax())?;
    Ok(num_of(&number))
}

fn num_of(number: &Number) -> Num {
    if let Some(u) = number.as_u64() {
        Num::U64(u)
    } else if let Some(i) = number.as_i64() {
        Num::I64(i)
    } else {
        Num::F64(number.as_f64().unwrap_or(f64::NAN))
    }
}

/// A serde_json error's message without its position (a text read of a
/// literal alone has no useful one).
fn without_position(error: serde_json::Error) -> serde_json::Error {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    de::Error::custom(message)
}

impl Num {
    #[inline]
    fn visit<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self {
            Num::U64(u) => visitor.visit_u64(u),
            Num::I64(i) => visitor.visit_i64(i),
            Num::F64(f) => visitor.visit_f64(f),
        }
    }

    fn unexpected(&self) -> Unexpected<'static> {
        match *self {
            Num::U64(u) => Unexpected::Unsigned(u),
            Num::I64(i) => Unexpected::Signed(i),
            Num::F64(f) => Unexpected::Float(f),
        }
    }
}

impl Token<'_> {
    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Token::Null => Unexpected::Unit,
            Token::Bool(b) => Unexpected::Bool(*b),
            Token::Num(n) => n.unexpected(),
            Token::Str(s) => Unexpected::Str(s),
            Token::Seq => Unexpected::Seq,
            Token::Map => Unexpected::Map,
        }
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => num_of(n).unexpected(),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[cold]
fn value_invalid_type(value: &Value, exp: &dyn Expected) -> ReadError {
    de::Error::invalid_type(unexpected(value), exp)
}

// ---------------------------------------------------------------------------
// The deserializer.

impl<'de> Reader<'_, 'de> {
    #[inline]
    fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Number(n)) => num_of(n).visit(visitor),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'-' | b'0'..=b'9') => cursor.number()?.visit(visitor),
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }

    fn string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::String(s)) => visitor.visit_borrowed_str(s),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'"') => visit_cow(cursor.string()?.0, visitor),
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }

    fn seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Array(items)) => visit_items(items, visitor),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'[') => visit_text_seq(cursor, visitor),
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }
}

#[inline]
fn visit_cow<'de, V: Visitor<'de>>(s: Cow<'de, str>, visitor: V) -> Result<V::Value, ReadError> {
    match s {
        Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
        Cow::Owned(s) => visitor.visit_string(s),
    }
}

fn visit_items<'de, V: Visitor<'de>>(
    items: &'de [Value],
    visitor: V,
) -> Result<V::Value, ReadError> {
    visit_seq(Seq::Value(items.iter()), items.len(), visitor)
}

fn visit_entries<'de, V: Visitor<'de>>(
    map: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    let entries = MapSrc::Value {
        entries: map.iter(),
        entry: None,
    };
    visit_map(entries, map.len(), visitor)
}

fn visit_text_seq<'de, V: Visitor<'de>>(
    cursor: &mut Cursor<'de>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    cursor.enter()?;
    visit_seq(Seq::Text(cursor), 0, visitor)
}

fn visit_text_map<'de, V: Visitor<'de>>(
    cursor: &mut Cursor<'de>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    cursor.enter()?;
    let entries = MapSrc::Text {
        cursor,
        first: true,
        key: None,
    };
    visit_map(entries, 0, visitor)
}

/// A visitor's sequence, from either form: one `SeqAccess` type, so the
/// visitor's `visit_seq` is compiled once.
fn visit_seq<'de, V: Visitor<'de>>(
    src: Seq<'_, 'de>,
    len: usize,
    visitor: V,
) -> Result<V::Value, ReadError> {
    let mut seq = SeqReader { src, index: 0 };
    let value = visitor.visit_seq(&mut seq)?;
    seq.end(len)?;
    Ok(value)
}

/// A visitor's map, from either form: one `MapAccess` type, so the
/// visitor's `visit_map` is compiled once.
fn visit_map<'de, V: Visitor<'de>>(
    src: MapSrc<'_, 'de>,
    len: usize,
    visitor: V,
) -> Result<V::Value, ReadError> {
    let mut map = MapReader(src);
    let value = visitor.visit_map(&mut map)?;
    map.end(len)?;
    Ok(value)
}

macro_rules! numbers {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            self.number(visitor)
        }
    )*};
}

macro_rules! exact_numbers {
    ($($method:ident $ty:ty => $visit:ident,)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            match self.0 {
                Src::Text(cursor) => match cursor.peek() {
                    Some(b'-' | b'0'..=b'9') => visitor.$visit(cursor.exact::<$ty>()?),
                    _ => Err(cursor.invalid_type(&visitor)),
                },
                value => Reader(value).number(visitor),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Reader<'_, 'de> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(value) => match value {
                Value::Null => visitor.visit_unit(),
                Value::Bool(b) => visitor.visit_bool(*b),
                Value::Number(n) => num_of(n).visit(visitor),
                Value::String(s) => visitor.visit_borrowed_str(s),
                Value::Array(items) => visit_items(items, visitor),
                Value::Object(map) => visit_entries(map, visitor),
            },
            Src::Text(cursor) => match cursor.peek() {
                Some(b'n') => {
                    cursor.literal(b"null")?;
                    visitor.visit_unit()
                }
                Some(b't') => {
                    cursor.literal(b"true")?;
                    visitor.visit_bool(true)
                }
                Some(b'f') => {
                    cursor.literal(b"false")?;
                    visitor.visit_bool(false)
                }
                Some(b'-' | b'0'..=b'9') => cursor.number()?.visit(visitor),
                Some(b'"') => visit_cow(cursor.string()?.0, visitor),
                Some(b'[') => visit_text_seq(cursor, visitor),
                Some(b'{') => visit_text_map(cursor, visitor),
                _ => Err(ReadError::syntax()),
            },
        }
    }

    numbers!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_f64);

    exact_numbers! {
        deserialize_u128 u128 => visit_u128,
        deserialize_i128 i128 => visit_i128,
        deserialize_f32 f32 => visit_f32,
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Bool(b)) => visitor.visit_bool(*b),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b't') => {
                    cursor.literal(b"true")?;
                    visitor.visit_bool(true)
                }
                Some(b'f') => {
                    cursor.literal(b"false")?;
                    visitor.visit_bool(false)
                }
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.string(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.string(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::String(s)) => visitor.visit_borrowed_str(s),
            Src::Value(Value::Array(items)) => visit_items(items, visitor),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            // serde_json's text reader hands a string over as its bytes.
            Src::Text(cursor) => match cursor.peek() {
                Some(b'"') => match cursor.string()?.0 {
                    Cow::Borrowed(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
                    Cow::Owned(s) => visitor.visit_byte_buf(s.into_bytes()),
                },
                Some(b'[') => visit_text_seq(cursor, visitor),
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Null) => visitor.visit_none(),
            Src::Text(cursor) => {
                if cursor.peek() == Some(b'n') {
                    cursor.literal(b"null")?;
                    visitor.visit_none()
                } else {
                    visitor.visit_some(Reader(Src::Text(cursor)))
                }
            }
            src => visitor.visit_some(Reader(src)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Null) => visitor.visit_unit(),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'n') => {
                    cursor.literal(b"null")?;
                    visitor.visit_unit()
                }
                _ => Err(cursor.invalid_type(&visitor)),
            },
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
                Src::Value(value) => Cow::Owned(value.to_string()),
                Src::Text(cursor) => Cow::Borrowed(cursor.raw()?),
            };
            return visitor.visit_map(RawMap { raw: Some(raw) });
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.seq(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Object(map)) => visit_entries(map, visitor),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'{') => visit_text_map(cursor, visitor),
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Object(map)) => visit_entries(map, visitor),
            Src::Value(Value::Array(items)) => visit_items(items, visitor),
            Src::Value(other) => Err(value_invalid_type(other, &visitor)),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'{') => visit_text_map(cursor, visitor),
                Some(b'[') => visit_text_seq(cursor, visitor),
                _ => Err(cursor.invalid_type(&visitor)),
            },
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.0 {
            Src::Value(Value::Object(map)) => {
                let mut entries = map.iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, value)), None) => visitor.visit_enum(Variant {
                        name: Cow::Borrowed(variant.as_str()),
                        content: Some(Src::Value(value)),
                    }),
                    _ => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            Src::Value(Value::String(variant)) => visitor.visit_enum(Variant {
                name: Cow::Borrowed(variant.as_str()),
                content: None,
            }),
            Src::Value(other) => Err(de::Error::invalid_type(unexpected(other), &"string or map")),
            Src::Text(cursor) => match cursor.peek() {
                Some(b'"') => {
                    let name = cursor.string()?.0;
                    visitor.visit_enum(Variant {
                        name,
                        content: None,
                    })
                }
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
                    let value = visitor.visit_enum(Variant {
                        name,
                        content: Some(Src::Text(&mut *cursor)),
                    })?;
                    cursor.leave(b'}')?;
                    Ok(value)
                }
                _ => Err(ReadError::syntax()),
            },
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.string(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        if let Src::Text(cursor) = self.0 {
            cursor.skip()?;
        }
        visitor.visit_unit()
    }
}

// ---------------------------------------------------------------------------
// Sequences and maps.

enum Seq<'r, 'de> {
    Value(std::slice::Iter<'de, Value>),
    Text(&'r mut Cursor<'de>),
}

struct SeqReader<'r, 'de> {
    src: Seq<'r, 'de>,
    index: usize,
}

impl SeqReader<'_, '_> {
    /// Every item read: for a value, none left (serde_json's check); for
    /// text, the closing bracket.
    fn end(self, len: usize) -> Result<(), ReadError> {
        match self.src {
            Seq::Value(items) if items.len() == 0 => Ok(()),
            Seq::Value(_) => Err(de::Error::invalid_length(len, &"fewer elements in array")),
            Seq::Text(cursor) => cursor.leave(b']'),
        }
    }
}

impl<'de> de::SeqAccess<'de> for SeqReader<'_, 'de> {
    type Error = ReadError;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ReadError> {
        let src = match &mut self.src {
            Seq::Value(items) => match items.next() {
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
                Src::Text(&mut **cursor)
            }
        };
        let index = self.index;
        self.index += 1;
        match seed.deserialize(Reader(src)) {
            Ok(value) => Ok(Some(value)),
            Err(error) => Err(error.at(|| PathStep::Index(index))),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        match &self.src {
            Seq::Value(items) => Some(items.len()),
            Seq::Text(_) => None,
        }
    }
}

enum MapSrc<'r, 'de> {
    Value {
        entries: serde_json::map::Iter<'de>,
        entry: Option<(&'de str, &'de Value)>,
    },
    Text {
        cursor: &'r mut Cursor<'de>,
        first: bool,
        key: Option<Cow<'de, str>>,
    },
}

struct MapReader<'r, 'de>(MapSrc<'r, 'de>);

impl MapReader<'_, '_> {
    /// The entry's key is done with.
    #[inline]
    fn forget_key(&mut self) {
        match &mut self.0 {
            MapSrc::Value { entry, .. } => *entry = None,
            MapSrc::Text { key, .. } => *key = None,
        }
    }

    /// An error under the current entry: its path names the key.
    #[cold]
    fn key_failed(&mut self, error: ReadError) -> ReadError {
        let error = match &self.0 {
            MapSrc::Value { entry, .. } => error.at_key(entry.map(|(key, _)| key)),
            MapSrc::Text { key, .. } => error.at_key(key.as_deref()),
        };
        self.forget_key();
        error
    }

    /// Every entry read: for a value, none left (serde_json's check); for
    /// text, the closing brace.
    fn end(self, len: usize) -> Result<(), ReadError> {
        match self.0 {
            MapSrc::Value { entries, .. } if entries.len() == 0 => Ok(()),
            MapSrc::Value { .. } => Err(de::Error::invalid_length(len, &"fewer elements in map")),
            MapSrc::Text { cursor, .. } => cursor.leave(b'}'),
        }
    }
}

impl<'de> de::MapAccess<'de> for MapReader<'_, 'de> {
    type Error = ReadError;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        // One call of the seed for both forms, so it is inlined once.
        let key = match &mut self.0 {
            MapSrc::Value { entries, entry } => {
                let Some((key, value)) = entries.next() else {
                    return Ok(None);
                };
                *entry = Some((key, value));
                Key {
                    key: Cow::Borrowed(key),
                    raw: None,
                }
            }
            MapSrc::Text { cursor, first, .. } => {
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
                Key {
                    key: name,
                    raw: Some(raw),
                }
            }
        };
        if let MapSrc::Text { key: last, .. } = &mut self.0 {
            *last = Some(key.key.clone());
        }
        match seed.deserialize(key) {
            Ok(value) => Ok(Some(value)),
            Err(error) => Err(self.key_failed(error)),
        }
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        let src = match &mut self.0 {
            MapSrc::Value { entry, .. } => match entry {
                Some((_, value)) => Src::Value(value),
                None => return Err(de::Error::custom("value is missing")),
            },
            MapSrc::Text { cursor, .. } => {
                if cursor.peek() != Some(b':') {
                    return Err(ReadError::syntax());
                }
                cursor.eat();
                Src::Text(&mut **cursor)
            }
        };
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

// ---------------------------------------------------------------------------
// Keys.

/// A map key (and an enum's variant name) as serde_json hands it over:
/// a string, or a number or boolean written in one. `raw` is the text
/// between the quotes when the key came as text (`Some(None)` when it had
/// escapes), `None` when it came from a `Value`.
struct Key<'de> {
    key: Cow<'de, str>,
    raw: Option<Option<&'de str>>,
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
    fn number_text(&self) -> Result<&str, ReadError> {
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
    fn not_a_number(&self) -> ReadError {
        match self.raw {
            None => ReadError::unnamed_key("expected key to be a number in quotes"),
            Some(_) => text_only("expected key to be a number in quotes"),
        }
    }

    /// A key read as a number: from the value's key string as
    /// serde_json's `Value` reader does, from the raw text between the
    /// quotes as its text reader does.
    fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        let text = self.number_text()?;
        match plain_integer(text).map_or_else(|| other_number(text), Ok) {
            // `serde_path_to_error` names a key read as an integer, not one
            // read as a float.
            Ok(number @ Num::F64(_)) => number.visit(visitor).map_err(unnamed),
            Ok(number) => number.visit(visitor),
            Err(_) => Err(self.not_a_number()),
        }
    }
}

/// An error a key raised before its visitor saw it: the path cannot name
/// the key (`serde_path_to_error` writes `?`).
#[cold]
fn unnamed(mut error: ReadError) -> ReadError {
    error.0.unnamed_key = true;
    error
}

#[cold]
fn text_only(message: &str) -> ReadError {
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

// ---------------------------------------------------------------------------
// Enums.

/// An enum's variant: its name, and its content unless it came as a bare
/// string.
struct Variant<'r, 'de> {
    name: Cow<'de, str>,
    content: Option<Src<'r, 'de>>,
}

struct Content<'r, 'de> {
    name: Cow<'de, str>,
    content: Option<Src<'r, 'de>>,
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
            Some(Src::Value(Value::Array(items))) if items.is_empty() => visitor.visit_unit(),
            Some(Src::Value(Value::Array(items))) => visit_items(items, visitor),
            Some(Src::Value(other)) => {
                Err(de::Error::invalid_type(unexpected(other), &"tuple variant"))
            }
            Some(src @ Src::Text(_)) => Reader(src).seq(visitor),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        };
        result.map_err(|error| error.at_key(Some(&self.name)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let result = match self.content {
            Some(Src::Value(Value::Object(map))) => visit_entries(map, visitor),
            Some(Src::Value(other)) => Err(de::Error::invalid_type(
                unexpected(other),
                &"struct variant",
            )),
            Some(src @ Src::Text(_)) => {
                de::Deserializer::deserialize_struct(Reader(src), "", fields, visitor)
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
struct RawMap<'de> {
    raw: Option<Cow<'de, str>>,
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
