//! What a served endpoint refuses: a foreign `Origin`, a session past the
//! cap, and with bearer authentication a request without a token, with a
//! token the verifier refuses, or without the scopes asked for — each with
//! the status and challenge the specs give; the verified caller reaches
//! the tool.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolbox_core::{
    try_tool_fn, Context, FnToolBox, FromContext, ToolBox, ToolBoxExt, ToolError, ToolHandler,
};
use toolbox_mcp::{
    auth::{BearerAuth, McpCaller, Rejected},
    server::{serve_http_with, HttpOptions},
    McpServer, McpToolBox,
};

fn tools() -> impl ToolBox {
    FnToolBox::new([try_tool_fn(
        "whoami",
        "Names the caller",
        |_: (), ctx: Context| async move {
            match McpCaller::from_context(&ctx) {
                Ok(caller) => Ok::<_, ToolError>(format!("{} {:?}", caller.subject, caller.scopes)),
                Err(_) => Ok("anonymous".to_owned()),
            }
        },
    )])
    .unwrap()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;

/// One raw HTTP/1.1 exchange: the status line and the headers, lower-cased.
async fn exchange(
    address: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n",
        address.port()
    );
    if !body.is_empty() {
        request.push_str(
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        );
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    // SSE streams of a session stay open: read what comes within a moment.
    let _ = tokio::time::timeout(Duration::from_millis(500), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_lowercase(), body.to_owned())
}

#[tokio::test]
async fn a_foreign_origin_is_refused_and_a_local_one_admitted() {
    let server = serve_http_with(
        McpServer::new(tools(), "guarded"),
        "127.0.0.1:0",
        HttpOptions::default(),
    )
    .await
    .unwrap();
    let address = server.local_addr();
    let (status, _, _) = exchange(
        address,
        "POST",
        "/mcp",
        &[("Origin", "https://evil.example")],
        INITIALIZE,
    )
    .await;
    assert_eq!(status, 403);
    let origin = format!("http://localhost:{}", address.port());
    let (status, _, _) =
        exchange(address, "POST", "/mcp", &[("Origin", &origin)], INITIALIZE).await;
    assert_eq!(status, 200);
    // No Origin (a non-browser client): admitted.
    let (status, _, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
    assert_eq!(status, 200);
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn at_the_cap_the_idle_session_used_longest_ago_makes_room() {
    // Every request comes from 127.0.0.1: one client, allowed them all.
    let options = HttpOptions::default()
        .max_sessions(2)
        .max_sessions_per_client(10);
    let server = serve_http_with(McpServer::new(tools(), "capped"), "127.0.0.1:0", options)
        .await
        .unwrap();
    let address = server.local_addr();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (status, head, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
        assert_eq!(
            status, 200,
            "a new client is always served while a session is idle"
        );
        ids.push(session_of(&head));
    }
    assert_eq!(server.session_count().await, 2);
    // The first, used longest ago, was ended: its next request is 404 (a
    // conforming client opens a new session); the others go on.
    assert_eq!(ping(address, &ids[0]).await, 404);
    assert_eq!(ping(address, &ids[2]).await, 200);
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

fn session_of(head: &str) -> String {
    head.lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_owned()
}

async fn ping(address: std::net::SocketAddr, session: &str) -> u16 {
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    exchange(
        address,
        "POST",
        "/mcp",
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        ping,
    )
    .await
    .0
}

fn verifier(token: &str) -> Result<McpCaller, Rejected> {
    match token {
        "good" => Ok(McpCaller {
            subject: "ada".into(),
            scopes: vec!["tools:call".into()],
            ..McpCaller::default()
        }),
        "narrow" => Ok(McpCaller {
            subject: "bob".into(),
            scopes: vec![],
            ..McpCaller::default()
        }),
        _ => Err(Rejected("unknown token".into())),
    }
}

#[tokio::test]
async fn bearer_auth_answers_as_the_specs_say_and_the_caller_reaches_the_tool() {
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = BearerAuth::new(verifier, resource.clone(), ["https://auth.example"])
        .require_scopes(["tools:call"]);
    let options = HttpOptions::default().bearer_auth(auth);
    let server = serve_http_with(
        McpServer::new(tools(), "authed"),
        ("127.0.0.1", port),
        options,
    )
    .await
    .unwrap();
    let address = server.local_addr();
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    let (status, head, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
    assert_eq!(status, 401);
    assert!(
        head.contains(&format!(
            "www-authenticate: bearer resource_metadata=\"{metadata}\", scope=\"tools:call\""
        )),
        "{head}"
    );
    let (status, head, _) = exchange(
        address,
        "POST",
        "/mcp",
        &[("Authorization", "Bearer forged")],
        INITIALIZE,
    )
    .await;
    assert_eq!(status, 401);
    assert!(head.contains("error=\"invalid_token\""), "{head}");
    let (status, head, body) = exchange(
        address,
        "POST",
        "/mcp",
        &[("Authorization", "Bearer narrow")],
        INITIALIZE,
    )
    .await;
    assert_eq!(status, 403);
    assert!(head.contains("error=\"insufficient_scope\""), "{head}");
    assert!(
        body.contains("the token lacks the scope(s) `tools:call`"),
        "{body}"
    );

    let (status, _, document) = exchange(
        address,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    )
    .await;
    assert_eq!(status, 200);
    let document: serde_json::Value = serde_json::from_str(&document).unwrap();
    assert_eq!(document["resource"], resource);
    assert_eq!(
        document["authorization_servers"],
        serde_json::json!(["https://auth.example"])
    );

    let remote = McpToolBox::http(server.url())
        .bearer("good")
        .connect()
        .await
        .unwrap();
    let response = remote
        .call(
            "whoami",
            &serde_json::json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response.content, "ada [\"tools:call\"]");
    remote.close().await.unwrap();
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn an_abandoned_session_expires() {
    let options = HttpOptions::default()
        .max_sessions(1)
        .idle_timeout(Duration::from_millis(300));
    let server = serve_http_with(McpServer::new(tools(), "expiring"), "127.0.0.1:0", options)
        .await
        .unwrap();
    let address = server.local_addr();
    let (status, head, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
    assert_eq!(status, 200);
    let session = session_of(&head);
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let status = ping(address, &session).await;
    assert!(
        status == 404 || status == 400,
        "the abandoned session is gone: {status}"
    );
    assert_eq!(server.session_count().await, 0);
    let (status, _, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
    assert_eq!(status, 200, "its place is free again");
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_64_mib_body_is_refused_and_the_server_keeps_answering() {
    let server = serve_http_with(
        McpServer::new(tools(), "bounded"),
        "127.0.0.1:0",
        HttpOptions::default(),
    )
    .await
    .unwrap();
    let address = server.local_addr();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let size = 64 * 1024 * 1024;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n",
        address.port()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 1024 * 1024];
    // The server answers (and may close) before all of it is sent.
    for _ in 0..64 {
        if stream.write_all(&chunk).await.is_err() {
            break;
        }
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 413"),
        "{}",
        &answer[..answer.len().min(200)]
    );
    let (status, _, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
    assert_eq!(status, 200);
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_configured_body_cap_is_the_one_applied() {
    let server = serve_http_with(
        McpServer::new(tools(), "bounded"),
        "127.0.0.1:0",
        HttpOptions::default().max_body_bytes(2048),
    )
    .await
    .unwrap();
    let address = server.local_addr();
    // An initialize padded past 2 KiB (well under the 4 MiB default).
    let padded = INITIALIZE.replacen('{', &format!("{{{:3000}", ""), 1);
    let (status, _, _) = exchange(address, "POST", "/mcp", &[], &padded).await;
    assert_eq!(status, 413, "a body over the configured cap");
    let (status, _, _) = exchange(address, "POST", "/mcp", &[], INITIALIZE).await;
    assert_eq!(status, 200, "a body under it");
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

/// One client opens 3,000 sessions and walks away: every one is served
/// (the idle sessions used longest ago make room), the server holds at most
/// its cap, and a new client is then served at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_thousand_abandoned_sessions_lock_nobody_out() {
    let options = HttpOptions::default().max_sessions_per_client(10_000);
    let server = serve_http_with(McpServer::new(tools(), "crowded"), "127.0.0.1:0", options)
        .await
        .unwrap();
    let address = server.local_addr();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for _ in 0..30 {
        let clients: Vec<_> = (0..100)
            .map(|_| tokio::spawn(async move { exchange_quick(address).await }))
            .collect();
        for client in clients {
            *statuses.entry(client.await.unwrap()).or_default() += 1;
        }
    }
    assert_eq!(statuses.get(&200), Some(&3_000), "{statuses:?}");
    let held = server.session_count().await;
    assert!(held <= 1_000, "the cap bounds memory: {held} sessions");
    let remote = McpToolBox::http(server.url()).connect().await.unwrap();
    let response = remote
        .call(
            "whoami",
            &serde_json::json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert!(!response.is_error, "{}", response.content);
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

/// An `initialize` whose answer is read only as far as its status line.
async fn exchange_quick(address: std::net::SocketAddr) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        address.port(),
        INITIALIZE.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap_or(0)
}
