//! Running one turn's tool calls: concurrently within a bound, effects
//! respected, an approval hook before each call, one result per call in the
//! order of the calls; OpenAI Responses calls the model made `async` left
//! running in the background ([`BackgroundCalls`]).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

mod background;

pub use background::BackgroundCalls;
use background::Launch;

use toolbox_catalog::{Catalog, Revealed};
use toolbox_core::args::ToolCall;
use toolbox_core::dispatch::BoxFuture;
use toolbox_core::spec::Caller;
use toolbox_core::Context;
use toolbox_core::ToolBox;
use toolbox_core::ToolBoxExt;
use toolbox_core::ToolError;
use toolbox_core::ToolHandler;
use toolbox_core::ToolResponse;
use toolbox_core::ToolSpecification;
use toolbox_provider::{Answered, Provider, ProviderError};

/// What the approval hook is asked about: the call (its arguments already
/// checked by the code that will deserialize them) and the tool's
/// specification, whose annotations say whether it is read-only or
/// destructive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The call.
    pub call: ToolCall,
    /// The tool as the box describes it.
    pub specification: ToolSpecification,
}

impl ApprovalRequest {
    /// Whether the tool is annotated read-only.
    pub fn read_only(&self) -> bool {
        self.specification.is_read_only()
    }

    /// Whether the tool is annotated destructive.
    pub fn destructive(&self) -> bool {
        self.specification.is_destructive()
    }
}

/// The approval hook's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// Run the call.
    Approve,
    /// Do not run it; the model reads the reason.
    Reject {
        /// Why, for the model.
        reason: String,
    },
    /// Do not run it now; the application resolves it later.
    Defer,
}

/// Decides whether a call may run. Closures `Fn(ApprovalRequest) -> impl
/// Future<Output = Decision>` are approval hooks.
pub trait Approval: Send + Sync {
    /// Reviews one call.
    fn review(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision>;
}

impl<F, Fut> Approval for F
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn review(&self, request: ApprovalRequest) -> BoxFuture<'static, Decision> {
        Box::pin(self(request))
    }
}

/// A call whose result is not there yet, serializable: one the approval
/// hook deferred, for the application to resolve later
/// ([`TurnRunner::resume`]), or one left running in the background
/// ([`running`](Self::running)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call, as the model made it.
    pub call: ToolCall,
    /// The tool's specification at the time.
    pub specification: ToolSpecification,
    /// Set when the call runs in the background (an OpenAI Responses
    /// `async` call): it was approved and started, and its outcome comes
    /// from [`BackgroundCalls::finished`]; unset when the approval hook
    /// deferred it and it has not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub running: bool,
}

/// One call's outcome: the response to send back, and the pending request
/// when the approval hook deferred it or it runs in the background.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// The call.
    pub call: ToolCall,
    /// What goes back to the model (for a pending call: that the result
    /// will follow).
    pub response: ToolResponse,
    /// Set when the call was deferred and has not run, or runs in the
    /// background ([`PendingCall::running`]). Boxed: most calls are
    /// neither, and a turn's outcomes are moved and returned together (a
    /// `&Box<PendingCall>` is a `&PendingCall` wherever one is expected,
    /// e.g. [`TurnRunner::resume`]).
    pub pending: Option<Box<PendingCall>>,
}

impl Answered for CallOutcome {
    fn call(&self) -> &ToolCall {
        &self.call
    }
    fn response(&self) -> &ToolResponse {
        &self.response
    }
    fn running(&self) -> bool {
        self.pending.as_ref().is_some_and(|pending| pending.running)
    }
}

/// Runs the tool calls of one model turn against a box.
///
/// Read-only and unannotated calls run concurrently (at most `limit` at a
/// time); a destructive call waits for every call before it and blocks every
/// call after it. Results come back in the order of the calls, one per call,
/// whatever happened to it. A runner over a shared box
/// ([`shared`](Self::shared)) leaves an OpenAI Responses `async` call
/// running in the background instead of waiting for it.
pub struct TurnRunner<'a, B: ?Sized> {
    toolbox: &'a B,
    /// Starts a call on the shared box, for a call left running.
    launch: Option<Launch>,
    /// The calls left running, made on first use.
    background: std::sync::OnceLock<BackgroundCalls>,
    handler: ToolHandler,
    limit: usize,
    max_calls: usize,
    approval: Option<Arc<dyn Approval>>,
    provider: Option<Provider>,
    catalog: Option<&'a Catalog>,
    /// The catalogue the runner built itself, for a box with deferred
    /// tools given none.
    built: std::sync::OnceLock<Option<Catalog>>,
    revealed: Mutex<Revealed>,
    /// Every caller may call every tool (a local code mode).
    any_caller: bool,
}

/// How many calls one turn runs by default; see [`TurnRunner::max_calls`].
pub const MAX_CALLS_PER_TURN: usize = 128;

impl<'a, B: ToolBox + ?Sized + 'static> TurnRunner<'a, B> {
    /// A runner for a box the application shares, as [`new`](Self::new)
    /// makes one; besides, a call the provider lets answer later (an
    /// OpenAI Responses call item with `"async": true`, made of a tool
    /// that runs as a task, see [`ToolCall::is_async`]) that does not end
    /// in its first poll is left running in a task of its own: its
    /// outcome in the turn is pending ([`PendingCall::running`], no output
    /// item written), and its output comes from
    /// [`background`](Self::background) once it has ended.
    ///
    /// Such a call still runs in the turn where leaving it would break a
    /// promise: a destructive tool's, one a destructive call after it
    /// must wait for, one for another provider, or one outside a tokio
    /// runtime. A runner that borrows its box ([`new`](Self::new)) runs
    /// every call in the turn: its output is then in the next request,
    /// which the API takes too.
    pub fn shared(toolbox: &'a Arc<B>) -> Self {
        let mut runner = TurnRunner::new(&**toolbox);
        runner.launch = Some(background::launch(Arc::clone(toolbox)));
        runner
    }
}

impl<'a, B: ToolBox + ?Sized> TurnRunner<'a, B> {
    /// A runner for `toolbox`, 16 calls at a time, no approval hook.
    pub fn new(toolbox: &'a B) -> Self {
        TurnRunner {
            toolbox,
            launch: None,
            background: std::sync::OnceLock::new(),
            handler: ToolHandler::empty(),
            limit: 16,
            max_calls: MAX_CALLS_PER_TURN,
            approval: None,
            provider: None,
            catalog: None,
            built: std::sync::OnceLock::new(),
            revealed: Mutex::new(Revealed::new()),
            any_caller: false,
        }
    }

    /// The catalogue in use: the one given, else, when the box has
    /// deferred tools, one the runner builds from the box's tools in the
    /// first context it sees (a deferred tool is never sent in full).
    fn catalog_in(&self, ctx: &Context) -> Option<&Catalog> {
        if let Some(catalog) = self.catalog {
            return Some(catalog);
        }
        self.built
            .get_or_init(|| {
                let specs = self.toolbox.specifications(ctx);
                if !specs.iter().any(|s| s.deferred) {
                    return None;
                }
                match Catalog::new(specs) {
                    Ok(catalog) => Some(catalog),
                    Err(error) => {
                        tracing::error!(target: "toolbox::turn", %error, "the box's deferred tools cannot be catalogued; every tool is offered in full");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Offers `catalog`'s deferred tools through a search: the runner
    /// answers the search calls itself ([`Catalog::answer`]), remembers
    /// what they revealed ([`revealed`](Self::revealed)), and refuses,
    /// without running it, a call to a deferred tool no search has
    /// revealed. [`definitions`](Self::definitions) is the next request's
    /// `tools`.
    ///
    /// A runner given no catalogue for a box with deferred tools builds
    /// one itself ([`Catalog::new`] over the box's tools, the first time
    /// it needs one): deferred tools are offered through a search either
    /// way, never sent in full.
    pub fn catalog(mut self, catalog: &'a Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Starts from what earlier turns of the conversation revealed (kept
    /// with a pending turn: [`Revealed`] is serializable).
    pub fn with_revealed(self, revealed: Revealed) -> Self {
        *self.revealed.lock().unwrap_or_else(|e| e.into_inner()) = revealed;
        self
    }

    /// The deferred tools the conversation's searches have revealed so far.
    pub fn revealed(&self) -> Revealed {
        self.revealed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The `tools` of the next request: the catalogue's
    /// ([`Catalog::definitions`]) for the runner's provider, given what has
    /// been revealed. Without a catalogue, every tool the box offers in
    /// `ctx`. Without a provider, MCP's list.
    pub fn definitions(&self, ctx: &Context) -> Result<serde_json::Value, ProviderError> {
        let provider = self.provider.unwrap_or(Provider::Mcp);
        match self.catalog_in(ctx) {
            Some(catalog) => catalog.definitions(provider, &self.revealed()),
            None => provider.definitions(&self.toolbox.specifications(ctx)),
        }
    }

    /// Takes the calls as `provider`'s model sent them under the schemas
    /// [`Provider::definitions`] lowered: before a call is checked, shown
    /// to the approval hook or run, what lowering changed in meaning is
    /// undone in its arguments ([`Provider::normalize_call`]: OpenAI
    /// strict's `null` for an absent property, the undeclared keys Gemini's
    /// `parameters` cannot forbid), and each change is logged.
    pub fn provider(mut self, provider: Provider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The calls this runner left running in the background, and those
    /// that have ended since (see [`shared`](Self::shared)); a handle that
    /// may outlive the runner (the calls are cancelled once every handle
    /// is dropped).
    pub fn background(&self) -> BackgroundCalls {
        self.background.get_or_init(BackgroundCalls::new).clone()
    }

    /// Leaves calls running in `calls` (shared with other runners, e.g.
    /// one built for each turn of a conversation) rather than in a set of
    /// its own.
    pub fn with_background(mut self, calls: BackgroundCalls) -> Self {
        self.background = std::sync::OnceLock::from(calls);
        self
    }

    /// Runs at most `max` calls of one turn (at least 1; 128 by default);
    /// the calls past it are answered with an error, without running, so
    /// the model can send them again in a later turn.
    pub fn max_calls(mut self, max: usize) -> Self {
        self.max_calls = max.max(1);
        self
    }

    /// Observes every call with `handler`.
    pub fn handler(mut self, handler: ToolHandler) -> Self {
        self.handler = handler;
        self
    }

    /// Runs at most `limit` calls at once (at least 1).
    pub fn concurrency(mut self, limit: usize) -> Self {
        self.limit = limit.max(1);
        self
    }

    /// Asks `approval` before each call. A call runs only after the hook
    /// approved it: its arguments are first checked by the code that will
    /// deserialize them ([`ToolBox::check`]), and a call they fail ends as
    /// invalid without running and without asking the hook.
    ///
    /// The closure's parameter needs no annotation:
    /// `.approval(|request| async move { if request.destructive() { … } })`.
    pub fn approval<F, Fut>(self, approval: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.approval_hook(approval)
    }

    /// Asks an [`Approval`] value before each call, as
    /// [`approval`](Self::approval) does with a closure.
    pub fn approval_hook(mut self, approval: impl Approval + 'static) -> Self {
        self.approval = Some(Arc::new(approval));
        self
    }

    /// Runs the calls of a local code mode, whose application put the
    /// whole box behind code: every caller may call every tool, whatever
    /// its [`Callers`](toolbox_provider::program::Callers), and a deferred tool needs
    /// no search first (the script found it with its own).
    pub(crate) fn inside_code(mut self) -> Self {
        self.any_caller = true;
        let _ = self.built.set(None);
        self
    }

    /// The approval hook, shared.
    pub(crate) fn approval_shared(mut self, approval: Option<Arc<dyn Approval>>) -> Self {
        self.approval = approval;
        self
    }

    /// Runs `calls` and returns one outcome per call, in order; a call
    /// left running in the background (see [`shared`](Self::shared)) has
    /// a pending outcome, and its own later in [`background`](Self::background).
    pub async fn run(&self, calls: Vec<ToolCall>, ctx: &Context) -> Vec<CallOutcome> {
        // Each call moves once, into its outcome, whose response is set
        // when the call has settled.
        let mut answered: Vec<CallOutcome> = calls
            .into_iter()
            .map(|call| CallOutcome {
                call,
                response: ToolResponse::text(String::new()),
                pending: None,
            })
            .collect();
        // Each call's context (its id included): the one its conditions
        // see, for its specification and when it runs.
        let mut slots: Vec<Slot<'a>> = answered
            .iter()
            .map(|outcome| {
                let ctx = call_context(&outcome.call, ctx);
                let spec = self.toolbox.specification(&outcome.call.name, &ctx);
                Slot {
                    ctx,
                    spec,
                    background: false,
                }
            })
            .collect();
        if let Some(provider) = self.provider {
            for (outcome, slot) in answered.iter_mut().zip(&slots) {
                if let Some(spec) = &slot.spec {
                    let call = &mut outcome.call;
                    for change in provider.normalize_call(call, spec) {
                        tracing::info!(target: "toolbox::turn", tool = %call.name, %change, "argument normalized");
                    }
                }
            }
        }
        let semaphore = Semaphore::new(self.limit);
        let mut settled: Vec<Option<Settled>> = answered.iter().map(|_| None).collect();
        if let Some(catalog) = self.catalog_in(ctx) {
            // Searches are answered here; a deferred tool no search has
            // revealed does not run; a call of a revealed tool keeps it
            // in the requests (the least recently used leave first).
            for (index, outcome) in answered.iter_mut().enumerate().take(self.max_calls) {
                if catalog.is_search(&outcome.call) {
                    let response = {
                        let mut revealed = self.revealed.lock().unwrap_or_else(|e| e.into_inner());
                        catalog.answer(self.provider, &mut outcome.call, &mut revealed)
                    };
                    // Answered here, observed like every call.
                    let response = toolbox_core::internal::answered(
                        &outcome.call.name,
                        outcome.call.arguments.as_arguments(),
                        &slots[index].ctx,
                        &self.handler,
                        Ok(response),
                    );
                    settled[index] = Some((response, None));
                    continue;
                }
                let refusal = {
                    let mut revealed = self.revealed.lock().unwrap_or_else(|e| e.into_inner());
                    revealed.touch(&outcome.call.name);
                    match catalog.refusal(&outcome.call.name, &revealed, self.provider) {
                        Some(error) => Some(error),
                        // Unknown: the suggestions name only what the
                        // model can call now, or say to search.
                        None if catalog.specification(&outcome.call.name).is_none() => {
                            Some(catalog.unknown(&outcome.call.name, &revealed, self.provider))
                        }
                        None => None,
                    }
                };
                if let Some(error) = refusal {
                    settled[index] =
                        Some((self.refuse(&outcome.call, error, &slots[index].ctx), None));
                }
            }
        }
        // A call from a caller the tool does not allow ends here: the
        // provider was told who may call it, and a payload that says
        // otherwise does not run it.
        for (index, (outcome, slot)) in answered.iter().zip(&slots).enumerate() {
            let Some(spec) = &slot.spec else { continue };
            if settled[index].is_none()
                && !self.any_caller
                && !spec.callers.allow(outcome.call.caller.as_ref())
            {
                let error = ToolError::failed(match outcome.call.caller {
                    Some(Caller::Code { .. }) => format!(
                        "tool `{}` may not be called from code: call it directly",
                        outcome.call.name
                    ),
                    _ => format!(
                        "tool `{}` may be called only from code the model writes, not directly",
                        outcome.call.name
                    ),
                });
                settled[index] = Some((self.refuse(&outcome.call, error, &slot.ctx), None));
            }
        }
        let allowed = answered.len().min(self.max_calls);
        for (index, outcome) in answered.iter().enumerate().skip(allowed) {
            let error = ToolError::failed(format!(
                "too many tool calls in one turn ({}); only the first {} ran: send this call again in a later turn",
                answered.len(),
                self.max_calls
            ));
            settled[index] = Some((self.refuse(&outcome.call, error, &slots[index].ctx), None));
        }
        self.mark_background(&answered[..allowed], &mut slots, &settled);
        let turn = Turn {
            calls: &answered,
            slots: &slots,
            semaphore: &semaphore,
        };
        // The calls since the last destructive one: a run of indices.
        let mut batch = 0..0;
        for (index, slot) in slots.iter().enumerate().take(allowed) {
            if slot.spec.as_ref().is_some_and(|spec| spec.is_destructive()) {
                self.run_batch(batch, &turn, &mut settled).await;
                self.run_batch(index..index + 1, &turn, &mut settled).await;
                batch = index + 1..index + 1;
            } else {
                batch.end = index + 1;
            }
        }
        self.run_batch(batch, &turn, &mut settled).await;
        for (outcome, settled) in answered.iter_mut().zip(settled) {
            let (response, pending) =
                settled.unwrap_or_else(|| (ToolResponse::error("the call was not run"), None));
            outcome.response = response;
            outcome.pending = pending;
        }
        answered
    }

    /// Marks the calls left running in the background: `async` calls of a
    /// runner over a shared box, for OpenAI Responses, inside a tokio
    /// runtime, of a tool that is not destructive, after the turn's last
    /// destructive call (which waits for every call before it).
    fn mark_background(
        &self,
        calls: &[CallOutcome],
        slots: &mut [Slot<'a>],
        settled: &[Option<Settled>],
    ) {
        let provider_allows = match self.provider {
            None | Some(Provider::OpenAiResponses { .. }) => true,
            Some(_) => false,
        };
        if self.launch.is_none()
            || !provider_allows
            || !calls.iter().any(|outcome| outcome.call.is_async())
            || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        let destructive = |slot: &Slot<'a>| slot.spec.as_ref().is_some_and(|s| s.is_destructive());
        let after = slots[..calls.len()]
            .iter()
            .rposition(destructive)
            .map_or(0, |last| last + 1);
        for (index, outcome) in calls.iter().enumerate().skip(after) {
            let slot = &mut slots[index];
            slot.background = settled[index].is_none()
                && outcome.call.is_async()
                && slot.spec.is_some()
                && !matches!(outcome.call.caller, Some(Caller::Code { .. }));
        }
    }

    async fn run_batch(
        &self,
        batch: std::ops::Range<usize>,
        turn: &Turn<'_, 'a>,
        outcomes: &mut [Option<Settled>],
    ) {
        // Without an approval hook a call is its lifecycle alone: each is
        // started in order while a permit is free and polled once, so a
        // call that answers at once (every synchronous tool) needs no task
        // and holds no permit. Only the calls still running (each holding
        // a permit) and those past the limit (which wait for one) are
        // boxed and driven together.
        let mut futures: Vec<BoxFuture<'_, (usize, Settled)>> = Vec::new();
        // The calls to leave running hold no permit: they are started (or
        // asked about) with the others, and the turn does not wait for them.
        for i in batch.clone() {
            if outcomes[i].is_none() && turn.slots[i].background {
                futures.push(Box::pin(async move {
                    let slot = &turn.slots[i];
                    (
                        i,
                        self.detach(&turn.calls[i].call, slot.spec.as_deref(), &slot.ctx)
                            .await,
                    )
                }));
            }
        }
        let mut waiting = batch.clone();
        if self.approval.is_none() {
            for i in batch {
                if turn.semaphore.available_permits() == 0 {
                    break;
                }
                waiting.start = i + 1;
                if outcomes[i].is_some() || turn.slots[i].background {
                    continue;
                }
                let call = &turn.calls[i].call;
                let mut lifecycle = self.toolbox.call(
                    &call.name,
                    call.arguments.as_arguments(),
                    &turn.slots[i].ctx,
                    &self.handler,
                );
                let first =
                    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut lifecycle).poll(cx))).await;
                match first {
                    Poll::Ready(response) => outcomes[i] = Some((response, None)),
                    // `Call` is `Unpin`: it moves into the box as it is,
                    // with the permit it holds while it runs.
                    Poll::Pending => {
                        let permit = turn.semaphore.try_acquire().ok();
                        futures.push(Box::pin(async move {
                            let _permit = permit;
                            (i, (lifecycle.await, None))
                        }));
                    }
                }
            }
        }
        let waiting: Vec<usize> = waiting
            .filter(|&i| outcomes[i].is_none() && !turn.slots[i].background)
            .collect();
        futures.extend(
            waiting
                .into_iter()
                .map(|i| -> BoxFuture<'_, (usize, Settled)> {
                    Box::pin(async move {
                        (
                            i,
                            self.one(
                                &turn.calls[i].call,
                                turn.slots[i].spec.as_deref(),
                                &turn.slots[i].ctx,
                                turn.semaphore,
                            )
                            .await,
                        )
                    })
                }),
        );
        if futures.is_empty() {
            return;
        }
        for (index, outcome) in JoinAll::new(futures).await {
            outcomes[index] = Some(outcome);
        }
    }

    /// Settles a call deferred earlier, once the application has decided:
    /// `Approve` runs it, `Reject` answers with the reason (both through the
    /// lifecycle), `Defer` leaves it pending. A call
    /// [running](PendingCall::running) in the background is left to run:
    /// it stays pending, and its outcome comes from
    /// [`BackgroundCalls::finished`].
    pub async fn resume(
        &self,
        pending: &PendingCall,
        decision: Decision,
        ctx: &Context,
    ) -> CallOutcome {
        if pending.running {
            // Approved and started already: it is not run again.
            return CallOutcome {
                call: pending.call.clone(),
                response: ToolResponse::text(background::RUNNING),
                pending: Some(Box::new(pending.clone())),
            };
        }
        let ctx = call_context(&pending.call, ctx);
        let (response, pending_again) = self
            .settle(
                &pending.call,
                Some(&pending.specification),
                decision,
                &ctx,
                None,
            )
            .await;
        CallOutcome {
            call: pending.call.clone(),
            response,
            pending: pending_again,
        }
    }

    async fn one(
        &self,
        call: &ToolCall,
        spec: Option<&ToolSpecification>,
        ctx: &Context,
        semaphore: &Semaphore,
    ) -> Settled {
        match self.decide(call, spec, ctx).await {
            Ok(decision) => {
                self.settle(call, spec, decision, ctx, Some(semaphore))
                    .await
            }
            Err(refused) => (refused, None),
        }
    }

    /// A call to leave running: asked about like any other, then, once
    /// approved, started in the background.
    async fn detach(
        &self,
        call: &ToolCall,
        spec: Option<&ToolSpecification>,
        ctx: &Context,
    ) -> Settled {
        let decision = match self.decide(call, spec, ctx).await {
            Ok(decision) => decision,
            Err(refused) => return (refused, None),
        };
        match (&self.launch, spec, decision) {
            (Some(launch), Some(spec), Decision::Approve) => {
                self.background()
                    .start(launch, call, spec, ctx, &self.handler)
                    .await
            }
            (_, _, decision) => self.settle(call, spec, decision, ctx, None).await,
        }
    }

    /// The approval hook's decision on a call (`Approve` without a hook),
    /// or the response of a call that ends here: one that cannot be shown
    /// to the hook or whose arguments the tool refuses.
    async fn decide(
        &self,
        call: &ToolCall,
        spec: Option<&ToolSpecification>,
        ctx: &Context,
    ) -> Result<Decision, ToolResponse> {
        Ok(match &self.approval {
            None => Decision::Approve,
            Some(approval) => {
                // A call runs only after the hook approved it: a call that
                // cannot be shown to the hook (no specification in its
                // context) or whose arguments the tool refuses ends here.
                let arguments = call.arguments.as_arguments();
                let checked = match spec {
                    Some(spec) => self
                        .toolbox
                        .check(&call.name, arguments, ctx)
                        .map(|()| spec),
                    None => Err(self
                        .toolbox
                        .check(&call.name, arguments, ctx)
                        .err()
                        .unwrap_or_else(|| ToolError::NotAvailable {
                            name: call.name.clone(),
                        })),
                };
                match checked {
                    Ok(spec) => {
                        let request = ApprovalRequest {
                            call: call.clone(),
                            specification: spec.clone(),
                        };
                        approval.review(request).await
                    }
                    Err(error) => return Err(self.refuse(call, error, ctx)),
                }
            }
        })
    }

    /// Ends a call with `error` without running it, through the lifecycle
    /// (start, then one error) like every other call.
    fn refuse(&self, call: &ToolCall, error: ToolError, ctx: &Context) -> ToolResponse {
        toolbox_core::internal::refuse(
            &call.name,
            call.arguments.as_arguments(),
            ctx,
            &self.handler,
            error,
        )
    }

    async fn settle(
        &self,
        call: &ToolCall,
        spec: Option<&ToolSpecification>,
        decision: Decision,
        ctx: &Context,
        semaphore: Option<&Semaphore>,
    ) -> Settled {
        match (decision, spec) {
            (Decision::Reject { reason }, _) => {
                let error = ToolError::failed(format!("the call was not approved: {reason}"));
                (self.refuse(call, error, ctx), None)
            }
            (Decision::Defer, Some(spec)) => (
                ToolResponse::text(
                    "this call is waiting for approval; its result will follow in a later message",
                ),
                Some(Box::new(PendingCall {
                    call: call.clone(),
                    specification: spec.clone(),
                    running: false,
                })),
            ),
            _ => {
                let _permit = match semaphore {
                    Some(semaphore) => semaphore.acquire().await.ok(),
                    None => None,
                };
                let response = self
                    .toolbox
                    .call(
                        &call.name,
                        call.arguments.as_arguments(),
                        ctx,
                        &self.handler,
                    )
                    .await;
                (response, None)
            }
        }
    }
}

/// What became of one call: its response, and the call itself when it was
/// deferred.
/// (Boxed: most calls are not deferred, and the outcome moves.)
type Settled = (ToolResponse, Option<Box<PendingCall>>);

/// One turn's calls with what each needs to run.
struct Turn<'t, 'a> {
    calls: &'t [CallOutcome],
    slots: &'t [Slot<'a>],
    semaphore: &'t Semaphore,
}

/// What one call runs with: its context and its tool's specification
/// there, and whether it is left running in the background.
struct Slot<'a> {
    ctx: Context,
    spec: Option<Cow<'a, ToolSpecification>>,
    background: bool,
}

/// The context of one call: the turn's, with the call's id.
fn call_context(call: &ToolCall, ctx: &Context) -> Context {
    let ctx = match &call.id {
        Some(id) => toolbox_core::internal::context_for_call(ctx, id),
        None => ctx.clone(),
    };
    // Who made the call, for the handler's events and the tool itself.
    match &call.caller {
        Some(caller) => ctx.with_extension(caller.clone()),
        None => ctx,
    }
}

impl CallOutcome {
    /// The `(call, response)` pair that result messages are built from.
    pub fn pair(&self) -> (ToolCall, ToolResponse) {
        (self.call.clone(), self.response.clone())
    }
}

/// Polls every future until all are done; outputs in completion order.
struct JoinAll<'a, T> {
    pending: Vec<Option<BoxFuture<'a, T>>>,
    done: Vec<T>,
}

impl<'a, T> JoinAll<'a, T> {
    fn new(futures: Vec<BoxFuture<'a, T>>) -> Self {
        let done = Vec::with_capacity(futures.len());
        JoinAll {
            pending: futures.into_iter().map(Some).collect(),
            done,
        }
    }
}

impl<T> Unpin for JoinAll<'_, T> {}

impl<T> Future for JoinAll<'_, T> {
    type Output = Vec<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Vec<T>> {
        let this = self.get_mut();
        for slot in &mut this.pending {
            if let Some(future) = slot {
                if let Poll::Ready(output) = future.as_mut().poll(cx) {
                    this.done.push(output);
                    *slot = None;
                }
            }
        }
        if this.pending.iter().all(Option::is_none) {
            Poll::Ready(std::mem::take(&mut this.done))
        } else {
            Poll::Pending
        }
    }
}

/// What the toolbox crates above this one build on beside the public API:
/// not a public API, no stability promise.
#[doc(hidden)]
pub mod internal {
    use std::sync::Arc;

    use toolbox_core::ToolBox;

    use super::{Approval, TurnRunner};

    /// The runner of a local code mode's calls: `approval` asked, every
    /// caller allowed every tool, and a deferred tool callable without a
    /// search first (the script found it with its own).
    pub fn inside_code<B: ToolBox + ?Sized>(
        runner: TurnRunner<'_, B>,
        approval: Option<Arc<dyn Approval>>,
    ) -> TurnRunner<'_, B> {
        runner.approval_shared(approval).inside_code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A turn's outcomes are built, moved and returned together: a
    /// deferred call's (rare, and larger than the rest of the outcome) is
    /// boxed, so an outcome stays the size of its call and response.
    #[test]
    fn an_outcome_is_its_call_and_response() {
        let parts = std::mem::size_of::<ToolCall>() + std::mem::size_of::<ToolResponse>();
        assert!(std::mem::size_of::<PendingCall>() > parts / 2);
        assert_eq!(
            std::mem::size_of::<CallOutcome>(),
            parts + std::mem::size_of::<usize>(),
            "CallOutcome is larger than its call, response and one pointer"
        );
    }
}
