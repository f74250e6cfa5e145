//! The client side's handler: the tool list refreshed when the server
//! says it changed, progress routed to the call that asked for it, and the
//! server's requests (roots, sampling, elicitation) handed to the
//! application's rmcp handler.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

// Roots and sampling are deprecated by SEP-2577 (the stateless era), but
// initialize-era servers still send them: they are delegated, not dropped.
#[allow(deprecated)]
use rmcp::model::{
    CancelledNotificationParam, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData, ListRootsResult, NumberOrString,
    ProgressNotificationParam, ProgressToken, RequestId,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::{Map, Value};

use crate::progress::{McpProgress, Progress};

use super::Shared;

/// The calls waiting for progress, by the token rmcp sent with them.
pub(super) type Listeners = Arc<Mutex<Routes>>;

/// Where progress goes. rmcp picks each request's token and the server may
/// report before the caller has learnt it, so reports for a token nobody
/// listens to yet wait in a small stash (the oldest go first when full).
/// rmcp also hands each notification to a task of its own, so a call's last
/// report can be handled after its result: the listeners of calls that just
/// finished are kept a while, and late reports still reach them.
#[derive(Default)]
pub(super) struct Routes {
    listeners: HashMap<String, McpProgress>,
    finished: std::collections::VecDeque<(String, McpProgress)>,
    early: std::collections::VecDeque<(String, Progress)>,
}

/// How many early reports wait for their listener, and how many finished
/// calls' listeners still take late reports.
const EARLY_REPORTS: usize = 256;
const FINISHED_LISTENERS: usize = 64;

impl Routes {
    fn deliver(&mut self, key: String, report: Progress) -> Option<(McpProgress, Progress)> {
        let finished = self
            .finished
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, listener)| listener);
        match self.listeners.get(&key).or(finished) {
            Some(listener) => Some((listener.clone(), report)),
            None => {
                if self.early.len() == EARLY_REPORTS {
                    self.early.pop_front();
                }
                self.early.push_back((key, report));
                None
            }
        }
    }

    /// The call under `key` has its result; late reports still reach it.
    fn finish(&mut self, key: String) {
        if let Some(listener) = self.listeners.remove(&key) {
            if self.finished.len() == FINISHED_LISTENERS {
                self.finished.pop_front();
            }
            self.finished.push_back((key, listener));
        }
    }

    pub(super) fn listen(&mut self, key: &str, listener: McpProgress) -> Vec<Progress> {
        self.listeners.insert(key.to_owned(), listener);
        let mut early = Vec::new();
        self.early.retain(|(k, report)| {
            if k == key {
                early.push(report.clone());
                false
            } else {
                true
            }
        });
        early
    }
}

/// The client side's handler: refreshes the tool list when the server says
/// it changed, forwards progress to the call that asked for it, and hands
/// server→client requests (roots, sampling, elicitation) to the
/// application's rmcp [`ClientHandler`] (`()` by default: no roots, an
/// error for sampling, a declined elicitation), so none is left hanging.
pub(super) struct Watcher<H> {
    pub(super) shared: Arc<Shared>,
    pub(super) progress: Listeners,
    pub(super) app: Arc<H>,
    /// Declares MCP Apps' extension in the handshake's capabilities.
    pub(super) renders_apps: bool,
}

#[allow(deprecated)]
impl<H: ClientHandler> ClientHandler for Watcher<H> {
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Err(error) = self.shared.relist(&context.peer).await {
            tracing::warn!(target: "toolbox::mcp", error = %error.report(), "could not list the MCP tools again");
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let report = Progress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        let delivery = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .deliver(token_key(&params.progress_token), report);
        if let Some((listener, report)) = delivery {
            listener.send(report);
        }
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.app.list_roots(context).await
    }

    /// The server's log messages go to `tracing` (target
    /// `toolbox::mcp::server_log`, at the message's level) and to the
    /// application's handler.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        use rmcp::model::LoggingLevel;
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        match params.level {
            LoggingLevel::Debug => {
                tracing::debug!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
            LoggingLevel::Warning => {
                tracing::warn!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
            _ => {
                tracing::error!(target: "toolbox::mcp::server_log", logger, %data, "MCP server log")
            }
        }
        self.app.on_logging_message(params, context).await;
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.app.create_message(params, context).await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        elicit(&*self.app, request, context).await
    }

    fn get_info(&self) -> ClientConfig {
        let mut info = self.app.get_info();
        // rmcp's defaults name the client `rmcp` and ask for a version that
        // has no `initialize`: this handshake is `initialize`, so it asks
        // for the newest version that has one, and the client is toolbox
        // unless the application named it.
        if !info.protocol_version.has_initialize() {
            info.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        }
        if info.client_info.name == "rmcp" {
            info.client_info.name = "toolbox".to_owned();
            info.client_info.version = env!("CARGO_PKG_VERSION").to_owned();
        }
        let extensions = info
            .capabilities
            .extensions
            .get_or_insert_with(Default::default);
        // A call the server turns into a task is driven to its end inside
        // the call (`tasks.rs`), so the extension is always declared.
        extensions
            .entry(rmcp::model::TASKS_EXTENSION_ID.to_owned())
            .or_default();
        if self.renders_apps {
            // The extension's one required setting: the view formats the
            // host renders. An application's own declaration is kept.
            let mut settings = Map::new();
            settings.insert(
                "mimeTypes".to_owned(),
                Value::from(vec![crate::apps::UI_MIME_TYPE]),
            );
            extensions
                .entry(crate::apps::UI_EXTENSION.to_owned())
                .or_insert(settings);
        }
        info
    }
}

/// The application's answer to an elicitation: SEP-1034's defaults fill
/// the omitted fields of an accepted form.
async fn elicit<H: ClientHandler>(
    app: &H,
    request: ElicitRequestParams,
    context: RequestContext<RoleClient>,
) -> Result<ElicitResult, ErrorData> {
    let defaults = schema_defaults(&request);
    let mut result = app.create_elicitation(request, context).await?;
    if result.action == rmcp::model::ElicitationAction::Accept && !defaults.is_empty() {
        let mut content = match result.content.take() {
            Some(Value::Object(content)) => content,
            _ => Map::new(),
        };
        for (name, default) in defaults {
            content.entry(name).or_insert(default);
        }
        result.content = Some(Value::Object(content));
    }
    Ok(result)
}

/// Answers a server's input request (a task's `inputRequests`) with the
/// application's handler, as its own request would be answered.
pub(super) type Answerer = Arc<
    dyn Fn(
            rmcp::model::InputRequest,
            RequestContext<RoleClient>,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, ErrorData>> + Send>>
        + Send
        + Sync,
>;

/// The [`Answerer`] of the application's handler `app`.
#[allow(deprecated)]
pub(super) fn answerer<H: ClientHandler>(app: Arc<H>) -> Answerer {
    use rmcp::model::InputRequest;
    Arc::new(move |request, context| {
        let app = app.clone();
        Box::pin(async move {
            let answer = match request {
                InputRequest::Elicitation(request) => {
                    serde_json::to_value(elicit(&*app, request.params, context).await?)
                }
                InputRequest::CreateMessage(request) => {
                    serde_json::to_value(app.create_message(request.params, context).await?)
                }
                InputRequest::ListRoots(_) => serde_json::to_value(app.list_roots(context).await?),
                other => {
                    return Err(ErrorData::invalid_request(
                        format!(
                            "this client cannot answer the input request {}",
                            serde_json::to_string(&other).unwrap_or_default()
                        ),
                        None,
                    ))
                }
            };
            answer.map_err(|e| ErrorData::internal_error(e.to_string(), None))
        })
    })
}

/// The `default` of each property of an elicitation's form.
fn schema_defaults(request: &ElicitRequestParams) -> Map<String, Value> {
    let Ok(request) = serde_json::to_value(request) else {
        return Map::new();
    };
    request
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

pub(super) fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// A call listening for its progress: unregisters when the call ends, and
/// tells the server a call dropped before its answer is abandoned
/// (`notifications/cancelled`), as rmcp's own `call_tool` does.
pub(super) struct Listening<'a> {
    pub(super) progress: &'a Listeners,
    pub(super) key: String,
    pub(super) peer: &'a Peer<RoleClient>,
    pub(super) pending: Option<RequestId>,
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finish(std::mem::take(&mut self.key));
        if let (Some(id), Ok(runtime)) =
            (self.pending.take(), tokio::runtime::Handle::try_current())
        {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let param = CancelledNotificationParam::new(
                    Some(id),
                    Some("request abandoned by the caller".to_owned()),
                );
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::{Routes, EARLY_REPORTS, FINISHED_LISTENERS};
    use crate::progress::{McpProgress, Progress};

    fn report(n: f64) -> Progress {
        Progress {
            progress: n,
            total: None,
            message: None,
        }
    }

    #[test]
    fn reports_reach_their_call_early_on_time_and_late() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let listener = McpProgress::new(move |p| sink.lock().unwrap().push(p.progress));
        let mut routes = Routes::default();
        // Before the caller learnt its token: stashed, then handed over.
        assert!(routes.deliver("7".into(), report(1.0)).is_none());
        let early = routes.listen("7", listener.clone());
        assert_eq!(early, [report(1.0)]);
        // While the call runs.
        let (to, r) = routes.deliver("7".into(), report(2.0)).unwrap();
        to.send(r);
        // After its result: rmcp's notification task ran late.
        routes.finish("7".into());
        let (to, r) = routes.deliver("7".into(), report(3.0)).unwrap();
        to.send(r);
        assert_eq!(*seen.lock().unwrap(), [2.0, 3.0]);
        // Bounded: old finished calls and unclaimed reports are forgotten.
        for i in 0..FINISHED_LISTENERS + 1 {
            routes.listen(&format!("f{i}"), listener.clone());
            routes.finish(format!("f{i}"));
        }
        assert!(routes.deliver("7".into(), report(4.0)).is_none());
        for i in 0..EARLY_REPORTS + 10 {
            routes.deliver(format!("nobody{i}"), report(0.0));
        }
        assert_eq!(routes.early.len(), EARLY_REPORTS);
    }
}
