//! MCP Apps against a server nobody here wrote: the official Python SDK's
//! `MCPServer` (`scripts/apps_python_server.py`) over stdio. A tool whose
//! `_meta.ui.visibility` leaves out the model is kept from every model and
//! reached on the view's path; the view is read with its CSP, permissions,
//! border preference, domain and any other key; a proxy serves the server's tools and view
//! unchanged, and refuses to start, naming both, when a tool names a view
//! the server does not serve.
//!
//! Ignored by default: it needs the Python SDK, which `scripts/interop`
//! installs into `.interop/venv` before running it (`.ci/run` does).
//! `TOOLBOX_PYTHON` overrides where Python is looked for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::ServiceExt;
use serde_json::json;
use toolbox_core::{Context, ToolBox, ToolBoxExt, ToolHandler, ToolSpecification};
use toolbox_mcp::{serve_http, McpServer, McpToolBox};
use toolbox_provider::Provider;

const CARD: &str = "ui://python-weather/card";

fn python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var_os("TOOLBOX_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".interop/venv/bin/python"));
    assert!(
        python.exists(),
        "no Python SDK at {}: run scripts/interop (or set TOOLBOX_PYTHON)",
        python.display()
    );
    python
}

/// The Python server, spawned over stdio.
async fn python_server(args: &[&str]) -> McpToolBox {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/apps_python_server.py");
    let mut command = tokio::process::Command::new(python());
    command.arg(script).args(args);
    McpToolBox::stdio(command)
        .connect()
        .await
        .expect("the Python SDK's server starts")
}

fn names(specs: &[ToolSpecification]) -> Vec<&str> {
    specs.iter().map(|s| s.name.as_str()).collect()
}

#[tokio::test]
#[ignore = "needs the Python SDK: run scripts/interop (.ci/run does)"]
async fn a_python_sdk_servers_view_only_tool_is_kept_from_the_model_and_reached_by_the_view() {
    let remote = python_server(&[]).await;
    let ctx = Context::new();
    let offered = remote.specifications(&ctx);
    assert_eq!(names(&offered), ["show_weather", "forecast"]);
    for provider in [
        Provider::OpenAiChat { strict: true },
        Provider::OpenAiResponses { strict: true },
        Provider::Anthropic { strict: false },
        Provider::Gemini,
        Provider::Mcp,
    ] {
        let definitions = provider.definitions(&offered).unwrap().to_string();
        assert!(
            !definitions.contains("refresh_weather"),
            "{provider:?}: {definitions}"
        );
    }
    // `_meta.ui`, typed, as the Python SDK sent it.
    let ui = offered[0].ui.as_ref().unwrap();
    assert_eq!(ui.resource_uri.as_deref(), Some(CARD));
    assert_eq!(
        ui.visibility.as_deref(),
        Some(&["model".to_owned(), "app".to_owned()][..])
    );
    // The view's path: what the view may call, and calls to it.
    assert_eq!(
        names(&remote.app_tools()),
        ["show_weather", "refresh_weather"]
    );
    let handler = ToolHandler::empty();
    let shown = remote
        .call("show_weather", &json!({"city": "Lisbon"}), &ctx, &handler)
        .await;
    assert_eq!(shown.content, "Lisbon: 18 C, reading 1");
    let refused = remote
        .call("refresh_weather", &json!({}), &ctx, &handler)
        .await;
    assert!(
        refused
            .content
            .starts_with("unknown tool `refresh_weather`"),
        "{}",
        refused.content
    );
    let refreshed = remote
        .call_for_app("refresh_weather", &json!({}), &ctx, &handler)
        .await;
    assert_eq!(refreshed.content, "refreshed, reading 2");
    let refused = remote
        .call_for_app("forecast", &json!({"city": "Lisbon"}), &ctx, &handler)
        .await;
    assert_eq!(
        refused.content,
        "the tool `forecast` is not callable from its app's view: its MCP Apps visibility is model"
    );
    // The view, with what the host must apply.
    let view = remote.ui_resource(CARD).await.unwrap();
    assert!(view.html.contains("<div id=card>"), "{}", view.html);
    assert_eq!(
        view.csp,
        Some(json!({"connectDomains": ["https://api.weather.example"]}))
    );
    assert_eq!(view.permissions, Some(json!({"geolocation": {}})));
    assert_eq!(view.prefers_border, Some(true));
    assert_eq!(view.domain.as_deref(), Some("python-weather.example"));
    assert_eq!(view.other["vendorHint"], json!({"compact": true}));
    remote.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs the Python SDK: run scripts/interop (.ci/run does)"]
async fn a_python_sdk_server_proxied_lists_and_reads_as_itself() {
    // What the Python server lists, by rmcp's own client.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/apps_python_server.py");
    let mut command = tokio::process::Command::new(python());
    command.arg(&script);
    let direct_client =
        ().serve(rmcp::transport::TokioChildProcess::new(command).unwrap())
            .await
            .unwrap();
    let direct = direct_client.list_all_tools().await.unwrap();
    let direct_view = direct_client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(CARD))
        .await
        .unwrap();
    direct_client.cancel().await.unwrap();

    let proxy = serve_http(
        McpServer::proxy(python_server(&[]).await, "proxy")
            .await
            .unwrap(),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    // rmcp's HTTP client builds on reqwest without a TLS provider chosen.
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(proxy.url());
    let client = ().serve(transport).await.unwrap();
    let proxied = client.list_all_tools().await.unwrap();
    assert_eq!(
        proxied.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        ["show_weather", "refresh_weather", "forecast"]
    );
    for (direct, proxied) in direct.iter().zip(&proxied) {
        assert_eq!(direct.name, proxied.name);
        assert_eq!(
            serde_json::to_value(&direct.meta).unwrap(),
            serde_json::to_value(&proxied.meta).unwrap(),
            "{}",
            direct.name
        );
    }
    // The view, read through the proxy as the Python server serves it.
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(CARD))
        .await
        .unwrap();
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    let direct_contents = serde_json::to_value(&direct_view.contents[0]).unwrap();
    assert_eq!(contents, direct_contents);
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        contents["_meta"]["ui"]["vendorHint"],
        json!({"compact": true})
    );
    // The view's own call, through the proxy, reaches the Python tool.
    let called = client
        .call_tool(rmcp::model::CallToolRequestParams::new("refresh_weather"))
        .await
        .unwrap();
    let text = serde_json::to_value(&called.content).unwrap().to_string();
    assert!(text.contains("refreshed, reading 1"), "{text}");
    client.cancel().await.unwrap();
    proxy.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
#[ignore = "needs the Python SDK: run scripts/interop (.ci/run does)"]
async fn a_proxy_of_a_server_missing_a_view_names_the_view_and_the_tool() {
    let remote = python_server(&["--missing-view"]).await;
    let error = McpServer::proxy(remote, "proxy")
        .await
        .err()
        .expect("the view is missing")
        .to_string();
    assert!(
        error.starts_with(
            "the view `ui://python-weather/gone` of the tool `show_weather` could not be read:"
        ),
        "{error}"
    );
}
