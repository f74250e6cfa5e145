//! The dialect validators: every schema this suite's kinds of tools emit is
//! inside every provider's rules once lowered, and each rule is caught when
//! broken. Plus the `toolbox::testing` helpers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::provider::{lower, validate, Dialect, Provider};
use toolbox::testing::{assert_schema_snapshot, check_surface, ToolHarness};
use toolbox::EmptyToolBox;
use toolbox::ToolSpecification;

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy)]
enum Units {
    Celsius,
    Fahrenheit,
}

/// A place on the map.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Place {
    /// Latitude in degrees.
    lat: f64,
    lon: f64,
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Action {
    Stop,
    Say(String),
    Move { x: i32, y: i32 },
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    city: String,
    temp: f64,
}

/// Search parameters.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SearchParams {
    /// What to look for.
    query: String,
    limit: Option<u32>,
    filters: Option<Filters>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Filters {
    tags: Vec<String>,
    since: Option<String>,
}

struct Zoo;

/// Every kind of parameter the suite's tools use.
#[tool_box(register = false)]
impl Zoo {
    /// Gets the weather.
    #[tool(read_only)]
    async fn get_weather(
        &self,
        ctx: &Context,
        /// The city.
        city: String,
        /// Units; Celsius when absent.
        units: Option<Units>,
    ) -> Result<Forecast, String> {
        let _ = (ctx, units);
        Ok(Forecast { city, temp: 20.0 })
    }

    /// Every parameter kind.
    #[tool]
    fn kinds(
        &self,
        text: String,
        count: i32,
        big: u64,
        small: u8,
        ratio: f32,
        flag: bool,
        maybe: Option<String>,
        tags: Vec<String>,
        nested: Vec<Vec<i64>>,
        place: Place,
        maybe_place: Option<Place>,
        units: Units,
        shape: Shape,
        action: Action,
        letter: char,
        #[arg(rename = "type")] kind: String,
        #[arg(default)] page: u32,
        #[arg(default = 25, description = "Page size")] size: u32,
    ) -> String {
        let _ = (
            text,
            count,
            big,
            small,
            ratio,
            flag,
            maybe,
            tags,
            nested,
            place,
            maybe_place,
        );
        let _ = (units, shape, action, letter, kind, page, size);
        String::new()
    }

    /// Searches with one argument object.
    #[tool]
    fn search(&self, #[args] params: SearchParams) -> Vec<String> {
        vec![params.query]
    }

    /// Takes nothing.
    #[tool(destructive)]
    fn wipe(&self) {}
}

fn zoo_surface() -> MultiToolBox {
    #[derive(Deserialize, JsonSchema)]
    struct Pair {
        a: i64,
        b: i64,
    }
    let closures = FnToolBox::new([
        tool_fn("add", "Adds", |p: Pair| async move { p.a + p.b }),
        tool_fn("noop", "Nothing", |_: ()| async {}),
    ])
    .unwrap();
    let registry = Registry::new();
    #[cfg(feature = "http-get")]
    registry.enable_http_get(Default::default()).unwrap();
    #[cfg(feature = "http-get")]
    let core = registry.resolve(["now", "http_get"]).unwrap();
    #[cfg(not(feature = "http-get"))]
    let core = registry.resolve(["now"]).unwrap();
    MultiToolBox::builder()
        .add("zoo", Zoo)
        .add("fn", closures)
        .add("core", core)
        .build()
        .unwrap()
}

const PROVIDERS: [Provider; 9] = [
    Provider::OpenAiChat { strict: true },
    Provider::OpenAiChat { strict: false },
    Provider::OpenAiResponses { strict: true },
    Provider::OpenAiResponses { strict: false },
    Provider::Anthropic { strict: true },
    Provider::Anthropic { strict: false },
    Provider::Gemini,
    Provider::GeminiLegacy,
    Provider::Mcp,
];

#[test]
fn every_schema_of_the_suite_is_inside_every_dialect() {
    let surface = zoo_surface();
    assert!(surface.specifications(&Context::new()).len() >= 7);
    for provider in PROVIDERS {
        let report = check_surface(&surface, provider);
        assert!(report.is_clean(), "{report}");
        // And each definition builds.
        provider
            .definitions(&surface.specifications(&Context::new()))
            .unwrap();
    }
}

fn violations(schema: Value, dialect: Dialect) -> Vec<String> {
    validate(&schema, dialect)
        .into_iter()
        .map(|v| format!("{}: {}", v.path, v.rule))
        .collect()
}

#[test]
fn the_openai_strict_validator_catches_each_rule() {
    let d = Dialect::OpenAiStrict;
    let open =
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
    assert_eq!(
        violations(open, d),
        [": OpenAI strict: every object must set `additionalProperties: false`"]
    );
    let optional = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": false});
    assert_eq!(violations(optional, d), ["a: OpenAI strict: every property must be listed in `required` (make optional ones nullable)"]);
    let no_properties = json!({"type": "object", "additionalProperties": false});
    assert_eq!(
        violations(no_properties, d),
        [": OpenAI strict: an object schema must have `properties` (use `{}`)"]
    );
    let keywords = json!({"type": "object", "additionalProperties": false, "required": ["a"], "properties": {
        "a": {"oneOf": [{"type": "string"}], "default": "x", "format": "uint32"}
    }});
    assert_eq!(
        violations(keywords, d),
        [
            "a.oneOf: OpenAI strict: `oneOf` is not permitted",
            "a.default: OpenAI strict: `default` is not permitted",
            "a.format: OpenAI strict: `uint32` is not a supported format"
        ]
    );
    let ref_sibling = json!({"type": "object", "additionalProperties": false, "required": ["a"], "properties": {
        "a": {"$ref": "#/$defs/A", "description": "x"}}, "$defs": {"A": {"type": "string"}}});
    assert_eq!(
        violations(ref_sibling, d),
        ["a: OpenAI strict: `$ref` cannot have sibling keywords"]
    );
    let map = json!({"type": "object", "additionalProperties": false, "required": ["m"], "properties": {
        "m": {"type": "object", "properties": {}, "required": [], "additionalProperties": {"type": "integer"}}}});
    assert_eq!(
        violations(map, d),
        [
            "m: OpenAI strict: every object must set `additionalProperties: false`",
            "m.additionalProperties: OpenAI strict: maps cannot be expressed"
        ]
    );
    assert_eq!(
        violations(json!({"type": "string"}), d),
        [": the root must be `\"type\": \"object\"`"]
    );
    let with_schema = json!({"$schema": "x", "type": "object", "properties": {}, "required": [], "additionalProperties": false});
    assert_eq!(
        violations(with_schema, d),
        ["$schema: `$schema` must be stripped"]
    );
}

#[test]
fn the_anthropic_strict_validator_catches_each_rule() {
    let d = Dialect::AnthropicStrict;
    let numeric = json!({"type": "object", "additionalProperties": false, "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 9}, "s": {"type": "string", "maxLength": 3, "format": "ip"},
        "l": {"type": "array", "items": {"type": "string"}, "minItems": 2}
    }});
    assert_eq!(
        violations(numeric, d),
        [
            "n.minimum: Anthropic strict: `minimum` is not supported",
            "n.maximum: Anthropic strict: `maximum` is not supported",
            "s.maxLength: Anthropic strict: `maxLength` is not supported",
            "s.format: Anthropic strict: `ip` is not a supported format",
            "l.minItems: Anthropic strict: `minItems` may only be 0 or 1"
        ]
    );
    let recursive = json!({"type": "object", "additionalProperties": false, "properties": {"tree": {"$ref": "#/$defs/Tree"}},
        "$defs": {"Tree": {"type": "object", "additionalProperties": false, "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}});
    assert!(violations(recursive, d)
        .iter()
        .any(|v| v.contains("recursive schemas are not supported")));
}

#[test]
fn the_gemini_validators_catch_each_rule() {
    let d = Dialect::GeminiParameters;
    let schema = json!({"type": "object", "properties": {
        "a": {"type": ["string", "null"]},
        "b": {"type": "integer", "enum": [1, 2]},
        "c": {"type": "array"},
        "d": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "x"},
        "e": {"type": "string", "const": "x"},
        "f": {"type": "integer", "format": "uint32"},
        "1bad": {"type": "string"}
    }, "additionalProperties": false});
    assert_eq!(
        violations(schema, d),
        [
            "additionalProperties: Gemini `parameters`: unknown key `additionalProperties`",
            "1bad: Gemini `parameters`: `1bad` is not a legal parameter name",
            "a.type: Gemini `parameters`: `type` must be a single value (use `nullable`)",
            "b.enum: Gemini `parameters`: `enum` is only allowed for strings",
            "c: Gemini `parameters`: an array needs `items`",
            "d: Gemini `parameters`: `anyOf` must be the only field set",
            "e.const: Gemini `parameters`: unknown key `const`",
            "f.format: Gemini `parameters`: format `uint32` is not supported for `integer`"
        ]
    );
    let json_schema = json!({"type": "object", "properties": {"t": {"prefixItems": [], "const": 1, "format": "uint8"}}});
    assert_eq!(
        violations(json_schema, Dialect::GeminiJsonSchema),
        [
            "t.const: Gemini `parametersJsonSchema`: `const` is outside the supported subset",
            "t.format: Gemini `parametersJsonSchema`: format `uint8` is undocumented"
        ]
    );
}

#[test]
fn lowering_moves_what_anthropic_cannot_check_into_the_description() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "description": "How many", "minimum": 1, "maximum": 9}}});
    let lowered = lower(&schema, Dialect::AnthropicStrict).unwrap();
    assert_eq!(
        lowered["properties"]["n"],
        json!({"type": "integer", "description": "How many {minimum: 1, maximum: 9}"})
    );
    assert_eq!(lowered["additionalProperties"], false);
    assert!(violations(lowered, Dialect::AnthropicStrict).is_empty());
}

#[test]
fn the_surface_report_names_the_tool_and_the_path() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Counts {
        by_tag: std::collections::HashMap<String, u32>,
    }
    let tools = FnToolBox::new([
        tool_fn("tally", "Tallies", |_: Counts| async {}),
        tool_fn("9lives", "Starts with a digit", |_: ()| async {}),
    ])
    .unwrap();
    let report = check_surface(&tools, Provider::OpenAiChat { strict: true });
    assert_eq!(
        report.to_string(),
        "1 problem(s) in 2 tools for OpenAI strict mode:\n  - tool `tally`, at `by_tag`: a map (an object with arbitrary keys) cannot be expressed in OpenAI strict mode; use a list of key/value structs\n"
    );
    let gemini = check_surface(&tools, Provider::Gemini);
    assert_eq!(
        gemini.violations()[0].rule,
        "`9lives` is not a legal tool name (Gemini: start with a letter or `_`, then letters, digits, `_`, `.`, `:` or `-`, at most 128)"
    );
    let result = std::panic::catch_unwind(|| report.assert_clean());
    assert!(result.is_err());
}

#[test]
fn schema_snapshots_catch_changes() {
    let dir = std::env::temp_dir().join(format!("toolbox-snapshot-{}", std::process::id()));
    let path = dir.join("zoo.json");
    std::fs::create_dir_all(&dir).unwrap();
    // The committed snapshot (a missing one is written, or in CI refused).
    let specs = Zoo.specifications(&Context::new());
    std::fs::write(&path, serde_json::to_string_pretty(&specs).unwrap() + "\n").unwrap();
    assert_schema_snapshot(&Zoo, &path); // equal
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("Gets the weather.", "Gets the climate.");
    std::fs::write(&path, edited).unwrap();
    let failure = std::panic::catch_unwind(|| assert_schema_snapshot(&Zoo, &path)).unwrap_err();
    let message = failure.downcast_ref::<String>().unwrap();
    assert!(message.contains("differ from the snapshot"), "{message}");
    assert!(message.contains("Gets the climate."), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_harness_calls_with_json_and_records_events() {
    let harness = ToolHarness::new(Zoo);
    let outcome = harness.call("get_weather", json!({"city": "Oslo"})).await;
    assert_eq!(outcome.response.content, r#"{"city":"Oslo","temp":20.0}"#);
    assert_eq!(outcome.events, ["start get_weather", "success get_weather"]);
    let outcome = harness.call("get_weather", json!({})).await;
    assert_eq!(
        outcome.events,
        [
            "start get_weather",
            "error get_weather: invalid arguments: missing field `city`"
        ]
    );
}

#[test]
fn a_one_branch_all_of_around_a_ref_is_inlined_for_strict_dialects() {
    let schema = json!({
        "type": "object",
        "properties": {"units": {"allOf": [{"$ref": "#/$defs/Units"}], "description": "Units"}},
        "required": ["units"],
        "$defs": {"Units": {"type": "string", "enum": ["C", "F"]}}
    });
    let lowered = lower(&schema, Dialect::OpenAiStrict).unwrap();
    assert_eq!(
        lowered["properties"]["units"],
        json!({"description": "Units", "type": "string", "enum": ["C", "F"]})
    );
    assert!(
        lowered.get("$defs").is_none(),
        "the unused definition is pruned"
    );
    assert!(violations(lowered, Dialect::OpenAiStrict).is_empty());
}

fn github_specs() -> Vec<ToolSpecification> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schemas/server-github.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fixture["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            ToolSpecification::new(tool["name"].as_str().unwrap(), "A GitHub tool")
                .with_parameters(tool["inputSchema"].clone())
        })
        .collect()
}

#[test]
fn anthropic_strict_counts_the_request_budget() {
    let specs = github_specs();
    assert_eq!(specs.len(), 26);
    let tools = toolbox::boxes::DeferredToolBox::new(EmptyToolBox, specs.clone());
    let report = check_surface(&tools, Provider::Anthropic { strict: true });
    let request: Vec<&str> = report
        .violations()
        .iter()
        .filter(|v| v.tool.is_empty())
        .map(|v| v.rule.as_str())
        .collect();
    assert_eq!(
        request,
        [
            "Anthropic strict: 26 tools in one request; at most 20 strict tools are allowed",
            "Anthropic strict: 56 optional parameters across the request's tools; at most 24 are allowed"
        ],
        "{report}"
    );
    assert!(
        report
            .to_string()
            .contains("  - the request: Anthropic strict: 26 tools in one request"),
        "{report}"
    );
    let error = Provider::Anthropic { strict: true }
        .definitions(&specs)
        .unwrap_err();
    assert!(error
        .to_string()
        .starts_with("these tools cannot be offered together to Anthropic strict tool use: Anthropic strict: 26 tools in one request; at most 20 strict tools are allowed; "),
        "{error}");
    // Without strict mode, and for the first few tools, nothing is over.
    assert!(Provider::Anthropic { strict: false }
        .definitions(&specs)
        .is_ok());
    assert!(Provider::Anthropic { strict: true }
        .definitions(&specs[..3])
        .is_ok());
    // Unions: 17 `Option`s over two tools.
    let options: serde_json::Map<String, Value> = (0..9)
        .map(|i| (format!("p{i}"), json!({"type": ["string", "null"]})))
        .collect();
    let union_specs: Vec<ToolSpecification> = (0..2)
        .map(|i| {
            ToolSpecification::new(format!("t{i}"), "Takes options").with_parameters(
                json!({"type": "object", "properties": options, "required": options.keys().collect::<Vec<_>>()}),
            )
        })
        .collect();
    let error = Provider::Anthropic { strict: true }
        .definitions(&union_specs)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "these tools cannot be offered together to Anthropic strict tool use: Anthropic strict: 18 parameters with `anyOf` or a type array across the request's tools; at most 16 are allowed"
    );
}

#[test]
fn a_recursive_schema_is_refused_once_with_the_reason() {
    let root = json!({"type": "object", "properties": {"label": {"type": "string"}, "child": {"$ref": "#"}}, "required": ["label"]});
    let tools = toolbox::boxes::DeferredToolBox::new(
        EmptyToolBox,
        vec![ToolSpecification::new("nest", "Nests").with_parameters(root.clone())],
    );
    let report = check_surface(&tools, Provider::Anthropic { strict: true });
    let rules: Vec<String> = report
        .violations()
        .iter()
        .map(|v| format!("{}: {}", v.path, v.rule))
        .collect();
    assert_eq!(
        rules,
        [": the schema is recursive (the root), which Anthropic strict tool use cannot express; bound the depth with distinct types"]
    );
    assert_eq!(
        violations(root.clone(), Dialect::AnthropicStrict)
            .iter()
            .filter(|v| v.contains("recursive"))
            .count(),
        1
    );
    // OpenAI strict takes recursion through the root.
    let lowered = lower(&root, Dialect::OpenAiStrict).unwrap();
    assert_eq!(
        lowered["properties"]["child"],
        json!({"anyOf": [{"$ref": "#"}, {"type": "null"}]})
    );
    // A cycle through `$defs` is one finding too, however often it is used.
    let defs = json!({"type": "object", "additionalProperties": false,
        "properties": {"a": {"$ref": "#/$defs/Tree"}, "b": {"$ref": "#/$defs/Tree"}, "c": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
        "$defs": {"Tree": {"type": "object", "additionalProperties": false, "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}, "first": {"$ref": "#/$defs/Tree"}}}}});
    let found: Vec<String> = violations(defs.clone(), Dialect::AnthropicStrict)
        .into_iter()
        .filter(|v| v.contains("recursive"))
        .collect();
    assert_eq!(
        found,
        [": Anthropic strict: recursive schemas are not supported (`Tree`)"]
    );
    assert_eq!(
        lower(&defs, Dialect::GeminiParameters).unwrap_err().to_string(),
        "the schema is recursive (`Tree`), which Gemini `parameters` cannot express; bound the depth with distinct types"
    );
}

/// Stock levels; one tool is for code the model writes only.
#[derive(Default)]
struct Stock;

#[tool_box]
impl Stock {
    /// Units in stock, for code the model writes.
    #[tool(callers(code))]
    fn inventory(&self) -> u32 {
        42
    }

    /// Units requested.
    #[tool]
    fn demand(&self) -> u32 {
        31
    }
}

#[test]
fn the_surface_check_refuses_a_code_only_tool_where_the_request_does() {
    let specs = Stock.specifications(&Context::new());
    for provider in [
        Provider::OpenAiChat { strict: true },
        Provider::Gemini,
        Provider::GeminiLegacy,
    ] {
        let refused = provider.definitions(&specs).unwrap_err();
        let report = check_surface(&Stock, provider);
        assert_eq!(report.violations().len(), 1, "{report}");
        assert_eq!(report.violations()[0].tool, "inventory");
        assert!(
            refused.to_string().ends_with(&report.violations()[0].rule),
            "{refused}\n{report}"
        );
    }
    // Where the provider runs the model's code, both take it.
    for provider in [
        Provider::Anthropic { strict: true },
        Provider::OpenAiResponses { strict: true },
        Provider::Mcp,
    ] {
        provider.definitions(&specs).unwrap();
        check_surface(&Stock, provider).assert_clean();
    }
    // What a `check(gemini)` test runs.
    let panic = std::panic::catch_unwind(|| {
        toolbox::macro_support::check_surfaces(&Stock, &[Provider::Gemini]);
    })
    .unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(
        text.contains("tool `inventory`: may be called only from code, and Gemini runs no code the model writes"),
        "{text}"
    );
}
