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
