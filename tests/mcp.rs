//! The `mcp_server` example as a child process behind an `McpToolBox`: the
//! tools listed and called over stdio, and `close()` leaving no process
//! behind (checked by pid).
#![cfg(feature = "mcp")]

use std::time::Duration;

use serde_json::json;
use toolbox::mcp::McpToolBox;
use toolbox::prelude::*;

mod common;
use common::example;

fn process_is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie (`Z`) is a child nobody reaped: not gone.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('X')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_server_is_called_and_reaped() {
    let mut command = tokio::process::Command::new(example("mcp_server"));
    command.arg("--stdio").stderr(std::process::Stdio::null());
    let remote = McpToolBox::stdio(command).connect().await.unwrap();
    let pid = remote.child_id().expect("a child process");
    let ctx = Context::new();
    let names: Vec<String> = remote
        .specifications(&ctx)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["math_add", "math_divide", "crm_get_customer"]);
    let handler = ToolHandler::empty();
    let response = remote
        .call("math_add", r#"{"a": 40, "b": 2}"#, &ctx, &handler)
        .await;
    assert_eq!(response.content, "42");
    let response = remote
        .call("math_divide", &json!({"a": 1, "b": 0}), &ctx, &handler)
        .await;
    assert_eq!(
        (response.content.as_str(), response.is_error),
        ("cannot divide by zero; pass a non-zero b", true)
    );
    let customer = remote
        .call("crm_get_customer", &json!({"id": 42}), &ctx, &handler)
        .await;
    assert_eq!(
        customer.content,
        r#"{"id":42,"name":"Ada Lovelace","tier":"gold"}"#
    );

    remote.close().await.unwrap();
    let mut gone = false;
    for _ in 0..50 {
        if process_is_gone(pid) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        gone,
        "the server process {pid} is still there after close()"
    );
    let response = remote
        .call("math_add", &json!({"a": 1, "b": 1}), &ctx, &handler)
        .await;
    assert_eq!(
        response.content,
        "the tool's server could not be reached; try again later"
    );
}

/// A list of three servers, as an agent is seeded: one over stdio (the
/// `mcp_server` example as a child), one over HTTP that takes a bearer
/// token, one that is down. Two connect, the down one is named with its
/// URL; a killed child then fails its calls at once and clearly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_servers_with_a_child_a_token_and_a_down_one() {
    use toolbox::mcp::{
        auth::{BearerAuth, McpCaller, Rejected},
        client::RemoteServer,
        server::{serve_http_with, HttpOptions},
        McpServer, McpServers,
    };

    fn verify(token: &str) -> Result<McpCaller, Rejected> {
        match token {
            "secret" => Ok(McpCaller::default()),
            _ => Err(Rejected("unknown token".into())),
        }
    }
    let tools = toolbox::FnToolBox::new([toolbox::tool_fn("now", "The time", |_: ()| async {
        "noon"
    })])
    .unwrap();
    let clock = serve_http_with(
        McpServer::new(tools, "clock"),
        "127.0.0.1:0",
        HttpOptions::default().bearer_auth(BearerAuth::new(
            verify,
            "http://127.0.0.1/mcp",
            Vec::<String>::new(),
        )),
    )
    .await
    .unwrap();
    let child = example("mcp_server").display().to_string();
    let connected = McpServers::connect([
        RemoteServer::command(child, ["--stdio"]).name("example"),
        RemoteServer::url(clock.url()).token("secret"),
        RemoteServer::url("http://127.0.0.1:1/mcp"),
    ])
    .await;
    assert_eq!(connected.failures().len(), 1);
    assert_eq!(connected.failures()[0].origin, "http://127.0.0.1:1/mcp");
    let pid = connected.connected()[0].child_id().expect("a child");
    let servers = connected.into_toolbox().unwrap();
    let ctx = Context::new();
    let names: Vec<String> = servers
        .specifications(&ctx)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        [
            "example_math_add",
            "example_math_divide",
            "example_crm_get_customer",
            "clock_now"
        ]
    );
    let handler = ToolHandler::empty();
    let sum = servers
        .call(
            "example_math_add",
            &json!({"a": 40, "b": 2}),
            &ctx,
            &handler,
        )
        .await;
    assert_eq!(sum.content, "42");
    let now = servers.call("clock_now", &json!({}), &ctx, &handler).await;
    assert_eq!(now.content, "noon");
    let system = servers.system_message();
    assert!(system.contains("Server `example` ("), "{system}");
    assert!(
        system.contains("`example_math_add`, `example_math_divide`, `example_crm_get_customer`"),
        "{system}"
    );
    assert!(system.contains("Server `clock` ("), "{system}");

    // The child is killed: its calls fail at once and say so; the other
    // server goes on.
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let started = std::time::Instant::now();
    let mut gone = servers
        .call("example_math_add", &json!({"a": 1, "b": 1}), &ctx, &handler)
        .await;
    for _ in 0..50 {
        if gone.is_error {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        gone = servers
            .call("example_math_add", &json!({"a": 1, "b": 1}), &ctx, &handler)
            .await;
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        gone.content,
        "the tool's server could not be reached; try again later"
    );
    let now = servers.call("clock_now", &json!({}), &ctx, &handler).await;
    assert_eq!(now.content, "noon");
    servers.close().await.unwrap();
}
