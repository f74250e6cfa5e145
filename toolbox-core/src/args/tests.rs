//! The argument intake: both forms, the error paths, the limits.

use super::*;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Filters {
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Search {
    query: String,
    filters: Filters,
}

fn both<T: DeserializeOwned>(value: Value) -> (String, String) {
    let text = value.to_string();
    let a = Arguments::from(&value)
        .deserialize::<T>()
        .err()
        .unwrap()
        .to_string();
    let b = Arguments::Text(&text)
        .deserialize::<T>()
        .err()
        .unwrap()
        .to_string();
    (a, b)
}

#[test]
fn errors_name_the_path_the_value_and_the_expectation() {
    let (a, b) = both::<Search>(json!({"query": "q", "filters": {"tags": ["a", 3]}}));
    assert_eq!(
        a,
        "invalid arguments at `filters.tags[1]`: got `3`, expected a string"
    );
    assert_eq!(a, b);
    let (a, b) = both::<Search>(json!({"filters": {"tags": []}}));
    assert_eq!(a, "invalid arguments: missing field `query`");
    assert_eq!(a, b);
    let (a, b) = both::<Search>(json!({"query": "q", "filters": {"tags": []}, "x": 1}));
    assert_eq!(
        a,
        "invalid arguments at `x`: unknown field `x`, expected `query` or `filters`"
    );
    assert_eq!(a, b);
    let (a, b) = both::<Search>(json!({"query": null, "filters": {"tags": []}}));
    assert_eq!(
        a,
        "invalid arguments at `query`: `null` is not allowed here; expected a string"
    );
    assert_eq!(a, b);
}

#[test]
fn numbers_speak_json() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct N {
        n: u32,
        small: Option<u8>,
        x: Option<f64>,
    }
    let (a, b) = both::<N>(json!({"n": -1}));
    assert_eq!(
        a,
        "invalid arguments at `n`: got `-1`, expected an integer from 0 to 4294967295"
    );
    assert_eq!(a, b);
    let (a, _) = both::<N>(json!({"n": 1.5}));
    assert_eq!(
        a,
        "invalid arguments at `n`: got `1.5`, expected an integer from 0 to 4294967295"
    );
    let (a, _) = both::<N>(json!({"n": 1, "small": 300}));
    assert_eq!(
        a,
        "invalid arguments at `small`: got `300`, expected an integer from 0 to 255"
    );
    let (a, _) = both::<N>(json!({"n": 1, "x": "fast"}));
    assert_eq!(
        a,
        "invalid arguments at `x`: got the string \"fast\", expected a number"
    );
}

#[test]
fn text_forms_are_tolerated() {
    #[derive(Debug, Deserialize, PartialEq, Default)]
    #[serde(default)]
    struct Opt {
        a: Option<i64>,
    }
    for text in ["", "  ", "null", "{}", "\"{}\"", " {\"a\": null} "] {
        assert_eq!(
            Arguments::Text(text).deserialize::<Opt>().unwrap(),
            Opt::default(),
            "{text:?}"
        );
    }
    assert_eq!(
        Arguments::Text("\"{\\\"a\\\":1}\"")
            .deserialize::<Opt>()
            .unwrap(),
        Opt { a: Some(1) }
    );
    assert_eq!(
        Arguments::Text("{\"a\":").deserialize::<Opt>().unwrap_err().to_string(),
        "invalid arguments: the arguments are not valid JSON (EOF while parsing a value at line 1 column 5); send a JSON object"
    );
    assert_eq!(
        Arguments::Text("7")
            .deserialize::<Opt>()
            .unwrap_err()
            .to_string(),
        "invalid arguments: expected a JSON object of arguments, got `7`"
    );
    assert_eq!(
        Arguments::Text("[1]")
            .deserialize::<Opt>()
            .unwrap_err()
            .to_string(),
        "invalid arguments: expected a JSON object of arguments, got an array of 1 item"
    );
    // Triple encoding is not unambiguous any more: refused.
    let triple = serde_json::to_string(&serde_json::to_string(&"{}").unwrap()).unwrap();
    assert!(Arguments::Text(&triple).deserialize::<Opt>().is_err());
    assert!(Arguments::Text(&triple).to_value().is_err());
    assert_eq!(
        *Arguments::Text("\"{\\\"a\\\":1}\"").to_value().unwrap(),
        json!({"a": 1})
    );
}

#[test]
fn duplicate_keys_in_text_are_refused_as_from_str_does() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct A {
        a: i64,
    }
    assert_eq!(
        Arguments::Text(r#"{"a": 1, "a": 2}"#)
            .deserialize::<A>()
            .unwrap_err()
            .to_string(),
        "invalid arguments: duplicate field `a`"
    );
}

/// `{"v": [[…[1]…]]}` with `levels` arrays, built without recursion.
fn nested(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    let mut map = Map::new();
    map.insert("v".to_owned(), value);
    Value::Object(map)
}

/// Drops a [`nested`] value without recursing (dropping a deep value
/// recurses too).
fn unwind(mut object: Value) {
    let mut next = object["v"].take();
    while let Value::Array(mut items) = next {
        next = items.pop().unwrap_or(Value::Null);
    }
}

#[test]
fn deep_values_are_refused_not_overflowed() {
    let object = nested(100_000);
    let error = Arguments::from(&object).deserialize::<Value>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid arguments: the arguments nest deeper than 128 levels"
    );
    unwind(object);
}

#[test]
fn depth_is_checked_as_a_tool_reads() {
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Holds {
        v: Value,
    }
    // The object and 127 arrays in it: as deep as a value may nest
    // (text, as serde_json's parser, one level less).
    let deepest = nested(127);
    assert!(Arguments::from(&deepest)
        .deserialize_tool::<Holds>()
        .is_ok());
    let text = nested(126).to_string();
    assert!(Arguments::Text(&text).deserialize_tool::<Holds>().is_ok());
    assert!(serde_json::from_str::<Value>(&deepest.to_string()).is_err());
    for arguments in [nested(128), nested(10_000)] {
        let error = Arguments::from(&arguments)
            .deserialize_tool::<Holds>()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid arguments: the arguments nest deeper than 128 levels"
        );
        unwind(arguments);
    }
}

/// Parts of a value the read does not enter (a skipped field, raw
/// text, an enum's content object) count as the rest: a value of 128
/// levels is read, one of 129 refused, as the walk before the read
/// used to decide.
#[test]
fn depth_counts_what_the_read_does_not_enter() {
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Skips {
        a: i64,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Raw {
        v: Box<serde_json::value::RawValue>,
    }
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Wrapped {
        W(Value),
    }
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Holds {
        v: Wrapped,
    }
    let refused = "invalid arguments: the arguments nest deeper than 128 levels";
    for arrays in [127, 128] {
        let deepest = arrays == 127;
        let mut skipped = nested(arrays);
        skipped["a"] = json!(1);
        let skipped_result = Arguments::from(&skipped).deserialize_tool::<Skips>();
        let raw_result = Arguments::from(&skipped).deserialize::<Raw>();
        // `{"v": {"W": [[…]]}}`: the enum's object is a level.
        let mut enum_value = nested(arrays - 1);
        enum_value["v"] = json!({"W": enum_value["v"].take()});
        let enum_result = Arguments::from(&enum_value).deserialize_tool::<Holds>();
        if deepest {
            assert_eq!(skipped_result.unwrap().a, 1);
            assert!(raw_result.is_ok());
            assert!(enum_result.is_ok());
        } else {
            assert_eq!(skipped_result.unwrap_err().to_string(), refused);
            assert_eq!(raw_result.unwrap_err().to_string(), refused);
            assert_eq!(enum_result.unwrap_err().to_string(), refused);
        }
    }
    // An empty array counts as a level too, and so does each enum's
    // object.
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Chain {
        End(Vec<i64>),
        Next(Box<Chain>),
    }
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Empty {
        v: Option<Value>,
        chain: Option<Chain>,
    }
    for arrays in [127, 128] {
        let mut value = nested(arrays - 1);
        let mut innermost = &mut value["v"];
        while let Value::Array(items) = innermost {
            innermost = &mut items[0];
        }
        *innermost = json!([]);
        let result = Arguments::from(&value).deserialize_tool::<Empty>();
        match arrays {
            127 => assert!(result.is_ok(), "{result:?}"),
            _ => assert_eq!(result.unwrap_err().to_string(), refused),
        }
    }
    // `{"chain": {"Next": … {"End": []}}}`: the object, one level per
    // `Next`, `End`'s object and its `[]`.
    for links in [125, 126] {
        let mut chain = json!({"End": []});
        for _ in 0..links {
            chain = json!({ "Next": chain });
        }
        let value = json!({ "chain": chain });
        let result = Arguments::from(&value).deserialize_tool::<Empty>();
        assert_eq!(too_deep(&value), links == 126);
        match links {
            125 => assert!(result.is_ok(), "{result:?}"),
            _ => assert_eq!(result.unwrap_err().to_string(), refused),
        }
    }
    // The count starts again at each read, whatever a refused one
    // left.
    assert_eq!(
        Arguments::from(&json!({"a": 2}))
            .deserialize_tool::<Skips>()
            .unwrap()
            .a,
        2
    );
}

#[test]
fn a_huge_input_is_echoed_cut() {
    let error = Arguments::from(&json!({"query": "x".repeat(10_000_000), "filters": 1}))
        .deserialize::<Search>()
        .unwrap_err()
        .to_string();
    assert!(error.len() < 600, "{}", error.len());
}

/// JSON that serde_json's parser refuses for one of its limits is not
/// called invalid JSON: nesting too deep, a number out of range and a lone
/// surrogate are said as such, the last two where they are (one walk of
/// the text, also through a million digits).
#[test]
fn json_past_a_parser_limit_is_said_as_such() {
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Forecast {
        days: Option<f64>,
        city: Option<String>,
        v: Option<Value>,
    }
    let range = "the number is out of range; send a number of smaller magnitude";
    let lone = "the string has a lone surrogate escape (`\\uD800` to `\\uDFFF` without its pair); \
                strings must be well-formed Unicode text";
    let lone_key = "a key has a lone surrogate escape (`\\uD800` to `\\uDFFF` without its pair); \
                    keys must be well-formed Unicode text";
    let digits = format!(r#"{{"days": 1{}}}"#, "0".repeat(1_000_000));
    let float = format!(r#"{{"days": 1{}.5}}"#, "0".repeat(400));
    let deep = nested(200).to_string();
    let cases = [
        (
            r#"{"days": 1e999999}"#,
            format!("invalid arguments at `days`: {range}"),
        ),
        (&digits, format!("invalid arguments at `days`: {range}")),
        (&float, format!("invalid arguments at `days`: {range}")),
        (
            r#"{"v": [1, {"y": -1e999}]}"#,
            format!("invalid arguments at `v[1].y`: {range}"),
        ),
        (
            &deep,
            "invalid arguments: the arguments nest deeper than 128 levels".to_owned(),
        ),
        (
            r#"{"city": "\ud800"}"#,
            format!("invalid arguments at `city`: {lone}"),
        ),
        (
            r#"{"city": "Oslo \udc00"}"#,
            format!("invalid arguments at `city`: {lone}"),
        ),
        (
            r#"{"city": "\ud800\u0041"}"#,
            format!("invalid arguments at `city`: {lone}"),
        ),
        (
            r#"{"v": {"ok": [1], "w": {}, "\ud800": 1}}"#,
            format!("invalid arguments at `v`: {lone_key}"),
        ),
        (r#"{"\ud800": 1}"#, format!("invalid arguments: {lone_key}")),
        (
            r#"{"v": {"w": {"x": 1}}, "city": "\ud800"}"#,
            format!("invalid arguments at `city`: {lone}"),
        ),
        // Double-encoded: the path is in the arguments the string holds.
        (
            r#""{\"city\": \"\\ud800\"}""#,
            format!("invalid arguments at `city`: {lone}"),
        ),
        (
            r#"["\ud800"]"#,
            format!("invalid arguments at `[0]`: {lone}"),
        ),
    ];
    for (text, expected) in &cases {
        let arguments = Arguments::Text(text);
        let errors = [
            arguments.deserialize::<Forecast>().unwrap_err(),
            arguments.deserialize_tool::<Forecast>().unwrap_err(),
            arguments.to_value().unwrap_err(),
        ];
        for error in errors {
            assert_eq!(&error.to_string(), expected, "{text:.60}");
        }
    }
    // Cut short, it is not JSON.
    assert_eq!(
        Arguments::Text(r#"{"city": "\ud800"#)
            .deserialize::<Forecast>()
            .unwrap_err()
            .to_string(),
        "invalid arguments: the arguments are not valid JSON (EOF while parsing a string at line 1 column 16); send a JSON object"
    );
}

/// JSON the text reader refuses only for the type read (an `f32` or `u128`
/// out of range, a map key that is not a number) is not called invalid
/// JSON either, and is said where it is.
#[test]
fn json_refused_for_the_type_read_is_said_where() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Narrow {
        small: Option<f32>,
        wide: Option<u128>,
        counts: Option<std::collections::HashMap<u8, u8>>,
    }
    let range = "the number is out of range; send a number of smaller magnitude";
    let cases = [
        (
            r#"{"small": 1e39}"#.to_owned(),
            format!("invalid arguments at `small`: {range}"),
        ),
        (
            format!(r#"{{"wide": 1{}}}"#, "0".repeat(60)),
            format!("invalid arguments at `wide`: {range}"),
        ),
        (
            r#"{"counts": {"x": 1}}"#.to_owned(),
            "invalid arguments at `counts.x`: invalid value: expected key to be a number in quotes"
                .to_owned(),
        ),
    ];
    for (text, expected) in &cases {
        let error = Arguments::Text(text).deserialize::<Narrow>().unwrap_err();
        assert_eq!(&error.to_string(), expected, "{text}");
    }
}
