//! Calls that run on after their turn: an OpenAI Responses call the model
//! made `async` is left running in the background, and its output is taken
//! later, by call id, for a later request.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use tokio::sync::Notify;

use super::{CallOutcome, PendingCall, Settled};
use toolbox_core::args::ToolCall;
use toolbox_core::dispatch::BoxFuture;
use toolbox_core::ToolBox;
use toolbox_core::ToolBoxExt;
use toolbox_core::ToolHandler;
use toolbox_core::ToolResponse;
use toolbox_core::ToolSpecification;
use toolbox_core::{CancellationToken, Context};

/// Starts one call's lifecycle on a runner's shared box: a future that
/// owns everything it needs, so it can outlive the turn.
pub(super) type Launch =
    Box<dyn Fn(ToolCall, Context, ToolHandler) -> BoxFuture<'static, ToolResponse> + Send + Sync>;

/// Starts calls on `toolbox`, which each call's future holds a share of.
pub(super) fn launch<B: ToolBox + ?Sized + 'static>(toolbox: Arc<B>) -> Launch {
    Box::new(move |call: ToolCall, ctx: Context, handler: ToolHandler| {
        let toolbox = Arc::clone(&toolbox);
        let lifecycle: BoxFuture<'static, ToolResponse> = Box::pin(async move {
            let arguments = call.arguments.as_arguments();
            toolbox.call(&call.name, arguments, &ctx, &handler).await
        });
        lifecycle
    })
}

/// What the model reads for a call left running, where a provider has no
/// way to leave a call unanswered.
pub(super) const RUNNING: &str =
    "this call runs in the background; its result will follow in a later message";

/// The calls a [`TurnRunner`](super::TurnRunner) left running in the
/// background, and those that have ended since: the outputs to send in a
/// later request.
///
/// A runner over a shared box ([`TurnRunner::shared`](super::TurnRunner::shared))
/// leaves an OpenAI Responses call the model made `async`
/// ([`ToolCall::is_async`]) running when it does not end in its first
/// poll: the turn's outcome for it is pending
/// ([`PendingCall::running`]), and no output item is written for it. The
/// call goes on in a task of its own, its lifecycle ending exactly once;
/// [`finished`](Self::finished) gives its outcome once it has ended, whose
/// [`result_messages`](toolbox_provider::Provider::result_messages) are the
/// `function_call_output` items for the later request.
///
/// Clones share the calls. Each call has a cancellation token of its own
/// (cancelled too when the turn's context is): [`cancel`](Self::cancel)
/// ends one, and its outcome (the cancellation, or what the tool answered
/// in its grace) comes through `finished` like any other. When the last
/// clone is dropped (the runner's included), every call still running is
/// cancelled: nobody could read its output.
///
/// ```
/// use std::sync::Arc;
/// use toolbox_core::{tool_fn, Context, FnToolBox};
/// use toolbox_provider::Provider;
/// use toolbox_turn::TurnRunner;
/// use toolbox_core::spec::TaskSupport;
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let report = tool_fn("report", "Builds the monthly report.", |_: ()| async {
///     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
///     "the report"
/// });
/// let tools = Arc::new(FnToolBox::new([report.task(TaskSupport::Optional)])?);
/// let responses = Provider::OpenAiResponses { strict: true };
/// let runner = TurnRunner::shared(&tools).provider(responses);
/// let body = br#"{"output": [{"type": "function_call", "call_id": "call_1", "name": "report", "arguments": "{}", "async": true}]}"#;
/// let outcomes = runner.run(responses.parse_response(body)?, &Context::new()).await;
/// assert!(responses.result_messages(&outcomes).is_empty()); // nothing to send yet
///
/// let later = runner.background().finished().await;
/// assert_eq!(
///     responses.result_messages(&later),
///     [serde_json::json!({"type": "function_call_output", "call_id": "call_1", "output": "the report"})]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct BackgroundCalls {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Woken when a call ends.
    ended: Notify,
}

#[derive(Default)]
struct State {
    running: Vec<Running>,
    finished: VecDeque<CallOutcome>,
    /// The number of the next call started.
    next: u64,
}

/// A call still running.
struct Running {
    number: u64,
    call: ToolCall,
    token: CancellationToken,
}

impl Drop for Shared {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for running in &state.running {
            running.token.cancel();
        }
    }
}

impl BackgroundCalls {
    /// No calls yet: for runners that share one set
    /// ([`TurnRunner::with_background`](super::TurnRunner::with_background)).
    pub fn new() -> Self {
        BackgroundCalls::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The outcomes of the calls that have ended since last asked, in the
    /// order they ended, waiting for one when none has and some still
    /// run; empty at once when none runs.
    pub async fn finished(&self) -> Vec<CallOutcome> {
        loop {
            let ended = self.shared.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            {
                let mut state = self.state();
                if !state.finished.is_empty() || state.running.is_empty() {
                    return state.finished.drain(..).collect();
                }
            }
            ended.await;
        }
    }

    /// The outcomes of the calls that have ended since last asked, without
    /// waiting.
    pub fn try_finished(&self) -> Vec<CallOutcome> {
        self.state().finished.drain(..).collect()
    }

    /// The calls still running, in the order they started.
    pub fn running(&self) -> Vec<ToolCall> {
        self.state()
            .running
            .iter()
            .map(|running| running.call.clone())
            .collect()
    }

    /// Cancels the running call `call_id` through its token (the tool sees
    /// it, and has the token's grace to answer); its outcome comes through
    /// [`finished`](Self::finished). Whether such a call was running.
    pub fn cancel(&self, call_id: &str) -> bool {
        let state = self.state();
        let mut found = false;
        for running in &state.running {
            if running.call.id.as_deref() == Some(call_id) {
                running.token.cancel();
                found = true;
            }
        }
        found
    }

    /// Starts `call` through `launch` with a token of its own: answered in
    /// the turn when it ends in its first poll (a sync tool, arguments it
    /// refuses), else left running in a task and answered as pending.
    pub(super) async fn start(
        &self,
        launch: &Launch,
        call: &ToolCall,
        spec: &ToolSpecification,
        ctx: &Context,
        handler: &ToolHandler,
    ) -> Settled {
        let turn = ctx.cancellation().cloned();
        let grace = turn
            .as_ref()
            .map_or(CancellationToken::DEFAULT_GRACE, CancellationToken::grace);
        let token = CancellationToken::new().with_grace(grace);
        let ctx = ctx.clone().with_cancellation(token.clone());
        let mut lifecycle = watched(launch(call.clone(), ctx, handler.clone()), turn, &token);
        let first = std::future::poll_fn(|cx| Poll::Ready(lifecycle.as_mut().poll(cx))).await;
        if let Poll::Ready(response) = first {
            return (response, None);
        }
        let number = {
            let mut state = self.state();
            let number = state.next;
            state.next += 1;
            state.running.push(Running {
                number,
                call: call.clone(),
                token,
            });
            number
        };
        // The task holds no handle: once every handle is gone, the calls
        // are cancelled and their outcomes dropped.
        let shared = Arc::downgrade(&self.shared);
        let ended = call.clone();
        tokio::spawn(async move {
            let response = lifecycle.await;
            if let Some(shared) = shared.upgrade() {
                let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                state.running.retain(|running| running.number != number);
                state.finished.push_back(CallOutcome {
                    call: ended,
                    response,
                    pending: None,
                });
                drop(state);
                shared.ended.notify_waiters();
            }
        });
        (
            ToolResponse::text(RUNNING),
            Some(Box::new(PendingCall {
                call: call.clone(),
                specification: spec.clone(),
                running: true,
            })),
        )
    }
}

impl std::fmt::Debug for BackgroundCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state();
        f.debug_struct("BackgroundCalls")
            .field("running", &state.running.len())
            .field("finished", &state.finished.len())
            .finish()
    }
}

/// `lifecycle`, whose token is also cancelled once the turn's is.
fn watched(
    lifecycle: BoxFuture<'static, ToolResponse>,
    turn: Option<CancellationToken>,
    token: &CancellationToken,
) -> BoxFuture<'static, ToolResponse> {
    let Some(turn) = turn else {
        return lifecycle;
    };
    let mut lifecycle = lifecycle;
    let token = token.clone();
    let mut turn_cancelled: Option<BoxFuture<'static, ()>> =
        Some(Box::pin(async move { turn.cancelled().await }));
    Box::pin(std::future::poll_fn(move |cx| {
        if let Some(cancelled) = &mut turn_cancelled {
            if cancelled.as_mut().poll(cx).is_ready() {
                token.cancel();
                turn_cancelled = None;
            }
        }
        lifecycle.as_mut().poll(cx)
    }))
}
