//! What a served tool asks of its MCP client, and how the client side
//! introduces itself: logging under the client's level, elicitation and
//! sampling (declared or not), content parts as blocks through two hops,
//! `McpToolBox`'s handshake and SEP-1034 defaults.
#![allow(deprecated)] // rmcp marks logging and sampling deprecated for 2026-07-28

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ErrorData,
    LoggingMessageNotificationParam, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use toolbox_core::{
    tool_fn, try_tool_fn, Content, Context, FnToolBox, FromContext, ToolBox, ToolBoxExt, ToolError,
    ToolHandler, ToolResponse,
};
use toolbox_mcp::{
    server::{Elicitation, LogLevel, McpLog},
    McpPeer, McpServer, McpToolBox,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Person {
    name: String,
}

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn served() -> FnToolBox {
    FnToolBox::new([
        try_tool_fn(
            "chatty",
            "Logs at three levels",
            |_: (), ctx: Context| async move {
                let log = McpLog::from_context(&ctx)?;
                log.debug("a detail").await;
                log.clone().with_logger("db").info(json!({"rows": 3})).await;
                log.warning("running low").await;
                Ok::<_, ToolError>("done")
            },
        ),
        try_tool_fn(
            "greet",
            "Asks the user's name",
            |_: (), ctx: Context| async move {
                let client = McpPeer::from_context(&ctx)?;
                Ok::<_, ToolError>(match client.elicit::<Person>("Who are you?").await? {
                    Elicitation::Accept(person) => format!("Hello, {}!", person.name),
                    Elicitation::Decline => "declined".to_owned(),
                    Elicitation::Cancel => "cancelled".to_owned(),
                })
            },
        ),
        try_tool_fn(
            "ask_model",
            "Asks the client's model",
            |_: (), ctx: Context| async move {
                let sample = McpPeer::from_context(&ctx)?
                    .sample("Capital of France?", 50)
                    .await?;
                Ok::<_, ToolError>(format!("{} ({})", sample.text, sample.model))
            },
        ),
        try_tool_fn(
            "form",
            "A form with defaults",
            |_: (), ctx: Context| async move {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30}
                }});
                let answer = McpPeer::from_context(&ctx)?
                    .elicit_with_schema("Fill in", schema)
                    .await?;
                Ok::<_, ToolError>(match answer {
                    Elicitation::Accept(content) => content.to_string(),
                    _ => "no".to_owned(),
                })
            },
        ),
        try_tool_fn(
            "who",
            "Names the client",
            |_: (), ctx: Context| async move {
                let client = McpPeer::from_context(&ctx)?;
                Ok::<_, ToolError>(format!(
                    "{} {} {}",
                    client.name().unwrap_or_default(),
                    client.version().unwrap_or_default(),
                    client.protocol_version().unwrap_or_default()
                ))
            },
        ),
        tool_fn("picture", "A caption and a picture", |_: ()| async {
            ToolResponse::from_parts([
                Content::text("A pixel:"),
                Content::Image {
                    data: PNG.into(),
                    mime_type: "image/png".into(),
                },
            ])
        }),
        tool_fn("annotated", "A block with annotations", |_: ()| async {
            ToolResponse::text("[image/png image]").with_element(json!({"content": [
                {"type": "image", "data": PNG, "mimeType": "image/png",
                 "annotations": {"audience": ["user"], "priority": 0.5}}
            ]}))
        }),
    ])
    .unwrap()
}

/// A client that records log messages and answers forms and sampling, or
/// declares neither.
#[derive(Clone, Default)]
struct Recorder {
    logs: Arc<Mutex<Vec<String>>>,
    capable: bool,
}

impl ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let value = serde_json::to_value(&params).unwrap();
        self.logs.lock().unwrap().push(format!(
            "{} {} {}",
            value["level"].as_str().unwrap(),
            value.get("logger").and_then(Value::as_str).unwrap_or("-"),
            value["data"]
        ));
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(&request).unwrap();
        let content = if request["message"] == "Fill in" {
            json!({"age": 41})
        } else {
            json!({"name": "Ada"})
        };
        Ok(serde_json::from_value(json!({"action": "accept", "content": content})).unwrap())
    }

    async fn create_message(
        &self,
        _: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(
            serde_json::from_value(json!({"model": "test-model", "role": "assistant",
            "content": {"type": "text", "text": "Paris"}}))
            .unwrap(),
        )
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        if self.capable {
            info.capabilities = serde_json::from_value::<ClientCapabilities>(
                json!({"elicitation": {}, "sampling": {}}),
            )
            .unwrap();
        }
        info
    }
}

fn serve<B: ToolBox + 'static>(tools: B) -> tokio::io::DuplexStream {
    let (server_side, client_side) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(tools, "test-server")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    client_side
}

async fn raw(handler: Recorder) -> RunningService<RoleClient, Recorder> {
    handler.serve(serve(served())).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, Recorder>, name: &str) -> Value {
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new(name.to_owned()))
        .await
        .unwrap();
    serde_json::to_value(result).unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The log messages once `n` have arrived (they travel as notifications).
async fn logs(recorder: &Recorder, n: usize) -> Vec<String> {
    for _ in 0..100 {
        if recorder.logs.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    recorder.logs.lock().unwrap().clone()
}

#[tokio::test]
async fn a_tool_logs_to_its_client_at_the_level_the_client_set() {
    let recorder = Recorder::default();
    let client = raw(recorder.clone()).await;
    let info = client.peer().peer_info().unwrap();
    assert!(serde_json::to_value(&info.capabilities)
        .unwrap()
        .get("logging")
        .is_some());
    assert_eq!(text(&call(&client, "chatty").await), "done");
    assert_eq!(
        logs(&recorder, 3).await,
        [
            "debug - \"a detail\"",
            "info db {\"rows\":3}",
            "warning - \"running low\""
        ]
    );
    recorder.logs.lock().unwrap().clear();
    let level: SetLevelRequestParams = serde_json::from_value(json!({"level": "warning"})).unwrap();
    client.peer().set_level(level).await.unwrap();
    call(&client, "chatty").await;
    assert_eq!(logs(&recorder, 1).await, ["warning - \"running low\""]);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_log_outside_mcp_goes_nowhere_and_never_fails() {
    let log = McpLog::from_context(&Context::new()).unwrap();
    assert!(!log.enabled(LogLevel::Emergency));
    log.error("nobody listens").await;
}

#[tokio::test]
async fn a_tool_elicits_and_samples_from_a_client_that_declared_them() {
    let client = raw(Recorder {
        capable: true,
        ..Recorder::default()
    })
    .await;
    assert_eq!(text(&call(&client, "greet").await), "Hello, Ada!");
    assert_eq!(
        text(&call(&client, "ask_model").await),
        "Paris (test-model)"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_client_without_the_capability_gets_a_tool_error_not_a_hang() {
    let client = raw(Recorder::default()).await;
    let result = call(&client, "greet").await;
    assert_eq!(result["isError"], true);
    assert_eq!(
        text(&result),
        "the MCP client does not support elicitation, which this tool needs"
    );
    let result = call(&client, "ask_model").await;
    assert_eq!(
        text(&result),
        "the MCP client does not support sampling, which this tool needs"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn content_parts_are_blocks_and_cross_a_proxy_unchanged() {
    let client = raw(Recorder::default()).await;
    let picture = call(&client, "picture").await;
    assert_eq!(
        picture["content"],
        json!([{"type": "text", "text": "A pixel:"}, {"type": "image", "data": PNG, "mimeType": "image/png"}])
    );
    let direct = call(&client, "annotated").await["content"].clone();
    let _ = client.cancel().await;

    // Proxied by McpToolBox, served again, and read by a plain client.
    let proxy = McpToolBox::transport(serve(served()))
        .connect()
        .await
        .unwrap();
    let response = proxy
        .call(
            "picture",
            &json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response.content, "A pixel:\n[image/png image]");
    assert_eq!(
        response.parts()[1],
        Content::Image {
            data: PNG.into(),
            mime_type: "image/png".into()
        }
    );
    let again = Recorder::default().serve(serve(proxy)).await.unwrap();
    assert_eq!(call(&again, "picture").await["content"], picture["content"]);
    assert_eq!(call(&again, "annotated").await["content"], direct);
    assert_eq!(direct[0]["annotations"]["audience"], json!(["user"]));
    let _ = again.cancel().await;
}

#[tokio::test]
async fn mcp_tool_box_introduces_itself_and_applies_form_defaults() {
    let proxy = McpToolBox::transport(serve(served()))
        .handler(Recorder {
            capable: true,
            ..Recorder::default()
        })
        .connect()
        .await
        .unwrap();
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    // The application's handler names no client: toolbox does, with the
    // newest version that has an `initialize`.
    let who = proxy.call("who", &json!({}), &ctx, &handler).await;
    assert_eq!(
        who.content,
        format!("toolbox {} 2025-11-25", env!("CARGO_PKG_VERSION"))
    );
    // The user filled `age` only: `name` comes from the form's default.
    let form = proxy.call("form", &json!({}), &ctx, &handler).await;
    assert_eq!(
        serde_json::from_str::<Value>(&form.content).unwrap(),
        json!({"age": 41, "name": "John Doe"})
    );
    proxy.close().await.unwrap();
}

#[tokio::test]
async fn a_proxied_servers_logs_reach_the_applications_handler() {
    let recorder = Recorder::default();
    let proxy = McpToolBox::transport(serve(served()))
        .handler(recorder.clone())
        .connect()
        .await
        .unwrap();
    let response = proxy
        .call("chatty", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "done");
    assert_eq!(logs(&recorder, 3).await.len(), 3);
    proxy.close().await.unwrap();
}
