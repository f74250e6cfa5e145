//! Progress forwarding of served calls: a tool's reports sent to its client
//! in order, under the client's token, before the call's result; in a call
//! served as a task, each also becomes the task's status message.

use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

use crate::progress::{McpProgress, Progress};

/// Progress reports of one served call, sent to its client in order as
/// `notifications/progress` under the client's token.
enum Report {
    Progress(Progress),
    /// Answered once every earlier report is on its way: the call's result
    /// never overtakes its progress.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// Where one call's progress reports go. Clients attach a progress token
/// to most calls (rmcp's does to every one) and most tools report nothing,
/// so the task that forwards reports starts with the first report, not
/// with the call.
pub(super) struct Reports {
    send: tokio::sync::mpsc::UnboundedSender<Report>,
    /// The forwarding task's parts until the first report starts it.
    idle: Mutex<Option<Forwarder>>,
}

struct Forwarder {
    receive: tokio::sync::mpsc::UnboundedReceiver<Report>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
    runtime: tokio::runtime::Handle,
}

impl Reports {
    fn report(&self, report: Report) {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(Forwarder {
            mut receive,
            peer,
            token,
            runtime,
        }) = idle
        {
            runtime.spawn(async move {
                while let Some(report) = receive.recv().await {
                    match report {
                        Report::Progress(report) => {
                            let mut param =
                                ProgressNotificationParam::new(token.clone(), report.progress);
                            param.total = report.total;
                            param.message = report.message;
                            let _ = peer.notify_progress(param).await;
                        }
                        Report::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
        }
        let _ = self.send.send(report);
    }

    /// Whether no report was made (so there is nothing to wait for).
    fn unused(&self) -> bool {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

pub(super) fn progress_to(
    peer: Peer<RoleServer>,
    token: ProgressToken,
) -> (McpProgress, Arc<Reports>) {
    let (send, receive) = tokio::sync::mpsc::unbounded_channel::<Report>();
    let reports = Arc::new(Reports {
        send,
        idle: Mutex::new(Some(Forwarder {
            receive,
            peer,
            token,
            runtime: tokio::runtime::Handle::current(),
        })),
    });
    let sink = reports.clone();
    // In a call served as a task, each report is the task's status message
    // too, at once: a client that only polls (one of `2026-07-28`, where
    // nothing the server sends after its answer reaches the client) reads
    // it there.
    let task = super::tasks::RUNNING.try_with(Clone::clone).ok();
    let progress = McpProgress::new(move |report| {
        if let Some(task) = &task {
            task.report(&report, status_message(&report));
        }
        sink.report(Report::Progress(report));
    });
    (progress, reports)
}

/// Progress reports that go only to the running task's status message: a
/// task run again on another replica, which no client listens to.
pub(super) fn to_running_task() -> Option<McpProgress> {
    let task = super::tasks::RUNNING.try_with(Clone::clone).ok()?;
    Some(McpProgress::new(move |report| {
        task.report(&report, status_message(&report));
    }))
}

/// A report as a task's status message: its message, or how far it is
/// (`2 of 3`, `2`) where it has none.
fn status_message(report: &Progress) -> String {
    match (&report.message, report.total) {
        (Some(message), _) => message.clone(),
        (None, Some(total)) => format!("{} of {total}", report.progress),
        (None, None) => report.progress.to_string(),
    }
}

/// Waits until the call's progress reports, if it made any, have been sent.
pub(super) async fn flush(reports: Option<Arc<Reports>>) {
    if let Some(reports) = reports.filter(|r| !r.unused()) {
        let (done, sent) = tokio::sync::oneshot::channel();
        reports.report(Report::Flush(done));
        let _ = sent.await;
    }
}
