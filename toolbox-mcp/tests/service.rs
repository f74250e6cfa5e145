//! A served endpoint as a service: one client's share of the sessions,
//! calls bounded in time and number, graceful shutdown with readiness.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbox_core::{tool_fn, Context, FnToolBox, ToolBox, ToolBoxExt, ToolHandler, ToolResponse};
use toolbox_mcp::{
    auth::{BearerAuth, McpCaller, Rejected},
    client::Timeouts,
    serve_http,
    server::{serve_http_with, HttpOptions},
    McpServer, McpToolBox,
};

/// `slow` answers after `ms` milliseconds, `hang` never, `ping` at once.
fn tools() -> impl ToolBox {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Wait {
        ms: u64,
    }
    FnToolBox::new([
        tool_fn("slow", "Answers after a while", |w: Wait| async move {
            tokio::time::sleep(Duration::from_millis(w.ms)).await;
            "done"
        }),
        tool_fn("hang", "Never answers", |_: ()| async {
            std::future::pending::<()>().await;
            "never"
        }),
        tool_fn("ping", "Answers", |_: ()| async { "pong" }),
    ])
    .unwrap()
}

async fn call(remote: &McpToolBox, name: &str, arguments: serde_json::Value) -> ToolResponse {
    remote
        .call(name, &arguments, &Context::new(), &ToolHandler::empty())
        .await
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;

/// A plain HTTP client (reqwest without a default TLS provider needs one
/// installed first, as `McpToolBox` does).
fn http() -> reqwest::Client {
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// POSTs an initialize with `token`: the status and the answer's
/// `header`, if any.
async fn initialize_reading(url: &str, token: &str, header: &str) -> (u16, Option<String>) {
    let response = http()
        .post(url)
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    let value = response
        .headers()
        .get(header)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (response.status().as_u16(), value)
}

/// POSTs an initialize with `token`: the status and the `Retry-After`.
async fn initialize(url: &str, token: &str) -> (u16, Option<String>) {
    initialize_reading(url, token, "retry-after").await
}

fn subjects(token: &str) -> Result<McpCaller, Rejected> {
    Ok(McpCaller {
        subject: token.to_owned(),
        ..McpCaller::default()
    })
}

/// POSTs an initialize with `token`: the status and the session id.
async fn open_session(url: &str, token: &str) -> (u16, Option<String>) {
    initialize_reading(url, token, "mcp-session-id").await
}

/// The status of a `ping` request on session `id`.
async fn ping_session(url: &str, token: &str, id: &str) -> u16 {
    http()
        .post(url)
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", id)
        .header("Mcp-Protocol-Version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn subject_auth() -> BearerAuth {
    BearerAuth::new(subjects, "http://127.0.0.1/mcp", Vec::<String>::new())
}

#[tokio::test]
async fn at_its_share_a_clients_own_idle_session_makes_room() {
    let server = serve_http_with(
        McpServer::new(tools(), "shared"),
        "127.0.0.1:0",
        HttpOptions::default()
            .max_sessions_per_client(5)
            .bearer_auth(subject_auth()),
    )
    .await
    .unwrap();
    let url = server.url();
    let mut ids = Vec::new();
    for _ in 0..5 {
        let (status, id) = open_session(&url, "mallory").await;
        assert_eq!(status, 200);
        ids.push(id.unwrap());
    }
    // The sixth is served: her session used longest ago ended for it.
    assert_eq!(open_session(&url, "mallory").await.0, 200);
    assert_eq!(ping_session(&url, "mallory", &ids[0]).await, 404);
    assert_eq!(ping_session(&url, "mallory", &ids[4]).await, 200);
    // Another client is served all along.
    let remote = McpToolBox::http(url.clone())
        .bearer("alice")
        .connect()
        .await
        .unwrap();
    assert_eq!(call(&remote, "ping", json!({})).await.content, "pong");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_whose_sessions_all_have_calls_in_flight_is_answered_429() {
    let server = serve_http_with(
        McpServer::new(tools(), "shared"),
        "127.0.0.1:0",
        HttpOptions::default()
            .max_sessions_per_client(2)
            .bearer_auth(subject_auth()),
    )
    .await
    .unwrap();
    let mut remotes = Vec::new();
    for _ in 0..2 {
        let remote = Arc::new(
            McpToolBox::http(server.url())
                .bearer("mallory")
                .connect()
                .await
                .unwrap(),
        );
        let running = remote.clone();
        tokio::spawn(async move { call(&running, "hang", json!({})).await });
        remotes.push(remote);
    }
    in_flight(&server, 2).await;
    let response = http()
        .post(server.url())
        .header("Authorization", "Bearer mallory")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "30");
    let text = response.text().await.unwrap();
    assert!(
        text.contains("this client holds 2 sessions, its share of this server, each with a call in flight; wait for one to finish, or end one (DELETE)"),
        "{text}"
    );
    // Another client is served.
    assert_eq!(initialize(&server.url(), "alice").await.0, 200);
    drop(remotes);
    server.shutdown(Duration::from_millis(100)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_abandoned_sessions_from_one_address_locks_nobody_out() {
    // No authentication: every client is its address, and every client of
    // this test has 127.0.0.1 (as behind a proxy nobody configured).
    let server = serve_http(McpServer::new(tools(), "flooded"), "127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let client = http();
    for _ in 0..3_000 {
        let status = client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(INITIALIZE)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status.as_u16(), 200);
    }
    // A new client from the same address is served, and so are 32 at once.
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let remote = McpToolBox::http(url).connect().await.unwrap();
                let mut answered = 0;
                for _ in 0..150 {
                    let response = call(&remote, "ping", json!({})).await;
                    assert!(!response.is_error, "{}", response.content);
                    answered += usize::from(response.content == "pong");
                }
                answered
            })
        })
        .collect();
    let mut answered = 0;
    for task in tasks {
        answered += task.await.unwrap();
    }
    assert_eq!(answered, 32 * 150);
    server.shutdown(Duration::from_secs(5)).await;
}

/// A session opened on `url` and told the client is initialized: its id.
async fn initialized_session(url: &str) -> String {
    let (status, id) = open_session(url, "-").await;
    assert_eq!(status, 200);
    let id = id.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post_on_session(url, &id, initialized).await.0, 202);
    id
}

/// POSTs `message` on session `id`: the status and the answer's text.
async fn post_on_session(url: &str, id: &str, message: serde_json::Value) -> (u16, String) {
    let response = http()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", id)
        .header("Mcp-Protocol-Version", "2025-11-25")
        .body(message.to_string())
        .send()
        .await
        .unwrap();
    (
        response.status().as_u16(),
        response.text().await.unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_made_calls_outlives_a_flood_of_abandoned_initializes_from_its_address() {
    // No authentication: the session in use and the flood are one client,
    // 127.0.0.1, whose share (100 by default) the flood passes 30 times.
    let server = serve_http(McpServer::new(tools(), "flooded"), "127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let id = initialized_session(&url).await;
    let ping = |n: u32| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
               "params": {"name": "ping", "arguments": {}}})
    };
    let (status, text) = post_on_session(&url, &id, ping(2)).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("pong"), "{text}");
    let client = http();
    for _ in 0..3_000 {
        let status = client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(INITIALIZE)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status.as_u16(), 200);
    }
    // The abandoned sessions made room for one another; the one in use,
    // heard from before all of them, is still there.
    let (status, text) = post_on_session(&url, &id, ping(3)).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("pong"), "{text}");
    assert!(server.session_count().await <= 100);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_every_session_is_busy_a_new_one_waits() {
    let server = serve_http_with(
        McpServer::new(tools(), "busy"),
        "127.0.0.1:0",
        HttpOptions::default()
            .max_sessions(2)
            .max_sessions_per_client(10),
    )
    .await
    .unwrap();
    let mut remotes = Vec::new();
    for _ in 0..2 {
        let remote = Arc::new(McpToolBox::http(server.url()).connect().await.unwrap());
        let running = remote.clone();
        tokio::spawn(async move { call(&running, "hang", json!({})).await });
        remotes.push(remote);
    }
    // Both sessions have their call in flight before a new client asks.
    in_flight(&server, 2).await;
    let mut answer = (0, None);
    for _ in 0..100 {
        answer = initialize(&server.url(), "-").await;
        if answer.0 == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(answer, (503, Some("5".to_owned())));
    drop(remotes);
    server.shutdown(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn a_call_past_the_servers_limit_ends_and_the_others_go_on() {
    let server = serve_http(
        McpServer::new(tools(), "limited")
            .call_timeout(Duration::from_millis(300))
            .tool_timeout("slow", Duration::from_secs(5)),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    let remote = Arc::new(McpToolBox::http(server.url()).connect().await.unwrap());
    let hanging = remote.clone();
    let started = Instant::now();
    let hung = tokio::spawn(async move { call(&hanging, "hang", json!({})).await });
    // The server answers other calls meanwhile.
    assert_eq!(call(&remote, "ping", json!({})).await.content, "pong");
    let hung = hung.await.unwrap();
    let took = started.elapsed();
    assert!(hung.is_error);
    assert_eq!(hung.content, "the tool did not finish within 300ms");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // `slow`'s own limit is longer than the server's.
    assert_eq!(
        call(&remote, "slow", json!({"ms": 500})).await.content,
        "done"
    );
    assert_eq!(
        server.calls_in_flight(),
        0,
        "the dropped call gave its place back"
    );
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_in_flight_caps_are_refused_with_the_documented_error() {
    let server = serve_http(
        McpServer::new(tools(), "capped").max_calls_in_flight(2, 3),
        "127.0.0.1:0",
    )
    .await
    .unwrap();
    let one = Arc::new(McpToolBox::http(server.url()).connect().await.unwrap());
    for _ in 0..2 {
        let running = one.clone();
        tokio::spawn(async move { call(&running, "hang", json!({})).await });
    }
    // Both hanging calls hold their places before the session asks again
    // (a ping sent among them could take one of the two places itself).
    in_flight(&server, 2).await;
    assert_eq!(
        call(&one, "ping", json!({})).await.content,
        "MCP error -32000: too many calls in flight: this session already has 2, the server's limit per session; wait for one to finish"
    );
    // Another session has room, until the server's total is reached.
    let two = Arc::new(McpToolBox::http(server.url()).connect().await.unwrap());
    assert_eq!(call(&two, "ping", json!({})).await.content, "pong");
    let running = two.clone();
    tokio::spawn(async move { call(&running, "hang", json!({})).await });
    in_flight(&server, 3).await;
    assert_eq!(
        call(&two, "ping", json!({})).await.content,
        "MCP error -32000: too many calls in flight: the server already runs 3, its limit; try again shortly"
    );
    server.shutdown(Duration::from_millis(100)).await;
}

/// Waits (10 s at most) until `server` has `calls` calls in flight.
async fn in_flight(server: &toolbox_mcp::server::HttpServer, calls: usize) {
    let started = Instant::now();
    while server.calls_in_flight() < calls {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} calls in flight, not {calls}",
            server.calls_in_flight()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn status(url: &str) -> Result<(u16, String), reqwest::Error> {
    let response = http().get(url).send().await?;
    let code = response.status().as_u16();
    Ok((code, response.text().await?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_lets_the_call_in_flight_finish_and_turns_not_ready_first() {
    let drain = Duration::from_millis(1_000);
    let server = serve_http_with(
        McpServer::new(tools(), "rolling"),
        "127.0.0.1:0",
        HttpOptions::default().drain_delay(drain),
    )
    .await
    .unwrap();
    let address = server.local_addr();
    let healthz = format!("http://{address}/healthz");
    assert_eq!(
        status(&healthz).await.unwrap(),
        (200, r#"{"status":"ready"}"#.to_owned())
    );
    let remote = Arc::new(McpToolBox::http(server.url()).connect().await.unwrap());
    let running = remote.clone();
    let slow = tokio::spawn(async move { call(&running, "slow", json!({"ms": 2_000})).await });
    while server.calls_in_flight() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let began = Instant::now();
    let shutdown = tokio::spawn(server.shutdown(Duration::from_secs(10)));
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Draining: not ready, and a new session is refused with a hint.
    assert_eq!(
        status(&healthz).await.unwrap(),
        (503, r#"{"status":"shutting down"}"#.to_owned())
    );
    assert_eq!(
        initialize(&format!("http://{address}/mcp"), "-").await,
        (503, Some("1".to_owned()))
    );
    assert!(began.elapsed() < drain, "the checks ran while draining");
    tokio::time::sleep((drain + Duration::from_millis(300)).saturating_sub(began.elapsed())).await;
    // After the drain delay: new connections are refused.
    assert!(
        tokio::net::TcpStream::connect(address).await.is_err(),
        "a new connection is refused"
    );
    let answered = slow.await.unwrap();
    assert_eq!(answered.content, "done", "the call in flight finished");
    tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .expect("the shutdown resolves")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_deadline_the_client_is_told_not_dropped() {
    let server = serve_http(McpServer::new(tools(), "hurried"), "127.0.0.1:0")
        .await
        .unwrap();
    let remote = Arc::new(
        McpToolBox::http(server.url())
            .timeouts(Timeouts::default().call(Duration::from_secs(20)))
            .connect()
            .await
            .unwrap(),
    );
    let running = remote.clone();
    let slow = tokio::spawn(async move { call(&running, "slow", json!({"ms": 10_000})).await });
    while server.calls_in_flight() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    server.shutdown(Duration::from_millis(300)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let answered = slow.await.unwrap();
    assert!(answered.is_error);
    assert_eq!(
        answered.content,
        "MCP error -32603: the server is shutting down: the call was cancelled before it finished; call again"
    );
}

#[tokio::test]
async fn run_until_a_signal_shuts_down() {
    let server = serve_http(McpServer::new(tools(), "signalled"), "127.0.0.1:0")
        .await
        .unwrap();
    let address = server.local_addr();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run_until(rx, Duration::from_secs(1)));
    assert_eq!(
        status(&format!("http://{address}/healthz"))
            .await
            .unwrap()
            .0,
        200
    );
    tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("resolves once signalled")
        .unwrap();
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
}

#[tokio::test]
async fn a_shared_token_guards_an_endpoint_whose_port_is_known_only_once_bound() {
    let server = serve_http_with(
        McpServer::new(tools(), "guarded"),
        "127.0.0.1:0",
        HttpOptions::default().bearer_auth(BearerAuth::shared_token("s3cret")),
    )
    .await
    .unwrap();
    let refused = McpToolBox::http(server.url())
        .bearer("guess")
        .connect()
        .await
        .err()
        .unwrap();
    assert_eq!(refused.kind(), toolbox_core::ToolErrorKind::Unauthorized);
    // The challenge names the metadata of the bound address.
    let address = server.local_addr();
    assert!(
        refused.report().contains(&format!(
            "http://{address}/.well-known/oauth-protected-resource/mcp"
        )),
        "{}",
        refused.report()
    );
    let (_, document) = status(&format!(
        "http://{address}/.well-known/oauth-protected-resource/mcp"
    ))
    .await
    .unwrap();
    assert!(
        document.contains(&format!("\"resource\":\"http://{address}/mcp\"")),
        "{document}"
    );
    let remote = McpToolBox::http(server.url())
        .bearer("s3cret")
        .connect()
        .await
        .unwrap();
    assert_eq!(call(&remote, "ping", json!({})).await.content, "pong");
    // A verifier closure needs no annotations.
    let _ = BearerAuth::verify_with(|token| {
        if token.len() > 3 {
            Ok(McpCaller::default())
        } else {
            Err(Rejected("short".into()))
        }
    });
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_the_wrong_shape_names_its_field_not_a_missing_method() {
    let server = serve_http(McpServer::new(tools(), "shapes"), "127.0.0.1:0")
        .await
        .unwrap();
    let url = server.url();
    let id = initialized_session(&url).await;
    let cases = [
        (
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 42}}),
            r#""code":-32602,"message":"invalid params for `tools/call`: `name` must be a string, got a number""#,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "ping", "arguments": "{}"}}),
            r#""code":-32602,"message":"invalid params for `tools/call`: `arguments` must be an object, got a string""#,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/run", "params": {}}),
            r#""code":-32601,"message":"method not found: `tools/run` is not a method this server answers""#,
        ),
    ];
    for (request, expected) in cases {
        let (status, text) = post_on_session(&url, &id, request.clone()).await;
        assert_eq!(status, 200, "{request}: {text}");
        assert!(text.contains(expected), "{request}: {text}");
    }
    server.shutdown(Duration::from_secs(5)).await;
}
