//! Every tool the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) calls, built with toolbox's public
//! API only, served over Streamable HTTP. `scripts/conformance` runs the
//! suite against it.
//!
//! ```sh
//! cargo run --features mcp --example conformance_server -- --http 127.0.0.1:8766
//! ```

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use toolbox::mcp::{
    serve_http,
    server::{Elicitation, McpLog, McpMeta},
    McpPeer, McpProgress, McpServer,
};
use toolbox::prelude::*;
use toolbox::Content;

/// A 1×1 PNG and a tiny WAV, as the suite expects them.
const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

#[derive(Deserialize, JsonSchema)]
struct Prompt {
    /// The prompt to send to the LLM.
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Compute {
    /// How long the computation takes, in seconds.
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

/// The tools the Tasks extension's scenarios (`tasks-*`) call as tasks.
const TASK_TOOLS: [&str; 3] = ["slow_compute", "failing_job", "protocol_error_job"];

#[derive(Deserialize, JsonSchema)]
struct Message {
    /// The message to show the user.
    message: String,
}

fn image() -> Content {
    Content::Image {
        data: IMAGE.into(),
        mime_type: "image/png".into(),
    }
}

fn client(ctx: &Context) -> Result<McpPeer, ToolError> {
    McpPeer::from_context(ctx)
}

/// What the user answered, as the suite reads it.
fn answered(prefix: &str, answer: Result<Elicitation<Value>, ToolError>) -> String {
    match answer {
        Ok(Elicitation::Accept(content)) => format!("{prefix}: action=accept, content={content}"),
        Ok(Elicitation::Decline) => format!("{prefix}: action=decline, content={{}}"),
        Ok(Elicitation::Cancel) => format!("{prefix}: action=cancel, content={{}}"),
        Err(error) => format!("Elicitation not supported or error: {error}"),
    }
}

fn tools() -> Result<FnToolBox, DefinitionError> {
    FnToolBox::new([
        tool_fn("test_simple_text", "Tests simple text content response", |_: ()| async {
            "This is a simple text response for testing."
        }),
        tool_fn("test_image_content", "Tests image content response", |_: ()| async {
            ToolResponse::from_parts([image()])
        }),
        tool_fn("test_audio_content", "Tests audio content response", |_: ()| async {
            ToolResponse::from_parts([Content::Audio {
                data: AUDIO.into(),
                mime_type: "audio/wav".into(),
            }])
        }),
        tool_fn("test_embedded_resource", "Tests embedded resource content response", |_: ()| async {
            ToolResponse::from_parts([Content::text_resource(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )])
        }),
        tool_fn(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            |_: ()| async {
                ToolResponse::from_parts([
                    Content::text("Multiple content types test:"),
                    image(),
                    Content::text_resource(
                        "test://mixed-content-resource",
                        "application/json",
                        json!({"test": "data", "value": 123}).to_string(),
                    ),
                ])
            },
        ),
        try_tool_fn(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
            |_: (), ctx: Context| async move {
                let log = McpLog::from_context(&ctx)?;
                log.info("Tool execution started").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                log.info("Tool processing data").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                log.info("Tool execution completed").await;
                Ok::<_, ToolError>("Tool with logging executed successfully")
            },
        ),
        try_tool_fn("test_error_handling", "Tests error response handling", |_: ()| async {
            Err::<String, _>("This tool intentionally returns an error for testing")
        }),
        try_tool_fn(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
            |_: (), ctx: Context| async move {
                let progress = McpProgress::from_context(&ctx)?;
                for step in [0.0, 50.0, 100.0] {
                    progress.report(step, Some(100.0), Some(&format!("Completed step {step} of 100")));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                let meta = McpMeta::from_context(&ctx)?;
                Ok::<_, ToolError>(meta.0.get("progressToken").map(|t| match t {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                }).unwrap_or_else(|| "0".into()))
            },
        ),
        try_tool_fn(
            "test_sampling",
            "Tests server-initiated sampling (LLM completion request)",
            |p: Prompt, ctx: Context| async move {
                match client(&ctx)?.sample(p.prompt, 100).await {
                    Ok(sample) => Ok::<_, ToolError>(format!("LLM response: {}", sample.text)),
                    Err(error) => Ok(format!("Sampling not supported or error: {error}")),
                }
            },
        ),
        try_tool_fn(
            "test_elicitation",
            "Tests server-initiated elicitation (user input request)",
            |m: Message, ctx: Context| async move {
                let schema = json!({"type": "object",
                    "properties": {"response": {"type": "string", "description": "User's response"}},
                    "required": ["response"]});
                let answer = client(&ctx)?.elicit_with_schema(m.message, schema).await;
                Ok::<_, ToolError>(answered("User response", answer))
            },
        ),
        try_tool_fn(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
            |_: (), ctx: Context| async move {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                }, "required": []});
                let answer = client(&ctx)?
                    .elicit_with_schema("Please review and update the form fields with defaults", schema)
                    .await;
                Ok::<_, ToolError>(answered("Elicitation completed", answer))
            },
        ),
        try_tool_fn(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
            |_: (), ctx: Context| async move {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                        {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}
                }, "required": []});
                let answer = client(&ctx)?
                    .elicit_with_schema("Please select options from the enum fields", schema)
                    .await;
                Ok::<_, ToolError>(answered("Elicitation completed", answer))
            },
        ),
        tool_fn(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            |args: Value| async move { format!("JSON Schema 2020-12 tool called with: {args}") },
        )
        .with_parameters(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        })),
        // `2026-07-28`: the same questions, asked as an `InputRequiredResult`
        // under the keys the suite names; the tool runs again with the answer.
        try_tool_fn(
            "test_input_required_result_elicitation",
            "Asks the user's name (an input round in 2026-07-28)",
            |_: (), ctx: Context| async move {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
                let answer = client(&ctx)?
                    .keyed("user_name")
                    .elicit_with_schema("What is your name?", schema)
                    .await?;
                Ok::<_, ToolError>(match answer {
                    Elicitation::Accept(content) => format!(
                        "Hello, {}!",
                        content.get("name").and_then(Value::as_str).unwrap_or("unknown")
                    ),
                    _ => "No name given".to_owned(),
                })
            },
        ),
        try_tool_fn(
            "test_input_required_result_sampling",
            "Asks the client's model a question (an input round in 2026-07-28)",
            |_: (), ctx: Context| async move {
                let sample = client(&ctx)?
                    .keyed("capital_question")
                    .sample("What is the capital of France?", 100)
                    .await?;
                Ok::<_, ToolError>(sample.text)
            },
        ),
        // The 2026-07-28 suite's probes of the stateless rules.
        try_tool_fn(
            "test_missing_capability",
            "Needs the client's sampling capability",
            |_: (), ctx: Context| async move {
                client(&ctx)?.require("sampling")?;
                Ok::<_, ToolError>("Success")
            },
        ),
        try_tool_fn(
            "test_logging_tool",
            "Logs, when the request asks for a level",
            |_: (), ctx: Context| async move {
                McpLog::from_context(&ctx)?.info("Diagnostic trace logging activated").await;
                Ok::<_, ToolError>("Logging evaluated")
            },
        ),
        try_tool_fn(
            "test_streaming_elicitation",
            "Reports progress on the response stream",
            |_: (), ctx: Context| async move {
                McpProgress::from_context(&ctx)?.report(50.0, Some(100.0), None);
                Ok::<_, ToolError>("Streaming complete")
            },
        ),
        tool_fn("greet", "Greets someone, at once", |g: Greeting| async move {
            format!("Hello, {}!", g.name)
        }),
        tool_fn(
            "slow_compute",
            "Computes for `seconds` seconds (a task for clients of the Tasks extension)",
            |c: Compute| async move {
                tokio::time::sleep(Duration::from_secs_f64(c.seconds.clamp(0.0, 600.0))).await;
                format!("computed {}", c.label.unwrap_or_default())
            },
        ),
        try_tool_fn(
            "failing_job",
            "Fails after a second (a task for clients of the Tasks extension)",
            |_: ()| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Err::<String, _>(ToolError::failed("the job failed"))
            },
        ),
        tool_fn(
            "protocol_error_job",
            "Panics (a task for clients of the Tasks extension)",
            |_: ()| async {
                if std::hint::black_box(true) {
                    panic!("the job crashed");
                }
                "unreachable"
            },
        ),
        tool_fn(
            "test_reconnection",
            "Tests SSE stream disconnection and client reconnection (SEP-1699)",
            |_: ()| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
            },
        ),
    ])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let address = match args.as_slice() {
        [flag, address] if flag == "--http" => address.clone(),
        _ => {
            eprintln!("usage: conformance_server --http ADDRESS (e.g. 127.0.0.1:8766)");
            std::process::exit(2);
        }
    };
    // `failing_job` is the suite's tool whose task is required.
    let server = TASK_TOOLS
        .into_iter()
        .fold(
            McpServer::new(tools()?, "toolbox-conformance"),
            McpServer::task,
        )
        .task_required("failing_job");
    let server = serve_http(server, address.as_str()).await?;
    eprintln!("serving the conformance tools at {}", server.url());
    tokio::signal::ctrl_c().await?;
    server.shutdown(std::time::Duration::from_secs(5)).await;
    Ok(())
}
