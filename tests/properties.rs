//! Properties over generated inputs, for the surfaces the fuzz targets in
//! `fuzz/` cover: argument intake (differential against `serde_json`),
//! `name@module` keys, provider parsing, schema lowering, tape reading, and
//! "every started call ends exactly once".

use crate::common;

use std::time::Duration;

use common::Counts;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use toolbox::prelude::*;
use toolbox::registry::ToolKey;
use toolbox::Arguments;
use toolbox::ToolSpecification;

/// What a call's id, name or arguments may be: usually what a provider
/// sends (a string, argument text, an object), sometimes anything.
fn call_part() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec!["call_1", "get_weather", "add", ""]).prop_map(|s| json!(s)),
        prop::sample::select(vec![
            r#"{"a": 1, "b": 2}"#,
            r#"{"city":"Oslo"}"#,
            "",
            "null",
            "not json",
            r#""{\"a\":1}""#,
            "[1]",
            "{"
        ])
        .prop_map(|s| json!(s)),
        Just(json!({"a": 40, "b": 2})),
        Just(json!({"q": null, "nested": {"x": [1, 2]}})),
        json_value(),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        prop::sample::select(vec![
            "Soft", "Hard", "All", "Disk", "kind", "id", "", "7", "x"
        ])
        .prop_map(|s| json!(s)),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "level", "target", "shape", "id", "kind", "Hard", "Soft", "Disk", "All",
                        "x", "tags"
                    ]),
                    inner
                ),
                0..4
            )
            .prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// How hard.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(missing_docs)]
pub enum Level {
    Soft,
    Hard,
}

/// Where.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(missing_docs, dead_code)]
pub struct Target {
    id: u32,
    tags: Option<Vec<String>>,
}

/// Which shape.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(missing_docs, dead_code)]
pub enum Shape {
    Disk { id: u8 },
    All,
}

struct Tools;

/// Generated tools under test.
#[tool_box(register = false)]
impl Tools {
    /// Takes nested enums and structs.
    #[tool]
    fn act(&self, level: Level, target: Target, shape: Option<Shape>) -> String {
        format!("{level:?} {target:?} {shape:?}")
    }

    /// Sleeps, for drops.
    #[tool]
    async fn nap(&self, ms: u8) -> u8 {
        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
        ms
    }

    /// Panics.
    #[tool]
    fn boom(&self) -> u8 {
        panic!("boom")
    }
}

/// The generated argument struct of `act`, mirrored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ActArgs {
    level: Level,
    target: Target,
    shape: Option<Shape>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn intake_accepts_exactly_what_serde_json_accepts(value in json_value(), level in json_value()) {
        let ctx = Context::new();
        let arguments = match value {
            Value::Object(mut map) => {
                if map.len() < 2 {
                    map.insert("level".into(), level);
                    map.insert("target".into(), json!({"id": 1}));
                }
                Value::Object(map)
            }
            other => json!({"level": other, "target": {"id": 2}}),
        };
        let checked = Tools.check("act", Arguments::from(&arguments), &ctx).is_ok();
        prop_assert_eq!(checked, serde_json::from_value::<ActArgs>(arguments.clone()).is_ok());
        let text = arguments.to_string();
        let checked_text = Tools.check("act", Arguments::Text(&text), &ctx).is_ok();
        prop_assert_eq!(checked_text, serde_json::from_str::<ActArgs>(&text).is_ok());
        // The dispatch agrees with the check.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let response = runtime.block_on(Tools.call("act", &arguments, &ctx, &ToolHandler::empty()));
        prop_assert_eq!(checked, !response.is_error, "{}", response.content);
    }

    #[test]
    fn keys_parse_and_print_back(name in "[a-z_]{1,10}", module in proptest::option::of("[a-z]{1,6}")) {
        let text = match &module {
            Some(module) => format!("{name}@{module}"),
            None => name.clone(),
        };
        let key = ToolKey::parse(&text);
        prop_assert_eq!(key.to_string(), text);
        prop_assert_eq!(key.name, name);
        prop_assert_eq!(key.module, module);
    }

    #[test]
    fn any_text_is_a_key_or_a_clear_miss(text in ".{0,40}") {
        let registry = Registry::new();
        let _ = ToolKey::parse(&text).to_string();
        let _ = registry.get(&text);
        let _ = registry.resolve([text.as_str()]);
    }

    #[test]
    fn provider_parsing_never_panics(value in json_value()) {
        for provider in common::PROVIDERS {
            let _ = provider.parse_calls(&value);
            let wrapped = json!({"choices": [{"message": {"tool_calls": [value.clone()]}}], "candidates": [{"content": {"parts": [value.clone()]}}], "content": [value.clone()], "output": [value.clone()]});
            let _ = provider.parse_calls(&wrapped);
        }
    }

    /// `parse_response` (typed, from the bytes) reads every body as
    /// `parse_calls` (the general path, from a `Value`) does: the same
    /// calls, or the same error.
    #[test]
    fn parse_response_agrees_with_parse_calls(
        id in call_part(),
        name in call_part(),
        arguments in call_part(),
        other in json_value(),
    ) {
        let call = json!({"id": id, "call_id": id, "type": "function", "name": name, "arguments": arguments,
            "function": {"name": name, "arguments": arguments}});
        let use_block = json!({"type": "tool_use", "id": id, "name": name, "input": arguments});
        let item = json!({"type": "function_call", "call_id": id, "name": name, "arguments": arguments});
        let part = json!({"functionCall": {"id": id, "name": name, "args": arguments}, "thoughtSignature": other});
        let bodies = [
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [call.clone(), call.clone()]}}]}),
            json!({"choices": [{"message": {"tool_calls": other}}]}),
            json!({"tool_calls": [call]}),
            json!({"content": [{"type": "text", "text": "hi"}, use_block.clone(), use_block]}),
            json!({"output": [{"type": "message", "content": other}, item.clone(), item]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}, part.clone(), part]}}]}),
            json!({"candidates": [{"content": {"parts": [{"functionCall": other}]}}]}),
            other,
        ];
        for provider in common::PROVIDERS {
            for body in &bodies {
                let bytes = serde_json::to_vec(body).unwrap();
                let typed = provider.parse_response(&bytes).map_err(|e| e.to_string());
                let general = provider.parse_calls(body).map_err(|e| e.to_string());
                prop_assert_eq!(&typed, &general, "{:?} {}", provider, body);
            }
        }
        // Bytes that are not JSON are named as such.
        let error = toolbox::provider::Provider::Anthropic { strict: true }
            .parse_response(b"{\"content\": [")
            .unwrap_err()
            .to_string();
        prop_assert!(error.starts_with("malformed Anthropic Messages payload at ``: the body is not JSON: EOF while parsing"), "{}", error);
    }

    #[test]
    fn lowering_never_panics(properties in json_value(), defs in json_value()) {
        let schema = json!({"type": "object", "properties": properties, "$defs": defs});
        let spec = ToolSpecification::new("t", "A tool").with_parameters(schema);
        for provider in common::PROVIDERS {
            let _ = provider.definition(&spec);
        }
    }

    #[test]
    fn any_bytes_read_as_a_tape(data in prop::collection::vec(any::<u8>(), 0..512)) {
        let path = std::env::temp_dir().join(format!("toolbox-prop-tape-{}-{:?}.jsonl", std::process::id(), std::thread::current().id()));
        std::fs::write(&path, &data).unwrap();
        let tape = toolbox::boxes::read_tape(&path);
        let _ = std::fs::remove_file(&path);
        let tape = tape.unwrap();
        let lines = data.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count();
        prop_assert!(tape.entries.len() + tape.defects.len() <= lines);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Calls of every outcome, some dropped after a few polls: each start
    /// has exactly one end.
    #[test]
    fn every_started_call_ends_exactly_once(
        plan in prop::collection::vec((0u8..5, 0u8..3, 0u64..3), 1..24)
    ) {
        let counts = Counts::default();
        let handler = counts.handler();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        std::panic::set_hook(Box::new(|_| {}));
        runtime.block_on(async {
            for (tool, ms, drop_after) in &plan {
                let (name, arguments) = match tool {
                    0 => ("act", json!({"level": "Soft", "target": {"id": 1}})),
                    1 => ("nap", json!({"ms": ms})),
                    2 => ("boom", json!({})),
                    3 => ("act", json!({"level": 7})),
                    _ => ("missing", json!({})),
                };
                let ctx = Context::new();
                let call = Tools.call(name, &arguments, &ctx, &handler);
                if *drop_after == 0 {
                    let _ = tokio::time::timeout(Duration::from_micros(1), call).await;
                } else {
                    call.await;
                }
            }
        });
        let _ = std::panic::take_hook();
        let (starts, successes, errors) = counts.get();
        prop_assert_eq!(starts, plan.len());
        prop_assert_eq!(successes + errors, plan.len());
    }
}
