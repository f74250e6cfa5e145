//! Lowering is sound: every value a model may send under a lowered schema
//! is taken by the tool once the call path has normalized it.
//!
//! For each strict or subset dialect and each schema of a corpus — the
//! argument schemas of real MCP servers (tests/fixtures/schemas/, fetched by
//! scripts/fetch_schema_corpus, and `dynamodb_discriminated.json`, a
//! Pydantic discriminated union whose tags have defaults, written by hand
//! from a real server's models) and the schemars output of a zoo of Rust
//! argument types — values are generated under the *lowered* schema (checked
//! against it), normalized as the call path normalizes them, and must be
//! valid under the *original* schema (with `jsonschema`), save for the
//! constraints the dialect moved into the description. A Rust type's values
//! also go through a real tool, by a [`TurnRunner`] for that provider, and
//! must run (when they also meet the moved constraints).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use toolbox::args::{normalize, ToolCall};
use toolbox::{
    provider::{lower, Dialect, Provider},
    turn::TurnRunner,
};
use toolbox::{tool_fn, Context, FnToolBox, ToolSpecification};

/// The dialects that change a schema, and a provider that speaks each.
const DIALECTS: [(Dialect, Provider); 4] = [
    (Dialect::OpenAiStrict, Provider::OpenAiChat { strict: true }),
    (
        Dialect::AnthropicStrict,
        Provider::Anthropic { strict: true },
    ),
    (Dialect::GeminiParameters, Provider::GeminiLegacy),
    (Dialect::GeminiJsonSchema, Provider::Gemini),
];

/// Values generated per schema and dialect in the default run.
const CASES: usize = 40;

// ---------------------------------------------------------------- the zoo

fn ten() -> u32 {
    10
}

fn five() -> Option<u32> {
    Some(5)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Defaults {
    /// What to look for.
    query: String,
    #[serde(default)]
    limit: u32,
    #[serde(default = "ten")]
    page_size: u32,
    #[serde(default = "five")]
    retries: Option<u32>,
    tags: Option<Vec<String>>,
    #[serde(default)]
    verbose: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Inner {
    value: i64,
    #[serde(default)]
    force: bool,
}

/// A value to set, documented (so schemars refers to it).
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Setting {
    /// The key.
    key: String,
    #[serde(default)]
    overwrite: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
#[allow(dead_code)]
enum Patch {
    Set(Inner),
    Put(Setting),
    Rename {
        to: String,
        #[serde(default)]
        keep: bool,
    },
    Clear,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tagged {
    /// The change to make.
    patch: Patch,
    also: Option<Patch>,
    setting: Option<Setting>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
#[allow(dead_code)]
enum Shape {
    Circle(f64),
    Rect { w: f64, h: f64 },
    Dot,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Adjacent {
    shape: Shape,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Scalar {
    Number(i64),
    Text(String),
    List(Vec<i64>),
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Untagged {
    value: Scalar,
    maybe: Option<Scalar>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Action {
    Start {
        at: u32,
        #[serde(default)]
        quiet: bool,
    },
    Pause(u32),
    Stop,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct External {
    action: Action,
    then: Vec<Action>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Common {
    #[serde(default)]
    verbose: bool,
    level: u8,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Flattened {
    name: String,
    #[serde(flatten)]
    common: Common,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Maps {
    counts: HashMap<String, u32>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tuples {
    point: (f64, f64),
    fixed: [i32; 3],
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct MixedTuple {
    span: (u8, String),
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    #[serde(default)]
    children: Vec<Tree>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Recursive {
    tree: Tree,
}

fn priority_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "enum": [1, 2, 3]})
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct IntegerEnum {
    #[schemars(schema_with = "priority_schema")]
    priority: u8,
    #[serde(default)]
    #[schemars(schema_with = "priority_schema")]
    fallback: u8,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Formats {
    #[schemars(email)]
    email: String,
    #[schemars(url)]
    homepage: Option<String>,
    #[schemars(length(min = 2, max = 8))]
    code: String,
    #[schemars(range(min = 1, max = 10))]
    rating: u8,
    initial: char,
    #[schemars(length(max = 3))]
    #[serde(default)]
    aliases: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    /// Where to send it.
    address: Address,
    backup: Option<Address>,
    history: Vec<Address>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Address {
    street: String,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    floor: i32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Units {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct UnitEnum {
    /// Temperature units.
    units: Option<Units>,
    #[serde(default = "celsius")]
    fallback: Units,
}

fn celsius() -> Units {
    Units::Celsius
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Untyped {
    payload: Value,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct NumbersAndOptions {
    small: u8,
    signed: i16,
    ratio: f32,
    big: Option<u64>,
    flags: Option<Vec<bool>>,
    #[serde(default)]
    nested_defaults: Option<Inner>,
}

/// A zoo entry: its name, its tool, and the tool's specification.
struct Zoo {
    name: &'static str,
    tools: FnToolBox,
    spec: ToolSpecification,
}

fn zoo_entry<T>(name: &'static str) -> Zoo
where
    T: serde::de::DeserializeOwned + JsonSchema + Send + 'static,
{
    let tool = tool_fn(name, "A zoo type", |_: T| async { "ok" });
    let spec = tool.specification().clone();
    let tools = FnToolBox::new([tool]).expect("a zoo tool builds");
    Zoo { name, tools, spec }
}

fn zoo() -> Vec<Zoo> {
    vec![
        zoo_entry::<Defaults>("defaults"),
        zoo_entry::<Tagged>("internally_tagged"),
        zoo_entry::<Adjacent>("adjacently_tagged"),
        zoo_entry::<Untagged>("untagged"),
        zoo_entry::<External>("externally_tagged"),
        zoo_entry::<Flattened>("flattened"),
        zoo_entry::<Maps>("maps"),
        zoo_entry::<Tuples>("homogeneous_tuples"),
        zoo_entry::<MixedTuple>("mixed_tuple"),
        zoo_entry::<Recursive>("recursive"),
        zoo_entry::<IntegerEnum>("integer_enum"),
        zoo_entry::<Formats>("formats"),
        zoo_entry::<Nested>("nested"),
        zoo_entry::<UnitEnum>("unit_enum"),
        zoo_entry::<Untyped>("untyped"),
        zoo_entry::<NumbersAndOptions>("numbers_and_options"),
    ]
}

// ---------------------------------------------------------------- the corpus

struct Fixture {
    label: String,
    schema: Value,
}

fn corpus() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schemas");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/schemas exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a fixture reads");
        let fixture: Value = serde_json::from_str(&text).expect("a fixture is JSON");
        let server = file
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a file name");
        for tool in fixture["tools"].as_array().expect("tools") {
            out.push(Fixture {
                label: format!("{server} {}", tool["name"].as_str().expect("a tool name")),
                schema: tool["inputSchema"].clone(),
            });
        }
    }
    out
}

// ---------------------------------------------------------------- values

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const WORDS: &[&str] = &[
    "a",
    "abc",
    "Oslo",
    "main",
    "x_y",
    "hello-world",
    "owner/repo",
    "42",
    "ab",
    "Z9",
    "",
];

fn format_sample(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "2024-05-01T12:00:00Z",
        "date" => "2024-05-01",
        "time" => "12:00:00Z",
        "duration" => "P1D",
        "email" => "ada@example.com",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "uuid" => "123e4567-e89b-12d3-a456-426614174000",
        "uri" | "url" => "https://example.com/a",
        _ => return None,
    })
}

/// Generates values under a lowered schema, as a model constrained by it
/// (and free where it is silent: undeclared keys where objects are open).
struct Generator<'s> {
    root: &'s Value,
    rng: Rng,
}

impl<'s> Generator<'s> {
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            Some(self.root)
        } else {
            self.root.pointer(pointer)
        }
    }

    fn value(&mut self, schema: &'s Value, depth: usize) -> Value {
        let Some(object) = schema.as_object() else {
            return json!("anything");
        };
        if let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            return self.value(target, depth + 1);
        }
        if object.get("nullable") == Some(&Value::Bool(true)) && self.rng.chance(35) {
            return Value::Null;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = object.get(key).and_then(Value::as_array) {
                let choices: Vec<&Value> = if depth > 5 {
                    let shallow: Vec<&Value> = branches
                        .iter()
                        .filter(|b| {
                            !b.get("type").is_some_and(|t| t == "object" || t == "array")
                                && b.get("$ref").is_none()
                        })
                        .collect();
                    if shallow.is_empty() {
                        branches.iter().collect()
                    } else {
                        shallow
                    }
                } else {
                    branches.iter().collect()
                };
                let branch = choices[self.rng.below(choices.len())];
                return self.value(branch, depth + 1);
            }
        }
        if let Some(values) = object.get("enum").and_then(Value::as_array) {
            if !values.is_empty() {
                return values[self.rng.below(values.len())].clone();
            }
        }
        if let Some(constant) = object.get("const") {
            return constant.clone();
        }
        let ty = match object.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(types)) => {
                let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                // Deep down, prefer `null` where it may be.
                if depth > 5 && names.contains(&"null") {
                    "null".to_owned()
                } else {
                    names[self.rng.below(names.len())].to_owned()
                }
            }
            _ if object.contains_key("properties") => "object".to_owned(),
            _ if object.contains_key("items") || object.contains_key("prefixItems") => {
                "array".to_owned()
            }
            _ => ["string", "integer", "boolean", "null"][self.rng.below(4)].to_owned(),
        };
        match ty.as_str() {
            "null" => Value::Null,
            "boolean" => Value::Bool(self.rng.chance(50)),
            "integer" | "number" => self.number(object, ty == "integer"),
            "string" => self.string(object),
            "array" => self.array(object, depth),
            "object" => self.object(object, depth),
            _ => Value::Null,
        }
    }

    fn number(&mut self, object: &Map<String, Value>, integer: bool) -> Value {
        let get = |k: &str| object.get(k).and_then(Value::as_f64);
        let mut low = get("minimum").unwrap_or(-5.0);
        let mut high = get("maximum").unwrap_or(low.max(0.0) + 100.0);
        if let Some(e) = get("exclusiveMinimum") {
            low = low.max(e + 1.0);
        }
        if let Some(e) = get("exclusiveMaximum") {
            high = high.min(e - 1.0);
        }
        if high < low {
            high = low;
        }
        let span = (high - low).min(1_000.0) as u64;
        let mut n = low + (self.rng.next() % (span + 1)) as f64;
        if let Some(step) = get("multipleOf").filter(|s| *s > 0.0) {
            n = (n / step).ceil() * step;
        }
        if integer || n.fract() == 0.0 && self.rng.chance(50) {
            json!(n as i64)
        } else {
            json!(n + 0.5_f64.min(high - n).max(0.0))
        }
    }

    fn string(&mut self, object: &Map<String, Value>) -> Value {
        if let Some(sample) = object
            .get("format")
            .and_then(Value::as_str)
            .and_then(format_sample)
        {
            return json!(sample);
        }
        let min = object.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = object
            .get("maxLength")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |m| m as usize);
        let word = WORDS[self.rng.below(WORDS.len())];
        let mut text: String = word.chars().take(max).collect();
        while text.chars().count() < min {
            text.push('x');
        }
        json!(text)
    }

    fn array(&mut self, object: &'s Map<String, Value>, depth: usize) -> Value {
        let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = object
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(min + 3, |m| m as usize);
        let mut items = Vec::new();
        if let Some(prefix) = object.get("prefixItems").and_then(Value::as_array) {
            for schema in prefix {
                items.push(self.value(schema, depth + 1));
            }
            return Value::Array(items);
        }
        let length = if depth > 5 {
            min
        } else {
            min + self.rng.below(max.saturating_sub(min) + 1)
        };
        let item_schema = object.get("items");
        for _ in 0..length {
            items.push(match item_schema {
                Some(schema) => self.value(schema, depth + 1),
                None => json!(self.rng.below(10)),
            });
        }
        if object.get("uniqueItems") == Some(&Value::Bool(true)) {
            let mut seen = Vec::new();
            items.retain(|item| {
                let fresh = !seen.contains(item);
                seen.push(item.clone());
                fresh
            });
        }
        Value::Array(items)
    }

    fn object(&mut self, object: &'s Map<String, Value>, depth: usize) -> Value {
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut map = Map::new();
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            for (name, schema) in properties {
                let wanted =
                    required.contains(&name.as_str()) || (depth <= 5 && self.rng.chance(50));
                if wanted {
                    let value = self.value(schema, depth + 1);
                    map.insert(name.clone(), value);
                }
            }
        }
        match object.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            Some(schema @ Value::Object(_)) => {
                for i in 0..self.rng.below(3) {
                    let value = self.value(schema, depth + 1);
                    map.insert(format!("key{i}"), value);
                }
            }
            // Open: a model may add a key nobody declared.
            _ => {
                if depth <= 5 && self.rng.chance(20) {
                    // `null` too: a key nobody declared, set to "nothing".
                    let value = if self.rng.chance(50) {
                        Value::Null
                    } else {
                        json!(1)
                    };
                    map.insert("hallucinated".into(), value);
                }
            }
        }
        Value::Object(map)
    }
}

// ---------------------------------------------------------------- checking

/// The constraints each dialect keeps; the others move into descriptions,
/// and a value breaking only those may be refused by the tool.
fn kept(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::OpenAiStrict => &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "pattern",
            "minItems",
            "maxItems",
        ],
        Dialect::AnthropicStrict => &[],
        Dialect::GeminiJsonSchema => &[
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "minItems",
            "maxItems",
            "uniqueItems",
            "minProperties",
            "maxProperties",
        ],
        Dialect::GeminiParameters => &[
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
        ],
        _ => &[],
    }
}

/// The string formats each dialect keeps.
fn kept_formats(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::OpenAiStrict => &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ],
        Dialect::AnthropicStrict => &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "uri",
            "ipv4",
            "ipv6",
            "uuid",
        ],
        Dialect::GeminiJsonSchema => &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ],
        Dialect::GeminiParameters => &["date-time"],
        _ => &[],
    }
}

const CONSTRAINTS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// The original schema without the constraints `dialect` only describes.
fn relaxed(schema: &Value, dialect: Dialect) -> Value {
    match schema {
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, value) in object {
                if CONSTRAINTS.contains(&key.as_str()) && !kept(dialect).contains(&key.as_str()) {
                    continue;
                }
                if key == "format"
                    && value
                        .as_str()
                        .is_some_and(|f| !kept_formats(dialect).contains(&f))
                {
                    continue;
                }
                // Gemini's `parameters` describes the values of a non-string enum.
                if dialect == Dialect::GeminiParameters
                    && (key == "enum"
                        && value
                            .as_array()
                            .is_some_and(|v| v.iter().any(|v| !v.is_string() && !v.is_null()))
                        || key == "const" && !value.is_string())
                {
                    continue;
                }
                // Properties are names, not schemas to relax.
                let relaxed_value = match key.as_str() {
                    "properties" | "$defs" | "definitions" | "patternProperties" => Value::Object(
                        value
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), relaxed(v, dialect)))
                            .collect(),
                    ),
                    "enum" | "const" | "required" | "default" | "examples" => value.clone(),
                    _ => relaxed(value, dialect),
                };
                out.insert(key.clone(), relaxed_value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| relaxed(v, dialect)).collect()),
        other => other.clone(),
    }
}

/// Gemini's `parameters` (OpenAPI's `nullable`) as JSON Schema, to check
/// the generator against it.
fn as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => {
            let mut out: Map<String, Value> = object
                .iter()
                .filter(|(k, _)| *k != "nullable")
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "properties" => Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(k, v)| (k.clone(), as_json_schema(v)))
                                .collect(),
                        ),
                        "enum" | "required" | "default" => v.clone(),
                        _ => as_json_schema(v),
                    };
                    (k.clone(), v)
                })
                .collect();
            if object.get("nullable") == Some(&Value::Bool(true)) {
                out = Map::from_iter([(
                    "anyOf".to_owned(),
                    json!([Value::Object(out), {"type": "null"}]),
                )]);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(as_json_schema).collect()),
        other => other.clone(),
    }
}

struct Outcome {
    values: usize,
    tool_calls: usize,
    refusals: Vec<String>,
    failures: Vec<String>,
}

fn check(cases: usize) -> BTreeMap<&'static str, Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let zoo = zoo();
    let mut schemas: Vec<(String, Value, Option<&Zoo>)> = corpus()
        .into_iter()
        .map(|f| (f.label, f.schema, None))
        .collect();
    schemas.extend(zoo.iter().map(|z| {
        (
            format!("zoo {}", z.name),
            z.spec.parameters.clone(),
            Some(z),
        )
    }));
    let mut outcomes = BTreeMap::new();
    for (dialect, provider) in DIALECTS {
        let mut outcome = Outcome {
            values: 0,
            tool_calls: 0,
            refusals: Vec::new(),
            failures: Vec::new(),
        };
        for (index, (label, original, tool)) in schemas.iter().enumerate() {
            let lowered = match lower(original, dialect) {
                Ok(lowered) => lowered,
                Err(error) => {
                    outcome.refusals.push(format!("{label}: {error}"));
                    continue;
                }
            };
            let lowered_check = if dialect == Dialect::GeminiParameters {
                as_json_schema(&lowered)
            } else {
                lowered.clone()
            };
            let under_lowered = jsonschema::validator_for(&lowered_check).unwrap_or_else(|e| {
                panic!("{label}: the {dialect:?} schema does not compile: {e}\n{lowered}")
            });
            let relaxed_original = jsonschema::validator_for(&relaxed(original, dialect))
                .expect("the relaxed original compiles");
            let strict_original =
                jsonschema::validator_for(original).expect("the original compiles");
            let mut generated = 0;
            for case in 0..cases * 4 {
                if generated == cases {
                    break;
                }
                let mut generator = Generator {
                    root: &lowered,
                    rng: Rng::new((index * 7919 + case) as u64 + dialect as u64 * 1_000_003),
                };
                let sent = generator.value(&lowered, 0);
                if !under_lowered.is_valid(&sent) {
                    continue;
                }
                generated += 1;
                let mut normalized = sent.clone();
                normalize(original, dialect, &mut normalized);
                if let Some(error) = relaxed_original.iter_errors(&normalized).next() {
                    outcome.failures.push(format!(
                        "{label} ({dialect:?}): {sent} → {normalized} is refused by the original at `{}`: {error}",
                        error.instance_path()
                    ));
                    continue;
                }
                if let Some(zoo) = tool {
                    if strict_original.is_valid(&normalized) {
                        let call = ToolCall::new(zoo.name, sent.clone());
                        let runner = TurnRunner::new(&zoo.tools).provider(provider);
                        let result = runtime.block_on(runner.run(vec![call], &Context::new()));
                        outcome.tool_calls += 1;
                        if result[0].response.is_error {
                            outcome.failures.push(format!(
                                "{label} ({dialect:?}): the tool refuses {sent}: {}",
                                result[0].response.content
                            ));
                        }
                    }
                }
            }
            assert!(
                generated * 10 >= cases * 9,
                "{label} ({dialect:?}): only {generated} of {cases} generated values fit the lowered schema {lowered}"
            );
            outcome.values += generated;
        }
        outcomes.insert(dialect.label(), outcome);
    }
    outcomes
}

fn assert_sound(cases: usize) {
    let outcomes = check(cases);
    let mut report = String::new();
    for (dialect, outcome) in &outcomes {
        report.push_str(&format!(
            "{dialect}: {} values, {} tool calls, {} refusals, {} failures\n",
            outcome.values,
            outcome.tool_calls,
            outcome.refusals.len(),
            outcome.failures.len()
        ));
        for failure in outcome.failures.iter().take(10) {
            report.push_str(&format!("  {failure}\n"));
        }
    }
    for (dialect, outcome) in &outcomes {
        for refusal in &outcome.refusals {
            report.push_str(&format!("refused in {dialect}: {refusal}\n"));
        }
    }
    println!("{report}");
    assert!(outcomes.values().all(|o| o.failures.is_empty()), "{report}");
    for outcome in outcomes.values() {
        assert!(outcome.values >= 2_000, "{report}");
    }
}

#[test]
fn every_value_valid_under_a_lowered_schema_is_taken_by_the_tool() {
    assert_sound(CASES);
}

#[test]
#[ignore = "a longer run of the same property: cargo test --test integration soundness:: -- --ignored"]
fn every_value_valid_under_a_lowered_schema_is_taken_by_the_tool_long() {
    assert_sound(CASES * 25);
}

/// Every refusal over the corpus has a named reason, and docs/providers.md
/// lists each one.
#[test]
fn every_refusal_is_named_and_documented() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/providers.md"))
            .expect("docs/providers.md reads");
    let zoo = zoo();
    let mut schemas: Vec<(String, Value)> =
        corpus().into_iter().map(|f| (f.label, f.schema)).collect();
    schemas.extend(
        zoo.iter()
            .map(|z| (format!("zoo {}", z.name), z.spec.parameters.clone())),
    );
    let mut missing = Vec::new();
    for (dialect, _) in DIALECTS {
        for (label, schema) in &schemas {
            if let Err(error) = lower(schema, dialect) {
                let line = format!(
                    "| {} | {label} | {} |",
                    dialect.label(),
                    error.to_string().replace('|', "\\|")
                );
                if !docs.contains(&line) {
                    missing.push(line);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/providers.md does not list these refusals:\n{}",
        missing.join("\n")
    );
}

// ------------------------------------------------ `null` for a default, end to end

struct Catalog;

/// Searches a catalog.
#[toolbox::tool_box(register = false)]
impl Catalog {
    /// Searches the catalog.
    #[tool]
    fn search(
        &self,
        /// What to look for.
        query: String,
        /// How many results.
        #[arg(default = 10)]
        limit: u32,
    ) -> String {
        format!("{query}:{limit}")
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lookup {
    query: String,
    #[serde(default = "ten")]
    limit: u32,
}

fn lookup_box() -> FnToolBox {
    FnToolBox::new([tool_fn("search", "Searches", |l: Lookup| async move {
        format!("{}:{}", l.query, l.limit)
    })])
    .expect("the box builds")
}

/// What OpenAI strict mode tells the model about `limit`, and what the
/// model then sends for "absent".
fn strict_limit(spec: &ToolSpecification) -> Value {
    let definition = Provider::OpenAiChat { strict: true }
        .definition(spec)
        .expect("lowers");
    let parameters = &definition["function"]["parameters"];
    assert_eq!(parameters["required"], json!(["query", "limit"]));
    parameters["properties"]["limit"].clone()
}

async fn runs_with_the_default<B: toolbox::ToolBox>(tools: &B) {
    use toolbox::ToolBoxExt;
    let spec = tools.specifications(&Context::new()).remove(0);
    assert_eq!(strict_limit(&spec)["type"], json!(["integer", "null"]));
    let handler = toolbox::ToolHandler::empty();
    // Straight to the box, as a value and as the text OpenAI sends.
    let value = json!({"query": "rust", "limit": null});
    let response = tools
        .call("search", &value, &Context::new(), &handler)
        .await;
    assert_eq!(response.content, "rust:10");
    let text = json!(r#"{"query":"rust","limit":null}"#);
    let response = tools.call("search", &text, &Context::new(), &handler).await;
    assert_eq!(response.content, "rust:10");
    // A value the model chose is kept.
    let response = tools
        .call(
            "search",
            &json!({"query": "rust", "limit": 3}),
            &Context::new(),
            &handler,
        )
        .await;
    assert_eq!(response.content, "rust:3");
    // A required argument's `null` is still refused, with the usual text.
    let response = tools
        .call(
            "search",
            &json!({"query": null, "limit": null}),
            &Context::new(),
            &handler,
        )
        .await;
    assert!(response.is_error);
    assert_eq!(
        response.content,
        "invalid arguments at `query`: `null` is not allowed here; expected a string"
    );
    // Through a provider's turn, with an approval hook: the check before
    // approval takes the `null` too.
    let payload = json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "search", "arguments": "{\"query\":\"q\",\"limit\":null}"}}]});
    let provider = Provider::OpenAiChat { strict: true };
    let calls = provider.parse_calls(&payload).expect("parses");
    let outcomes = TurnRunner::new(tools)
        .provider(provider)
        .approval(|_| async { toolbox::turn::Decision::Approve })
        .run(calls, &Context::new())
        .await;
    assert_eq!(outcomes[0].response.content, "q:10");
    assert_eq!(outcomes[0].call.arguments, json!({"query": "q"}));
}

#[tokio::test]
async fn a_null_for_an_arg_default_runs_with_the_default() {
    runs_with_the_default(&Catalog).await;
}

#[tokio::test]
async fn a_null_for_a_closure_tools_default_runs_with_the_default() {
    runs_with_the_default(&lookup_box()).await;
}

#[tokio::test]
async fn keys_gemini_parameters_cannot_forbid_are_dropped_on_the_way_in() {
    use toolbox::ToolBox;
    let tools = lookup_box();
    let payload = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "search", "args": {"query": "q", "invented": true}}}
    ]}}]});
    let calls = Provider::GeminiLegacy
        .parse_calls(&payload)
        .expect("parses");
    let spec = tools.specifications(&Context::new()).remove(0);
    let lowered = Provider::GeminiLegacy.definition(&spec).expect("lowers");
    assert!(lowered["parameters"].get("additionalProperties").is_none());
    // Told nothing, the tool refuses the key it never declared…
    let outcomes = TurnRunner::new(&tools)
        .run(calls.clone(), &Context::new())
        .await;
    assert_eq!(
        outcomes[0].response.content,
        "invalid arguments at `invented`: unknown field `invented`, expected `query` or `limit`"
    );
    // …told the provider, the runner drops it.
    let outcomes = TurnRunner::new(&tools)
        .provider(Provider::GeminiLegacy)
        .run(calls, &Context::new())
        .await;
    assert_eq!(outcomes[0].response.content, "q:10");
}
