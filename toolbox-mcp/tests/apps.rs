//! MCP Apps through `McpToolBox`: a view-only tool (`_meta.ui.visibility`
//! without `"model"`) is never offered to a model, is listed and called on
//! the view's path, and `_meta.ui` crosses a proxy unchanged.

use std::time::Duration;

use serde_json::json;
use toolbox_core::provider::Provider;
use toolbox_core::{
    tool_fn, Context, FnToolBox, ToolBox, ToolBoxExt, ToolHandler, ToolSpecification, ToolUi,
};
use toolbox_mcp::{serve_http, McpServer, McpToolBox};

fn card() -> ToolUi {
    let mut ui = ToolUi::new("ui://weather/card").with_visibility(["model", "app"]);
    ui.other.insert("prefersBorder".into(), json!(true));
    ui.other.insert(
        "csp".into(),
        json!({"connectDomains": ["https://api.weather.example"]}),
    );
    ui
}

fn tools() -> FnToolBox {
    FnToolBox::new([
        tool_fn(
            "weather",
            "The weather in a city, with a card",
            |_: ()| async { "sunny" },
        )
        .ui(card()),
        tool_fn(
            "refresh_card",
            "Refreshes the weather card",
            |_: ()| async { "refreshed" },
        )
        .ui(ToolUi::new("ui://weather/card").with_visibility(["app"])),
        tool_fn("forecast", "Tomorrow's weather", |_: ()| async { "rain" })
            .ui(ToolUi::default().with_visibility(["model"])),
        tool_fn("ping", "Answers", |_: ()| async { "pong" }),
    ])
    .unwrap()
}

fn names(specs: &[ToolSpecification]) -> Vec<&str> {
    specs.iter().map(|s| s.name.as_str()).collect()
}

#[tokio::test]
async fn a_view_only_tool_is_kept_from_the_model_and_reached_by_the_view() {
    let server = serve_http(McpServer::new(tools(), "weather"), "127.0.0.1:0")
        .await
        .unwrap();
    let remote = McpToolBox::http(server.url()).connect().await.unwrap();
    let ctx = Context::new();
    let offered = remote.specifications(&ctx);
    assert_eq!(names(&offered), ["weather", "forecast", "ping"]);
    for provider in [
        Provider::OpenAiChat { strict: true },
        Provider::OpenAiResponses { strict: true },
        Provider::Anthropic { strict: false },
        Provider::Gemini,
        Provider::Mcp,
    ] {
        let definitions = provider.definitions(&offered).unwrap().to_string();
        assert!(
            !definitions.contains("refresh_card"),
            "{provider:?}: {definitions}"
        );
    }
    assert!(remote.specification("refresh_card", &ctx).is_none());
    // `_meta.ui` is carried, typed, whole.
    let weather = offered.iter().find(|s| s.name == "weather").unwrap();
    assert_eq!(weather.ui, Some(card()));
    assert_eq!(
        weather.ui.as_ref().unwrap().resource_uri.as_deref(),
        Some("ui://weather/card")
    );
    // The view's path lists what the view may call.
    assert_eq!(
        names(&remote.app_tools()),
        ["weather", "refresh_card", "ping"]
    );
    // The model cannot call the view's tool; the suggestions name only
    // what the model is offered.
    let handler = ToolHandler::empty();
    let refused = remote
        .call("refresh_card", &json!({}), &ctx, &handler)
        .await;
    assert!(refused.is_error);
    assert!(
        refused.content.starts_with("unknown tool `refresh_card`"),
        "{}",
        refused.content
    );
    assert!(
        !refused.content.contains("refresh_card`?"),
        "{}",
        refused.content
    );
    // The view can; and cannot call a tool for the model only.
    let answered = remote
        .call_for_app("refresh_card", &json!({}), &ctx, &handler)
        .await;
    assert_eq!(answered.content, "refreshed");
    let refused = remote
        .call_for_app("forecast", &json!({}), &ctx, &handler)
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.content,
        "the tool `forecast` is not callable from its app's view: its MCP Apps visibility is model"
    );
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn meta_ui_crosses_a_proxy_unchanged() {
    let origin = serve_http(McpServer::new(tools(), "weather"), "127.0.0.1:0")
        .await
        .unwrap();
    let remote = McpToolBox::http(origin.url()).connect().await.unwrap();
    let proxy = serve_http(McpServer::new(remote, "proxy"), "127.0.0.1:0")
        .await
        .unwrap();
    let client = McpToolBox::http(proxy.url()).connect().await.unwrap();
    let offered = client.specifications(&Context::new());
    let weather = offered.iter().find(|s| s.name == "weather").unwrap();
    assert_eq!(weather.ui, Some(card()));
    // What the proxy's MCP listing says, as JSON.
    let listed = Provider::Mcp.definition(weather).unwrap();
    assert_eq!(
        listed["_meta"]["ui"],
        json!({"resourceUri": "ui://weather/card", "visibility": ["model", "app"],
            "prefersBorder": true, "csp": {"connectDomains": ["https://api.weather.example"]}})
    );
    proxy.shutdown(Duration::from_secs(5)).await;
    origin.shutdown(Duration::from_secs(5)).await;
}
