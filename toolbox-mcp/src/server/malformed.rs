//! Requests rmcp could not read as any method it knows: a known method
//! whose params are of the wrong shape (`"name": 42` in `tools/call`)
//! reaches the server as a custom request, which rmcp answers "method not
//! found" naming only the method. Here the params of a method the server
//! serves are read again: a field of the wrong shape is named (`-32602`);
//! anything else stays "method not found" (`-32601`), which is also what
//! the protocol asks for the methods a version removed (`tasks/list`,
//! `tasks/result` and, stateless, `initialize` in `2026-07-28`).

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::Value;

/// The answer to a request of `method` with `params` that rmcp could not
/// read.
pub(super) fn answer(method: &str, params: Option<&Value>) -> ErrorData {
    let method_shown = toolbox_core::args::echo(method);
    match what_is_wrong(method, params) {
        Some(wrong) => ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!("invalid params for `{method_shown}`: {wrong}"),
            None,
        ),
        None => ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: `{method_shown}` is not a method this server answers"),
            None,
        ),
    }
}

/// Which field of the params of a method this server serves in every
/// protocol version is wrong, where it can be said.
fn what_is_wrong(method: &str, params: Option<&Value>) -> Option<String> {
    let fields: &[(&str, Kind, bool)] = match method {
        "tools/call" => &[
            ("name", Kind::String, true),
            ("arguments", Kind::Object, false),
            ("_meta", Kind::Object, false),
        ],
        "tasks/get" | "tasks/cancel" | "tasks/update" => &[
            ("taskId", Kind::String, true),
            ("_meta", Kind::Object, false),
        ],
        "resources/read" => &[("uri", Kind::String, true), ("_meta", Kind::Object, false)],
        "tools/list" | "resources/list" | "resources/templates/list" => {
            &[("cursor", Kind::String, false)]
        }
        _ => return None,
    };
    let params = match params {
        None | Some(Value::Null) => {
            return fields
                .iter()
                .find(|(_, _, required)| *required)
                .map(|(field, kind, _)| format!("missing field `{field}` ({})", kind.said()));
        }
        Some(Value::Object(params)) => params,
        Some(other) => return Some(format!("params must be an object, got {}", shape(other))),
    };
    for (field, kind, required) in fields {
        match params.get(*field) {
            None if *required => return Some(format!("missing field `{field}` ({})", kind.said())),
            None => {}
            Some(value) if !kind.holds(value) => {
                return Some(format!(
                    "`{field}` must be {}, got {}",
                    kind.said(),
                    shape(value)
                ))
            }
            Some(_) => {}
        }
    }
    None
}

/// A JSON kind a field must have.
#[derive(Clone, Copy)]
enum Kind {
    String,
    Object,
}

impl Kind {
    fn holds(self, value: &Value) -> bool {
        match self {
            Kind::String => value.is_string(),
            Kind::Object => value.is_object(),
        }
    }

    fn said(self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Object => "an object",
        }
    }
}

/// What a JSON value is, in words.
fn shape(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_known_method_with_wrong_params_names_the_field() {
        let said = |method: &str, params: Value| answer(method, Some(&params)).message;
        assert_eq!(
            said("tools/call", json!({"name": 42})),
            "invalid params for `tools/call`: `name` must be a string, got a number"
        );
        assert_eq!(
            said("tools/call", json!({"name": "echo", "arguments": "x"})),
            "invalid params for `tools/call`: `arguments` must be an object, got a string"
        );
        assert_eq!(
            said("tools/call", json!({"arguments": {}})),
            "invalid params for `tools/call`: missing field `name` (a string)"
        );
        assert_eq!(
            said("tasks/get", json!({"taskId": ["a"]})),
            "invalid params for `tasks/get`: `taskId` must be a string, got an array"
        );
        assert_eq!(
            said("tasks/cancel", json!([1])),
            "invalid params for `tasks/cancel`: params must be an object, got an array"
        );
        assert_eq!(
            answer("tasks/get", None).message,
            "invalid params for `tasks/get`: missing field `taskId` (a string)"
        );
        assert_eq!(answer("tools/call", None).code, ErrorCode::INVALID_PARAMS);
        let unknown = answer("tools/run", Some(&json!({})));
        assert_eq!(unknown.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(
            unknown.message,
            "method not found: `tools/run` is not a method this server answers"
        );
        // Removed in `2026-07-28` (and `initialize` stateless): not found,
        // as the protocol asks, whatever their params.
        for method in [
            "tasks/list",
            "tasks/result",
            "initialize",
            "logging/setLevel",
        ] {
            for params in [None, Some(json!({})), Some(json!({"taskId": 5}))] {
                let answered = answer(method, params.as_ref());
                assert_eq!(answered.code, ErrorCode::METHOD_NOT_FOUND, "{method}");
            }
        }
        // Params of the right shape that rmcp still could not read.
        assert_eq!(
            answer("tools/call", Some(&json!({"name": "echo"}))).code,
            ErrorCode::METHOD_NOT_FOUND
        );
    }
}
