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

mod access;
mod deserializer;
mod key;
#[cfg(test)]
mod tests;
mod text;
mod variant;

use access::*;
use deserializer::*;
use key::*;
pub use text::string_text;
pub(crate) use text::*;
use variant::*;

/// serde_json's marker for `RawValue` (`serde_json::raw::TOKEN`).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// How deep text may nest, as serde_json's parser allows.
const TEXT_DEPTH: u32 = 128;

thread_local! {
    /// How many objects and arrays of the value being read enclose the
    /// reader's position: counted as they are entered, so a value is
    /// refused past [`MAX_DEPTH`](crate::args::MAX_DEPTH) levels (as its text
    /// would be) without a walk of its own before the read.
    static VALUE_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Enters one level of a value's nesting (an object, an array, an enum's
/// object): refused past the limit.
#[cfg_attr(not(debug_assertions), inline(always))]
fn enter_level() -> Result<(), ReadError> {
    let depth = VALUE_DEPTH.get() + 1;
    if depth as usize > crate::args::MAX_DEPTH {
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
    let budget = crate::args::MAX_DEPTH.saturating_sub(VALUE_DEPTH.get() as usize);
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
        crate::args::MAX_DEPTH
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
    /// The text reader refused JSON text for this type: serde_json's
    /// message and the path, root first.
    TextOnly {
        message: String,
        path: Vec<PathStep>,
    },
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
        if matches!(self.0.kind, Kind::Data(_) | Kind::TextOnly(_)) {
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
        let mut path = failure.path;
        path.reverse();
        match failure.kind {
            Kind::Data(error) => Failed::Data {
                message: error.to_string(),
                path,
            },
            Kind::Syntax => Failed::Syntax,
            Kind::TextOnly(message) => Failed::TextOnly { message, path },
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
