//! Argument intake: what a model sent, in whichever form it came, into the
//! tool's own types.
//!
//! Providers hand arguments over as JSON text (OpenAI, most gateways, MCP
//! bridges), as an object (Anthropic, Gemini), as `null` for "no arguments",
//! or double-encoded. [`Arguments`] carries either form to the box unparsed,
//! and [`Arguments::deserialize`] reads it straight into the tool's type with
//! one deserializer of its own that accepts, form by form, exactly what
//! `serde_json` accepts, and is the only one an argument type is compiled
//! for. Its errors carry the JSON path; on failure the input is read as a
//! `Value` to name the value received and what would be accepted.
//!
//! Everything about arguments is here, one way in: [`Arguments`] and its
//! deserializers, [`Args<T>`] (a tool's whole argument object as one
//! parameter), [`ToolCall`] and [`CallArguments`] (a provider's tool call
//! with its arguments as they came), [`normalize()`] (the `null`s strict
//! mode sends for absent properties, undone), and [`echo()`], the log-safe
//! form in which errors quote what was sent.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::dialect::Dialect;
use crate::echo::received;
use crate::error::ToolError;

mod call;
mod explain;
pub(crate) mod normalize;
pub(crate) mod read;
mod whole;

pub(crate) use explain::explain;
use explain::{invalid_at, OUT_OF_RANGE};
pub use normalize::{normalize, Adjustment, Change};
pub use whole::Args;

pub use crate::echo::{echo, ECHO_LIMIT};
pub use crate::path::{JsonPath, PathStep};
pub use call::{CallArguments, ToolCall};

/// How deep an argument value may nest (objects and arrays), as
/// `serde_json`'s parser allows for text: deeper values are refused before
/// they are deserialized, so a value built in code cannot overflow the stack.
pub const MAX_DEPTH: usize = 128;

/// A call's arguments as the caller sent them: a JSON value (normally an
/// object) or JSON text. Nothing is parsed until a box asks for them.
///
/// `From<&Value>` takes a `Value::String` as text, the way providers send it.
///
/// ```
/// use serde::Deserialize;
/// use serde_json::json;
/// use toolbox_core::Arguments;
///
/// #[derive(Debug, Deserialize)]
/// struct Add { a: i64, b: i64 }
///
/// let from_text: Add = Arguments::from(r#"{"a": 1, "b": 2}"#).deserialize().unwrap();
/// let object = json!({"a": 1, "b": 2});
/// let from_value: Add = Arguments::from(&object).deserialize().unwrap();
/// assert_eq!(from_text.a + from_text.b, from_value.a + from_value.b);
///
/// let error = Arguments::from(r#"{"a": null, "b": 2}"#).deserialize::<Add>().unwrap_err();
/// assert_eq!(error.to_string(), "invalid arguments at `a`: `null` is not allowed here; expected an integer");
/// ```
#[derive(Clone, Copy)]
pub enum Arguments<'a> {
    /// A JSON value: an object, or `null` for no arguments.
    Value(&'a Value),
    /// JSON text: an object, empty or `null` for no arguments, or a JSON
    /// string holding an object (double encoding).
    Text(&'a str),
}

impl<'a> From<&'a Value> for Arguments<'a> {
    #[inline]
    fn from(value: &'a Value) -> Self {
        match value {
            Value::String(text) => Arguments::Text(text),
            other => Arguments::Value(other),
        }
    }
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Arguments::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Arguments::Text(text)
    }
}

impl fmt::Debug for Arguments<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The arguments as they came: a value as compact JSON, text as is.
impl fmt::Display for Arguments<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arguments::Value(value) => write!(f, "{value}"),
            Arguments::Text(text) => f.write_str(text),
        }
    }
}

impl Serialize for Arguments<'_> {
    /// The normalized object when the arguments are well formed, else what
    /// was sent (text as a JSON string), so a tape keeps it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.recorded().serialize(serializer)
    }
}

impl<'a> Arguments<'a> {
    /// Deserializes the arguments into `T`, accepting exactly what
    /// `serde_json` accepts for the normalized object (`from_str` for text,
    /// `from_value` for a value). On failure the error names the JSON path,
    /// the value received and what would be accepted.
    pub fn deserialize<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        // Everything but the read itself is decided by code compiled once.
        let mut parsed = None;
        let result = intake(self, &mut |input: read::Input<'_>| {
            read::read_into(input, &mut parsed)
        });
        kept(result, parsed)
    }

    /// Deserializes the arguments of a tool whose argument schema is `T`'s,
    /// the way generated tools and closure tools take them:
    /// [`deserialize`](Self::deserialize), and where that fails on a `null`
    /// for a property `T`'s schema leaves optional and does not let be
    /// `null` (OpenAI strict mode's way of saying "absent"), once more with
    /// those `null`s removed (see [`normalize()`]).
    /// The first try is the whole cost of a call that needs no second.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolbox_core::Arguments;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Search { query: String, #[serde(default = "ten")] limit: u32 }
    /// fn ten() -> u32 { 10 }
    ///
    /// let arguments = json!({"query": "rust", "limit": null});
    /// let search: Search = Arguments::from(&arguments).deserialize_tool().unwrap();
    /// assert_eq!(search.limit, 10);
    /// ```
    #[inline]
    pub fn deserialize_tool<T: DeserializeOwned + JsonSchema>(self) -> Result<T, ToolError> {
        // Only the read itself is compiled per type; the fast path (a
        // well-formed object in either form) reads directly, the rest
        // (other forms, errors, the second try) is out of line and reads
        // through the same closure.
        let mut parsed = None;
        if let Some(input) = fast_input(self) {
            if read::read_into(input, &mut parsed).is_ok() {
                if let Some(parsed) = parsed {
                    return Ok(parsed);
                }
            }
        }
        let result = tool_fallback(
            self,
            crate::schema::parameters_of::<T>,
            &mut |input: read::Input<'_>| read::read_into(input, &mut parsed),
        );
        kept(result, parsed)
    }

    /// The arguments as a JSON object: a value borrowed as is, text parsed
    /// once. For boxes that forward arguments rather than deserialize them.
    pub fn to_value(self) -> Result<Cow<'a, Value>, ToolError> {
        match self {
            Arguments::Value(value @ Value::Object(_)) => {
                check_depth(value)?;
                Ok(Cow::Borrowed(value))
            }
            other => other.deserialize::<Value>().map(Cow::Owned),
        }
    }

    /// What a transcript keeps: the normalized object when the arguments
    /// are well formed, else what was sent (text as a JSON string).
    pub(crate) fn recorded(self) -> Cow<'a, Value> {
        self.to_value()
            .unwrap_or_else(|_| Cow::Owned(self.to_json()))
    }

    /// The arguments as the caller sent them, as a JSON value (text as a
    /// JSON string).
    pub fn to_json(self) -> Value {
        match self {
            Arguments::Value(value) => value.clone(),
            Arguments::Text(text) => Value::String(text.to_owned()),
        }
    }
}

/// What the intake kept, or its error.
#[inline]
fn kept<T>(result: Result<(), ToolError>, parsed: Option<T>) -> Result<T, ToolError> {
    match result {
        Ok(()) => match parsed {
            Some(parsed) => Ok(parsed),
            None => Err(unread()),
        },
        Err(error) => Err(error),
    }
}

/// The input of the fast path: an object, or text that opens one.
#[cfg_attr(not(debug_assertions), inline(always))]
fn fast_input(arguments: Arguments<'_>) -> Option<read::Input<'_>> {
    match arguments {
        Arguments::Text(text) if opens_object(text) => Some(read::Input::Text(text)),
        // The reader counts a value's levels as it enters them.
        Arguments::Value(value @ Value::Object(_)) => Some(read::Input::Value(value)),
        _ => None,
    }
}

/// [`Arguments::deserialize_tool`] past its fast path: [`intake`], then
/// the second try without the `null`s of absent properties.
#[cold]
#[inline(never)]
fn tool_fallback(
    arguments: Arguments<'_>,
    schema: fn() -> Value,
    read_one: &mut ReadOne<'_>,
) -> Result<(), ToolError> {
    match intake(arguments, read_one) {
        Ok(()) => Ok(()),
        Err(error) => retry_without_absent_nulls(arguments, error, schema, read_one),
    }
}

/// Reads an argument type from one input (and keeps it): the only part of
/// the intake compiled per type.
type ReadOne<'r> = dyn FnMut(read::Input<'_>) -> Result<(), read::ReadError> + 'r;

/// Never seen: the intake returns `Ok` only after a read that kept its
/// value.
#[cold]
fn unread() -> ToolError {
    ToolError::invalid_arguments("", "the arguments were not read")
}

/// The intake: the arguments' form decided, read with `read_one`, and on
/// failure read again as a `Value` to say where and what.
fn intake(arguments: Arguments<'_>, read_one: &mut ReadOne<'_>) -> Result<(), ToolError> {
    let input = plan(arguments)?;
    let first = match read_one(input.as_input()) {
        Ok(()) => return Ok(()),
        Err(error) => error,
    };
    let (value, message) = refused(input.as_input(), first)?;
    match read_one(read::Input::Value(&value)) {
        Err(error) => Err(explain_value(&value, error)),
        // Only the text form refuses it (a duplicate key): say so.
        Ok(()) if message.is_some() => Err(ToolError::invalid_arguments(
            "",
            explain(message.as_deref().unwrap_or_default(), None),
        )),
        Ok(()) => match &input {
            // The text gives a key twice and the value keeps only its last
            // value: what the text refused may be an earlier one, which
            // serde_json refuses too.
            Planned::Text(text) => match repeated_key(text) {
                Some(path) => Err(ToolError::invalid_arguments(
                    path.to_string(),
                    "this key is given more than once, and a value of it \
                     before the last is not valid here; send each key once",
                )),
                None => Ok(()),
            },
            Planned::Value(_) => Ok(()),
        },
    }
}

/// The path of the first key `text` gives twice in one object, if any
/// (read as a `Value`, such an object keeps the key's last value only).
#[cold]
#[inline(never)]
fn repeated_key(text: &str) -> Option<JsonPath> {
    let stop = walk(text, true);
    stop.repeated.then_some(stop.path)
}

/// Where a [`walk`] of JSON text stopped.
#[derive(Default)]
struct Stop {
    /// The path of the value the walk was in (the root once it read the
    /// whole text).
    path: JsonPath,
    /// Whether it stopped reading a key of the object at `path`.
    in_key: bool,
    /// Whether it stopped at a key given twice (the last step of `path`).
    repeated: bool,
}

/// Walks `text` as serde_json's parser reads it, keeping the path, up to
/// its end, serde_json's first error, or (with `repeats`) the first key
/// given twice in one object. One pass: a cheap way to say where an error
/// is that serde_json places only by line and column.
#[cold]
#[inline(never)]
fn walk(text: &str, repeats: bool) -> Stop {
    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

    struct Walk<'p> {
        stop: &'p mut Stop,
        repeats: bool,
    }

    impl Walk<'_> {
        fn inner(&mut self) -> Walk<'_> {
            Walk {
                stop: self.stop,
                repeats: self.repeats,
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
            let mut index = 0;
            loop {
                self.stop.path.push_index(index);
                // An error leaves the path where it happened.
                let more = seq.next_element_seed(self.inner())?;
                self.stop.path.pop();
                if more.is_none() {
                    return Ok(());
                }
                index += 1;
            }
        }
        fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            loop {
                self.stop.in_key = true;
                let Some(key) = map.next_key::<String>()? else {
                    break;
                };
                self.stop.in_key = false;
                self.stop.path.push_key(key.as_str());
                if self.repeats && !seen.insert(key) {
                    // Found: the walk stops here.
                    self.stop.repeated = true;
                    return Err(de::Error::custom("a repeated key"));
                }
                map.next_value_seed(self.inner())?;
                self.stop.path.pop();
            }
            self.stop.in_key = false;
            Ok(())
        }
    }

    let mut stop = Stop::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    // Its error is where the walk stopped.
    let _ = Walk {
        stop: &mut stop,
        repeats,
    }
    .deserialize(&mut deserializer);
    stop
}

/// The second try of a tool's intake: the arguments again with the `null`s
/// OpenAI strict mode sends for absent properties removed, where the
/// schema leaves those properties optional. The first error stands when
/// there is nothing to remove.
#[cold]
fn retry_without_absent_nulls(
    arguments: Arguments<'_>,
    error: ToolError,
    schema: fn() -> Value,
    read_one: &mut ReadOne<'_>,
) -> Result<(), ToolError> {
    match absent_nulls_removed(arguments, &error, schema) {
        Some(value) => intake(Arguments::Value(&value), read_one),
        None => Err(error),
    }
}

/// The arguments with the `null`s of absent properties removed, or `None`
/// when there are none (or the error is not about the arguments). Not
/// generic: compiled once.
fn absent_nulls_removed(
    arguments: Arguments<'_>,
    error: &ToolError,
    schema: fn() -> Value,
) -> Option<Value> {
    if !matches!(error, ToolError::InvalidArguments { .. }) {
        return None;
    }
    let value = arguments.to_value().ok()?;
    if !normalize::has_null(&value) {
        return None;
    }
    let schema = schema();
    let mut value = value.into_owned();
    let changes = normalize::normalize(&schema, Dialect::Mcp, &mut value);
    if changes.is_empty() {
        return None;
    }
    for change in &changes {
        tracing::debug!(target: "toolbox::intake", %change, "argument normalized");
    }
    Some(value)
}

/// The arguments in the form they are read in: an object (borrowed or
/// made: `{}` for no arguments) or the text of one (trimmed; decoded when
/// it came in a JSON string).
enum Planned<'a> {
    Value(Cow<'a, Value>),
    Text(Cow<'a, str>),
}

impl Planned<'_> {
    fn as_input(&self) -> read::Input<'_> {
        match self {
            Planned::Value(value) => read::Input::Value(value),
            Planned::Text(text) => read::Input::Text(text),
        }
    }
}

/// Decides, once for every argument type, what to read: an object, `null`
/// (no arguments), text (also double-encoded), or an error.
fn plan(arguments: Arguments<'_>) -> Result<Planned<'_>, ToolError> {
    match arguments {
        Arguments::Value(value @ Value::Object(_)) => {
            check_depth(value)?;
            Ok(Planned::Value(Cow::Borrowed(value)))
        }
        Arguments::Value(Value::Null) => Ok(Planned::Value(Cow::Owned(Value::Object(Map::new())))),
        Arguments::Value(Value::String(text)) => plan_text(text, 0),
        Arguments::Text(text) => plan_text(text, 0),
        Arguments::Value(other) => Err(not_an_object(other)),
    }
}

fn plan_text(text: &str, depth: u8) -> Result<Planned<'_>, ToolError> {
    match other_text(text, depth) {
        OtherText::Object(trimmed) => Ok(Planned::Text(Cow::Borrowed(trimmed))),
        OtherText::Empty => Ok(Planned::Value(Cow::Owned(Value::Object(Map::new())))),
        OtherText::Encoded(inner) => Ok(match plan_text(&inner, 1)? {
            Planned::Text(text) => Planned::Text(Cow::Owned(text.into_owned())),
            Planned::Value(value) => Planned::Value(Cow::Owned(value.into_owned())),
        }),
        OtherText::Refused(error) => Err(error),
    }
}

/// Why `input` did not read: an error to give, or the input as a `Value`
/// to read again (naming the path), with the text reader's message when
/// the text form refused what the value may not (`None` when the reader
/// saw no JSON where serde_json does: the `Value` decides).
#[cold]
#[inline(never)]
fn refused(
    input: read::Input<'_>,
    first: read::ReadError,
) -> Result<(Value, Option<String>), ToolError> {
    let text = match input {
        read::Input::Value(value) => return Err(explain_value(value, first)),
        read::Input::Text(text) => text,
    };
    let failed = first.into_failed();
    let value = match serde_json::from_str::<Value>(text) {
        Err(error) => return Err(unreadable(text, &error)),
        Ok(value) => value,
    };
    match failed {
        // JSON the text reader refuses for this type (an `f32` out of
        // range, a key that is not the number a map's keys are): said where.
        read::Failed::TextOnly { message, path } => Err(invalid_at(&value, &path, &message)),
        read::Failed::Syntax => Ok((value, None)),
        read::Failed::Data { message, .. } => Ok((value, Some(message))),
    }
}

/// Says where in `value` reading failed, what is there and what would be
/// accepted. Not generic: the error already carries its path.
#[cold]
#[inline(never)]
fn explain_value(value: &Value, error: read::ReadError) -> ToolError {
    match error.into_failed() {
        read::Failed::Data { message, path } | read::Failed::TextOnly { message, path } => {
            invalid_at(value, &path, &message)
        }
        read::Failed::Syntax => {
            ToolError::invalid_arguments("", "the arguments are not valid JSON")
        }
    }
}

/// Whether the first non-space byte of `text` is `{`. Not generic, so
/// each argument type does not compile its own copy.
#[inline]
fn opens_object(text: &str) -> bool {
    text.bytes()
        .find(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        == Some(b'{')
}

/// What text other than a plain object holds, decided once for every
/// argument type.
enum OtherText<'t> {
    /// An object (trimmed).
    Object(&'t str),
    /// Empty text or `null`: no arguments.
    Empty,
    /// A JSON string holding the arguments' text.
    Encoded(String),
    /// Not JSON, or JSON that is not an object.
    Refused(ToolError),
}

fn other_text(text: &str, depth: u8) -> OtherText<'_> {
    let trimmed = text.trim_matches(is_json_space);
    match trimmed.as_bytes().first() {
        Some(b'{') => OtherText::Object(trimmed),
        None => OtherText::Empty,
        Some(b'n') if trimmed == "null" => OtherText::Empty,
        Some(b'"') if depth == 0 => match serde_json::from_str::<String>(trimmed) {
            Ok(inner) => OtherText::Encoded(inner),
            Err(error) => OtherText::Refused(unreadable(trimmed, &error)),
        },
        Some(_) => OtherText::Refused(match serde_json::from_str::<Value>(trimmed) {
            Ok(other) => not_an_object(&other),
            Err(error) => unreadable(trimmed, &error),
        }),
    }
}

fn is_json_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn not_an_object(value: &Value) -> ToolError {
    ToolError::invalid_arguments(
        "",
        format!(
            "expected a JSON object of arguments, got {}",
            received(value)
        ),
    )
}

/// Why serde_json's parser refused `text` with `error`: valid JSON past
/// one of its limits is said as such, where it is (a walk of the text up
/// to the error), and anything else is not JSON.
#[cold]
#[inline(never)]
fn unreadable(text: &str, error: &serde_json::Error) -> ToolError {
    // serde_json names these limits only in its message (all are syntax
    // errors to its `classify`).
    let limit = if error.is_syntax() {
        Limit::of(&error.to_string())
    } else {
        None
    };
    match limit {
        None => ToolError::invalid_arguments(
            "",
            format!("the arguments are not valid JSON ({error}); send a JSON object"),
        ),
        Some(Limit::Depth) => nest_too_deep(),
        Some(Limit::Range) => {
            let stop = walk(text, false);
            ToolError::invalid_arguments(stop.path.to_string(), OUT_OF_RANGE)
        }
        Some(Limit::Surrogate) => {
            let stop = walk(text, false);
            let (what, whole) = if stop.in_key {
                ("a key has", "keys")
            } else {
                ("the string has", "strings")
            };
            ToolError::invalid_arguments(
                stop.path.to_string(),
                format!(
                    "{what} a lone surrogate escape (`\\uD800` to `\\uDFFF` without its \
                     pair); {whole} must be well-formed Unicode text"
                ),
            )
        }
    }
}

/// A limit past which serde_json's parser refuses valid JSON.
#[derive(Clone, Copy)]
enum Limit {
    /// Nesting deeper than [`MAX_DEPTH`] levels.
    Depth,
    /// A number no `f64` holds.
    Range,
    /// A `\u` escape of half a surrogate pair, without the other half.
    Surrogate,
}

impl Limit {
    /// The limit serde_json's `message` (for a syntax error) says the text
    /// is past, if any.
    fn of(message: &str) -> Option<Limit> {
        [
            ("recursion limit exceeded", Limit::Depth),
            ("number out of range", Limit::Range),
            ("lone leading surrogate in hex escape", Limit::Surrogate),
            // Only after a leading surrogate.
            ("unexpected end of hex escape", Limit::Surrogate),
        ]
        .into_iter()
        .find(|(start, _)| message.starts_with(start))
        .map(|(_, limit)| limit)
    }
}

/// Refuses values nested deeper than [`MAX_DEPTH`].
#[inline]
fn check_depth(value: &Value) -> Result<(), ToolError> {
    if too_deep(value) {
        Err(nest_too_deep())
    } else {
        Ok(())
    }
}

#[cold]
fn nest_too_deep() -> ToolError {
    ToolError::invalid_arguments(
        "",
        format!("the arguments nest deeper than {MAX_DEPTH} levels"),
    )
}

/// Whether `value` nests deeper than [`MAX_DEPTH`].
fn too_deep(value: &Value) -> bool {
    deeper_than(value, MAX_DEPTH)
}

/// Whether `value` nests deeper than `budget` levels.
#[inline(never)]
pub(crate) fn deeper_than(value: &Value, budget: usize) -> bool {
    fn deeper(value: &Value, budget: usize) -> bool {
        let nested = |child: &Value| {
            matches!(child, Value::Array(_) | Value::Object(_)) && deeper(child, budget - 1)
        };
        match value {
            Value::Array(items) => budget == 0 || items.iter().any(nested),
            Value::Object(map) => budget == 0 || map.values().any(nested),
            _ => false,
        }
    }
    deeper(value, budget)
}

#[cfg(test)]
mod tests;
