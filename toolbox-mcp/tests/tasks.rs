//! MCP Tasks through `McpToolBox`: a call an rmcp server (its own
//! `TaskManager`) answers with a task is driven to its end inside the one
//! call: one start and one end for the handler, the task's status messages
//! as progress in order, `tasks/cancel` when the call's limit passes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::json;
use toolbox_core::{Context, ToolBoxExt, ToolHandler};
use toolbox_mcp::client::Timeouts;
use toolbox_mcp::server::Progress;
use toolbox_mcp::{McpProgress, McpToolBox};

/// A server that runs `report` (three steps, each a status message) and
/// `forever` (until cancelled) as tasks for a client that declared the
/// extension, and `report` as a plain call for one that did not.
#[derive(Clone, Default)]
struct TaskServer {
    tasks: Arc<TaskManager>,
    /// How many tasks saw their cancellation.
    cancelled: Arc<AtomicUsize>,
    /// The task ids `tasks/cancel` named.
    cancels: Arc<Mutex<Vec<String>>>,
}

fn tool(name: &str, description: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {}});
    Tool::new(
        name.to_owned(),
        description.to_owned(),
        Arc::new(schema.as_object().unwrap().clone()),
    )
}

impl ServerHandler for TaskServer {
    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("report", "Writes the report, in three steps"),
            tool("forever", "Never finishes"),
            tool("delete", "Deletes, once the user confirms"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if !declared {
            return Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text("the report, without a task"),
            ])));
        }
        let cancelled = self.cancelled.clone();
        let options = TaskOptions::new()
            .with_poll_interval_ms(10)
            .with_ttl_ms(60_000);
        let task = match request.name.as_ref() {
            "report" => self.tasks.spawn(options, move |ctx| {
                Box::pin(async move {
                    for step in 1..=3 {
                        ctx.set_status_message(format!("step {step} of 3"));
                        tokio::time::sleep(Duration::from_millis(40)).await;
                    }
                    Ok(CallToolResult::success(vec![ContentBlock::text(
                        "the report",
                    )]))
                })
            }),
            "delete" => self.tasks.spawn(options, move |ctx| {
                Box::pin(async move {
                    let question: rmcp::model::InputRequest = serde_json::from_value(json!({
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "Delete the file?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"confirm": {"type": "boolean", "default": false}},
                            }
                        }
                    }))
                    .unwrap();
                    let answer = ctx.request_input("confirm-1", question).await?;
                    Ok(CallToolResult::success(vec![ContentBlock::text(
                        answer.to_string(),
                    )]))
                })
            }),
            _ => self.tasks.spawn(options, move |ctx| {
                Box::pin(async move {
                    ctx.cancelled().await;
                    cancelled.fetch_add(1, Ordering::SeqCst);
                    Err(TaskExit::Cancelled)
                })
            }),
        };
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancels.lock().unwrap().push(request.task_id.clone());
        self.tasks.cancel_task(&request.task_id)
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }
}

/// The client end of a duplex stream `server` serves.
fn serving<S: ServerHandler>(server: S) -> tokio::io::DuplexStream {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let service = server.serve(server_side).await.unwrap();
        let _ = service.waiting().await;
    });
    client_side
}

/// Polls the task `task_id` until it ends (2 s at most): its last state.
async fn until_terminal(
    client: &rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig>,
    task_id: &str,
) -> rmcp::model::DetailedTask {
    for _ in 0..200 {
        let polled = client
            .get_task(GetTaskParams::new(task_id.to_owned()))
            .await
            .unwrap();
        if polled.task.task.status.is_terminal() {
            return polled.task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task `{task_id}` did not end within 2 s");
}

async fn connect(server: TaskServer, timeouts: Timeouts) -> McpToolBox {
    McpToolBox::transport(serving(server))
        .timeouts(timeouts)
        .connect()
        .await
        .unwrap()
}

/// A handler counting starts and ends.
fn counting() -> (ToolHandler, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (starts, ends) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, e, f) = (starts.clone(), ends.clone(), ends.clone());
    let handler = ToolHandler::empty()
        .on_start(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .on_success(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        })
        .on_error(move |_| {
            f.fetch_add(1, Ordering::SeqCst);
        });
    (handler, starts, ends)
}

#[tokio::test]
async fn a_call_answered_with_a_task_is_one_call_with_its_steps_as_progress() {
    let remote = connect(TaskServer::default(), Timeouts::default()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let ctx = Context::new().with_extension(McpProgress::new(move |p: Progress| {
        sink.lock().unwrap().push(p);
    }));
    let (handler, starts, ends) = counting();
    let response = remote.call("report", &json!({}), &ctx, &handler).await;
    assert!(!response.is_error, "{}", response.content);
    assert_eq!(response.content, "the report");
    assert_eq!(
        (starts.load(Ordering::SeqCst), ends.load(Ordering::SeqCst)),
        (1, 1)
    );
    // Each status message once, in order (a poll may miss a short step,
    // never reorder them).
    let messages: Vec<(f64, String)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.message.clone().unwrap()))
        .collect();
    assert!(!messages.is_empty());
    let steps: Vec<&str> = messages.iter().map(|(_, m)| m.as_str()).collect();
    let mut sorted = steps.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(steps, sorted, "{messages:?}");
    assert!(steps.iter().all(|m| m.starts_with("step ")), "{steps:?}");
    for (i, (progress, _)) in messages.iter().enumerate() {
        assert_eq!(*progress, (i + 1) as f64);
    }

    // A caller that does not listen gets the same result.
    let response = remote
        .call("report", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "the report");
}

#[tokio::test]
async fn a_task_past_the_calls_limit_is_cancelled_on_the_server() {
    let server = TaskServer::default();
    let remote = connect(
        server.clone(),
        Timeouts::default().call(Duration::from_millis(200)),
    )
    .await;
    let (handler, starts, ends) = counting();
    let response = remote
        .call("forever", &json!({}), &Context::new(), &handler)
        .await;
    assert!(response.is_error);
    assert!(
        response.content.contains("200ms"),
        "the limit is named: {}",
        response.content
    );
    assert_eq!(
        (starts.load(Ordering::SeqCst), ends.load(Ordering::SeqCst)),
        (1, 1)
    );
    // The server hears `tasks/cancel` for that task, and the task stops.
    for _ in 0..200 {
        if server.cancelled.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.cancels.lock().unwrap().len(), 1);
    assert_eq!(server.cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_client_declares_tasks_so_servers_may_answer_with_them() {
    // rmcp refuses to answer with a task a client that did not declare the
    // extension (-32021); a plain rmcp client gets the plain call.
    let plain = ().serve(serving(TaskServer::default())).await.unwrap();
    let answer = plain
        .call_tool(CallToolRequestParams::new("report"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&answer.content).unwrap()[0]["text"],
        "the report, without a task"
    );
    plain.cancel().await.unwrap();
}

/// Counts, when dropped, whether its Context was cancelled.
struct Seen(Context, Arc<AtomicUsize>);

impl Drop for Seen {
    fn drop(&mut self) {
        if self.0.is_cancelled() {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A served toolbox whose `compile` runs as a task and whose `wait` waits
/// until it is cancelled, counting the cancelled Contexts it saw.
fn served(cancelled: Arc<AtomicUsize>) -> toolbox_mcp::McpServer<toolbox_core::FnToolBox> {
    use toolbox_core::{tool_fn, FnToolBox};
    let tools = FnToolBox::new([
        // Marked on the tool itself, as `#[tool(task)]` marks it.
        tool_fn("compile", "Compiles, a while", |_: ()| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            "compiled"
        })
        .task(toolbox_core::spec::TaskSupport::Optional),
        tool_fn(
            "wait",
            "Waits until cancelled",
            move |_: (), ctx: Context| {
                let cancelled = cancelled.clone();
                async move {
                    // The lifecycle drops a cancelled call's future: what
                    // the tool holds sees its Context cancelled as it goes.
                    let _seen = Seen(ctx, cancelled);
                    std::future::pending::<()>().await;
                    "never"
                }
            },
        ),
    ])
    .unwrap();
    toolbox_mcp::McpServer::new(tools, "builder").task_required("wait")
}

/// An rmcp client of `server`, declaring the tasks extension or not.
async fn rmcp_client(
    server: toolbox_mcp::McpServer<toolbox_core::FnToolBox>,
    tasks: bool,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
    let mut capabilities = ClientCapabilities::default();
    if tasks {
        capabilities = ClientCapabilities::builder().enable_tasks().build();
    }
    ClientConfig::new(capabilities, Implementation::new("test", "1"))
        .serve(serving(server))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_served_task_tool_answers_with_a_task_only_to_clients_that_declared_it() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let client = rmcp_client(served(cancelled.clone()), true).await;
    let capabilities = &client.peer_info().unwrap().capabilities;
    assert!(capabilities.extensions.as_ref().unwrap()["io.modelcontextprotocol/tasks"].is_empty());
    let CallToolResponse::Task(created) = client
        .call_tool_once(CallToolRequestParams::new("compile"))
        .await
        .unwrap()
    else {
        panic!("a declaring client gets a task");
    };
    let done = serde_json::to_value(until_terminal(&client, &created.task.task_id).await).unwrap();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "compiled");
    client.cancel().await.unwrap();

    // Without the extension, the same tool is a plain call.
    let plain = rmcp_client(served(cancelled), false).await;
    let answer = plain
        .call_tool(CallToolRequestParams::new("compile"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&answer.content).unwrap()[0]["text"],
        "compiled"
    );
    plain.cancel().await.unwrap();
}

#[tokio::test]
async fn tasks_cancel_reaches_the_served_tools_context() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let client = rmcp_client(served(cancelled.clone()), true).await;
    let CallToolResponse::Task(created) = client
        .call_tool_once(CallToolRequestParams::new("wait"))
        .await
        .unwrap()
    else {
        panic!("a declaring client gets a task");
    };
    let task_id = created.task.task_id;
    client
        .cancel_task(CancelTaskParams::new(task_id.clone()))
        .await
        .unwrap();
    let ended = until_terminal(&client, &task_id).await;
    assert_eq!(
        serde_json::to_value(ended.task.status).unwrap(),
        "cancelled"
    );
    assert_eq!(cancelled.load(Ordering::SeqCst), 1, "the tool saw it");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_tool_box_drives_a_toolbox_served_task() {
    let remote = McpToolBox::transport(serving(served(Arc::default())))
        .connect()
        .await
        .unwrap();
    let (handler, starts, ends) = counting();
    let response = remote
        .call("compile", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(response.content, "compiled");
    assert_eq!(
        (starts.load(Ordering::SeqCst), ends.load(Ordering::SeqCst)),
        (1, 1)
    );
}

#[tokio::test]
async fn a_tool_served_only_as_a_task_refuses_a_client_without_the_extension() {
    let plain = rmcp_client(served(Arc::default()), false).await;
    let error = plain
        .call_tool(CallToolRequestParams::new("wait"))
        .await
        .unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("a JSON-RPC error: {error}");
    };
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.message,
        "the tool `wait` runs only as an MCP task: declare the extension io.modelcontextprotocol/tasks to call it"
    );
    assert_eq!(
        error.data,
        Some(
            json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
        )
    );
    plain.cancel().await.unwrap();
}

/// An application's client handler: confirms what the server asks, once
/// (a second question would be a second answer).
#[derive(Clone, Default)]
struct Confirming {
    asked: Arc<AtomicUsize>,
}

impl rmcp::ClientHandler for Confirming {
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _: RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let request = serde_json::to_value(&request).unwrap();
        assert_eq!(request["message"], "Delete the file?");
        Ok(
            serde_json::from_value(json!({"action": "accept", "content": {"confirm": true}}))
                .unwrap(),
        )
    }
}

#[tokio::test]
async fn a_tasks_question_is_answered_by_the_applications_handler() {
    let confirming = Confirming::default();
    let remote = McpToolBox::transport(serving(TaskServer::default()))
        .handler(confirming.clone())
        .connect()
        .await
        .unwrap();
    let (handler, starts, ends) = counting();
    let response = remote
        .call("delete", &json!({}), &Context::new(), &handler)
        .await;
    assert!(!response.is_error, "{}", response.content);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&response.content).unwrap(),
        json!({"action": "accept", "content": {"confirm": true}})
    );
    assert_eq!(confirming.asked.load(Ordering::SeqCst), 1, "asked once");
    assert_eq!(
        (starts.load(Ordering::SeqCst), ends.load(Ordering::SeqCst)),
        (1, 1)
    );

    // Without a handler of the application's, the question is declined,
    // and the task ends with the server's answer to that.
    let remote = connect(TaskServer::default(), Timeouts::default()).await;
    let response = remote
        .call("delete", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&response.content).unwrap()["action"],
        "decline"
    );
}

#[tokio::test]
async fn the_tools_of_a_server_that_declares_tasks_carry_its_task_support() {
    use toolbox_core::spec::TaskSupport;
    use toolbox_core::ToolBox;
    let remote = connect(TaskServer::default(), Timeouts::default()).await;
    let specs = remote.specifications(&Context::new());
    assert_eq!(specs.len(), 3);
    assert!(
        specs.iter().all(|spec| spec.task == TaskSupport::Optional),
        "{specs:?}"
    );
    // A server without the extension: plain calls only.
    let plain =
        toolbox_core::FnToolBox::new([toolbox_core::tool_fn("greet", "Greets", |_: ()| async {
            "hello"
        })])
        .unwrap();
    let remote_plain = McpToolBox::transport(serving(toolbox_mcp::McpServer::new(plain, "plain")))
        .connect()
        .await
        .unwrap();
    assert_eq!(
        remote_plain.specifications(&Context::new())[0].task,
        TaskSupport::Never
    );
    // A proxy serves them as its server did: as tasks, to clients that
    // declared the extension.
    let proxy = toolbox_mcp::McpServer::proxy(remote, "proxy")
        .await
        .unwrap();
    let client = rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build(),
        rmcp::model::Implementation::new("test", "1"),
    )
    .serve(serving(proxy))
    .await
    .unwrap();
    assert!(client.peer_info().unwrap().capabilities.supports_tasks());
    let CallToolResponse::Task(created) = client
        .call_tool_once(CallToolRequestParams::new("report"))
        .await
        .unwrap()
    else {
        panic!("the proxy answers a declaring client with a task");
    };
    let done = serde_json::to_value(until_terminal(&client, &created.task.task_id).await).unwrap();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "the report");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_pin_written_before_the_server_declared_tasks_still_holds() {
    use toolbox_core::spec::TaskSupport;
    use toolbox_core::ToolBox;
    use toolbox_mcp::client::Pin;
    // The pin file as a server without the extension had it listed.
    let path = std::env::temp_dir().join(format!("toolbox-tasks-pin-{}.json", std::process::id()));
    let listed: Vec<_> = [
        ("report", "Writes the report, in three steps"),
        ("forever", "Never finishes"),
        ("delete", "Deletes, once the user confirms"),
    ]
    .map(|(name, description)| {
        toolbox_core::ToolSpecification::new(name, description)
            .with_parameters(json!({"type": "object", "properties": {}}))
    })
    .into();
    std::fs::write(&path, toolbox_surface::surface_lock_text(&listed)).unwrap();
    let remote = McpToolBox::transport(serving(TaskServer::default()))
        .pin_file(&path)
        .pin(Pin::Hold)
        .connect()
        .await
        .unwrap();
    let specs = remote.specifications(&Context::new());
    assert_eq!(specs.len(), 3, "every tool offered, none held: {specs:?}");
    assert!(specs.iter().all(|spec| spec.task == TaskSupport::Optional));
    let _ = std::fs::remove_file(&path);
}

/// How many of `index`'s reports its caller heard: the tool waits for
/// each before its next, so a client that polls sees every one.
type Heard = Arc<tokio::sync::watch::Sender<u32>>;

/// A served toolbox whose `index` runs as a task and reports its three
/// pages as progress, each once the caller heard the one before (2 s at
/// most).
fn indexer(heard: &Heard) -> toolbox_mcp::McpServer<toolbox_core::FnToolBox> {
    use toolbox_core::{tool_fn, FnToolBox, FromContext};
    let heard = heard.clone();
    let tools = FnToolBox::new([tool_fn(
        "index",
        "Indexes three pages",
        move |_: (), ctx: Context| {
            let mut heard = heard.subscribe();
            async move {
                let progress = McpProgress::from_context(&ctx).unwrap();
                for page in 1..=3 {
                    progress.report(f64::from(page), Some(3.0), Some(&format!("page {page}")));
                    let _ = tokio::time::timeout(
                        Duration::from_secs(2),
                        heard.wait_for(|n| *n >= page),
                    )
                    .await;
                }
                "indexed"
            }
        },
    )
    .task(toolbox_core::spec::TaskSupport::Optional)])
    .unwrap();
    toolbox_mcp::McpServer::new(tools, "indexer")
}

/// Calls `index` on `remote` listening for progress: what it heard, once
/// the call has its one result.
async fn index_listening(remote: &McpToolBox, heard: &Heard) -> Vec<(f64, Option<f64>, String)> {
    heard.send_replace(0);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (sink, count) = (seen.clone(), heard.clone());
    let ctx = Context::new().with_extension(McpProgress::new(move |p: Progress| {
        sink.lock().unwrap().push(p);
        count.send_modify(|n| *n += 1);
    }));
    let (handler, starts, ends) = counting();
    let response = remote.call("index", &json!({}), &ctx, &handler).await;
    assert!(!response.is_error, "{}", response.content);
    assert_eq!(response.content, "indexed");
    assert_eq!(
        (starts.load(Ordering::SeqCst), ends.load(Ordering::SeqCst)),
        (1, 1)
    );
    let seen = seen.lock().unwrap();
    seen.iter()
        .map(|p| (p.progress, p.total, p.message.clone().unwrap_or_default()))
        .collect()
}

/// Calls `index` on the server at `url` as a `2026-07-28` client that
/// declared the Tasks extension and polls its task: the era has no
/// session, so nothing the server sends after its answer reaches the
/// client. The status messages it read, in order, and the task's end.
async fn index_polling(url: &str, heard: &Heard) -> (Vec<String>, serde_json::Value) {
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
    use rmcp::ClientLifecycleMode;
    use rmcp::ClientServiceExt as _;
    heard.send_replace(0);
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
    let client = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("poller", "1"),
    )
    .serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap();
    let CallToolResponse::Task(created) = client
        .call_tool_once(CallToolRequestParams::new("index"))
        .await
        .unwrap()
    else {
        panic!("a declaring client gets a task");
    };
    let mut messages: Vec<String> = Vec::new();
    for _ in 0..500 {
        let polled = client
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .unwrap()
            .task;
        if let Some(message) = &polled.task.status_message {
            if messages.last() != Some(message) {
                messages.push(message.clone());
                heard.send_modify(|n| *n += 1);
            }
        }
        if polled.task.status.is_terminal() {
            client.cancel().await.unwrap();
            return (messages, serde_json::to_value(polled).unwrap());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task did not end within 5 s");
}

#[tokio::test]
async fn a_remote_tasks_progress_reaches_the_caller_and_a_proxys_caller_once() {
    use toolbox_core::spec::TaskSupport;
    use toolbox_core::ToolBox;
    // Over HTTP with sessions the server's notifications reach the caller;
    // its status messages, the same news, are not heard twice.
    let heard = Heard::default();
    let origin = toolbox_mcp::serve_http(indexer(&heard), "127.0.0.1:0")
        .await
        .unwrap();
    let remote = McpToolBox::http(origin.url()).connect().await.unwrap();
    assert_eq!(
        remote.specifications(&Context::new())[0].task,
        TaskSupport::Optional,
        "the call runs as a task"
    );
    let pages: Vec<_> = (1..=3)
        .map(|page| (f64::from(page), Some(3.0), format!("page {page}")))
        .collect();
    assert_eq!(index_listening(&remote, &heard).await, pages);

    // A proxy serves it as a task in turn, and its caller hears the same.
    let proxy = toolbox_mcp::McpServer::proxy(remote, "proxy")
        .await
        .unwrap();
    let proxied = toolbox_mcp::serve_http(proxy, "127.0.0.1:0").await.unwrap();
    let client = McpToolBox::http(proxied.url()).connect().await.unwrap();
    assert_eq!(index_listening(&client, &heard).await, pages);
}

#[tokio::test]
async fn a_served_tasks_progress_reaches_a_client_that_only_polls() {
    // A `2026-07-28` client reads the tool's reports as the task's status
    // messages, from the server and through a proxy alike.
    let heard = Heard::default();
    let origin = toolbox_mcp::serve_http(indexer(&heard), "127.0.0.1:0")
        .await
        .unwrap();
    let pages = ["page 1", "page 2", "page 3"];
    let (messages, end) = index_polling(&origin.url(), &heard).await;
    assert_eq!(messages, pages);
    assert_eq!(end["status"], "completed");
    assert_eq!(end["result"]["content"][0]["text"], "indexed");

    let remote = McpToolBox::http(origin.url()).connect().await.unwrap();
    let proxy = toolbox_mcp::McpServer::proxy(remote, "proxy")
        .await
        .unwrap();
    let proxied = toolbox_mcp::serve_http(proxy, "127.0.0.1:0").await.unwrap();
    let (messages, end) = index_polling(&proxied.url(), &heard).await;
    assert_eq!(messages, pages);
    assert_eq!(end["result"]["content"][0]["text"], "indexed");
}
