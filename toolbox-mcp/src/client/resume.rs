//! Calls resumed from the task journal: a box's unfinished tasks, and a
//! task polled again by a process that did not start it, its call ending
//! once through the lifecycle.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolbox_core::dispatch::DispatchFuture;
use toolbox_core::{
    Arguments, Context, ToolBox, ToolError, ToolHandler, ToolResponse, ToolSpecification,
};

use super::journal::{Claim, Tracking};
use super::{tasks, JournaledTask, McpToolBox, TaskJournal};
use crate::convert::from_result;
use crate::progress::McpProgress;

impl McpToolBox {
    /// Keeps `task`, the server's answer to a call of `tool`, in the
    /// journal (when the box has one) before it is first polled.
    pub(super) async fn track(
        &self,
        tool: &str,
        ctx: &Context,
        task: &rmcp::model::Task,
    ) -> Option<Tracking> {
        let journal = self.journal.clone()?;
        let mut record = JournaledTask::new(&self.name, &self.origin, tool, &task.task_id);
        record.call_id = ctx.call_id().map(str::to_owned);
        record.ttl_ms = task.ttl_ms;
        record.poll_interval_ms = task.poll_interval_ms;
        let claim = Claim::take(&self.origin, &task.task_id);
        if let Err(error) = journal.started(&record).await {
            tracing::warn!(target: "toolbox::mcp", tool, task = %task.task_id, error = %error.report(), "the task was not written to the task journal; it cannot be resumed after a restart");
        }
        Some(Tracking {
            journal,
            task: record,
            _claim: claim,
        })
    }

    /// The tasks of this server's calls that the task journal
    /// ([`McpConnect::task_journal`](super::McpConnect::task_journal)) keeps as unfinished, oldest first:
    /// those of calls still running in this process, and those whose
    /// process stopped before their calls ended.
    pub async fn unfinished_tasks(&self) -> Result<Vec<JournaledTask>, ToolError> {
        let journal = self.journal()?;
        let mut tasks = journal.unfinished().await?;
        tasks.retain(|task| task.server == self.name && task.origin == self.origin);
        Ok(tasks)
    }

    /// Resumes the call whose task `task_id` the journal keeps unfinished
    /// (a process that stopped mid-call started it): polls the task again
    /// and ends the call through the lifecycle under `handler` — one start
    /// (the call's tool, its call id where `ctx` has none, no arguments: the
    /// journal keeps none) and exactly one end, as a call made now would;
    /// the task is then marked ended in the journal. The call's limit
    /// ([`Timeouts::call`](super::Timeouts::call)) counts from now; the task's ttl from when it was
    /// created, and a task past it ends the call with an error saying its
    /// result is gone.
    ///
    /// An error, before any call starts, when the box has no journal, when
    /// the journal keeps no unfinished task `task_id` of this server, or when
    /// a call of this process drives the task already (its end reaches
    /// that call's handler, never a second one).
    pub async fn resume_task(
        &self,
        task_id: &str,
        ctx: &Context,
        handler: &ToolHandler,
    ) -> Result<ToolResponse, ToolError> {
        let journal = self.journal()?;
        // Claimed before the journal is read: a call that ends releases its
        // claim only after its end is written, so a task claimed here and
        // still unfinished in the journal has not ended (read first, a
        // concurrent resume that ended meanwhile would be driven again).
        let Some(claim) = Claim::take(&self.origin, task_id) else {
            return Err(ToolError::configuration(format!(
                "the task `{}` of the MCP server `{}` is driven by a call of this process already; its end reaches that call's handler",
                toolbox_core::args::echo(task_id),
                self.name
            )));
        };
        let unfinished = self.unfinished_tasks().await?;
        let Some(task) = unfinished.iter().find(|t| t.task_id == task_id).cloned() else {
            let open: Vec<String> = unfinished
                .iter()
                .map(|t| format!("`{}`", toolbox_core::args::echo(&t.task_id)))
                .collect();
            return Err(ToolError::configuration(format!(
                "the task journal at {} keeps no unfinished task `{}` of the MCP server `{}` ({}); {}",
                journal.location(),
                toolbox_core::args::echo(task_id),
                self.name,
                self.origin,
                if open.is_empty() {
                    "it keeps none of this server".to_owned()
                } else {
                    format!("unfinished: {}", open.join(", "))
                }
            )));
        };
        let ctx = match (ctx.call_id(), &task.call_id) {
            (None, Some(id)) => ctx.clone().with_call_id(id.as_str()),
            _ => ctx.clone(),
        };
        let tool = task.tool.clone();
        let resumed = Resumed {
            remote: self,
            spec: ToolSpecification::new(&tool, "a call resumed from the task journal"),
            tracking: Mutex::new(Some(Tracking {
                journal,
                task,
                _claim: Some(claim),
            })),
        };
        let arguments = Value::Null;
        let response =
            toolbox_core::ToolBoxExt::call(&resumed, &tool, &arguments, &ctx, handler).await;
        // A call cancelled before it ran (its `ctx` was) ended as
        // cancelled without polling: the task is cancelled too, as a call
        // dropped cancels its task, and the journal forgets it.
        let unpolled = resumed
            .tracking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(tracking) = unpolled {
            let cancel = rmcp::model::CancelTaskParams::new(tracking.task.task_id.clone());
            if let Err(error) = self.peer.cancel_task(cancel).await {
                tracing::debug!(target: "toolbox::mcp", task = %tracking.task.task_id, %error, "tasks/cancel was not acknowledged");
            }
            tracking.ended().await;
        }
        Ok(response)
    }

    fn journal(&self) -> Result<Arc<dyn TaskJournal>, ToolError> {
        self.journal.clone().ok_or_else(|| {
            ToolError::configuration(format!(
                "the MCP server `{}` was connected without a task journal (McpConnect::task_journal): no task of it can be resumed",
                self.name
            ))
        })
    }
}

/// A call resumed from the task journal, as a box of its one tool: its end
/// passes the lifecycle as any call's does.
struct Resumed<'a> {
    remote: &'a McpToolBox,
    spec: ToolSpecification,
    tracking: Mutex<Option<Tracking>>,
}

impl ToolBox for Resumed<'_> {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        vec![self.spec.clone()]
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        let tracking = self
            .tracking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some(tracking) = tracking else {
            return DispatchFuture::ready(Err(ToolError::failed(format!(
                "the call of `{name}` was resumed already"
            ))));
        };
        let remote = self.remote;
        DispatchFuture::new(async move {
            let record = &tracking.task;
            let mut task = rmcp::model::Task::new(
                record.task_id.clone(),
                rmcp::model::TaskStatus::Working,
                "",
                "",
            );
            task.ttl_ms = record.ttl_ms;
            task.poll_interval_ms = record.poll_interval_ms;
            let progress = ctx
                .extension::<McpProgress>()
                .filter(|listener| listener.is_wanted())
                .map(|listener| tasks::CallProgress::new(listener.clone()));
            let limit = remote.call_timeout;
            let driven = tasks::drive(
                &remote.peer,
                &remote.answer,
                name,
                task,
                progress.as_ref(),
                Some(tracking),
            );
            let result = tokio::time::timeout(limit, driven)
                .await
                .map_err(|_| ToolError::TimedOut { after: limit })??;
            from_result(&result)
        })
    }
}
