//! Every text a model can read, produced by the real code paths for a
//! representative input. The table in docs/errors.md is generated from
//! these rows (`TOOLBOX_BLESS=1 cargo test --test integration error_texts::` rewrites it),
//! and this test fails when the page and the code disagree.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::turn::{Decision, TurnRunner};
use toolbox::EmptyToolBox;
use toolbox::ToolSpecification;
use toolbox::{boxes::DeferredToolBox, boxes::ReplayToolBox, boxes::TapeEntry};

/// Temperature units.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[allow(missing_docs)]
pub enum Units {
    Celsius,
    Fahrenheit,
}

struct Weather;

/// Weather lookups.
#[tool_box(register = false)]
impl Weather {
    /// Gets the weather.
    #[tool(read_only)]
    fn get_weather(&self, city: String, days: u8, units: Option<Units>) -> String {
        format!("{city} {days} {units:?}")
    }

    /// Reports a station's status.
    #[tool]
    fn station(&self, id: u32) -> Result<String, ToolError> {
        Err(ToolError::retryable(format!(
            "no station {id}; list stations first"
        )))
    }

    /// Panics.
    #[tool]
    fn broken(&self) -> String {
        panic!("secret=hunter2")
    }

    /// Hangs.
    #[tool(timeout = "5ms")]
    async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(60)).await;
        String::new()
    }

    /// Returns NaN.
    #[tool]
    fn ratio(&self) -> f64 {
        f64::NAN
    }

    /// Needs a configured client.
    #[tool]
    fn configured(&self, #[inject] _client: toolbox::Extension<u8>) -> String {
        String::new()
    }
}

/// One row: what happened, the error kind, the exact text, whether a retry
/// with other arguments or another name can help.
struct Row {
    case: &'static str,
    kind: &'static str,
    text: String,
    retry: &'static str,
}

async fn call(toolbox: &impl ToolBox, name: &str, arguments: Value) -> (String, Option<bool>) {
    let failure = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen = failure.clone();
    let handler = ToolHandler::empty().on_error(move |e| {
        *seen.lock().unwrap() = Some(e.error.is_retryable());
    });
    let response = toolbox
        .call(name, &arguments, &Context::new(), &handler)
        .await;
    let retry = *failure.lock().unwrap();
    (response.content, retry)
}

fn yes_no(retry: Option<bool>) -> &'static str {
    match retry {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

async fn rows() -> Vec<Row> {
    let merged = MultiToolBox::builder()
        .add("weather", Weather)
        .build()
        .unwrap();
    let hidden = Weather.filter(|spec, _| spec.name != "station");
    let long = "x".repeat(1_000);
    let cases: Vec<(&str, &str, &dyn ToolBox, &str, Value)> = vec![
        (
            "unknown tool, prefix dropped and misspelled",
            "unknown_tool",
            &merged,
            "get_wether",
            json!({}),
        ),
        (
            "unknown tool, nothing close",
            "unknown_tool",
            &merged,
            "launch_rocket",
            json!({}),
        ),
        (
            "tool hidden by a condition",
            "not_available",
            &hidden,
            "station",
            json!({"id": 1}),
        ),
        (
            "`null` for a required string",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"city": null, "days": 1}),
        ),
        (
            "integer out of range",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"city": "Oslo", "days": 300}),
        ),
        (
            "wrong JSON type",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"city": "Oslo", "days": "three"}),
        ),
        (
            "unknown enum value",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"city": "Oslo", "days": 1, "units": "Kelvin"}),
        ),
        (
            "missing argument",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"days": 1}),
        ),
        (
            "unknown argument",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"city": "Oslo", "days": 1, "country": "NO"}),
        ),
        (
            "long value, cut",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!({"city": "Oslo", "days": long}),
        ),
        (
            "control characters, escaped",
            "unknown_tool",
            &Weather,
            "get\u{0}weather\n",
            json!({}),
        ),
        (
            "arguments not JSON",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!("{\"city\": "),
        ),
        (
            "valid JSON nested past 128 levels",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!(format!(
                "{{\"city\": {}{}, \"days\": 1}}",
                "[".repeat(130),
                "]".repeat(130)
            )),
        ),
        (
            "a number out of range",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!("{\"city\": \"Oslo\", \"days\": 1e999}"),
        ),
        (
            "a lone surrogate escape",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!("{\"city\": \"\\ud800\", \"days\": 1}"),
        ),
        (
            "arguments not an object",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!([1, 2]),
        ),
        (
            "duplicate key in argument text",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!("{\"city\":\"a\",\"city\":\"b\",\"days\":1}"),
        ),
        (
            "a repeated key, an earlier value of it not valid",
            "invalid_arguments",
            &Weather,
            "get_weather",
            json!("{\"city\":\"Oslo\",\"days\":1,\"units\":1,\"units\":\"Celsius\"}"),
        ),
        (
            "the tool's own retryable error",
            "tool_failed",
            &Weather,
            "station",
            json!({"id": 7}),
        ),
        (
            "the tool panicked",
            "panicked",
            &Weather,
            "broken",
            json!({}),
        ),
        (
            "the tool timed out",
            "timed_out",
            &Weather,
            "slow",
            json!({}),
        ),
        (
            "a non-finite result",
            "tool_failed",
            &Weather,
            "ratio",
            json!({}),
        ),
        (
            "a missing context extension",
            "tool_failed",
            &Weather,
            "configured",
            json!({}),
        ),
    ];
    let mut rows = Vec::new();
    for (case, kind, toolbox, name, arguments) in cases {
        let (text, retry) = call(&toolbox, name, arguments).await;
        rows.push(Row {
            case,
            kind,
            text,
            retry: yes_no(retry),
        });
    }

    // Texts from the turn runner.
    let runner = TurnRunner::new(&Weather).approval(|request| async move {
        match request.call.name.as_str() {
            "station" => Decision::Reject {
                reason: "stations are read by the operator".into(),
            },
            _ => Decision::Defer,
        }
    });
    let outcomes = runner
        .run(
            vec![
                ToolCall::new("station", json!({"id": 1})),
                ToolCall::new("get_weather", json!({"city": "Oslo", "days": 1})),
            ],
            &Context::new(),
        )
        .await;
    rows.push(Row {
        case: "rejected by the approval hook",
        kind: "tool_failed",
        text: outcomes[0].response.content.clone(),
        retry: "no",
    });
    rows.push(Row {
        case: "deferred by the approval hook (not an error)",
        kind: "-",
        text: outcomes[1].response.content.clone(),
        retry: "-",
    });
    let many: Vec<ToolCall> = (0..3).map(|_| ToolCall::new("ratio", json!({}))).collect();
    let outcomes = TurnRunner::new(&Weather)
        .max_calls(2)
        .run(many, &Context::new())
        .await;
    rows.push(Row {
        case: "over the turn's call cap",
        kind: "tool_failed",
        text: outcomes[2].response.content.clone(),
        retry: "later turn",
    });

    // Deferred tools and replay.
    let deferred =
        DeferredToolBox::new(EmptyToolBox, vec![ToolSpecification::new("plan", "Plans")]);
    let (text, _) = call(&deferred, "plan", json!({})).await;
    rows.push(Row {
        case: "a deferred tool's answer (not an error)",
        kind: "-",
        text,
        retry: "-",
    });
    let tape = vec![TapeEntry {
        call_id: None,
        name: "get_weather".into(),
        arguments: json!({"city": "Oslo", "days": 1}),
        response: ToolResponse::text("Oslo 1 None"),
        error: None,
        duration_us: 10,
    }];
    let replay = ReplayToolBox::new(tape, Weather);
    let (text, retry) = call(&replay, "get_weather", json!({"city": "Bergen", "days": 1})).await;
    rows.push(Row {
        case: "replay drift",
        kind: "tool_failed",
        text,
        retry: yes_no(retry),
    });

    // Errors built directly, for what a local box cannot produce.
    for (case, error) in [
        ("the call was cancelled", ToolError::Cancelled),
        (
            "an MCP server could not be reached",
            ToolError::Transport {
                message: "mcp server `files` is gone".into(),
                source: None,
            },
        ),
        (
            "a local set-up mistake (a pin file that cannot be written)",
            ToolError::configuration("the pin file /etc/x.lock.json cannot be written"),
        ),
    ] {
        rows.push(Row {
            case,
            kind: error.kind().as_str(),
            text: error.model_message(),
            retry: yes_no(Some(error.is_retryable())),
        });
    }
    rows
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| case | kind (`error.type`) | what the model reads | can a retry help |\n|---|---|---|---|\n",
    );
    for row in rows {
        let text = row
            .text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('|', "&#124;")
            .replace('`', "&#96;");
        out.push_str(&format!(
            "| {} | {} | <code>{}</code> | {} |\n",
            row.case, row.kind, text, row.retry
        ));
    }
    out
}

const START: &str = "<!-- generated by tests/error_texts.rs: start -->\n";
const END: &str = "<!-- generated by tests/error_texts.rs: end -->";

#[tokio::test]
async fn docs_errors_md_lists_every_model_facing_text() {
    std::panic::set_hook(Box::new(|_| {}));
    let rows = rows().await;
    let _ = std::panic::take_hook();
    let generated = table(&rows);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/errors.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (before, rest) = page
        .split_once(START)
        .expect("docs/errors.md has the start marker");
    let (current, after) = rest
        .split_once(END)
        .expect("docs/errors.md has the end marker");
    if std::env::var_os("TOOLBOX_BLESS").is_some() {
        std::fs::write(&path, format!("{before}{START}{generated}{END}{after}")).unwrap();
        return;
    }
    assert_eq!(
        current, generated,
        "docs/errors.md is out of date: run `TOOLBOX_BLESS=1 cargo test --test integration error_texts::`"
    );
}

#[tokio::test]
async fn texts_speak_json_and_name_the_path() {
    let (text, _) = call(&Weather, "get_weather", json!({"city": null, "days": 1})).await;
    assert_eq!(
        text,
        "invalid arguments at `city`: `null` is not allowed here; expected a string"
    );
    let (text, _) = call(
        &Weather,
        "get_weather",
        json!({"city": "Oslo", "days": 300}),
    )
    .await;
    assert_eq!(
        text,
        "invalid arguments at `days`: got `300`, expected an integer from 0 to 255"
    );
    let merged = MultiToolBox::builder()
        .add("weather", Weather)
        .build()
        .unwrap();
    let (text, retry) = call(&merged, "get_wether", json!({})).await;
    assert_eq!(
        text,
        "unknown tool `get_wether`; did you mean `weather_get_weather`?"
    );
    assert_eq!(retry, Some(true));
    let (text, _) = call(&Weather, "get\u{0}weather\n", json!({})).await;
    assert_eq!(
        text,
        "unknown tool `get\\u0000weather\\n`; did you mean `get_weather`?"
    );
}

#[tokio::test]
async fn wide_integers_say_integer_narrow_ones_their_range() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Wide {
        signed: i64,
        unsigned: u64,
        small: i32,
    }
    let tools = toolbox::FnToolBox::new([toolbox::tool_fn(
        "wide",
        "Takes wide integers",
        |w: Wide| async move { w.signed + w.unsigned as i64 + i64::from(w.small) },
    )])
    .unwrap();
    for (arguments, expected) in [
        (
            json!({"signed": "x", "unsigned": 1, "small": 1}),
            "invalid arguments at `signed`: got the string \"x\", expected an integer",
        ),
        (
            json!({"signed": 1, "unsigned": -1, "small": 1}),
            "invalid arguments at `unsigned`: got `-1`, expected a non-negative integer",
        ),
        (
            json!({"signed": 1, "unsigned": 1, "small": 3000000000u64}),
            "invalid arguments at `small`: got `3000000000`, expected an integer from -2147483648 to 2147483647",
        ),
    ] {
        let (text, _) = call(&tools, "wide", arguments).await;
        assert_eq!(text, expected);
    }
}
