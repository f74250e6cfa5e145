//! MCP Tasks (`io.modelcontextprotocol/tasks`, SEP-2663) on the client
//! side: a `tools/call` the server answers with a task is driven to its end
//! inside the same call, so the model and the handler see one call with
//! one end.
//!
//! The task is polled with `tasks/get` at the server's interval; each new
//! status message is reported as progress; each new input request is
//! answered by the application's client handler and sent back with
//! `tasks/update`; the result comes inline once the task completes. A call
//! dropped before that (its limit passed, the turn cancelled) sends
//! `tasks/cancel`. Past the task's ttl the server may have forgotten it,
//! and the call ends with an error saying so.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, GetTaskParams, NumberOrString, Task, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleClient};
use tokio::time::Instant;
use toolbox_core::ToolError;

use super::cause::service_error;
use super::handler::Answerer;
use crate::progress::{McpProgress, Progress};

/// The interval used when the server names none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The bounds put on the server's interval: not so short that polling
/// floods the server, not so long that a finished task waits.
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(5);

/// Sends `tasks/cancel` for a task whose call ends before the task did.
struct Abandon {
    peer: Peer<RoleClient>,
    task_id: Option<String>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            if let Err(error) = peer.cancel_task(CancelTaskParams::new(task_id.clone())).await {
                tracing::debug!(target: "toolbox::mcp", task = %task_id, %error, "tasks/cancel was not acknowledged");
            }
        });
    }
}

/// The wait before the next poll of `task`.
fn interval(task: &Task) -> Duration {
    task.poll_interval_ms
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

/// Drives `task`, the server's answer to a `tools/call` of `tool`, to its
/// end: its result, or an error naming the task and what ended it.
pub(super) async fn drive(
    peer: &Peer<RoleClient>,
    answer: &Answerer,
    tool: &str,
    mut task: Task,
    listener: Option<&McpProgress>,
) -> Result<CallToolResult, ToolError> {
    let started = Instant::now();
    let task_id = task.task_id.clone();
    tracing::debug!(target: "toolbox::mcp", tool, task = %task_id, "the MCP server runs the call as a task");
    let mut abandon = Abandon {
        peer: peer.clone(),
        task_id: Some(task_id.clone()),
    };
    // The input requests answered, by key (unique over the task's life):
    // a poll before the server took the answers shows them again.
    let mut answered = std::collections::HashSet::new();
    let mut reports = 0u32;
    let mut last_message: Option<String> = None;
    let mut report = |task: &Task| {
        let Some(listener) = listener else { return };
        if task.status_message.is_some() && task.status_message != last_message {
            last_message.clone_from(&task.status_message);
            reports += 1;
            listener.send(Progress {
                progress: f64::from(reports),
                total: None,
                message: task.status_message.clone(),
            });
        }
    };
    report(&task);
    loop {
        if let Some(ttl) = task.ttl_ms.map(Duration::from_millis) {
            if started.elapsed() > ttl {
                // The server may have dropped it; nothing is cancelled.
                abandon.task_id = None;
                return Err(ToolError::failed(format!(
                    "the MCP server's task `{task_id}` for `{tool}` did not finish within its ttl of {ttl:?}; its result is gone"
                )));
            }
        }
        tokio::time::sleep(interval(&task)).await;
        let polled = peer
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .map_err(service_error)?;
        let detailed = polled.task;
        task = detailed.task;
        report(&task);
        match detailed.payload {
            TaskPayload::Working => {}
            TaskPayload::Completed { result } => {
                abandon.task_id = None;
                return serde_json::from_value(serde_json::Value::Object(result)).map_err(|e| {
                    ToolError::failed(format!(
                        "the MCP server's task `{task_id}` for `{tool}` completed with a result that is not a tool result: {e}"
                    ))
                });
            }
            TaskPayload::Failed { error } => {
                abandon.task_id = None;
                let code = error.get("code").and_then(serde_json::Value::as_i64);
                let message = error
                    .get("message")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("no message");
                return Err(ToolError::failed(match code {
                    Some(code) => format!("MCP error {code}: {message}"),
                    None => {
                        format!("the MCP server's task `{task_id}` for `{tool}` failed: {message}")
                    }
                }));
            }
            TaskPayload::Cancelled => {
                abandon.task_id = None;
                return Err(ToolError::failed(format!(
                    "the MCP server cancelled its task `{task_id}` for `{tool}`{}",
                    task.status_message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                )));
            }
            TaskPayload::InputRequired { input_requests } => {
                // Each new question goes to the application's handler, as
                // the server's own request would; the answers go back with
                // `tasks/update`. An answer that fails ends the call, and
                // the task is cancelled on the way out (`abandon`).
                let mut responses = rmcp::model::InputResponses::new();
                for (key, request) in input_requests {
                    if answered.contains(&key) {
                        continue;
                    }
                    let context = RequestContext::new(
                        NumberOrString::String(key.clone().into()),
                        peer.clone(),
                    );
                    let value = answer(request, context).await.map_err(|e| {
                        ToolError::failed(format!(
                            "the MCP server's task `{task_id}` for `{tool}` asked for input (`{key}`), and the application's handler failed: {}",
                            e.message
                        ))
                    })?;
                    answered.insert(key.clone());
                    responses.insert(key, value);
                }
                if !responses.is_empty() {
                    peer.update_task(UpdateTaskParams::new(task_id.clone(), responses))
                        .await
                        .map_err(service_error)?;
                }
            }
            _ if task.status.is_terminal() => {
                abandon.task_id = None;
                return Err(ToolError::failed(format!(
                    "the MCP server's task `{task_id}` for `{tool}` ended as {:?}",
                    task.status
                )));
            }
            _ => {}
        }
    }
}
