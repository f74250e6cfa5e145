//! Text from the model made safe to put in an error or a log: control
//! characters escaped, long input cut with a marker. Every error path
//! that quotes input comes here, and this file needs nothing else.

use std::borrow::Cow;

use serde_json::Value;

/// How many characters of a model's input an error text echoes before it is
/// cut with a marker.
pub const ECHO_LIMIT: usize = 200;

/// A received value as JSON, cut to [`ECHO_LIMIT`] characters.
pub(crate) fn received(value: &Value) -> String {
    match value {
        Value::Null => "`null`".to_owned(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("`{n}`"),
        Value::String(s) => {
            let shown: String = s.chars().take(ECHO_LIMIT).collect();
            let quoted = serde_json::to_string(&shown).unwrap_or_default();
            let total = s.chars().count();
            if total > ECHO_LIMIT {
                format!("the string {quoted}… ({total} characters)")
            } else {
                format!("the string {quoted}")
            }
        }
        Value::Array(items) if items.len() == 1 => "an array of 1 item".to_owned(),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) if map.len() == 1 => "an object with 1 key".to_owned(),
        Value::Object(map) => format!("an object with {} keys", map.len()),
    }
}

/// Text from the model, safe to put in an error or a log: control
/// characters escaped as JSON escapes them, cut to [`ECHO_LIMIT`]
/// characters with a marker saying how long it was.
pub fn echo(text: &str) -> Cow<'_, str> {
    let clean = text.chars().all(|c| !c.is_control());
    let total = if text.len() > ECHO_LIMIT {
        text.chars().count()
    } else {
        0
    };
    if clean && total <= ECHO_LIMIT {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(ECHO_LIMIT * 2) + 32);
    for c in text.chars().take(ECHO_LIMIT) {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    if total > ECHO_LIMIT {
        out.push_str(&format!("… ({total} characters)"));
    }
    Cow::Owned(out)
}

pub(crate) fn cut(text: &str) -> String {
    echo(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_text_is_escaped_and_cut() {
        assert_eq!(echo("a\u{0}b\n\u{1b}[31m"), "a\\u0000b\\n\\u001b[31m");
        let long = "x".repeat(10_000);
        let shown = echo(&long);
        assert!(shown.starts_with(&"x".repeat(ECHO_LIMIT)));
        assert!(shown.ends_with("… (10000 characters)"), "{shown}");
    }
}
