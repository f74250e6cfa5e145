//! The text cursor: JSON text read token by token, numbers and strings
//! decided without generics, so it is compiled once.

use super::*;

/// A position in JSON text.
pub(crate) struct Cursor<'de> {
    pub(super) text: &'de str,
    pub(super) pos: usize,
    pub(super) depth: u32,
}

/// A number as serde_json's text reader hands it to a visitor.
pub(super) enum Num {
    U64(u64),
    I64(i64),
    F64(f64),
}

impl<'de> Cursor<'de> {
    pub(super) fn new(text: &'de str) -> Self {
        Cursor {
            text,
            pos: 0,
            depth: 0,
        }
    }

    #[inline]
    pub(super) fn bytes(&self) -> &'de [u8] {
        self.text.as_bytes()
    }

    /// Skips JSON whitespace; the next byte.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(super) fn peek(&mut self) -> Option<u8> {
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
    pub(super) fn current(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    #[inline]
    pub(super) fn eat(&mut self) {
        self.pos += 1;
    }

    /// Nothing but whitespace left.
    pub(super) fn end(&mut self) -> Result<(), ReadError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(ReadError::syntax()),
        }
    }

    pub(super) fn enter(&mut self) -> Result<(), ReadError> {
        self.depth += 1;
        if self.depth >= TEXT_DEPTH {
            return Err(ReadError::syntax());
        }
        self.pos += 1;
        Ok(())
    }

    pub(super) fn leave(&mut self, close: u8) -> Result<(), ReadError> {
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
    pub(super) fn string(&mut self) -> Result<(Cow<'de, str>, Option<&'de str>), ReadError> {
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
    pub(super) fn escaped_string(
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
    pub(super) fn number_text(&mut self) -> &'de str {
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
    pub(super) fn number(&mut self) -> Result<Num, ReadError> {
        number_of(self.number_text())
    }

    /// The literal `word` at the cursor.
    pub(super) fn literal(&mut self, word: &[u8]) -> Result<(), ReadError> {
        if self.bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(ReadError::syntax())
        }
    }

    /// Skips the value at the cursor with serde_json's own skipping.
    pub(super) fn skip(&mut self) -> Result<(), ReadError> {
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
    pub(super) fn raw(&mut self) -> Result<&'de str, ReadError> {
        self.peek();
        let start = self.pos;
        self.skip()?;
        Ok(&self.text[start..self.pos])
    }

    /// A number of a type serde_json reads with its own method (`u128`,
    /// `i128`, `f32`): the literal at the cursor read by serde_json.
    pub(super) fn exact<T: Deserialize<'de>>(&mut self) -> Result<T, ReadError> {
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
pub fn string_text(raw: &str) -> Option<String> {
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
pub(super) fn number_of(text: &str) -> Result<Num, ReadError> {
    match plain_integer(text) {
        Some(number) => Ok(number),
        None => other_number(text),
    }
}

/// A plain integer (`0`, or digits without a leading zero, maybe negative)
/// that fits, read here; anything else is serde_json's.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn plain_integer(text: &str) -> Option<Num> {
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
pub(super) fn other_number(text: &str) -> Result<Num, ReadError> {
    let number: Number = serde_json::from_str(text).map_err(|_| ReadError::syntax())?;
    Ok(num_of(&number))
}

pub(super) fn num_of(number: &Number) -> Num {
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
pub(super) fn without_position(error: serde_json::Error) -> serde_json::Error {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    de::Error::custom(message)
}

impl Num {
    #[inline]
    pub(super) fn visit<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self {
            Num::U64(u) => visitor.visit_u64(u),
            Num::I64(i) => visitor.visit_i64(i),
            Num::F64(f) => visitor.visit_f64(f),
        }
    }

    pub(super) fn unexpected(&self) -> Unexpected<'static> {
        match *self {
            Num::U64(u) => Unexpected::Unsigned(u),
            Num::I64(i) => Unexpected::Signed(i),
            Num::F64(f) => Unexpected::Float(f),
        }
    }
}

pub(super) fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => num_of(n).unexpected(),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}
