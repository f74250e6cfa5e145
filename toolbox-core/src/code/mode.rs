//! [`CodeMode`]: one tool, `run_code`, whose JavaScript runs in an embedded
//! QuickJS and calls the box's tools, each call through the lifecycle and
//! the approval hook.

use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc as sync_mpsc, Arc};
use std::time::{Duration, Instant};

use rquickjs::{CatchResultExt, CaughtError, Function};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::args::{Arguments, ToolCall};
use crate::callers::Caller;
use crate::catalog::{one_line, ToolIndex, ToolSearch};
use crate::code::typescript;
use crate::context::Context;
use crate::dispatch::{BoxFuture, DispatchFuture};
use crate::error::ToolError;
use crate::handler::ToolHandler;
use crate::response::ToolResponse;
use crate::spec::ToolSpecification;
use crate::toolbox::ToolBox;
use crate::turn::{Approval, ApprovalRequest, Decision, TurnRunner};

/// The one tool a [`CodeMode`] offers.
pub const RUN_CODE: &str = "run_code";

/// The runtime a code-mode call's [`Caller::Code`] names.
pub const CODE_MODE_RUNTIME: &str = "toolbox_code_mode";

/// What one run may use. Each limit, once reached, ends the run with an
/// error naming it; the box stays usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall time of the whole run, tool calls included (default 10 s).
    pub time: Duration,
    /// Bytes the script's heap may hold (default 64 MiB).
    pub memory: usize,
    /// Bytes of the interpreter's stack (default 512 KiB): deep recursion
    /// ends as a stack overflow, not a crash.
    pub stack: usize,
    /// Tool calls per run (default 100).
    pub calls: usize,
    /// Bytes of the run's answer: its returned value and its printed
    /// lines (default 64 KiB).
    pub output: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: Duration::from_secs(10),
            memory: 64 << 20,
            stack: 512 << 10,
            calls: 100,
            output: 64 << 10,
        }
    }
}

/// A box offered as one tool, `run_code`: the model writes JavaScript (the
/// body of an async function) that calls the box's tools as `await
/// tools.name({...})` and returns only what it needs, in one model round
/// trip instead of one per call.
///
/// The script runs in QuickJS with no ambient I/O: no network, files,
/// environment, modules or clock. Each tool call it makes is a call of the
/// box through [`TurnRunner`]: the handler's events (with
/// [`Caller::Code`]), one end per start, argument errors and refusals
/// thrown as exceptions the script can catch, hidden tools absent, and the
/// approval hook asked before every call it gates. A call the hook defers
/// stops the run (nothing after it runs). Every tool of the box is callable
/// from the script, whatever its [`Callers`](crate::program::Callers): the
/// application put the whole box behind code.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use serde_json::json;
/// use toolbox_core::code::CodeMode;
/// use toolbox_core::{tool_fn, Context, FnToolBox, ToolBoxExt, ToolHandler};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Sku {
///     /// The stock-keeping unit.
///     sku: String,
/// }
/// let shop = FnToolBox::new([tool_fn("price", "Price of a SKU in cents.", |p: Sku| async move {
///     json!({"cents": if p.sku == "A1" { 250 } else { 100 }})
/// })]).unwrap();
/// let code = CodeMode::new(shop);
/// let ctx = Context::new();
/// let script = r#"
///     let total = 0;
///     for (const sku of ["A1", "B2", "C3"]) total += (await tools.price({ sku })).cents;
///     return { total };
/// "#;
/// let arguments = json!({ "code": script });
/// let answer = code.call("run_code", &arguments, &ctx, &ToolHandler::empty()).await;
/// assert_eq!(answer.content, r#"{"total":450}"#);
/// # });
/// ```
pub struct CodeMode<B> {
    toolbox: B,
    limits: Limits,
    approval: Option<Arc<dyn Approval>>,
    handler: ToolHandler,
    max_declarations: usize,
}

impl<B: ToolBox> CodeMode<B> {
    /// `toolbox` behind `run_code`, with the default [`Limits`], no approval
    /// hook and declarations up to 16 KiB.
    pub fn new(toolbox: B) -> Self {
        CodeMode {
            toolbox,
            limits: Limits::default(),
            approval: None,
            handler: ToolHandler::empty(),
            max_declarations: 16 << 10,
        }
    }

    /// What a run may use.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Asks `approval` before each tool call a script makes, as
    /// [`TurnRunner::approval`] does for the model's direct calls.
    pub fn approval<F, Fut>(self, approval: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.approval_hook(approval)
    }

    /// Asks an [`Approval`] value before each tool call a script makes.
    pub fn approval_hook(mut self, approval: impl Approval + 'static) -> Self {
        self.approval = Some(Arc::new(approval));
        self
    }

    /// Reports each tool call a script makes to `handler` (give it the
    /// handler the `run_code` call itself reports to).
    pub fn handler(mut self, handler: ToolHandler) -> Self {
        self.handler = handler;
        self
    }

    /// Bounds the TypeScript declarations in `run_code`'s description:
    /// tools past it are declared by name, their declarations found with
    /// `search` inside the script.
    pub fn max_declarations(mut self, bytes: usize) -> Self {
        self.max_declarations = bytes;
        self
    }

    /// The box behind the code mode.
    pub fn inner(&self) -> &B {
        &self.toolbox
    }

    /// `run_code`'s specification in `ctx`: the tools the context shows,
    /// declared in TypeScript (deferred ones reachable through `search`).
    pub fn specification(&self, ctx: &Context) -> ToolSpecification {
        let specs = self.toolbox.specifications(ctx);
        let (deferred, offered): (Vec<_>, Vec<_>) = specs.into_iter().partition(|s| s.deferred);
        let limits = self.limits;
        let (declared, shortened) = typescript::declare(&offered, self.max_declarations);
        let mut description = format!(
            "Runs JavaScript that calls the tools declared below, and answers with what it returns. \
Write the body of an async function: call a tool as `await tools.name({{...}})` (it gives the tool's \
result: parsed JSON where the tool answers JSON, else its text; a failed call throws an Error whose \
message says why), combine results in code, and `return` only what is needed. `console.log` lines \
come back too. There is no network, file, environment or clock. Limits: {} tool calls, {} ms, {} \
bytes of answer.\n\n```ts\n{}",
            limits.calls,
            limits.time.as_millis(),
            limits.output,
            declared,
        );
        if !deferred.is_empty() || shortened > 0 {
            let _ = writeln!(
                description,
                "/** Finds tools by what they do ({} more are not declared above): each hit's name, description and declaration. Call one as `tools[name](input)`. */\ndeclare function search(query: string): {{ name: string; description: string; declaration: string }}[];",
                deferred.len()
            );
        }
        description.push_str("```");
        ToolSpecification::new(RUN_CODE, description)
            .with_title("Run code")
            .with_parameters(json!({
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "JavaScript: the body of an async function that calls `tools` and returns the answer."
                    }
                },
                "required": ["code"],
                "additionalProperties": false
            }))
    }

    /// Runs `code` against the box: its answer, or the error that ended it
    /// (a thrown exception, a limit, a deferred approval).
    pub async fn run(&self, code: &str, ctx: &Context) -> Result<ToolResponse, ToolError> {
        let specs = self.toolbox.specifications(ctx);
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let (sender, mut requests) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let _stop_on_drop = StopOnDrop(stop.clone());
        let limits = self.limits;
        let deadline = Instant::now() + limits.time;
        let script = Script {
            code: code.to_owned(),
            names,
            limits,
            deadline,
            requests: sender,
            stop: stop.clone(),
        };
        std::thread::Builder::new()
            .name("toolbox-code-mode".into())
            .stack_size(limits.stack.saturating_mul(4).max(4 << 20))
            .spawn(move || script.run())
            .map_err(|error| ToolError::failed(format!("the sandbox could not start: {error}")))?;

        let runner = TurnRunner::new(&self.toolbox)
            .handler(self.handler.clone())
            .approval_shared(self.approval.clone())
            .inside_code();
        let run_id = ctx.call_id().unwrap_or("run").to_owned();
        let mut calls = 0usize;
        let mut ended: Option<String> = None;
        let mut index: Option<ToolIndex> = None;
        while let Some(request) = requests.recv().await {
            match request {
                Request::Call {
                    name,
                    arguments,
                    reply,
                } => {
                    if ended.is_some() {
                        let _ = reply.send(Err("the run has ended".into()));
                        continue;
                    }
                    calls += 1;
                    if calls > limits.calls {
                        ended = Some(format!(
                            "the run made more than {} tool calls, its limit: do the work in fewer calls, or in several runs",
                            limits.calls
                        ));
                        stop.store(true, Ordering::Relaxed);
                        let _ = reply.send(Err("the run's call limit was reached".into()));
                        continue;
                    }
                    let arguments =
                        serde_json::from_str::<Value>(&arguments).unwrap_or(Value::Null);
                    let call = ToolCall::new(name.clone(), arguments)
                        .with_id(format!("{run_id}.{calls}"))
                        .with_caller(Caller::Code {
                            runtime: CODE_MODE_RUNTIME.to_owned(),
                            id: run_id.clone(),
                        });
                    let left = deadline.saturating_duration_since(Instant::now());
                    let outcome = tokio::time::timeout(left, runner.run(vec![call], ctx)).await;
                    let answer = match outcome {
                        Err(_) => {
                            ended = Some(time_limit(limits));
                            stop.store(true, Ordering::Relaxed);
                            Err(format!("`{name}` was stopped: the run's time ran out"))
                        }
                        Ok(mut outcomes) => match outcomes.pop() {
                            None => Err(format!("`{name}` gave no answer")),
                            Some(outcome) if outcome.pending.is_some() => {
                                ended = Some(format!(
                                    "the run stopped at its call to `{name}`, which waits for the application's approval; nothing after it ran"
                                ));
                                stop.store(true, Ordering::Relaxed);
                                Err(format!("`{name}` waits for approval"))
                            }
                            Some(outcome) if outcome.response.is_error => {
                                Err(outcome.response.content)
                            }
                            Some(outcome) => Ok(result_json(&outcome.response.content)),
                        },
                    };
                    let _ = reply.send(answer);
                }
                Request::Search { query, reply } => {
                    let index = index.get_or_insert_with(|| ToolIndex::new(&specs));
                    let hits: Vec<Value> = index
                        .search(&query, 5)
                        .into_iter()
                        .filter_map(|hit| specs.iter().find(|s| s.name == hit.name))
                        .map(|spec| {
                            json!({
                                "name": spec.name,
                                "description": one_line(&spec.description),
                                "declaration": typescript::declaration(spec),
                            })
                        })
                        .collect();
                    let _ = reply.send(Value::Array(hits).to_string());
                }
                Request::Done(result) => {
                    if let Some(reason) = ended {
                        return Err(ToolError::failed(reason));
                    }
                    let answer = result.map_err(ToolError::failed)?;
                    if answer.len() > limits.output {
                        return Err(ToolError::failed(format!(
                            "the run's answer is {} bytes, over its limit of {}: return less (a summary, the first rows, a count)",
                            answer.len(),
                            limits.output
                        )));
                    }
                    return Ok(ToolResponse::text(answer));
                }
            }
        }
        Err(ToolError::failed(ended.unwrap_or_else(|| {
            "the sandbox stopped without an answer".to_owned()
        })))
    }
}

/// A tool's answer as the script sees it: its JSON, or its text as a
/// string.
fn result_json(content: &str) -> String {
    match serde_json::from_str::<Value>(content) {
        Ok(_) => content.to_owned(),
        Err(_) => Value::String(content.to_owned()).to_string(),
    }
}

fn time_limit(limits: Limits) -> String {
    format!(
        "the run took longer than its time limit of {} ms: do less in one run",
        limits.time.as_millis()
    )
}

/// Interrupts the script when the run's future is dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What the script's thread asks of the run.
enum Request {
    Call {
        name: String,
        arguments: String,
        reply: sync_mpsc::SyncSender<Result<String, String>>,
    },
    Search {
        query: String,
        reply: sync_mpsc::SyncSender<String>,
    },
    Done(Result<String, String>),
}

/// One script, run on its own thread.
struct Script {
    code: String,
    names: Vec<String>,
    limits: Limits,
    deadline: Instant,
    requests: mpsc::UnboundedSender<Request>,
    stop: Arc<AtomicBool>,
}

/// Set up before the model's code runs: the `tools` object, `search`,
/// `console`, and a `Date` without a clock.
const PRELUDE: &str = r#"
"use strict";
(() => {
  const call = globalThis.__call, find = globalThis.__search, names = JSON.parse(globalThis.__names);
  delete globalThis.__call; delete globalThis.__search; delete globalThis.__names;
  const tools = {};
  for (const name of names) {
    tools[name] = (input) => {
      const answer = JSON.parse(call(name, JSON.stringify(input === undefined ? {} : input)));
      if ("error" in answer) throw new Error(answer.error);
      return answer.ok;
    };
  }
  globalThis.tools = Object.freeze(tools);
  globalThis.search = (query) => JSON.parse(find(String(query)));
  const lines = [];
  const show = (v) => (typeof v === "string" ? v : JSON.stringify(v));
  const log = (...values) => { lines.push(values.map(show).join(" ")); };
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
  const noClock = () => { throw new Error("the sandbox has no clock: pass the time in as an argument, or ask a tool"); };
  const RealDate = Date;
  globalThis.Date = new Proxy(RealDate, {
    construct(target, args) { if (args.length === 0) noClock(); return new target(...args); },
    apply() { noClock(); },
    get(target, key) { return key === "now" ? noClock : Reflect.get(target, key); },
  });
  Object.defineProperty(globalThis, "__finish", { value: (value) => {
    let out = lines.join("\n");
    if (value !== undefined) {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      out = out ? out + "\n" + text : text;
    }
    return out;
  } });
})();
"#;

impl Script {
    fn run(self) {
        let requests = self.requests.clone();
        let result = self.evaluate();
        let _ = requests.send(Request::Done(result));
    }

    fn evaluate(self) -> Result<String, String> {
        let started = |error: rquickjs::Error| format!("the sandbox could not start: {error}");
        let runtime = rquickjs::Runtime::new().map_err(started)?;
        runtime.set_memory_limit(self.limits.memory);
        runtime.set_max_stack_size(self.limits.stack);
        let stop = self.stop.clone();
        let deadline = self.deadline;
        runtime.set_interrupt_handler(Some(Box::new(move || {
            stop.load(Ordering::Relaxed) || Instant::now() >= deadline
        })));
        let context = rquickjs::Context::full(&runtime).map_err(started)?;
        let limits = self.limits;
        let answer = context.with(|ctx| -> Result<String, String> {
            let globals = ctx.globals();
            let calls = self.requests.clone();
            let call = Function::new(ctx.clone(), move |name: String, arguments: String| {
                let (reply, answer) = sync_mpsc::sync_channel(1);
                let sent = calls.send(Request::Call {
                    name,
                    arguments,
                    reply,
                });
                let answer = match sent.ok().and_then(|()| answer.recv().ok()) {
                    Some(Ok(value)) => format!("{{\"ok\":{value}}}"),
                    Some(Err(error)) => json!({ "error": error }).to_string(),
                    None => json!({"error": "the run was stopped"}).to_string(),
                };
                answer
            });
            let searches = self.requests.clone();
            let search = Function::new(ctx.clone(), move |query: String| {
                let (reply, answer) = sync_mpsc::sync_channel(1);
                let sent = searches.send(Request::Search { query, reply });
                sent.ok()
                    .and_then(|()| answer.recv().ok())
                    .unwrap_or_else(|| "[]".to_owned())
            });
            let names = serde_json::to_string(&self.names).unwrap_or_else(|_| "[]".into());
            let set_up = (|| {
                globals.set("__call", call?)?;
                globals.set("__search", search?)?;
                globals.set("__names", names)?;
                ctx.eval::<(), _>(PRELUDE)
            })();
            set_up.map_err(started)?;
            let finish: Function<'_> = globals.get("__finish").map_err(started)?;
            let wrapped = format!("(async () => {{\n{}\n}})()", self.code);
            let promise: rquickjs::Promise<'_> = ctx
                .eval(wrapped)
                .catch(&ctx)
                .map_err(|error| explain(error, limits, &self.stop, deadline))?;
            let value: rquickjs::Value<'_> = promise
                .finish()
                .catch(&ctx)
                .map_err(|error| explain(error, limits, &self.stop, deadline))?;
            finish
                .call::<_, String>((value,))
                .catch(&ctx)
                .map_err(|error| explain(error, limits, &self.stop, deadline))
        });
        drop(context);
        answer
    }
}

/// What ended a script, in words the model can act on.
fn explain(error: CaughtError<'_>, limits: Limits, stop: &AtomicBool, deadline: Instant) -> String {
    let text = match &error {
        CaughtError::Exception(exception) => {
            let message = exception.message().unwrap_or_default();
            let stack = exception.stack().unwrap_or_default();
            if stack.trim().is_empty() {
                message
            } else {
                format!("{message}\n{}", stack.trim_end())
            }
        }
        CaughtError::Value(value) => value
            .as_string()
            .and_then(|s| s.to_string().ok())
            .unwrap_or_else(|| format!("{value:?}")),
        CaughtError::Error(error) => error.to_string(),
    };
    if text.contains("interrupted") {
        if Instant::now() >= deadline {
            return time_limit(limits);
        }
        if stop.load(Ordering::Relaxed) {
            return "the run was stopped".to_owned();
        }
    }
    if text.contains("out of memory")
        || matches!(error, CaughtError::Error(rquickjs::Error::Allocation))
    {
        return format!(
            "the run used more than its memory limit of {} bytes: keep less in memory",
            limits.memory
        );
    }
    if text.contains("stack overflow") || text.contains("call stack size") {
        return format!(
            "the run overflowed its stack limit of {} bytes: recurse less deeply",
            limits.stack
        );
    }
    format!("the script threw: {text}")
}

impl<B: ToolBox> ToolBox for CodeMode<B> {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        vec![self.specification(ctx)]
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        if name != RUN_CODE {
            return DispatchFuture::ready(Err(ToolError::unknown_tool(name, [RUN_CODE])));
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Input {
            code: String,
        }
        let input = match arguments.deserialize::<Input>() {
            Ok(input) => input,
            Err(error) => return DispatchFuture::ready(Err(error)),
        };
        DispatchFuture::new(async move { self.run(&input.code, ctx).await })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.toolbox.close()
    }
}
