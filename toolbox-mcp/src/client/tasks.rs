//! MCP Tasks (`io.modelcontextprotocol/tasks`, SEP-2663) on the client
//! side: a `tools/call` the server answers with a task is driven to its end
//! inside the same call, so the model and the handler see one call with
//! one end.
//!
//! The task is polled with `tasks/get` at the server's interval; its
//! progress reaches the caller as a plain call's does ([`CallProgress`]);
//! each new input request is answered by the application's client handler
//! and sent back with `tasks/update`; the result comes inline once the
//! task completes. A call dropped before that (its limit passed, the turn
//! cancelled) sends `tasks/cancel`. Past the task's ttl the server may have
//! forgotten it, and the call ends with an error saying so.

use std::sync::{Arc, Mutex};
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
use super::journal::{Ending, Tracking};
use crate::progress::{McpProgress, Progress};

/// The interval used when the server names none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The bounds put on the server's interval: not so short that polling
/// floods the server, not so long that a finished task waits.
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(5);

/// The progress of a call whose caller listens, as the caller hears it:
/// the server's `notifications/progress` under the call's token, as they
/// come; and for a call the server runs as a task, the task's status
/// messages, numbered 1, 2, … — where the server sends no notifications.
///
/// A server may carry a task's progress both ways (toolbox's does): once a
/// notification came, the status messages are the same news and are not
/// reported. A status message waits for the next poll, so a notification
/// sent with it is heard first; and after status messages were reported,
/// a notification that would make the progress go back is dropped.
#[derive(Clone)]
pub(super) struct CallProgress {
    listener: McpProgress,
    heard: Arc<Mutex<Heard>>,
}

#[derive(Default)]
struct Heard {
    /// Whether a notification came for the call.
    notified: bool,
    /// How many status messages were reported.
    statuses: u32,
}

impl CallProgress {
    pub(super) fn new(listener: McpProgress) -> Self {
        CallProgress {
            listener,
            heard: Arc::default(),
        }
    }

    /// Where the call's notifications go: its route in the client handler.
    pub(super) fn notifications(&self) -> McpProgress {
        let call = self.clone();
        McpProgress::new(move |report| call.notified(report))
    }

    fn notified(&self, report: Progress) {
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.notified = true;
        if heard.statuses > 0 && report.progress <= f64::from(heard.statuses) {
            return;
        }
        // Sent under the lock: a notification and a status message are
        // reported one after the other, never interleaved.
        self.listener.send(report);
    }

    fn status(&self, message: String) {
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        if heard.notified {
            return;
        }
        heard.statuses += 1;
        self.listener.send(Progress {
            progress: f64::from(heard.statuses),
            total: None,
            message: Some(message),
        });
    }
}

/// A task's status messages on their way to the caller: each new one is
/// held until the next poll (or the task's end), then reported unless a
/// notification came meanwhile ([`CallProgress`]).
#[derive(Default)]
struct StatusMessages {
    last: Option<String>,
    held: Option<String>,
}

impl StatusMessages {
    /// `task` as a poll showed it: the message held since the last poll is
    /// reported, and a new one held.
    fn polled(&mut self, task: &Task, progress: Option<&CallProgress>) {
        let Some(progress) = progress else { return };
        if let Some(message) = self.held.take() {
            progress.status(message);
        }
        if task.status_message.is_some() && task.status_message != self.last {
            self.last.clone_from(&task.status_message);
            self.held.clone_from(&task.status_message);
        }
    }

    /// The task ended: the message held is reported, after the
    /// notifications already received.
    async fn ended(&mut self, progress: Option<&CallProgress>) {
        let (Some(progress), Some(message)) = (progress, self.held.take()) else {
            return;
        };
        // rmcp hands each notification to a task of its own: those queued
        // before the last poll's answer run first.
        tokio::task::yield_now().await;
        progress.status(message);
    }
}

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

/// How many polls of a task in a row may fail in transport (a balancer's
/// 502 while a replica stops, a dropped connection) before the call ends.
const POLL_RETRIES: u32 = 3;

/// `tasks/get` of `task_id`, asked again after `wait` while it fails in
/// transport (it changes nothing on the server); an answer of the server's
/// (an unknown task) is not asked again.
async fn get(
    peer: &Peer<RoleClient>,
    task_id: &str,
    wait: Duration,
) -> Result<rmcp::model::GetTaskResult, ToolError> {
    let mut failed = 0;
    loop {
        match peer.get_task(GetTaskParams::new(task_id.to_owned())).await {
            Ok(polled) => return Ok(polled),
            Err(error) => match service_error(error) {
                error @ ToolError::Transport { .. } if failed < POLL_RETRIES => {
                    failed += 1;
                    tracing::debug!(target: "toolbox::mcp", task = %task_id, error = %error.report(), failed, "a poll of the task failed; it is asked again");
                    tokio::time::sleep(wait).await;
                }
                error => return Err(error),
            },
        }
    }
}

/// Drives `task`, the server's answer to a `tools/call` of `tool`, to its
/// end: its result, or an error naming the task and what ended it. A task
/// the journal keeps (`tracking`) is marked ended there when the call
/// ends, returned or dropped; its ttl counts from when it was created.
pub(super) async fn drive(
    peer: &Peer<RoleClient>,
    answer: &Answerer,
    tool: &str,
    task: Task,
    progress: Option<&CallProgress>,
    tracking: Option<Tracking>,
) -> Result<CallToolResult, ToolError> {
    let age = tracking
        .as_ref()
        .map_or(Duration::ZERO, |tracking| tracking.task.age());
    let mut ending = Ending(tracking);
    let result = poll(peer, answer, tool, task, progress, age).await;
    if let Some(tracking) = ending.0.take() {
        tracking.ended().await;
    }
    result
}

/// Polls `task`, created `age` ago, to its end.
async fn poll(
    peer: &Peer<RoleClient>,
    answer: &Answerer,
    tool: &str,
    mut task: Task,
    progress: Option<&CallProgress>,
    age: Duration,
) -> Result<CallToolResult, ToolError> {
    let started = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
    let task_id = task.task_id.clone();
    // The server's id as texts show it (a hostile one is cut and escaped).
    let shown = toolbox_core::args::echo(&task_id).into_owned();
    tracing::debug!(target: "toolbox::mcp", tool, task = %task_id, "the MCP server runs the call as a task");
    let mut abandon = Abandon {
        peer: peer.clone(),
        task_id: Some(task_id.clone()),
    };
    // The input requests answered, by key (unique over the task's life):
    // a poll before the server took the answers shows them again.
    let mut answered = std::collections::HashSet::new();
    let mut statuses = StatusMessages::default();
    statuses.polled(&task, progress);
    loop {
        if let Some(ttl) = task.ttl_ms.map(Duration::from_millis) {
            if started.elapsed() > ttl {
                // The server may have dropped it; nothing is cancelled.
                abandon.task_id = None;
                return Err(ToolError::failed(format!(
                    "the MCP server's task `{shown}` for `{tool}` did not finish within its ttl of {ttl:?}; its result is gone"
                )));
            }
        }
        tokio::time::sleep(interval(&task)).await;
        let polled = get(peer, &task_id, interval(&task)).await?;
        let detailed = polled.task;
        task = detailed.task;
        statuses.polled(&task, progress);
        let ended = matches!(
            detailed.payload,
            TaskPayload::Completed { .. } | TaskPayload::Failed { .. } | TaskPayload::Cancelled
        );
        if ended || task.status.is_terminal() {
            statuses.ended(progress).await;
        }
        match detailed.payload {
            TaskPayload::Working => {}
            TaskPayload::Completed { result } => {
                abandon.task_id = None;
                return serde_json::from_value(serde_json::Value::Object(result)).map_err(|e| {
                    ToolError::failed(format!(
                        "the MCP server's task `{shown}` for `{tool}` completed with a result that is not a tool result: {e}"
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
                        format!("the MCP server's task `{shown}` for `{tool}` failed: {message}")
                    }
                }));
            }
            TaskPayload::Cancelled => {
                abandon.task_id = None;
                return Err(ToolError::failed(format!(
                    "the MCP server cancelled its task `{shown}` for `{tool}`{}",
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
                            "the MCP server's task `{shown}` for `{tool}` asked for input (`{key}`), and the application's handler failed: {}",
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
                    "the MCP server's task `{shown}` for `{tool}` ended as {:?}",
                    task.status
                )));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use rmcp::model::{Task, TaskStatus};

    use super::{CallProgress, StatusMessages};
    use crate::progress::McpProgress;

    type Seen = Arc<Mutex<Vec<(f64, String)>>>;

    fn recording() -> (CallProgress, Seen) {
        let seen = Seen::default();
        let sink = seen.clone();
        let listener = McpProgress::new(move |p| {
            sink.lock()
                .unwrap()
                .push((p.progress, p.message.unwrap_or_default()));
        });
        (CallProgress::new(listener), seen)
    }

    fn working(message: &str) -> Task {
        Task::new("t", TaskStatus::Working, "", "").with_status_message(message)
    }

    fn assert_heard(seen: &Seen, expected: &[(f64, &str)]) {
        let seen = seen.lock().unwrap();
        let heard: Vec<(f64, &str)> = seen.iter().map(|(p, m)| (*p, m.as_str())).collect();
        assert_eq!(heard, expected);
    }

    #[test]
    fn notifications_take_over_from_status_messages_without_going_back() {
        let (progress, heard) = recording();
        progress.status("step 1".to_owned());
        progress.status("step 2".to_owned());
        let notifications = progress.notifications();
        // The same news as a status message already reported: dropped.
        notifications.report(2.0, Some(4.0), Some("step 2"));
        notifications.report(3.0, Some(4.0), Some("step 3"));
        // The server speaks notifications now: its status messages repeat them.
        progress.status("step 3".to_owned());
        notifications.report(4.0, Some(4.0), Some("step 4"));
        assert_heard(
            &heard,
            &[
                (1.0, "step 1"),
                (2.0, "step 2"),
                (3.0, "step 3"),
                (4.0, "step 4"),
            ],
        );
    }

    #[tokio::test]
    async fn a_status_message_waits_for_the_next_poll_or_the_end() {
        let (progress, heard) = recording();
        let mut statuses = StatusMessages::default();
        statuses.polled(&working("page 1"), Some(&progress));
        // Held until the next poll.
        assert_heard(&heard, &[]);
        statuses.polled(&working("page 1"), Some(&progress));
        assert_heard(&heard, &[(1.0, "page 1")]);
        statuses.polled(&working("page 2"), Some(&progress));
        statuses.ended(Some(&progress)).await;
        assert_heard(&heard, &[(1.0, "page 1"), (2.0, "page 2")]);

        // A notification before the next poll: the held message is the
        // same news and is not reported.
        let (progress, heard) = recording();
        let mut statuses = StatusMessages::default();
        statuses.polled(&working("page 1"), Some(&progress));
        progress
            .notifications()
            .report(1.0, Some(2.0), Some("page 1"));
        statuses.polled(&working("page 2"), Some(&progress));
        progress
            .notifications()
            .report(2.0, Some(2.0), Some("page 2"));
        statuses.ended(Some(&progress)).await;
        assert_heard(&heard, &[(1.0, "page 1"), (2.0, "page 2")]);
    }
}
