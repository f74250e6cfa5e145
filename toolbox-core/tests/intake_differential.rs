//! The intake's one deserializer against serde_json, form by form: for
//! random argument text (odd numbers, escapes, duplicate keys, numeric and
//! boolean map keys, every enum representation, skipped fields, raw
//! values, broken syntax), `Arguments::Text` accepts exactly what
//! `serde_json::from_str` accepts and reads the same value, and
//! `Arguments::Value` exactly what `T::deserialize(&Value)` does; where
//! a value is refused, the error names the path `serde_path_to_error`
//! names.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use toolbox_core::args::JsonPath;
use toolbox_core::{Arguments, ToolError};

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
enum Ext {
    Unit,
    New(u8),
    Tup(i32, bool),
    Rec { a: u16 },
}

#[derive(Debug, Deserialize)]
#[serde(tag = "t")]
#[allow(dead_code)]
enum Int {
    A { x: u8 },
    B,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "t", content = "c")]
#[allow(dead_code)]
enum Adj {
    A(u8),
    B,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Unt {
    N(i64),
    S(String),
    L(Vec<u8>),
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Inner {
    x: u8,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    x: Option<i8>,
    y: Option<Vec<Ext>>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Big {
    a: Option<u8>,
    b: Option<i64>,
    c: Option<f64>,
    d: Option<f32>,
    e: Option<u128>,
    f: Option<i128>,
    g: Option<bool>,
    h: Option<String>,
    i: Option<Vec<u32>>,
    j: Option<(u8, String)>,
    k: Option<BTreeMap<u32, bool>>,
    l: Option<BTreeMap<String, i8>>,
    m: Option<Ext>,
    n: Option<Int>,
    o: Option<Adj>,
    p: Option<Unt>,
    q: Option<char>,
    r: Option<()>,
    s: Option<Box<RawValue>>,
    t: Option<BTreeMap<bool, u8>>,
    u: Option<BTreeMap<i64, u8>>,
    v: Option<Inner>,
    w: Option<Strict>,
    x: Option<BTreeMap<i128, u8>>,
    z: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Flat {
    a: Option<u8>,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
}

const KEYS: &[&str] = &[
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "t",
    "c",
    "A",
    "B",
    "Unit",
    "New",
    "Tup",
    "Rec",
    "1",
    "-1",
    "0",
    "01",
    "1.5",
    "1e2",
    " 1",
    "true",
    "false",
    "tru",
    "\\u0031",
    "\\u0061",
    "\\ud800",
    "\\n",
    "18446744073709551616",
    "170141183460469231731687303715884105727",
    "-1e2",
    "",
];

const ATOMS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "7",
    "255",
    "256",
    "-129",
    "1.0",
    "1.5",
    "-2.5e3",
    "1e2",
    "1E-2",
    "65536",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456",
    "1e400",
    "3.4028236e38",
    "0.1",
    "01",
    "1.",
    "-",
    "1e",
    "true",
    "false",
    "null",
    "tru",
    "nul",
    "\"\"",
    "\"x\"",
    "\"ab\"",
    "\"\\u0061\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud800\"",
    "\"a\\nb\"",
    "\"\\q\"",
    "\"Unit\"",
    "\"New\"",
    "\"B\"",
    "\"A\"",
    "\"é\"",
    "[]",
    "{}",
    "[1,2]",
    "[1,]",
    "{,}",
    "NaN",
];

/// Random argument text, mostly well formed.
fn text_value() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(ATOMS).prop_map(str::to_owned);
    atom.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|items| format!("[{}]", items.join(","))),
            (
                prop::collection::vec((prop::sample::select(KEYS), inner), 0..4),
                any::<u8>()
            )
                .prop_map(|(entries, style)| object(&entries, style)),
        ]
    })
}

fn object(entries: &[(&str, String)], style: u8) -> String {
    let space = if style & 1 == 1 { " " } else { "" };
    let body: Vec<String> = entries
        .iter()
        .map(|(key, value)| format!("{space}\"{key}\"{space}:{space}{value}"))
        .collect();
    let comma = if style == 255 { "," } else { "" };
    format!("{{{}{comma}{space}}}", body.join(","))
}

fn arguments() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((prop::sample::select(KEYS), text_value()), 0..6),
        any::<u8>(),
    )
        .prop_map(|(entries, style)| object(&entries, style))
}

fn path_of(error: &serde_path_to_error::Path) -> String {
    let mut path = JsonPath::root();
    for segment in error.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => path.push_index(*index),
            serde_path_to_error::Segment::Map { key }
            | serde_path_to_error::Segment::Enum { variant: key } => path.push_key(key.as_str()),
            serde_path_to_error::Segment::Unknown => path.push_unknown(),
        }
    }
    path.to_string()
}

fn agree<T: serde::de::DeserializeOwned + std::fmt::Debug>(
    text: &str,
) -> Result<(), TestCaseError> {
    let ours = Arguments::Text(text).deserialize::<T>();
    let theirs = serde_json::from_str::<T>(text);
    prop_assert_eq!(
        ours.as_ref().map(|v| format!("{v:?}")).ok(),
        theirs.as_ref().map(|v| format!("{v:?}")).ok(),
        "text {} -> ours {:?}, serde_json {:?}",
        text,
        ours.as_ref().err(),
        theirs.as_ref().err()
    );
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let ours = Arguments::Value(&value).deserialize::<T>();
        let theirs = serde_path_to_error::deserialize::<_, T>(&value);
        prop_assert_eq!(
            ours.as_ref().map(|v| format!("{v:?}")).ok(),
            theirs.as_ref().map(|v| format!("{v:?}")).ok(),
            "value {} -> ours {:?}, serde_json {:?}",
            text,
            ours.as_ref().err(),
            theirs.as_ref().err()
        );
        // (Past an `i128` key written as a fraction serde_json's path names
        // the integer part it read; ours cannot name the key.)
        if let (Err(ToolError::InvalidArguments { path, .. }), Err(theirs)) = (&ours, &theirs) {
            let expected = path_of(theirs.path());
            if !expected.starts_with("x.") {
                prop_assert_eq!(path, &expected, "value {}", text);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    #[test]
    fn text_and_value_read_as_serde_json_reads_them(text in arguments()) {
        agree::<Big>(&text)?;
        agree::<Flat>(&text)?;
        agree::<Strict>(&text)?;
        agree::<BTreeMap<String, Unt>>(&text)?;
    }
}

#[test]
fn corner_cases() {
    for text in [
        r#"{"k": {"1": true, "2": false}}"#,
        r#"{"k": {"\u0031": true}}"#,
        r#"{"k": {" 1": true}}"#,
        r#"{"t": {"true": 1, "false": 2}}"#,
        r#"{"t": {"tru": 1}}"#,
        r#"{"t": {"yes": 1}}"#,
        r#"{"u": {"-1": 1, "007": 2}}"#,
        r#"{"e": 340282366920938463463374607431768211455}"#,
        r#"{"f": -170141183460469231731687303715884105728}"#,
        r#"{"d": 3.4028236e38}"#,
        r#"{"d": 0.1}"#,
        r#"{"s": [1, {"a": "\u00e9"}]}"#,
        r#"{"v": {"x": 1, "skip": "\ud800"}}"#,
        r#"{"v": {"x": 1, "skip": [1, {"q": 01}]}}"#,
        r#"{"j": [1, "a", 3]}"#,
        r#"{"j": [1]}"#,
        r#"{"m": {"Tup": [1, true]}}"#,
        r#"{"m": {"Tup": [1, true], "Unit": null}}"#,
        r#"{"m": 5}"#,
        r#"{"m": {"Unit": 5}}"#,
        r#"{"m": {"Rec": {"a": -1}}}"#,
        r#"{"n": {"t": "A", "x": 300}}"#,
        r#"{"a": 1, "a": 2}"#,
        r#"{"w": {"x": 1, "x": 2}}"#,
        r#"{"a": 1,}"#,
        r#"{"a": -0}"#,
        r#"{"c": -0}"#,
        r#"{"q": "ab"}"#,
        r#"{"r": null}"#,
    ] {
        agree::<Big>(text).unwrap();
    }
    // A key given twice, a value of it before the last not valid:
    // serde_json refuses the text, whose `Value` keeps the last value only.
    for text in [
        r#"{"y":[0],"y":[]}"#,
        r#"{"y":[0],"y":null}"#,
        r#"{"x":1,"y":["Unit",7],"y":[]}"#,
        r#"{"y":[],"y":[]}"#,
    ] {
        agree::<Strict>(text).unwrap();
    }
    let error = Arguments::Text(r#"{"x": 1, "y": [0], "y": []}"#)
        .deserialize::<Strict>()
        .unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { path, reason }
            if path == "y" && reason.contains("given more than once")),
        "{error:?}"
    );
}
