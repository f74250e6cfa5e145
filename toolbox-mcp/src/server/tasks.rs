//! MCP Tasks (`io.modelcontextprotocol/tasks`, SEP-2663) on the server
//! side: a tool the server was told to run as a task
//! ([`McpServer::task`](super::McpServer::task)) is answered with a task to
//! clients that declared the extension, and as a plain call to the others.
//! The task runs the same call (its lifecycle, limits and call slots) on
//! rmcp's [`TaskManager`]; `tasks/cancel` cancels the tool's `Context`; the
//! tool's progress reports become the task's status message too.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::{CallToolResponse, CallToolResult, ErrorData};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// The task a served call runs as, while it runs: a progress report
    /// made in it also sets the task's status message, which a client that
    /// polls sees where notifications do not reach it.
    pub(super) static RUNNING: TaskContext;
}

/// How often clients are told to poll a task, in milliseconds.
const POLL_MS: u64 = 100;

/// The tools served as tasks, and the tasks running.
#[derive(Clone, Default)]
pub(super) struct Tasks {
    pub(super) manager: Arc<TaskManager>,
    pub(super) tools: Arc<HashSet<String>>,
    /// The tools served only as tasks: a client without the extension is
    /// refused (`-32021`).
    pub(super) required: Arc<HashSet<String>>,
}

impl Tasks {
    /// The tools of `catalog` whose specification asks to run as a task.
    pub(super) fn marked(catalog: &[toolbox_core::ToolSpecification]) -> Self {
        use toolbox_core::TaskSupport;
        let named = |support: &[TaskSupport]| -> HashSet<String> {
            catalog
                .iter()
                .filter(|spec| support.contains(&spec.task))
                .map(|spec| spec.name.clone())
                .collect()
        };
        Tasks {
            manager: Arc::default(),
            tools: Arc::new(named(&[TaskSupport::Optional, TaskSupport::Required])),
            required: Arc::new(named(&[TaskSupport::Required])),
        }
    }

    /// Whether `tool` is served as a task.
    pub(super) fn serves(&self, tool: &str) -> bool {
        self.tools.contains(tool)
    }

    /// The refusal of `tool` to a client without the extension, where the
    /// tool is served only as a task.
    pub(super) fn refusal(&self, tool: &str) -> Option<ErrorData> {
        self.required.contains(tool).then(|| {
            ErrorData::new(
                rmcp::model::ErrorCode(-32021),
                format!(
                    "the tool `{}` runs only as an MCP task: declare the extension {} to call it",
                    toolbox_core::args::echo(tool),
                    rmcp::model::TASKS_EXTENSION_ID
                ),
                Some(serde_json::json!({
                    "requiredCapabilities": {
                        "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}}
                    }
                })),
            )
        })
    }

    /// Runs `call` as a task: `cancel` is the call's cancellation, which
    /// `tasks/cancel` triggers. The task's answer is the call's result.
    pub(super) fn spawn<F>(&self, cancel: CancellationToken, call: F) -> CallToolResponse
    where
        F: std::future::Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static,
    {
        let task = self.manager.spawn(
            TaskOptions::new().with_poll_interval_ms(POLL_MS),
            move |task| {
                Box::pin(RUNNING.scope(task.clone(), async move {
                    tokio::pin!(call);
                    let answer = tokio::select! {
                        answer = &mut call => answer,
                        () = task.cancelled() => {
                            // The tool sees its Context cancelled; the call
                            // ends as the lifecycle ends it.
                            cancel.cancel();
                            let _ = call.await;
                            return Err(TaskExit::Cancelled);
                        }
                    };
                    finished(answer)
                }))
            },
        );
        CallToolResponse::Task(rmcp::model::CreateTaskResult::new(task))
    }
}

/// A call's answer as a task's end.
fn finished(answer: Result<CallToolResponse, ErrorData>) -> Result<CallToolResult, TaskExit> {
    match answer {
        Ok(CallToolResponse::Complete(result)) => Ok(result),
        Ok(_) => Err(TaskExit::Error(ErrorData::internal_error(
            "the tool asked the client for input, which this server does not carry inside a task",
            None,
        ))),
        Err(error) => Err(TaskExit::Error(error)),
    }
}
