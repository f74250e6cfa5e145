//! MCP Apps through `McpToolBox`: a view-only tool (`_meta.ui.visibility`
//! without `"model"`) is never offered to a model, is listed and called on
//! the view's path, and a proxy serves every tool and view unchanged.

use std::time::Duration;

use rmcp::model::ReadResourceRequestParams;
use rmcp::ServiceExt;
use serde_json::json;
use toolbox_core::spec::ToolUi;
use toolbox_core::{
    tool_fn, Context, FnToolBox, ToolBox, ToolBoxExt, ToolHandler, ToolSpecification,
};
use toolbox_mcp::apps::UiResource;
use toolbox_mcp::{serve_http, McpServer, McpToolBox};
use toolbox_provider::Provider;

const CARD_HTML: &str =
    "<!doctype html><html><body><div id=card></div><script>/* the view */</script></body></html>";

/// The weather card's view, as the server registers it.
fn card_view() -> UiResource {
    UiResource::new("ui://weather/card", CARD_HTML)
        .csp(json!({"connectDomains": ["https://api.weather.example"]}))
        .permissions(json!({"geolocation": {}}))
        .prefers_border(true)
}

/// The weather tools served with their view.
fn weather_server() -> McpServer<FnToolBox> {
    McpServer::new(tools(), "weather").ui_resource(card_view())
}

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
    let server = serve_http(weather_server(), "127.0.0.1:0").await.unwrap();
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

/// The raw `tools/list` of the server at `url`, as JSON, by rmcp's own
/// client: what a host reads.
async fn raw_listing(url: &str) -> Vec<serde_json::Value> {
    // rmcp's HTTP client builds on reqwest without a TLS provider chosen.
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    tools
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect()
}

#[tokio::test]
async fn a_proxy_serves_every_tool_and_view_unchanged_and_the_host_sorts_them() {
    let origin = serve_http(weather_server(), "127.0.0.1:0").await.unwrap();
    let remote = McpToolBox::http(origin.url()).connect().await.unwrap();
    // The views the tools name, read from the origin.
    assert_eq!(remote.ui_resources().await.unwrap(), [card_view()]);
    let proxy = serve_http(
        McpServer::proxy(remote, "proxy").await.unwrap(),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    // A host reads the same listing from the proxy as from the origin:
    // the view-only tool too, `_meta.ui` unchanged.
    let direct = raw_listing(&origin.url()).await;
    let proxied = raw_listing(&proxy.url()).await;
    let names_of = |tools: &[serde_json::Value]| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names_of(&proxied),
        ["weather", "refresh_card", "forecast", "ping"]
    );
    assert_eq!(names_of(&direct), names_of(&proxied));
    for (direct, proxied) in direct.iter().zip(&proxied) {
        assert_eq!(direct["_meta"], proxied["_meta"], "{}", direct["name"]);
    }
    assert_eq!(
        proxied[0]["_meta"]["ui"],
        json!({"resourceUri": "ui://weather/card", "visibility": ["model", "app"],
            "prefersBorder": true, "csp": {"connectDomains": ["https://api.weather.example"]}})
    );
    // A client of the proxy sorts them as it would the origin's: the
    // model is not offered the view's tool; the view calls it through
    // the proxy; the view reads its view from the proxy.
    let client = McpToolBox::http(proxy.url()).connect().await.unwrap();
    let ctx = Context::new();
    let offered = client.specifications(&ctx);
    assert_eq!(names(&offered), ["weather", "forecast", "ping"]);
    assert_eq!(
        offered.iter().find(|s| s.name == "weather").unwrap().ui,
        Some(card())
    );
    let handler = ToolHandler::empty();
    let answered = client
        .call_for_app("refresh_card", &json!({}), &ctx, &handler)
        .await;
    assert_eq!(answered.content, "refreshed");
    assert_eq!(
        client.ui_resource("ui://weather/card").await.unwrap(),
        card_view()
    );
    proxy.shutdown(Duration::from_secs(5)).await;
    origin.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn views_are_served_as_ui_resources_with_the_extension_advertised() {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = weather_server().serve(server_side).await.unwrap();
        let _ = service.waiting().await;
    });
    let client = ().serve(client_side).await.unwrap();
    let capabilities = &client.peer_info().unwrap().capabilities;
    assert!(capabilities.resources.is_some());
    assert_eq!(
        serde_json::to_value(
            &capabilities.extensions.as_ref().unwrap()["io.modelcontextprotocol/ui"]
        )
        .unwrap(),
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(
        serde_json::to_value(&listed).unwrap(),
        json!([{
            "uri": "ui://weather/card",
            "name": "weather/card",
            "mimeType": "text/html;profile=mcp-app",
            "_meta": {"ui": {
                "csp": {"connectDomains": ["https://api.weather.example"]},
                "permissions": {"geolocation": {}},
                "prefersBorder": true
            }}
        }])
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new("ui://weather/card"))
        .await
        .unwrap();
    let contents = serde_json::to_value(&read.contents).unwrap();
    assert_eq!(contents[0]["text"], CARD_HTML);
    assert_eq!(contents[0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents[0]["_meta"]["ui"]["prefersBorder"], true);
    // Any other URI is not a resource of this server.
    let error = client
        .read_resource(ReadResourceRequestParams::new("file:///etc/passwd"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no resource `file:///etc/passwd`: this server serves only its MCP Apps views (`ui://weather/card`)"),
        "{error}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn serving_refuses_a_ui_tool_whose_view_was_never_registered() {
    let error = serve_http(McpServer::new(tools(), "weather"), "127.0.0.1:0")
        .await
        .err()
        .expect("serving must not start")
        .to_string();
    assert_eq!(
        error,
        "the tool `weather` shows the view `ui://weather/card`, which the server does not serve: register it with `McpServer::ui_resource(UiResource::new(\"ui://weather/card\", html))` (served: none registered)"
    );
    let bad = McpServer::new(tools(), "weather")
        .ui_resource(card_view())
        .ui_resource(UiResource::new("https://example.com/card", "<p>"));
    assert_eq!(
        bad.check_views().unwrap_err(),
        "the MCP Apps view `https://example.com/card` is not a ui:// URI"
    );
    // A server without UI tools needs no views and advertises none.
    assert!(McpServer::new(
        FnToolBox::new([tool_fn("ping", "Answers", |_: ()| async { "pong" })]).unwrap(),
        "plain"
    )
    .check_views()
    .is_ok());
}

#[tokio::test]
async fn the_client_reads_a_view_and_refuses_what_is_not_one() {
    let server = serve_http(weather_server(), "127.0.0.1:0").await.unwrap();
    let remote = McpToolBox::http(server.url()).connect().await.unwrap();
    let view = remote.ui_resource("ui://weather/card").await.unwrap();
    assert_eq!(view.html, CARD_HTML);
    assert_eq!(view.prefers_border, Some(true));
    let error = remote
        .ui_resource("https://example.com/")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`https://example.com/` is not an MCP Apps view: views are ui:// resources"
    );
    let missing = remote.ui_resource("ui://weather/map").await.unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("no resource `ui://weather/map`"),
        "{missing}"
    );
    server.shutdown(Duration::from_secs(5)).await;
}

/// A server whose one tool answers with the MCP extensions its client
/// declared in the handshake.
fn extensions_echo() -> McpServer<FnToolBox> {
    McpServer::new(
        FnToolBox::new([toolbox_core::try_tool_fn(
            "client_extensions",
            "The extensions the client declared",
            |_: (), ctx: Context| async move {
                use toolbox_core::FromContext;
                let client = toolbox_mcp::McpPeer::from_context(&ctx)?;
                let declared = client
                    .peer()
                    .peer_info()
                    .and_then(|info| info.capabilities.extensions.clone());
                Ok::<_, toolbox_core::ToolError>(serde_json::to_string(&declared).unwrap())
            },
        )])
        .unwrap(),
        "echo",
    )
}

async fn declared_extensions(renders_apps: Option<bool>) -> serde_json::Value {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = extensions_echo().serve(server_side).await.unwrap();
        let _ = service.waiting().await;
    });
    let mut connect = McpToolBox::transport(client_side);
    if let Some(renders) = renders_apps {
        connect = connect.renders_apps(renders);
    }
    let remote = connect.connect().await.unwrap();
    let answer = remote
        .call(
            "client_extensions",
            &json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert!(!answer.is_error, "{}", answer.content);
    remote.close().await.unwrap();
    serde_json::from_str(&answer.content).unwrap()
}

#[tokio::test]
async fn a_client_that_renders_apps_says_so_in_the_handshake() {
    // Tasks are declared always: a call the server turns into one is
    // driven inside the call (tests/tasks.rs).
    assert_eq!(
        declared_extensions(Some(true)).await,
        json!({
            "io.modelcontextprotocol/tasks": {},
            "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}
        })
    );
    // Apps not by default, nor when the application says it renders none.
    let without = json!({"io.modelcontextprotocol/tasks": {}});
    assert_eq!(declared_extensions(None).await, without);
    assert_eq!(declared_extensions(Some(false)).await, without);
}
