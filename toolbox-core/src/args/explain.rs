//! serde's errors said in JSON terms: the path, the JSON received there
//! and the JSON that would be accepted.

use std::borrow::Cow;

use serde_json::Value;

use crate::echo::{cut, echo, received};
use crate::error::ToolError;
use crate::path::{JsonPath, PathStep};

/// An invalid-arguments error at `path`, explained with the value found
/// there.
pub(super) fn invalid_at(root: &Value, path: &[PathStep], message: &str) -> ToolError {
    let mut at = Some(root);
    let mut text = JsonPath::root();
    for step in path {
        match step {
            PathStep::Index(index) => {
                at = at.and_then(|v| v.get(*index));
                text.push_index(*index);
            }
            PathStep::Key(name) => {
                at = at.and_then(|v| v.get(name.as_str()));
                text.push_key(name.as_str());
            }
            PathStep::Unknown => {
                at = None;
                text.push_unknown();
            }
        }
    }
    ToolError::invalid_arguments(text.to_string(), explain(message, at))
}

/// What a model reads of a number no `f64` (or no value of the type read)
/// holds, which serde_json's parser refuses as "number out of range".
pub(super) const OUT_OF_RANGE: &str =
    "the number is out of range; send a number of smaller magnitude";

/// Rewrites a serde message in JSON terms: what JSON was received, what
/// JSON would be accepted.
pub(crate) fn explain(message: &str, found: Option<&Value>) -> String {
    if message == "number out of range" {
        return OUT_OF_RANGE.to_owned();
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        if let Some((unexpected, expected)) = rest.split_once(", expected ") {
            let expected = json_expectation(expected);
            return match found {
                Some(Value::Null) => format!("`null` is not allowed here; expected {expected}"),
                Some(value) => format!("got {}, expected {expected}", received(value)),
                None if unexpected == "unit value" || unexpected == "null" => {
                    format!("`null` is not allowed here; expected {expected}")
                }
                None => format!("got {}, expected {expected}", cut(unexpected)),
            };
        }
    }
    if let Some(rest) = message.strip_prefix("invalid value: ") {
        if let Some((unexpected, expected)) = rest.split_once(", expected ") {
            let got = found.map_or_else(|| cut(unexpected), received);
            return format!("got {got}, expected {}", json_expectation(expected));
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        if let Some((length, expected)) = rest.split_once(", expected ") {
            return format!(
                "got an array of {length} items, expected {}",
                json_expectation(expected)
            );
        }
    }
    for (prefix, what) in [
        ("unknown field `", "unknown field"),
        ("unknown variant `", "unknown variant"),
    ] {
        if let Some(rest) = message.strip_prefix(prefix) {
            for tail in ["`, expected ", "`, there are no "] {
                if let Some(at) = rest.rfind(tail) {
                    let name = &rest[..at];
                    let accepted = rest[at + 2..].trim_start();
                    return format!("{what} `{}`, {accepted}", echo(name));
                }
            }
        }
    }
    cut(message)
}

/// What a Rust expectation means in JSON.
fn json_expectation(expected: &str) -> Cow<'_, str> {
    let range = |low: &str, high: &str| Cow::Owned(format!("an integer from {low} to {high}"));
    match expected {
        "u8" => range("0", "255"),
        "u16" => range("0", "65535"),
        "u32" => range("0", "4294967295"),
        // Wide ranges are noise for a model: their bounds are not said.
        "u64" | "usize" | "u128" => Cow::Borrowed("a non-negative integer"),
        "i8" => range("-128", "127"),
        "i16" => range("-32768", "32767"),
        "i32" => range("-2147483648", "2147483647"),
        "i64" | "isize" | "i128" => Cow::Borrowed("an integer"),
        "f32" | "f64" => Cow::Borrowed("a number"),
        "a string" | "a borrowed string" | "string" | "a string or bytes" => {
            Cow::Borrowed("a string")
        }
        "a boolean" => Cow::Borrowed("a boolean (`true` or `false`)"),
        "a character" | "a char" | "char" => Cow::Borrowed("a string of one character"),
        "a sequence" | "a list" => Cow::Borrowed("an array"),
        "a map" => Cow::Borrowed("an object"),
        "unit" => Cow::Borrowed("`null`"),
        other => {
            if other.starts_with("struct ") || other.starts_with("struct variant ") {
                Cow::Borrowed("an object")
            } else if other.starts_with("unit struct ") {
                Cow::Borrowed("`null`")
            } else if other.starts_with("tuple struct ") || other.starts_with("tuple variant ") {
                Cow::Borrowed("an array")
            } else if let Some(size) = other.strip_prefix("a tuple of size ") {
                Cow::Owned(format!("an array of {size} items"))
            } else if other.starts_with("internally tagged enum ")
                || other.starts_with("adjacently tagged enum ")
            {
                Cow::Borrowed("an object with its tag field")
            } else if other.starts_with("enum ") {
                Cow::Borrowed("one of the values the schema lists")
            } else {
                Cow::Owned(cut(other))
            }
        }
    }
}
