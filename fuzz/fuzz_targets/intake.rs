//! Argument intake into a generated tool: any text a model may send. The
//! check and the dispatch agree with `serde_json::from_str` on the tool's
//! own argument type, and nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use toolbox::prelude::*;
use toolbox::Arguments;

/// How hard.
#[derive(Debug, Deserialize, JsonSchema)]
pub enum Level {
    /// Gently.
    Soft,
    /// Firmly.
    Hard,
}

/// Where.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
pub struct Target {
    /// Which one.
    id: u32,
    /// Labels.
    tags: Vec<String>,
}

#[derive(Default)]
struct Tools;

/// Fuzzed tools.
#[tool_box]
impl Tools {
    /// Takes every kind of argument.
    #[tool]
    fn act(&self, level: Level, target: Target, note: Option<String>, ratio: f64) -> String {
        format!("{level:?} {target:?} {note:?} {ratio}")
    }
}

/// The tool's argument object, mirrored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Mirror {
    level: Level,
    target: Target,
    note: Option<String>,
    ratio: f64,
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = Context::new();
    let checked = Tools.check("act", Arguments::Text(text), &ctx).is_ok();
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
    if trimmed.starts_with('{') {
        assert_eq!(
            checked,
            serde_json::from_str::<Mirror>(trimmed).is_ok(),
            "{text:?}"
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let response = runtime.block_on(Tools.call("act", text, &ctx, &ToolHandler::empty()));
    assert_eq!(checked, !response.is_error);
    assert!(response.content.len() < 4_096 || !response.is_error);
});
