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
use serde_json::{Number, Value};

use crate::path::PathStep;

/// serde_json's marker for `RawValue` (`serde_json::raw::TOKEN`).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// How deep text may nest, as serde_json's parser allows.
const TEXT_DEPTH: u32 = 128;

thread_local! {
    /// How many objects and arrays of the value being read enclose the
    /// reader's position: counted as they are entered, so a value is
    /// refused past [`MAX_DEPTH`](super::MAX_DEPTH) levels (as its text
    /// would be) without a walk of its own before the read.
    static VALUE_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Enters one level of a value's nesting (an object, an array, an enum's
/// object): refused past the limit.
#[cfg_attr(not(debug_assertions), inline(always))]
fn enter_level() -> Result<(), ReadError> {
    let depth = VALUE_DEPTH.get() + 1;
    if depth as usize > super::MAX_DEPTH {
        return Err(too_deep());
    }
    VALUE_DEPTH.set(depth);
    Ok(())
}

/// Leaves the level [`enter_level`] entered.
#[cfg_attr(not(debug_assertions), inline(always))]
fn leave_level() {
    VALUE_DEPTH.set(VALUE_DEPTH.get().saturating_sub(1));
}

/// Whether `value`, met here without being entered (skipped, or kept as
/// raw text), nests past the limit.
fn check_level(value: &Value) -> Result<(), ReadError> {
    let budget = super::MAX_DEPTH.saturating_sub(VALUE_DEPTH.get() as usize);
    if super::deeper_than(value, budget) {
        return Err(too_deep());
    }
    Ok(())
}

/// An object's level, left when its access is dropped (maps carry a
/// drop already, for their keys).
struct Level(());

impl Level {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn enter() -> Result<Level, ReadError> {
        enter_level().map(|()| Level(()))
    }
}

impl Drop for Level {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn drop(&mut self) {
        leave_level();
    }
}

/// A value's read counts its levels from zero, whatever a read around it
/// left (or one that a panic unwound through, or whose access a visitor
/// leaked), and gives the count back when it ends. Not a guard: the read
/// of every argument type would need code to drop it on unwinding.
struct Levels(Option<u32>);

impl Levels {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn start(input: Input<'_>) -> Levels {
        Levels(match input {
            Input::Value(_) => Some(VALUE_DEPTH.replace(0)),
            Input::Text(_) => None,
        })
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn end(self) {
        if let Some(outer) = self.0 {
            // Through `with`: std's `LocalKey::set` calls a function of
            // its own, which the read's caller (a tool's whole dispatch)
            // does not inline.
            VALUE_DEPTH.with(|depth| depth.set(outer));
        }
    }

    /// Ends a read that failed with `error`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn end_with(self, error: ReadError) -> ReadError {
        self.end();
        error
    }
}

/// A level entered for the length of a visit (an array, an enum's
/// object) and left by [`leave`](Entered::leave), not by a guard: the
/// visit is the argument type's code, which would need code of its own to
/// drop one on unwinding (a panic's leftover is cleared by the next read).
#[must_use]
struct Entered(bool);

impl Entered {
    /// Enters a level when `entered`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn when(entered: bool) -> Result<Entered, ReadError> {
        if entered {
            enter_level()?;
        }
        Ok(Entered(entered))
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn leave(self) {
        if self.0 {
            leave_level();
        }
    }

    /// Leaves after a visit that failed with `error`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn leave_with(self, error: ReadError) -> ReadError {
        self.leave();
        error
    }
}

#[cold]
#[inline(never)]
fn too_deep() -> ReadError {
    de::Error::custom(format_args!(
        "the arguments nest deeper than {} levels",
        super::MAX_DEPTH
    ))
}

/// Arguments to read: a borrowed value, or JSON text.
#[derive(Clone, Copy)]
pub(crate) enum Input<'de> {
    Value(&'de Value),
    Text(&'de str),
}

/// Reads `T` from `input` (all of the text) into `slot`: the one place an
/// argument type's `Deserialize` is called.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn read_into<'de, T: Deserialize<'de>>(
    input: Input<'de>,
    slot: &mut Option<T>,
) -> Result<(), ReadError> {
    let levels = Levels::start(input);
    let mut cursor = Cursor::new("");
    match T::deserialize(Reader(start(input, &mut cursor))) {
        Ok(value) => {
            *slot = Some(value);
            finish(input, &mut cursor, levels)
        }
        Err(error) => Err(levels.end_with(error)),
    }
}

/// Where reading `input` starts.
#[cfg_attr(not(debug_assertions), inline(always))]
fn start<'r, 'de>(input: Input<'de>, cursor: &'r mut Cursor<'de>) -> Src<'r, 'de> {
    match input {
        Input::Value(value) => Src::Value(value),
        Input::Text(text) => {
            *cursor = Cursor::new(text);
            Src::Text(cursor)
        }
    }
}

/// After the value: the count of levels given back, and nothing but
/// whitespace left in text.
#[cfg_attr(not(debug_assertions), inline(always))]
fn finish(input: Input<'_>, cursor: &mut Cursor<'_>, levels: Levels) -> Result<(), ReadError> {
    levels.end();
    match input {
        Input::Value(_) => Ok(()),
        Input::Text(_) => cursor.end(),
    }
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
    fn at(mut self, step: impl FnOnce() -> PathStep) -> Self {
        if matches!(self.0.kind, Kind::Data(_)) {
            self.0.path.push(step());
        }
        self
    }

    #[cold]
    #[inline(never)]
    fn at_index(self, index: usize) -> Self {
        self.at(|| PathStep::Index(index))
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

impl<'de> Src<'_, 'de> {
    /// Skips the whitespace before a value in text.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn skip_space(&mut self) {
        if let Src::Text(cursor) = self {
            cursor.peek();
        }
    }

    fn reborrow(&mut self) -> Src<'_, 'de> {
        match self {
            Src::Value(value) => Src::Value(value),
            Src::Text(cursor) => Src::Text(cursor),
        }
    }
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
    #[cfg_attr(not(debug_assertions), inline(always))]
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

    /// The byte at the cursor (after [`peek`](Self::peek) skipped the
    /// whitespace).
    #[inline]
    fn current(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
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
    #[cfg_attr(not(debug_assertions), inline(always))]
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
    /// [`string_text`] (serde_json's reading).
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
        let decoded = string_text(quoted).ok_or_else(ReadError::syntax)?;
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn number(&mut self) -> Result<Num, ReadError> {
        number_of(self.number_text())
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
        match serde_json::from_str::<T>(text) {
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

/// The text a JSON string literal holds, as serde_json reads it (`None`
/// for anything else, or a literal it refuses). `raw`'s syntax is checked
/// already but for its escapes (serde_json's raw value, or a literal the
/// text cursor found the end of): its closing quote is its first
/// unescaped one and it holds no control character. The one-character
/// escapes are undone here, into one buffer the literal's size, where
/// serde_json grows a scratch buffer piece by piece and copies out of it
/// (five allocations a turn for three calls' arguments, an escaped quote
/// every few bytes); a `\u` escape, whose code point only serde_json
/// judges (surrogate pairs, lone surrogates refused), sends the whole
/// literal to serde_json. Provider responses' argument strings and the
/// intake's escaped strings are both read here.
pub(crate) fn string_text(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?.as_bytes();
    // Byte by byte: in arguments an escape comes every few bytes, where a
    // search and a copy per piece cost more than they save.
    let mut text = Vec::with_capacity(inner.len());
    let mut bytes = inner.iter();
    while let Some(&byte) = bytes.next() {
        if byte != b'\\' {
            text.push(byte);
            continue;
        }
        text.push(match bytes.next()? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            _ => return serde_json::from_str(raw).ok(),
        });
    }
    // The bytes are the literal's (valid UTF-8) with ASCII escapes
    // replaced by ASCII: still valid, checked again at ASCII speed.
    String::from_utf8(text).ok()
}

/// A number's text read as serde_json reads it: a plain integer here,
/// anything else by serde_json.
#[cfg_attr(not(debug_assertions), inline(always))]
fn number_of(text: &str) -> Result<Num, ReadError> {
    match plain_integer(text) {
        Some(number) => Ok(number),
        None => other_number(text),
    }
}

/// A plain integer (`0`, or digits without a leading zero, maybe negative)
/// that fits, read here; anything else is serde_json's.
#[cfg_attr(not(debug_assertions), inline(always))]
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

// ---------------------------------------------------------------------------
// The deserializer. What is at the cursor (or in the value) is decided by
// non-generic functions; a visitor's methods only see the outcome, so the
// code compiled per visitor is a match and a call.

/// The value at hand, read as far as a visitor needs: a scalar, or an
/// array or object opened for the visitor to walk.
enum Got<'r, 'de> {
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
    fn invalid(&self, exp: &dyn Expected) -> ReadError {
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
fn got<'r, 'de>(src: Src<'r, 'de>) -> Result<Got<'r, 'de>, ReadError> {
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
fn number<'de>(mut src: Src<'_, 'de>, exp: &dyn Expected) -> Result<Num, ReadError> {
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
fn string<'de>(mut src: Src<'_, 'de>, exp: &dyn Expected) -> Result<Cow<'de, str>, ReadError> {
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
fn open<'r, 'de>(
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
enum Opened<'r, 'de> {
    Map(MapSrc<'r, 'de>),
    Seq(Seq<'r, 'de>),
}

/// The error for a visitor that expected something other than what is at
/// `src` (read as far as the error needs).
#[cold]
#[inline(never)]
fn refuse(src: Src<'_, '_>, exp: &dyn Expected) -> ReadError {
    match got(src) {
        Ok(got) => got.invalid(exp),
        Err(error) => error,
    }
}

/// Whether the value at `src` is `null` (read when it is).
#[inline]
fn null(src: &mut Src<'_, '_>) -> Result<bool, ReadError> {
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
fn open_enum<'r, 'de>(src: Src<'r, 'de>) -> Result<Variant<'r, 'de>, ReadError> {
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
fn close_enum(src: Src<'_, '_>, object: bool) -> Result<(), ReadError> {
    match src {
        Src::Text(cursor) if object => cursor.leave(b'}'),
        _ => Ok(()),
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn visit_cow<'de, V: Visitor<'de>>(s: Cow<'de, str>, visitor: V) -> Result<V::Value, ReadError> {
    match s {
        Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
        Cow::Owned(s) => visitor.visit_string(s),
    }
}

/// A visitor's sequence, from either form: one `SeqAccess` type, so the
/// visitor's `visit_seq` is compiled once.
#[cfg_attr(not(debug_assertions), inline(always))]
fn visit_seq<'de, V: Visitor<'de>>(src: Seq<'_, 'de>, visitor: V) -> Result<V::Value, ReadError> {
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
fn visit_map<'de, V: Visitor<'de>>(
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

// ---------------------------------------------------------------------------
// Sequences and maps.

enum Seq<'r, 'de> {
    /// The items left, and how many there were (the array's level is
    /// entered while [`visit_seq`] reads it).
    Value(std::slice::Iter<'de, Value>, usize),
    Text(&'r mut Cursor<'de>),
}

struct SeqReader<'r, 'de> {
    src: Seq<'r, 'de>,
    index: usize,
    /// The array's level, entered for the visit.
    level: SeqLevel,
}

/// Where a sequence stands with the value's levels.
#[derive(Clone, Copy, PartialEq)]
enum SeqLevel {
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
    fn enter(src: Seq<'r, 'de>) -> Self {
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
    fn abandon(self, error: ReadError) -> ReadError {
        if self.level == SeqLevel::Entered {
            leave_level();
        }
        error
    }

    /// The next item, if any.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next(&mut self) -> Result<Option<Src<'_, 'de>>, ReadError> {
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
    fn end(self) -> Result<(), ReadError> {
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

enum MapSrc<'r, 'de> {
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

struct MapReader<'r, 'de>(MapSrc<'r, 'de>);

impl<'de> MapReader<'_, 'de> {
    /// The next key, if any.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn next_key(&mut self) -> Result<Option<Key<'de>>, ReadError> {
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
    fn value(&mut self) -> Result<Src<'_, 'de>, ReadError> {
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
    fn forget_key(&mut self) {
        match &mut self.0 {
            MapSrc::Value { entry, .. } => *entry = None,
            MapSrc::Text { key, .. } => *key = None,
        }
    }

    /// An error under the current entry: its path names the key.
    #[cold]
    #[inline(never)]
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
    #[inline]
    fn end(self) -> Result<(), ReadError> {
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
            None => unnamed(de::Error::custom("expected key to be a number in quotes")),
            Some(_) => text_only("expected key to be a number in quotes"),
        }
    }

    /// A key read as a number: from the value's key string as
    /// serde_json's `Value` reader does, from the raw text between the
    /// quotes as its text reader does.
    fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.parsed()? {
            // `serde_path_to_error` names a key read as an integer, not one
            // read as a float.
            number @ Num::F64(_) => number.visit(visitor).map_err(unnamed),
            number => number.visit(visitor),
        }
    }

    /// The key as a number, as serde_json reads it.
    #[inline(never)]
    fn parsed(&self) -> Result<Num, ReadError> {
        number_of(self.number_text()?).map_err(|_| self.not_a_number())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A string literal's text is what serde_json reads from it, whatever
    /// its escapes; a literal serde_json refuses (a lone surrogate) or
    /// another kind of JSON gives none.
    #[test]
    fn a_string_literal_reads_as_serde_json_reads_it() {
        let literals = [
            r#""""#,
            r#""plain""#,
            r#""{\"a\": 40, \"b\": 2}""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""tail\\""#,
            r#""\\\"""#,
            r#""caf\u00e9 \ud83d\ude00 and \"quoted\"""#,
            "\"caf\u{e9} \u{1F600} raw\"",
            r#""\u0041\n""#,
        ];
        for literal in literals {
            let expected: String = serde_json::from_str(literal).expect("a valid literal");
            assert_eq!(string_text(literal), Some(expected), "{literal}");
        }
        for refused in [
            r#""\ud800""#,
            r#""\udc00 and more""#,
            "{}",
            "12",
            "null",
            r#""open"#,
        ] {
            assert_eq!(string_text(refused), None, "{refused}");
        }
        // Every text serde_json writes comes back as it was.
        let mut text = String::new();
        for code in (0u32..0x2_0000).step_by(7) {
            if let Some(c) = char::from_u32(code) {
                text.push(c);
            }
            if code % 97 == 0 {
                text.push_str("\"\\/");
            }
        }
        let literal = serde_json::to_string(&text).expect("text serializes");
        assert_eq!(string_text(&literal).as_deref(), Some(text.as_str()));
    }

    /// A JSON string literal for `text`, each character written as it is,
    /// with its short escape, or as `\u` escapes (a surrogate pair past
    /// the BMP), as `choice` picks per character; and `\u` escapes of
    /// lone or unpaired surrogates where `choice` says, which serde_json
    /// refuses.
    fn literal(text: &str, choices: &[u8]) -> String {
        let mut out = String::from("\"");
        let mut pick = choices.iter().copied().cycle();
        for c in text.chars() {
            let choice = pick.next().unwrap_or(0);
            match (c, choice % 8) {
                (_, 5) if choice > 250 => out.push_str("\\udc00"),
                (_, 6) if choice > 250 => out.push_str("\\ud83d\\u0041"),
                ('"', _) => out.push_str("\\\""),
                ('\\', _) => out.push_str("\\\\"),
                ('/', 1) => out.push_str("\\/"),
                ('\n', 1) => out.push_str("\\n"),
                ('\t', 1) => out.push_str("\\t"),
                ('\u{8}', 1) => out.push_str("\\b"),
                ('\u{c}', 1) => out.push_str("\\f"),
                ('\r', 1) => out.push_str("\\r"),
                (c, 2 | 3) | (c @ '\0'..='\u{1f}', _) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                (c, _) => out.push(c),
            }
        }
        out.push('"');
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        /// Random text written with every kind of escape, and some lone
        /// surrogates: read as serde_json reads it, or refused where
        /// serde_json refuses it.
        #[test]
        fn any_string_literal_reads_as_serde_json_reads_it(
            text in "(?s)[\"\\\\/a-z \\x00-\\x1f\\u{e9}\\u{2028}\\u{1F600}\\u{10FFFF}]{0,40}",
            choices in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..8),
        ) {
            let raw = literal(&text, &choices);
            let expected = serde_json::from_str::<String>(&raw).ok();
            proptest::prop_assert_eq!(string_text(&raw), expected, "{}", raw);
        }
    }
}
