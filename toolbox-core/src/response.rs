//! One result of a call, and the one rule that turns a tool's return value
//! into what the model reads.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::ser::{Serialize, Serializer};
use serde::Deserialize;
use serde_json::Value;

use crate::{content::Content, error::ToolError};

/// One result of a call.
///
/// A tool (a closure tool too) may return one: it is the response as is,
/// not serialized into JSON text.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ToolResponse {
    /// The text the model reads.
    pub content: String,
    /// Something to show the user alongside (a card, a chart's data), which
    /// the model does not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<Value>,
    /// Whether this result reports a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// The name under which a [`ToolResponse`] serializes itself (a newtype
/// struct, transparent to JSON), so the result conversion knows a tool
/// returned a response rather than a value to serialize.
const RESPONSE_TOKEN: &str = "$toolbox::ToolResponse";

/// The fields of a [`ToolResponse`], serialized as the derive would.
#[derive(serde::Serialize)]
struct Fields<'r> {
    content: &'r str,
    #[serde(skip_serializing_if = "Option::is_none")]
    element: &'r Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
}

impl Serialize for ToolResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(
            RESPONSE_TOKEN,
            &Fields {
                content: &self.content,
                element: &self.element,
                is_error: self.is_error,
            },
        )
    }
}

impl ToolResponse {
    /// A successful response with this text.
    #[inline]
    pub fn text(content: impl Into<String>) -> Self {
        ToolResponse {
            content: content.into(),
            element: None,
            is_error: false,
        }
    }

    /// An error response with this text.
    #[inline]
    pub fn error(content: impl Into<String>) -> Self {
        ToolResponse {
            content: content.into(),
            element: None,
            is_error: true,
        }
    }

    /// Attaches an element for the client.
    pub fn with_element(mut self, element: Value) -> Self {
        self.element = Some(element);
        self
    }

    /// A successful response of content parts, in order: an MCP client gets
    /// each as its block; the model's text joins the parts' text (a note
    /// such as `[image/png image]` for what it cannot read).
    pub fn from_parts(parts: impl IntoIterator<Item = Content>) -> Self {
        let parts: Vec<Content> = parts.into_iter().collect();
        let text: Vec<String> = parts.iter().map(Content::as_model_text).collect();
        ToolResponse::text(text.join("\n")).with_element(crate::content::element_of(&parts))
    }

    /// A successful response of one image, from its bytes.
    ///
    /// ```
    /// use toolbox_core::ToolResponse;
    /// let response = ToolResponse::image(b"GIF89a", "image/gif");
    /// assert_eq!(response.content, "[image/gif image]");
    /// assert_eq!(response.parts()[0].bytes().unwrap(), b"GIF89a");
    /// ```
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::from_parts([Content::image(bytes, mime_type)])
    }

    /// A successful response of one audio clip, from its bytes.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::from_parts([Content::audio(bytes, mime_type)])
    }

    /// The content parts, in order: those given to
    /// [`from_parts`](Self::from_parts) (or kept from a proxied MCP
    /// server), else the text as one part.
    pub fn parts(&self) -> Vec<Content> {
        match crate::content::blocks(self.element.as_ref()) {
            Some(blocks) => blocks
                .iter()
                .filter_map(|b| serde_json::from_value(b.clone()).ok())
                .collect(),
            None if self.content.is_empty() => Vec::new(),
            None => vec![Content::text(self.content.clone())],
        }
    }

    /// The content blocks as JSON, exactly as given or as a proxied server
    /// sent them (annotations and `_meta` included), when the response has
    /// parts beyond its text.
    pub fn content_blocks(&self) -> Option<&[Value]> {
        crate::content::blocks(self.element.as_ref()).map(Vec::as_slice)
    }

    /// Applies the serialization rule to a tool's return value: a string goes
    /// to the model as is (not quoted), `()` as an empty success, any other
    /// value as compact JSON. A top-level `Result` is unwrapped: `Ok(v)` by the
    /// same rule, `Err(e)` as an error response with `e`'s text. A
    /// `Serialize` impl that panics gives [`ToolError::Panicked`].
    ///
    /// ```
    /// use toolbox_core::ToolResponse;
    /// assert_eq!(ToolResponse::from_output(&"hi").unwrap().content, "hi");
    /// assert_eq!(ToolResponse::from_output(&()).unwrap().content, "");
    /// assert_eq!(ToolResponse::from_output(&vec![1, 2]).unwrap().content, "[1,2]");
    /// let failed = ToolResponse::from_output(&Err::<u8, _>("no such city")).unwrap();
    /// assert!(failed.is_error);
    /// assert_eq!(failed.content, "no such city");
    /// ```
    #[inline]
    pub fn from_output<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        Self::convert(value, true)
    }

    /// [`from_output`](Self::from_output) without its panic guard: for
    /// std's scalars and strings, whose `Serialize` cannot panic, and for
    /// callers that guard the whole call already.
    #[inline]
    pub(crate) fn from_output_unguarded<T: Serialize + ?Sized>(
        value: &T,
    ) -> Result<Self, ToolError> {
        Self::convert(value, false)
    }

    #[inline(always)]
    fn convert<T: Serialize + ?Sized>(value: &T, guard: bool) -> Result<Self, ToolError> {
        // What `serde_json::to_string` starts with.
        let mut buffer = Vec::with_capacity(128);
        let saw_null = std::cell::Cell::new(false);
        let mut shape = Shape::Json;
        let mut write = || {
            let mut json =
                serde_json::Serializer::with_formatter(&mut buffer, NullWatch(&saw_null));
            value.serialize(TopLevel {
                json: &mut json,
                shape: &mut shape,
            })
        };
        // A `Serialize` impl that panics is the tool's panic: caught here,
        // so a result's conversion never unwinds.
        let written = if guard {
            catch_unwind(AssertUnwindSafe(write)).map_err(crate::panic::panicked)?
        } else {
            write()
        };
        if let Err(e) = written {
            return Err(ToolError::Failed {
                message: "the tool's result could not be serialized".to_owned(),
                retryable: false,
                source: Some(Box::new(e)),
            });
        }
        // serde_json writes NaN and infinities as `null`: look for them only
        // when a `null` was written, and refuse the result, naming the path.
        if saw_null.get() {
            let found = catch_unwind(AssertUnwindSafe(|| crate::finite::non_finite(value)))
                .map_err(crate::panic::panicked)?;
            if let Some((path, what)) = found {
                let at = if path == "." {
                    "the result".to_owned()
                } else {
                    format!("`{path}`")
                };
                return Err(ToolError::failed(format!(
                    "the tool's result is not valid JSON: {at} is {what}, which JSON cannot carry"
                )));
            }
        }
        Ok(match shape {
            Shape::Json => ToolResponse::text(json_string(buffer)),
            Shape::Text(text) => ToolResponse::text(text),
            Shape::ErrorText(text) => ToolResponse::error(text),
            Shape::ErrorJson => ToolResponse::error(json_string(buffer)),
            Shape::Response(response) => response,
        })
    }
}

/// JSON text that serde_json wrote, as a `String` (no second check).
#[allow(unsafe_code)] // the one unsafe block of the project, on the hot path
pub fn json_string(buffer: Vec<u8>) -> String {
    // SAFETY: serde_json's serializer writes valid UTF-8 only; this is the
    // conversion `serde_json::to_string` itself makes.
    unsafe { String::from_utf8_unchecked(buffer) }
}

/// What the top level of a value turned out to be.
enum Shape {
    Json,
    Text(String),
    ErrorText(String),
    ErrorJson,
    /// A whole response, returned by the tool.
    Response(ToolResponse),
}

/// A serializer that handles the top level of a value (strings, unit,
/// newtypes, `Result`) and hands everything below to serde_json unchanged.
struct TopLevel<'s, 'n, W: io::Write> {
    json: &'s mut serde_json::Serializer<W, NullWatch<'n>>,
    shape: &'s mut Shape,
}

type Compound<'s, 'n, W> = serde_json::ser::Compound<'s, W, NullWatch<'n>>;

/// serde_json's compact format, noting whether it wrote a `null` (which is
/// also how it writes NaN and infinities), so only results holding one are
/// walked again to look for a non-finite float.
struct NullWatch<'n>(&'n std::cell::Cell<bool>);

impl serde_json::ser::Formatter for NullWatch<'_> {
    fn write_null<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.set(true);
        writer.write_all(b"null")
    }
}

macro_rules! forward_scalar {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, v: $ty) -> Result<(), serde_json::Error> {
            self.json.$method(v)
        })*
    };
}

impl<'s, 'n, W: io::Write> Serializer for TopLevel<'s, 'n, W> {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = Compound<'s, 'n, W>;
    type SerializeTuple = Compound<'s, 'n, W>;
    type SerializeTupleStruct = Compound<'s, 'n, W>;
    type SerializeTupleVariant = Compound<'s, 'n, W>;
    type SerializeMap = Compound<'s, 'n, W>;
    type SerializeStruct = Compound<'s, 'n, W>;
    type SerializeStructVariant = Compound<'s, 'n, W>;

    forward_scalar!(
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
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
    );

    fn serialize_char(self, v: char) -> Result<(), serde_json::Error> {
        *self.shape = Shape::Text(v.to_string());
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), serde_json::Error> {
        *self.shape = Shape::Text(v.to_owned());
        Ok(())
    }

    fn serialize_none(self) -> Result<(), serde_json::Error> {
        self.json.serialize_none()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), serde_json::Error> {
        self.json.serialize_some(value)
    }

    fn serialize_unit(self) -> Result<(), serde_json::Error> {
        *self.shape = Shape::Text(String::new());
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), serde_json::Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<(), serde_json::Error> {
        self.json.serialize_unit_variant(name, index, variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        if name == crate::error::ERROR_TOKEN {
            // A tool returned a `ToolError`: the model reads its message.
            let fields = serde_json::to_value(value)?;
            let message = fields
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            *self.shape = Shape::ErrorText(message.to_owned());
            return Ok(());
        }
        if name == RESPONSE_TOKEN {
            // A tool returned a whole response: it is the result as is.
            let response: ToolResponse = serde_json::from_value(serde_json::to_value(value)?)?;
            *self.shape = Shape::Response(response);
            return Ok(());
        }
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        match (name, variant) {
            ("Result", "Ok") => value.serialize(self),
            ("Result", "Err") => {
                let mut inner = Shape::Json;
                value.serialize(TopLevel {
                    json: &mut *self.json,
                    shape: &mut inner,
                })?;
                *self.shape = match inner {
                    Shape::Text(text) | Shape::ErrorText(text) => Shape::ErrorText(text),
                    Shape::Json | Shape::ErrorJson => Shape::ErrorJson,
                    Shape::Response(mut response) => {
                        response.is_error = true;
                        Shape::Response(response)
                    }
                };
                Ok(())
            }
            _ => self
                .json
                .serialize_newtype_variant(name, index, variant, value),
        }
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        self.json.serialize_seq(len)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        self.json.serialize_tuple(len)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        self.json.serialize_tuple_struct(name, len)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        self.json.serialize_tuple_variant(name, index, variant, len)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        self.json.serialize_map(len)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, serde_json::Error> {
        self.json.serialize_struct(name, len)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        self.json
            .serialize_struct_variant(name, index, variant, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use serde_json::json;

    #[derive(Serialize)]
    struct Forecast {
        city: &'static str,
        celsius: f32,
    }

    #[derive(Serialize)]
    struct Name(String);

    #[test]
    fn strings_go_as_is_unit_empty_others_compact_json() {
        assert_eq!(
            ToolResponse::from_output("a \"quoted\" word")
                .unwrap()
                .content,
            "a \"quoted\" word"
        );
        assert_eq!(
            ToolResponse::from_output(&String::from("x"))
                .unwrap()
                .content,
            "x"
        );
        assert_eq!(ToolResponse::from_output(&'c').unwrap().content, "c");
        assert_eq!(
            ToolResponse::from_output(&Name("Ada".into()))
                .unwrap()
                .content,
            "Ada"
        );
        assert_eq!(
            ToolResponse::from_output(&()).unwrap(),
            ToolResponse::text("")
        );
        assert_eq!(ToolResponse::from_output(&42).unwrap().content, "42");
        assert_eq!(
            ToolResponse::from_output(&None::<u8>).unwrap().content,
            "null"
        );
        assert_eq!(
            ToolResponse::from_output(&Some("s")).unwrap().content,
            "\"s\""
        );
        assert_eq!(
            ToolResponse::from_output(&Forecast {
                city: "Prague",
                celsius: 21.5
            })
            .unwrap()
            .content,
            r#"{"city":"Prague","celsius":21.5}"#
        );
        assert_eq!(
            ToolResponse::from_output(&json!({"a": [1, {"b": null}]}))
                .unwrap()
                .content,
            r#"{"a":[1,{"b":null}]}"#
        );
        assert_eq!(
            ToolResponse::from_output(&vec!["a", "b"]).unwrap().content,
            r#"["a","b"]"#
        );
    }

    #[test]
    fn a_top_level_result_is_unwrapped() {
        let ok: Result<&str, String> = Ok("fine");
        assert_eq!(
            ToolResponse::from_output(&ok).unwrap(),
            ToolResponse::text("fine")
        );
        let err: Result<u8, String> = Err("no such city".into());
        assert_eq!(
            ToolResponse::from_output(&err).unwrap(),
            ToolResponse::error("no such city")
        );
        let err: Result<u8, Vec<u8>> = Err(vec![1]);
        assert_eq!(
            ToolResponse::from_output(&err).unwrap(),
            ToolResponse::error("[1]")
        );
        // Only the top level is special: a nested Result stays JSON.
        let nested: Vec<Result<u8, u8>> = vec![Ok(1)];
        assert_eq!(
            ToolResponse::from_output(&nested).unwrap().content,
            r#"[{"Ok":1}]"#
        );
    }

    #[test]
    fn an_unserializable_value_is_an_error_not_a_panic() {
        let mut map = std::collections::HashMap::new();
        map.insert(vec![1u8], 1);
        let error = ToolResponse::from_output(&map).unwrap_err();
        assert_eq!(
            error.model_message(),
            "the tool's result could not be serialized"
        );
        assert!(
            error.report().contains("key must be a string"),
            "{}",
            error.report()
        );
    }
}
