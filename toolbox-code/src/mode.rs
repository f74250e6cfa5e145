//! [`CodeMode`]: one tool, `run_code`, whose JavaScript runs in an embedded
//! QuickJS and calls the box's tools, each call through the lifecycle and
//! the approval hook.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::sandbox::{clip_text, time_limit, Limits, Request, Script};
use crate::typescript;
use toolbox_catalog::internal::one_line;
use toolbox_catalog::{check_query, ToolIndex, ToolSearch};
use toolbox_core::args::{Arguments, CallArguments, ToolCall, MAX_DEPTH};
use toolbox_core::dispatch::{BoxFuture, DispatchFuture};
use toolbox_core::spec::Caller;
use toolbox_core::Context;
use toolbox_core::ToolBox;
use toolbox_core::ToolError;
use toolbox_core::ToolHandler;
use toolbox_core::ToolResponse;
use toolbox_core::ToolSpecification;
use toolbox_turn::{Approval, ApprovalRequest, Decision, TurnRunner};

/// The one tool a [`CodeMode`] offers.
pub const RUN_CODE: &str = "run_code";

/// The runtime a code-mode call's [`Caller::Code`] names.
pub const CODE_MODE_RUNTIME: &str = "toolbox_code_mode";

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
/// from the script, whatever its [`Callers`](toolbox_provider::program::Callers): the
/// application put the whole box behind code.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use serde_json::json;
/// use toolbox_code::CodeMode;
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
    /// Runs stopped at a deferred approval, by run id, oldest first.
    suspended: Mutex<VecDeque<(String, Suspended)>>,
    /// The last search index built for `search()`, with the tools it holds:
    /// runs over the same tools share it.
    search_index: Arc<Mutex<Option<SearchIndex>>>,
}

/// A search index and the tools it was built over.
type SearchIndex = (Arc<Vec<ToolSpecification>>, Arc<ToolIndex>);

/// How many stopped runs a code mode keeps for [`CodeMode::resume`]; the
/// oldest is forgotten past it.
const MAX_SUSPENDED: usize = 256;

/// A run stopped at a call its approval hook deferred: its script, the
/// calls it made and what they answered, and the call that waits.
struct Suspended {
    code: String,
    made: Vec<Made>,
    waiting: (String, Value),
}

/// One tool call a run made, and what the script was answered.
#[derive(Clone)]
struct Made {
    name: String,
    arguments: Value,
    answer: Result<String, String>,
}

/// What a resumed run replays: the first run's calls, then the decision
/// on the call that waited.
#[derive(Default)]
struct Replay {
    made: VecDeque<Made>,
    decided: Option<((String, Value), Decision)>,
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
            suspended: Mutex::new(VecDeque::new()),
            search_index: Arc::default(),
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
    ///
    /// The run answers by its time limit (plus a grace of at most a second
    /// for the interpreter to stop itself) whatever the script does: the
    /// deadline is kept here, outside the interpreter, and the interpreter
    /// is interrupted at the same time.
    pub async fn run(&self, code: &str, ctx: &Context) -> Result<ToolResponse, ToolError> {
        self.run_replaying(code, ctx, Replay::default()).await
    }

    /// Goes on with a run its approval hook deferred, once the application
    /// decided: `run_id` is the id of the `run_code` call that stopped
    /// (its `Context::call_id`; `"run"` without one).
    ///
    /// The script runs again from the start with the first run's tool calls
    /// answered from the record (none runs twice; each call must be the
    /// same as before, or the run ends saying the script took another
    /// path), the waiting call decided by `decision` (run, or refused with
    /// its reason, as the hook would have), and every call after it asked
    /// of the hook as usual. Its answer is the `run_code` call's result, to
    /// send in a later message. A script that reads no clock and draws no
    /// random numbers takes the same path again; `Math.random` can make it
    /// drift.
    ///
    /// [`Decision::Defer`] keeps the run waiting. A run id with no stopped
    /// run is an error; the code mode keeps the 256 most recent.
    pub async fn resume(
        &self,
        run_id: &str,
        decision: Decision,
        ctx: &Context,
    ) -> Result<ToolResponse, ToolError> {
        let taken = {
            let mut suspended = self.suspended.lock().unwrap_or_else(|e| e.into_inner());
            let found = suspended.iter().position(|(id, _)| id == run_id);
            found.and_then(|at| suspended.remove(at))
        };
        let Some((id, suspended)) = taken else {
            return Err(ToolError::failed(format!(
                "no run `{}` waits for approval",
                toolbox_core::args::echo(run_id)
            )));
        };
        if decision == Decision::Defer {
            let waiting = suspended.waiting.0.clone();
            self.suspend(id, suspended);
            return Err(ToolError::failed(format!(
                "the run still waits for the application's approval of `{waiting}`"
            )));
        }
        let replay = Replay {
            made: suspended.made.into(),
            decided: Some((suspended.waiting, decision)),
        };
        self.run_replaying(&suspended.code, ctx, replay).await
    }

    /// The runner a script's calls go through: the code mode's handler,
    /// `approval` asked, each call marked as made from code.
    fn runner(&self, approval: Option<Arc<dyn Approval>>) -> TurnRunner<'_, B> {
        let runner = TurnRunner::new(&self.toolbox).handler(self.handler.clone());
        toolbox_turn::internal::inside_code(runner, approval)
    }

    /// Keeps a stopped run for [`resume`](Self::resume).
    fn suspend(&self, run_id: String, run: Suspended) {
        let mut suspended = self.suspended.lock().unwrap_or_else(|e| e.into_inner());
        suspended.retain(|(id, _)| *id != run_id);
        if suspended.len() >= MAX_SUSPENDED {
            suspended.pop_front();
        }
        suspended.push_back((run_id, run));
    }

    /// The search index over `specs`: the last one built when it holds
    /// the same tools, else built on a blocking thread (a large catalogue
    /// takes a while) and kept for the next run. `None` when the run's
    /// `deadline` comes first.
    async fn search_index(
        &self,
        specs: &Arc<Vec<ToolSpecification>>,
        deadline: Instant,
    ) -> Option<Arc<ToolIndex>> {
        let kept = self.search_index.clone();
        let specs = specs.clone();
        let built = tokio::task::spawn_blocking(move || {
            let held = kept.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some((tools, index)) = held {
                if *tools == *specs {
                    return index;
                }
            }
            let index = Arc::new(ToolIndex::new(specs.iter()));
            *kept.lock().unwrap_or_else(|p| p.into_inner()) = Some((specs, index.clone()));
            index
        });
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, built).await {
            Ok(Ok(index)) => Some(index),
            _ => None,
        }
    }

    async fn run_replaying(
        &self,
        code: &str,
        ctx: &Context,
        mut replay: Replay,
    ) -> Result<ToolResponse, ToolError> {
        let specs = Arc::new(self.toolbox.specifications(ctx));
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let (sender, mut requests) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let overrun = OVERRUN.load(Ordering::SeqCst);
        if overrun >= MAX_OVERRUN_THREADS {
            return Err(ToolError::failed(format!(
                "the sandbox is busy: {overrun} earlier runs outlived their time limit in a builtin the interpreter does not interrupt, and are still stopping; try again later"
            )));
        }
        let lifetime = Arc::new(Lifetime::default());
        let _stop_on_drop = StopOnDrop(stop.clone());
        let limits = self.limits;
        let started = Instant::now();
        let deadline = started + limits.time;
        let script = Script {
            code: code.to_owned(),
            names: names.clone(),
            limits,
            deadline,
            requests: sender,
            stop: stop.clone(),
        };
        let thread_lifetime = lifetime.clone();
        std::thread::Builder::new()
            .name("toolbox-code-mode".into())
            .stack_size(limits.stack.saturating_mul(4).max(4 << 20))
            .spawn(move || {
                script.run();
                thread_lifetime.ended();
            })
            .map_err(|error| {
                lifetime.ended();
                ToolError::failed(format!("the sandbox could not start: {error}"))
            })?;

        let runner = self.runner(self.approval.clone());
        let run_id = ctx.call_id().unwrap_or("run").to_owned();
        let mut made: Vec<Made> = Vec::new();
        let mut calls = 0usize;
        let mut ended: Option<String> = None;
        let mut index: Option<Arc<ToolIndex>> = None;
        // The interpreter stops itself at the deadline; this one holds if a
        // builtin does not let it.
        let hard_deadline = tokio::time::Instant::from_std(deadline + grace(limits.time));
        loop {
            let Ok(request) = tokio::time::timeout_at(hard_deadline, requests.recv()).await else {
                stop.store(true, Ordering::Relaxed);
                lifetime.overran();
                return Err(ToolError::failed(time_limit(limits)));
            };
            let Some(request) = request else { break };
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
                    if !names.contains(&name) {
                        let unknown =
                            ToolError::unknown_tool(&name, names.iter().map(String::as_str));
                        let _ = reply.send(Err(unknown.model_message()));
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
                    // No tool call starts once the run's time is up.
                    if Instant::now() >= deadline {
                        ended = Some(time_limit(limits));
                        stop.store(true, Ordering::Relaxed);
                        let _ = reply.send(Err("the run's time ran out".to_owned()));
                        continue;
                    }
                    // The script's JSON, read as a direct call's object is:
                    // past the depth a value may nest, refused with its text;
                    // what serde_json's own limit (one level short) or its
                    // strictness refuses, read as a direct call's text is.
                    let arguments = match serde_json::from_str::<Value>(&arguments) {
                        Ok(arguments) => CallArguments::from(arguments),
                        Err(_) if json_depth(&arguments) > MAX_DEPTH => {
                            let refused = ToolError::invalid_arguments(
                                "",
                                format!("the arguments nest deeper than {MAX_DEPTH} levels"),
                            );
                            let _ = reply.send(Err(refused.model_message()));
                            continue;
                        }
                        Err(_) => CallArguments::text(arguments),
                    };
                    // A resumed run: the first run's calls answered from the
                    // record, in order.
                    if let Some(before) = replay.made.pop_front() {
                        let answer = if before.name == name && before.arguments == *arguments {
                            before.answer.clone()
                        } else {
                            ended = Some(format!(
                                "the script took another path when it was resumed: its call {calls} was `{name}` with other arguments than the first run's `{}`; nothing after it ran, run it again",
                                before.name
                            ));
                            stop.store(true, Ordering::Relaxed);
                            Err("the run took another path".to_owned())
                        };
                        made.push(before);
                        let _ = reply.send(answer);
                        continue;
                    }
                    let decided = match replay.decided.take() {
                        Some((waiting, decision))
                            if waiting.0 == name && waiting.1 == *arguments =>
                        {
                            Some(decision)
                        }
                        Some(_) => {
                            ended = Some(format!(
                                "the script took another path when it was resumed: its call {calls} was `{name}`, not the call that waited for approval; nothing after it ran, run it again"
                            ));
                            stop.store(true, Ordering::Relaxed);
                            let _ = reply.send(Err("the run took another path".to_owned()));
                            continue;
                        }
                        None => None,
                    };
                    let call = ToolCall::new(name.clone(), arguments.clone())
                        .with_id(format!("{run_id}.{calls}"))
                        .with_caller(Caller::Code {
                            runtime: CODE_MODE_RUNTIME.to_owned(),
                            id: run_id.clone(),
                        });
                    let left = deadline.saturating_duration_since(Instant::now());
                    let outcome = match decided {
                        // The waiting call, decided by the application.
                        Some(decision) => {
                            let decided = self.runner(Some(Arc::new(move |_| {
                                let decision = decision.clone();
                                async move { decision }
                            })));
                            tokio::time::timeout(left, decided.run(vec![call], ctx)).await
                        }
                        None => tokio::time::timeout(left, runner.run(vec![call], ctx)).await,
                    };
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
                                self.suspend(
                                    run_id.clone(),
                                    Suspended {
                                        code: code.to_owned(),
                                        made: std::mem::take(&mut made),
                                        waiting: (name.clone(), (*arguments).clone()),
                                    },
                                );
                                let _ = reply.send(Err(format!("`{name}` waits for approval")));
                                continue;
                            }
                            Some(outcome) if outcome.response.is_error => {
                                Err(outcome.response.content)
                            }
                            Some(outcome) => Ok(result_json(&outcome.response.content)),
                        },
                    };
                    made.push(Made {
                        name,
                        arguments: (*arguments).clone(),
                        answer: answer.clone(),
                    });
                    let _ = reply.send(answer);
                }
                Request::Search { query, reply } => {
                    // Bounded: a query past what a search reads is refused.
                    if query.trim().is_empty() {
                        let _ = reply.send(Err(
                            "the query is empty: say what the tool should do in a few words"
                                .to_owned(),
                        ));
                        continue;
                    }
                    if let Err(refused) = check_query(&query) {
                        let _ = reply.send(Err(refused));
                        continue;
                    }
                    if index.is_none() {
                        index = self.search_index(&specs, deadline).await;
                    }
                    let Some(index) = &index else {
                        ended = Some(format!(
                            "the run took longer than its time limit of {} ms: search() waited for its index of the box's {} tools, which is still being built; run it again shortly",
                            limits.time.as_millis(),
                            specs.len()
                        ));
                        stop.store(true, Ordering::Relaxed);
                        let _ = reply.send(Err("the run's time ran out".to_owned()));
                        continue;
                    };
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
                    let _ = reply.send(Ok(Value::Array(hits).to_string()));
                }
                Request::Done(result) => {
                    if let Some(reason) = ended {
                        return Err(ToolError::failed(reason));
                    }
                    // A builtin that kept the interrupt from firing does not
                    // win the run more time.
                    if Instant::now() >= deadline {
                        return Err(ToolError::failed(time_limit(limits)));
                    }
                    let answer = result
                        .map_err(|error| ToolError::failed(clip_text(&error, limits.output)))?;
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

/// How long past its deadline a run waits for the interpreter to stop
/// itself: half the limit, at most a second.
fn grace(time: Duration) -> Duration {
    (time / 2).min(Duration::from_secs(1))
}

/// How deep `text`'s arrays and objects nest (JSON text; strings skipped).
fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A tool's answer as the script sees it: its JSON, or its text as a
/// string.
fn result_json(content: &str) -> String {
    match serde_json::from_str::<Value>(content) {
        Ok(_) => content.to_owned(),
        Err(_) => Value::String(content.to_owned()).to_string(),
    }
}

/// Interrupts the script when the run's future is dropped.
/// Stops the sandbox when the run is over, answered or dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sandbox threads still running after their run answered at its hard
/// deadline (its time limit and grace): each is in a builtin QuickJS does
/// not interrupt (a string search of millions of characters, a sort of
/// huge strings), and ends when the builtin does.
static OVERRUN: AtomicUsize = AtomicUsize::new(0);

/// How many such threads the process keeps before it refuses new runs:
/// each may hold a core and its run's heap.
pub const MAX_OVERRUN_THREADS: usize = 2;

/// Where a sandbox thread is: running its run, running past it (counted
/// in [`OVERRUN`]), or ended.
#[derive(Default)]
struct Lifetime(AtomicU8);

const RUNNING: u8 = 0;
const OVERRAN: u8 = 1;
const ENDED: u8 = 2;

impl Lifetime {
    /// The run answered at its hard deadline: the thread, still running,
    /// is counted.
    fn overran(&self) {
        if self
            .0
            .compare_exchange(RUNNING, OVERRAN, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            OVERRUN.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The thread ended: no longer counted.
    fn ended(&self) {
        if self.0.swap(ENDED, Ordering::SeqCst) == OVERRAN {
            OVERRUN.fetch_sub(1, Ordering::SeqCst);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use toolbox_core::{tool_fn, FnToolBox, ToolBoxExt};

    async fn run(code: &CodeMode<FnToolBox>, script: &str) -> ToolResponse {
        code.call(
            RUN_CODE,
            &json!({ "code": script }),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await
    }

    /// The only test of this binary that runs scripts: the count of
    /// overrunning threads is the process's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_whose_threads_outlive_them_are_bounded() {
        let tools =
            FnToolBox::new([tool_fn("ping", "Answers pong.", |_: ()| async { "pong" })]).unwrap();
        let code = CodeMode::new(tools).limits(Limits {
            time: Duration::from_millis(100),
            ..Limits::default()
        });
        // A string search QuickJS runs in C without polling the interrupt:
        // 32,769 places, each compared up to 32,768 characters.
        let spin = "return 'a'.repeat(1 << 16).indexOf('a'.repeat(1 << 15) + 'b');";
        for _ in 0..MAX_OVERRUN_THREADS {
            let answer = run(&code, spin).await;
            assert_eq!(
                answer.content,
                "the run took longer than its time limit of 100 ms: do less in one run"
            );
        }
        let busy = run(&code, "return 1;").await;
        assert!(busy.is_error);
        assert_eq!(
            busy.content,
            "the sandbox is busy: 2 earlier runs outlived their time limit in a builtin the interpreter does not interrupt, and are still stopping; try again later"
        );
        // Once they end, runs are taken again.
        for _ in 0..600 {
            if OVERRUN.load(Ordering::SeqCst) == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(OVERRUN.load(Ordering::SeqCst), 0, "the threads ended");
        assert_eq!(run(&code, "return 1 + 1;").await.content, "2");
    }
}
