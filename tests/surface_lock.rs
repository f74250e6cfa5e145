//! `compare_surfaces` and the surface lock: every change a client can
//! notice, classed as breaking or compatible, with nothing reported where
//! nothing a client sends or reads changed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::testing::{assert_surface_lock, compare_surfaces};
use toolbox::ToolAnnotations;
use toolbox::ToolSpecification;

fn args(schema: Value) -> ToolSpecification {
    ToolSpecification::new("t", "A tool").with_parameters(schema)
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn changes(old: &[ToolSpecification], new: &[ToolSpecification]) -> Vec<String> {
    compare_surfaces(old, new)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn one(old: ToolSpecification, new: ToolSpecification) -> Vec<String> {
    changes(&[old], &[new])
}

#[test]
fn each_kind_of_change_is_classed() {
    let q = || object(json!({"q": {"type": "string"}}), &["q"]);
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        ("nothing changed", one(args(q()), args(q())), vec![]),
        ("tool removed", changes(&[args(q())], &[]), vec!["breaking: tool `t`: the tool was removed (or renamed)"]),
        ("tool added", changes(&[], &[args(q())]), vec!["compatible: tool `t`: a tool was added"]),
        (
            "tool renamed",
            changes(&[args(q())], &[ToolSpecification::new("u", "A tool").with_parameters(q())]),
            vec!["breaking: tool `t`: the tool was removed (or renamed)", "compatible: tool `u`: a tool was added"],
        ),
        (
            "argument removed",
            one(args(object(json!({"q": {"type": "string"}, "n": {"type": "integer"}}), &["q"])), args(q())),
            vec!["breaking: tool `t`, `n`: the argument was removed (or renamed)"],
        ),
        (
            "argument renamed",
            one(args(q()), args(object(json!({"query": {"type": "string"}}), &["query"]))),
            vec![
                "breaking: tool `t`, `q`: the argument was removed (or renamed)",
                "breaking: tool `t`, `query`: a required argument was added",
            ],
        ),
        (
            "optional argument added",
            one(args(q()), args(object(json!({"q": {"type": "string"}, "n": {"type": "integer"}}), &["q"]))),
            vec!["compatible: tool `t`, `n`: an optional argument was added"],
        ),
        (
            "required argument added",
            one(args(q()), args(object(json!({"q": {"type": "string"}, "n": {"type": "integer"}}), &["q", "n"]))),
            vec!["breaking: tool `t`, `n`: a required argument was added"],
        ),
        (
            "optional made required",
            one(args(object(json!({"q": {"type": "string"}}), &[])), args(q())),
            vec!["breaking: tool `t`, `q`: an optional argument was made required"],
        ),
        (
            "required made optional",
            one(args(q()), args(object(json!({"q": {"type": "string"}}), &[]))),
            vec!["compatible: tool `t`, `q`: a required argument was made optional"],
        ),
        (
            "number narrowed to integer",
            one(args(object(json!({"n": {"type": "number"}}), &["n"])), args(object(json!({"n": {"type": "integer"}}), &["n"]))),
            vec!["breaking: tool `t`, `n`: the type was narrowed from `number` to `integer`"],
        ),
        (
            "integer widened to number",
            one(args(object(json!({"n": {"type": "integer"}}), &["n"])), args(object(json!({"n": {"type": "number"}}), &["n"]))),
            vec!["compatible: tool `t`, `n`: the type was widened from `integer` to `number`"],
        ),
        (
            "Option removed (anyOf null)",
            one(
                args(object(json!({"f": {"anyOf": [{"$ref": "#/$defs/F"}, {"type": "null"}]}}), &[]))
                    .with_parameters(json!({"type": "object", "properties": {"f": {"anyOf": [{"$ref": "#/$defs/F"}, {"type": "null"}]}},
                        "$defs": {"F": {"type": "object", "properties": {"x": {"type": "boolean"}}}}})),
                args(json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/F"}},
                    "$defs": {"F": {"type": "object", "properties": {"x": {"type": "boolean"}}}}})),
            ),
            vec!["breaking: tool `t`, `f`: the value may no longer be `null`"],
        ),
        (
            "Option added (type array)",
            one(args(object(json!({"n": {"type": "integer"}}), &["n"])), args(object(json!({"n": {"type": ["integer", "null"]}}), &["n"]))),
            vec!["compatible: tool `t`, `n`: the value may now be `null`"],
        ),
        (
            "enum value removed",
            one(
                args(object(json!({"u": {"type": "string", "enum": ["c", "f", "k"]}}), &["u"])),
                args(object(json!({"u": {"type": "string", "enum": ["c", "f"]}}), &["u"])),
            ),
            vec!["breaking: tool `t`, `u`: the value \"k\" was removed"],
        ),
        (
            "enum value added",
            one(
                args(object(json!({"u": {"type": "string", "enum": ["c"]}}), &["u"])),
                args(object(json!({"u": {"type": "string", "enum": ["c", "f"]}}), &["u"])),
            ),
            vec!["compatible: tool `t`, `u`: the value \"f\" was added"],
        ),
        (
            "object closed",
            one(args(q()), args(json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false}))),
            vec!["breaking: tool `t`: the object was closed (`additionalProperties: false`): undeclared keys are refused"],
        ),
        (
            "object opened",
            one(args(json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false})), args(q())),
            vec!["compatible: tool `t`: the object was opened to undeclared keys"],
        ),
        (
            "nested argument narrowed, through $ref",
            one(
                args(json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/Filter"}}, "required": ["f"],
                    "$defs": {"Filter": {"type": "object", "properties": {"limit": {"type": "number"}}}}})),
                args(json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/Filter"}}, "required": ["f"],
                    "$defs": {"Filter": {"type": "object", "properties": {"limit": {"type": "integer"}}}}})),
            ),
            vec!["breaking: tool `t`, `f.limit`: the type was narrowed from `number` to `integer`"],
        ),
        (
            "nested argument added inside an array",
            one(
                args(object(json!({"items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}), &["items"])),
                args(object(json!({"items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b"]}}}), &["items"])),
            ),
            vec!["breaking: tool `t`, `items[].b`: a required argument was added"],
        ),
        (
            "renamed $defs change nothing",
            one(
                args(json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/Filter"}}, "$defs": {"Filter": {"type": "object", "properties": {"x": {"type": "string"}}}}})),
                args(json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/SearchFilter"}}, "$defs": {"SearchFilter": {"type": "object", "properties": {"x": {"type": "string"}}}}})),
            ),
            vec![],
        ),
        (
            "a $ref inlined changes nothing",
            one(
                args(json!({"type": "object", "properties": {"f": {"$ref": "#/$defs/F"}}, "$defs": {"F": {"type": "string"}}})),
                args(json!({"type": "object", "properties": {"f": {"type": "string"}}})),
            ),
            vec![],
        ),
        (
            "description changed",
            one(ToolSpecification::new("t", "Old words").with_parameters(q()), ToolSpecification::new("t", "New words").with_parameters(q())),
            vec!["compatible: tool `t`: the description changed"],
        ),
        (
            "argument description changed",
            one(
                args(object(json!({"q": {"type": "string", "description": "a"}}), &["q"])),
                args(object(json!({"q": {"type": "string", "description": "b"}}), &["q"])),
            ),
            vec!["compatible: tool `t`, `q`: the description changed"],
        ),
        (
            "title changed",
            one(args(q()), args(q()).with_title("Search")),
            vec!["compatible: tool `t`: the title changed"],
        ),
        (
            "read_only dropped",
            one(args(q()).with_annotations(ToolAnnotations { read_only: Some(true), ..Default::default() }), args(q())),
            vec!["breaking: tool `t`: the `read_only` effect was dropped"],
        ),
        (
            "destructive added",
            one(args(q()), args(q()).with_annotations(ToolAnnotations { destructive: Some(true), ..Default::default() })),
            vec!["breaking: tool `t`: the `destructive` effect was added"],
        ),
        (
            "read_only added",
            one(args(q()), args(q()).with_annotations(ToolAnnotations { read_only: Some(true), ..Default::default() })),
            vec!["compatible: tool `t`: the `read_only` effect was added"],
        ),
        (
            "output field removed",
            one(
                args(q()).with_output_schema(object(json!({"temp": {"type": "number"}, "city": {"type": "string"}}), &["temp", "city"])),
                args(q()).with_output_schema(object(json!({"temp": {"type": "number"}}), &["temp"])),
            ),
            vec!["breaking: tool `t`, `output.city`: the field was removed from the result"],
        ),
        (
            "output field added",
            one(
                args(q()).with_output_schema(object(json!({"temp": {"type": "number"}}), &["temp"])),
                args(q()).with_output_schema(object(json!({"temp": {"type": "number"}, "city": {"type": "string"}}), &["temp", "city"])),
            ),
            vec!["compatible: tool `t`, `output.city`: a field was added to the result"],
        ),
        (
            "output type widened",
            one(
                args(q()).with_output_schema(object(json!({"temp": {"type": "integer"}}), &["temp"])),
                args(q()).with_output_schema(object(json!({"temp": {"type": "number"}}), &["temp"])),
            ),
            vec!["breaking: tool `t`, `output.temp`: the type was widened from `integer` to `number`"],
        ),
        (
            "tagged variant removed",
            one(
                args(object(json!({"p": {"oneOf": [
                    {"type": "object", "properties": {"op": {"const": "set"}}, "required": ["op"]},
                    {"type": "object", "properties": {"op": {"const": "clear"}}, "required": ["op"]}
                ]}}), &["p"])),
                args(object(json!({"p": {"oneOf": [
                    {"type": "object", "properties": {"op": {"const": "set"}}, "required": ["op"]}
                ]}}), &["p"])),
            ),
            vec!["breaking: tool `t`, `p`: the variant `op=\"clear\"` was removed"],
        ),
        (
            "minimum raised",
            one(
                args(object(json!({"n": {"type": "integer", "minimum": 0}}), &["n"])),
                args(object(json!({"n": {"type": "integer", "minimum": 1}}), &["n"])),
            ),
            vec!["breaking: tool `t`, `n`: `minimum` changed from 0 to 1"],
        ),
    ];
    assert!(cases.len() >= 25, "{}", cases.len());
    for (name, got, want) in cases {
        assert_eq!(got, want, "{name}");
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Lookup {
    id: u32,
    verbose: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct LookupV2 {
    id: u32,
    verbose: Option<bool>,
    /// How many, at most.
    limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
struct Found {
    name: String,
}

fn v1() -> FnToolBox {
    FnToolBox::new([
        tool_fn("lookup", "Looks up", |_: Lookup| async { "x" }).output_schema::<Found>()
    ])
    .unwrap()
}

fn v2() -> FnToolBox {
    FnToolBox::new([
        tool_fn("lookup", "Looks up", |_: LookupV2| async { "x" }).output_schema::<Found>()
    ])
    .unwrap()
}

/// The schemars output of two versions of a Rust type: an `Option` field
/// added is compatible, the same type twice is no change at all.
#[test]
fn schemars_types_compare_as_their_json() {
    let (a, b) = (
        v1().specifications(&Context::new()),
        v2().specifications(&Context::new()),
    );
    assert_eq!(compare_surfaces(&a, &a), []);
    assert_eq!(
        changes(&a, &b),
        ["compatible: tool `lookup`, `limit`: an optional argument was added"]
    );
    assert_eq!(
        changes(&b, &a),
        ["breaking: tool `lookup`, `limit`: the argument was removed (or renamed)"]
    );
}

#[test]
fn the_lock_fails_with_each_change_and_its_class() {
    let dir = std::env::temp_dir().join(format!("toolbox-lock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tools.lock.json");
    let lock = json!({"tools": v2().specifications(&Context::new())});
    std::fs::write(&path, serde_json::to_string_pretty(&lock).unwrap()).unwrap();
    assert_surface_lock(&v2(), &path);
    let failure = std::panic::catch_unwind(|| assert_surface_lock(&v1(), &path)).unwrap_err();
    let message = failure.downcast_ref::<String>().unwrap();
    assert!(
        message.contains(": 1 breaking, 0 compatible change(s)\n"),
        "{message}"
    );
    assert!(
        message.contains(
            "  - breaking: tool `lookup`, `limit`: the argument was removed (or renamed)\n"
        ),
        "{message}"
    );
    assert!(message.ends_with("rerun with TOOLBOX_UPDATE_SNAPSHOTS=1 to accept them (a breaking change breaks every client that calls the tools as they are now)"), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}
