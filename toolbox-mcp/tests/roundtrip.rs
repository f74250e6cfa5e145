//! Our MCP box against our MCP server, in process, over a stream pair:
//! listing, calls, tool errors, local argument checks, hidden tools, close.

use rmcp::ServiceExt;
use serde_json::json;
use toolbox_core::{tool_fn, try_tool_fn, Context, FnToolBox, ToolBox, ToolBoxExt, ToolHandler};
use toolbox_mcp::{McpServer, McpToolBox};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Station {
    id: u32,
}

fn served() -> impl ToolBox {
    FnToolBox::new([
        tool_fn("get-sum", "Adds two integers", |p: Pair| async move {
            p.a + p.b
        })
        .read_only(),
        try_tool_fn("station", "Reports a station", |s: Station| async move {
            Err::<String, _>(format!("no station {}", s.id))
        }),
        tool_fn("secret", "Hidden", |_: ()| async { "the vault" }),
    ])
    .unwrap()
    .filter(|spec, _| spec.name != "secret")
}

async fn connect() -> McpToolBox {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(served(), "test-server")
            .serve(server_side)
            .await
            .expect("the server starts");
        let _ = service.waiting().await;
    });
    McpToolBox::transport(client_side)
        .connect()
        .await
        .expect("the client connects")
}

/// The proxy's tool names once they equal `want` (a refresh after
/// `list_changed` takes a moment), or as they stand after two seconds.
async fn listed(remote: &McpToolBox, ctx: &Context, want: &[&str]) -> Vec<String> {
    let mut got = Vec::new();
    for _ in 0..100 {
        got = remote
            .specifications(ctx)
            .into_iter()
            .map(|s| s.name)
            .collect();
        if got == want {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    got
}

#[tokio::test]
async fn a_served_box_is_listed_and_called_through_the_proxy() {
    let remote = connect().await;
    let ctx = Context::new();
    let names: Vec<String> = remote
        .specifications(&ctx)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        ["get-sum", "station"],
        "the hidden tool is not listed"
    );
    let sum = remote.specification("get-sum", &ctx).unwrap();
    assert!(sum.is_read_only(), "annotations cross as effects");
    assert_eq!(sum.parameters["required"], json!(["a", "b"]));

    let handler = ToolHandler::empty();
    let response = remote
        .call("get-sum", &json!({"a": 40, "b": 2}), &ctx, &handler)
        .await;
    assert_eq!(
        (response.content.as_str(), response.is_error),
        ("42", false)
    );

    // Text arguments, as providers send them.
    let response = remote
        .call("get-sum", r#"{"a": 1, "b": 2}"#, &ctx, &handler)
        .await;
    assert_eq!(response.content, "3");

    let response = remote
        .call("station", &json!({"id": 7}), &ctx, &handler)
        .await;
    assert!(response.is_error);
    assert_eq!(response.content, "no station 7");

    // Checked locally against the inputSchema: nothing is sent.
    let response = remote
        .call("get-sum", &json!({"a": "forty", "b": 2}), &ctx, &handler)
        .await;
    assert_eq!(
        response.content,
        "invalid arguments at `a`: got the string \"forty\", expected JSON type integer"
    );
    // The check an approval hook is shown is the call's own: the same
    // validator, the same words, before anything is sent.
    let verdict = remote.check("get-sum", (&json!({"a": "forty", "b": 2})).into(), &ctx);
    assert_eq!(
        verdict.unwrap_err().to_string(),
        "invalid arguments at `a`: got the string \"forty\", expected JSON type integer"
    );
    assert!(remote
        .check("get-sum", (&json!({"a": 40, "b": 2})).into(), &ctx)
        .is_ok());
    assert_eq!(
        remote
            .check("secret", (&json!({})).into(), &ctx)
            .unwrap_err()
            .to_string(),
        "unknown tool `secret`"
    );

    let response = remote.call("secret", &json!({}), &ctx, &handler).await;
    assert_eq!(response.content, "unknown tool `secret`");

    remote.close().await.unwrap();
    let response = remote
        .call("get-sum", &json!({"a": 1, "b": 1}), &ctx, &handler)
        .await;
    assert!(response.is_error);
    assert_eq!(
        response.content,
        "the tool's server could not be reached; try again later"
    );
}

#[tokio::test]
async fn the_server_refuses_hidden_and_bad_calls_in_band() {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(served(), "test-server")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let client = ().serve(client_side).await.unwrap();
    let mut params = rmcp::model::CallToolRequestParams::new("get-sum");
    params.arguments = Some(json!({"a": "x", "b": 1}).as_object().unwrap().clone());
    let result = client.call_tool(params).await.unwrap();
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(value["isError"], json!(true));
    assert_eq!(
        value["content"][0]["text"],
        json!("invalid arguments at `a`: got the string \"x\", expected an integer")
    );
    let error = client
        .call_tool(rmcp::model::CallToolRequestParams::new("secret"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("Unknown tool: secret"),
        "{error}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_same_over_streamable_http() {
    let server = toolbox_mcp::serve_http(McpServer::new(served(), "http-server"), "127.0.0.1:0")
        .await
        .unwrap();
    assert!(server.local_addr().ip().is_loopback());
    let remote = McpToolBox::http(server.url())
        .bearer("test-token")
        .connect()
        .await
        .unwrap();
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    assert_eq!(remote.specifications(&ctx).len(), 2);
    let response = remote
        .call("get-sum", &json!({"a": 20, "b": 22}), &ctx, &handler)
        .await;
    assert_eq!(response.content, "42");
    let response = remote
        .call("station", &json!({"id": 3}), &ctx, &handler)
        .await;
    assert_eq!(
        (response.content.as_str(), response.is_error),
        ("no station 3", true)
    );
    remote.close().await.unwrap();
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_foreign_host_header_is_refused() {
    let server = toolbox_mcp::serve_http(McpServer::new(served(), "http-server"), "127.0.0.1:0")
        .await
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer.lines().next().unwrap_or_default().to_owned();
    assert!(!status.contains(" 200 "), "{status}");
    assert!(status.starts_with("HTTP/1.1 4"), "{status}");
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn list_changed_refreshes_and_meta_crosses_both_ways() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use toolbox_mcp::server::McpMeta;

    let extra_on = Arc::new(AtomicBool::new(false));
    let flag = extra_on.clone();
    let tools = FnToolBox::new([
        tool_fn(
            "whoami",
            "Says who the caller is",
            |_: (), ctx: Context| async move {
                let meta = ctx.extension::<McpMeta>().cloned().unwrap_or_default();
                meta.0
                    .get("user")
                    .cloned()
                    .unwrap_or(serde_json::Value::Null)
            },
        ),
        tool_fn("extra", "Appears later", |_: ()| async { "late" }),
    ])
    .unwrap()
    .filter(move |spec, _| spec.name != "extra" || flag.load(Ordering::SeqCst));

    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let service = McpServer::new(tools, "dynamic")
            .serve(server_side)
            .await
            .unwrap();
        let _ = ready_tx.send(service.peer().clone());
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side)
        .connect()
        .await
        .unwrap()
        .forward_meta(|ctx| {
            let mut meta = serde_json::Map::new();
            if let Some(user) = ctx.extension::<String>() {
                meta.insert("user".into(), json!(user));
            }
            meta
        });
    let server_peer = ready_rx.await.unwrap();
    let ctx = Context::new().with_extension("ada".to_owned());
    assert_eq!(remote.specifications(&ctx).len(), 1);

    // `_meta` from the client's Context lands in the served tool's Context.
    let response = remote
        .call("whoami", &json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "ada");

    // The served box changes; the server says so; the proxy refreshes.
    extra_on.store(true, Ordering::SeqCst);
    server_peer.notify_tool_list_changed().await.unwrap();
    assert_eq!(
        listed(&remote, &ctx, &["whoami", "extra"]).await,
        ["whoami", "extra"]
    );

    // A registry scans the MCP box into a module like any local box.
    let registry = toolbox_registry::Registry::empty();
    registry.register_box(remote, "dynamic").unwrap();
    let resolved = registry.resolve(["extra@dynamic"]).unwrap();
    let response = resolved
        .call("extra", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "late");
}

/// A served box whose tool hangs, and the server-side events it produced.
fn hanging() -> (
    impl ToolBox,
    toolbox_core::ToolHandler,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = events.clone();
    let handler = ToolHandler::empty().on_error(move |e| {
        seen.lock()
            .unwrap()
            .push(format!("{} {}", e.name, e.error.kind()));
    });
    let tools = FnToolBox::new([tool_fn("hang", "Hangs", |_: ()| async {
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        "never"
    })])
    .unwrap();
    (tools, handler, events)
}

#[tokio::test]
async fn a_timeout_on_the_client_cancels_the_call_on_the_server() {
    let (tools, handler, events) = hanging();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(tools, "hanging")
            .handler(handler)
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side)
        .connect()
        .await
        .unwrap()
        .with_timeout(std::time::Duration::from_millis(100));
    let response = remote
        .call("hang", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "the tool did not finish within 100ms");
    let mut server_saw = Vec::new();
    for _ in 0..100 {
        server_saw = events.lock().unwrap().clone();
        if !server_saw.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        server_saw,
        ["hang cancelled"],
        "notifications/cancelled reached the tool"
    );
}

#[tokio::test]
async fn a_server_that_dies_mid_call_answers_at_once() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    // A bare server that answers the handshake and the listing, then dies
    // (closes its end) in the middle of the first call.
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(server_side);
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let request: serde_json::Value = serde_json::from_str(&line).unwrap();
            let result = match request["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "doomed", "version": "1"}
                }),
                Some("tools/list") => json!({"tools": [{
                    "name": "hang", "description": "Hangs", "inputSchema": {"type": "object"}
                }]}),
                Some("tools/call") => return, // dies: both halves dropped
                _ => continue,
            };
            let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
            write
                .write_all(format!("{response}\n").as_bytes())
                .await
                .unwrap();
        }
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();
    let started = std::time::Instant::now();
    let response = remote
        .call("hang", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        response.content,
        "the tool's server could not be reached; try again later"
    );
    let later = remote
        .call("hang", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(
        later.content,
        "the tool's server could not be reached; try again later"
    );
}

#[tokio::test]
async fn progress_crosses_from_the_served_tool_to_the_proxy_caller() {
    use std::sync::{Arc, Mutex};
    use toolbox_core::FromContext;
    use toolbox_mcp::{server::Progress, McpProgress};

    let tools = FnToolBox::new([tool_fn(
        "crawl",
        "Crawls three pages",
        |_: (), ctx: Context| async move {
            let progress = McpProgress::from_context(&ctx).unwrap();
            for page in 1..=3 {
                progress.report(f64::from(page), Some(3.0), Some(&format!("page {page}")));
            }
            "crawled"
        },
    )])
    .unwrap();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(tools, "crawler")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let ctx = Context::new().with_extension(McpProgress::new(move |p: Progress| {
        sink.lock().unwrap().push(p);
    }));
    let response = remote
        .call("crawl", &json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "crawled");
    // Every report arrives, in order, before the result.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter()
            .map(|p| (p.progress, p.total, p.message.clone().unwrap()))
            .collect::<Vec<_>>(),
        [
            (1.0, Some(3.0), "page 1".to_owned()),
            (2.0, Some(3.0), "page 2".to_owned()),
            (3.0, Some(3.0), "page 3".to_owned()),
        ]
    );

    // A caller that does not listen asks for no progress; the tool's
    // reports go nowhere and the call is the same.
    let response = remote
        .call("crawl", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "crawled");
}

/// An application's answers to the server's requests.
struct Desk;

#[allow(deprecated)]
impl rmcp::ClientHandler for Desk {
    async fn list_roots(
        &self,
        _: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::model::ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(vec![
            rmcp::model::Root::new("file:///work/project"),
        ]))
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info.name = "support-desk".to_owned();
        info.client_info.version = "2.1.0".to_owned();
        info.capabilities = rmcp::model::ClientCapabilities::builder()
            .enable_roots()
            .build();
        info
    }
}

/// A served box whose tool tells who called it and asks the client for its
/// roots and for a sampled message.
fn introspective() -> impl ToolBox {
    FnToolBox::new([try_tool_fn(
        "whoami",
        "Names the MCP client and its roots",
        |_: (), ctx: Context| async move {
            use toolbox_core::FromContext;
            let client = toolbox_mcp::McpPeer::from_context(&ctx)?;
            #[allow(deprecated)]
            let roots = match client.peer().list_roots().await {
                Ok(roots) => roots
                    .roots
                    .iter()
                    .map(|r| r.uri.clone())
                    .collect::<Vec<_>>()
                    .join(","),
                Err(error) => format!("roots error: {error}"),
            };
            #[allow(deprecated)]
            let sampling = client
                .peer()
                .create_message(rmcp::model::CreateMessageRequestParams::new(vec![], 16))
                .await
                .is_err();
            Ok::<_, toolbox_core::ToolError>(format!(
                "{} {} {} roots=[{}] sampling_refused={}",
                client.name().unwrap_or_default(),
                client.version().unwrap_or_default(),
                client.protocol_version().unwrap_or_default(),
                roots,
                sampling
            ))
        },
    )])
    .unwrap()
}

#[tokio::test]
async fn a_served_tool_knows_its_client_and_server_requests_are_answered() {
    // The application's handler answers roots; sampling, which it does not
    // implement, is refused at once rather than left hanging.
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(introspective(), "introspective")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side)
        .handler(Desk)
        .connect()
        .await
        .unwrap();
    let response = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        remote.call("whoami", &json!({}), &Context::new(), &ToolHandler::empty()),
    )
    .await
    .expect("no server request is left hanging");
    assert_eq!(
        response.content,
        "support-desk 2.1.0 2025-11-25 roots=[file:///work/project] sampling_refused=true"
    );

    // Without an application handler: no roots, sampling refused.
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(introspective(), "introspective")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();
    let response = remote
        .call("whoami", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert!(
        response.content.ends_with("roots=[] sampling_refused=true"),
        "{}",
        response.content
    );

    // Called directly, not over MCP, the tool is told it has no client.
    let local = introspective();
    let response = local
        .call("whoami", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert!(response.is_error);
    assert_eq!(response.content, "this tool can only be called over MCP");
}

#[tokio::test]
async fn the_server_announces_its_own_tool_changes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let late_on = Arc::new(AtomicBool::new(false));
    let flag = late_on.clone();
    let tools = FnToolBox::new([
        tool_fn("early", "Always there", |_: ()| async { "early" }),
        tool_fn("late", "Appears later", |_: ()| async { "late" }),
    ])
    .unwrap()
    .filter(move |spec, _| spec.name != "late" || flag.load(Ordering::SeqCst));
    let server = McpServer::new(tools, "changing");
    let serving = server.clone();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = serving.serve(server_side).await.unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();
    let ctx = Context::new();
    assert_eq!(remote.specifications(&ctx).len(), 1);

    late_on.store(true, Ordering::SeqCst);
    assert_eq!(server.tools_changed().await, 1, "one client was told");
    assert_eq!(
        listed(&remote, &ctx, &["early", "late"]).await,
        ["early", "late"]
    );

    // A closed session is forgotten: nobody left to tell.
    remote.close().await.unwrap();
    let mut told = 1;
    for _ in 0..100 {
        told = server.tools_changed().await;
        if told == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(told, 0);
}

#[tokio::test]
async fn a_client_cancellation_cancels_the_served_tools_context() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let saw_cancel = Arc::new(AtomicBool::new(false));
    let flag = saw_cancel.clone();
    let tools = FnToolBox::new([tool_fn(
        "wait",
        "Waits for its cancellation",
        move |_: (), ctx: Context| {
            let flag = flag.clone();
            async move {
                let token = ctx
                    .cancellation()
                    .cloned()
                    .expect("served calls are cancellable");
                // Work the tool hands off watches the same token.
                tokio::spawn(async move {
                    token.cancelled().await;
                    flag.store(true, Ordering::SeqCst);
                });
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                "never"
            }
        },
    )])
    .unwrap();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(tools, "waiting")
            .serve(server_side)
            .await
            .unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side)
        .connect()
        .await
        .unwrap()
        .with_timeout(std::time::Duration::from_millis(100));
    // Both ways a proxy sends a call: plain, and listening for progress.
    let listening = Context::new().with_extension(toolbox_mcp::McpProgress::new(|_| {}));
    for ctx in [Context::new(), listening] {
        saw_cancel.store(false, Ordering::SeqCst);
        let response = remote
            .call("wait", &json!({}), &ctx, &ToolHandler::empty())
            .await;
        assert!(response.is_error);
        for _ in 0..100 {
            if saw_cancel.load(Ordering::SeqCst) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(
            saw_cancel.load(Ordering::SeqCst),
            "the tool's Context was cancelled"
        );
    }
}

#[tokio::test]
async fn a_served_registry_tells_clients_when_it_changes() {
    use std::sync::Arc;
    use toolbox_registry::Registry;

    let registry = Arc::new(Registry::empty());
    registry
        .register_box(
            FnToolBox::new([tool_fn("early", "Always there", |_: ()| async { "early" })]).unwrap(),
            "desk",
        )
        .unwrap();
    let late =
        || FnToolBox::new([tool_fn("late", "Comes and goes", |_: ()| async { "late" })]).unwrap();
    registry.register_box(late(), "extra").unwrap();

    // The served box follows the registry; each change tells the clients.
    let live = registry.resolve_live(["early@desk", "late@extra"]).unwrap();
    let server = McpServer::new(live, "registry");
    let notify = server.clone();
    let runtime = tokio::runtime::Handle::current();
    registry.on_change(move || {
        let notify = notify.clone();
        runtime.spawn(async move {
            notify.tools_changed().await;
        });
    });
    let serving = server.clone();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = serving.serve(server_side).await.unwrap();
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();
    let ctx = Context::new();
    let names = |remote: &McpToolBox| -> Vec<String> {
        remote
            .specifications(&ctx)
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names(&remote), ["early", "late"]);

    registry.unregister("late@extra").unwrap();
    assert_eq!(listed(&remote, &ctx, &["early"]).await, ["early"]);
    let gone = remote
        .call("late", &json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert!(gone.is_error, "{}", gone.content);

    registry.register_box(late(), "extra").unwrap();
    assert_eq!(
        listed(&remote, &ctx, &["early", "late"]).await,
        ["early", "late"]
    );
    let back = remote
        .call("late", &json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert_eq!(back.content, "late");
}

/// A sink the recording decorator writes into, shared with the test.
#[derive(Clone, Default)]
struct Tape(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Tape {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Page {
    query: String,
    #[serde(default = "ten")]
    limit: u32,
}

fn ten() -> u32 {
    10
}

/// OpenAI strict mode makes `limit` required and nullable, so the model
/// says "absent" with `null`: the proxy sends no `limit` at all, and the
/// server's own default applies.
#[tokio::test]
async fn a_null_for_a_remote_default_is_not_sent() {
    use toolbox_core::boxes::RecordingToolBox;
    use toolbox_provider::Provider;
    use toolbox_turn::TurnRunner;

    let tape = Tape::default();
    let served = RecordingToolBox::new(
        FnToolBox::new([tool_fn("page", "Pages", |p: Page| async move {
            format!("{}:{}", p.query, p.limit)
        })])
        .unwrap(),
        tape.clone(),
    );
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = McpServer::new(served, "test-server")
            .serve(server_side)
            .await
            .expect("the server starts");
        let _ = service.waiting().await;
    });
    let remote = McpToolBox::transport(client_side).connect().await.unwrap();
    let ctx = Context::new();
    let spec = remote.specification("page", &ctx).unwrap();
    let provider = Provider::OpenAiChat { strict: true };
    let lowered = provider.definition(&spec).unwrap();
    assert_eq!(
        lowered["function"]["parameters"]["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    // The check takes the "absent" `null` as the call does.
    assert!(remote
        .check("page", (&json!({"query": "a", "limit": null})).into(), &ctx)
        .is_ok());
    let response = remote
        .call(
            "page",
            &json!({"query": "a", "limit": null}),
            &ctx,
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(
        (response.content.as_str(), response.is_error),
        ("a:10", false)
    );
    let outcomes = TurnRunner::new(&remote)
        .provider(provider)
        .run(
            vec![toolbox_core::args::ToolCall::new(
                "page",
                json!(r#"{"query":"b","limit":null}"#),
            )],
            &ctx,
        )
        .await;
    assert_eq!(outcomes[0].response.content, "b:10");
    let recorded = String::from_utf8(tape.0.lock().unwrap().clone()).unwrap();
    let received: Vec<serde_json::Value> = recorded
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["arguments"].clone())
        .collect();
    assert_eq!(received, [json!({"query": "a"}), json!({"query": "b"})]);
    remote.close().await.unwrap();
}
