//! Running one turn's tool calls: concurrently within a bound, effects
//! respected, an approval hook before each call, one result per call in the
//! order of the calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::{
    normalize_arguments, BoxFuture, Context, DispatchFuture, ToolBox, ToolBoxExt, ToolCall,
    ToolError, ToolHandler, ToolResponse, ToolSpecification,
};

/// What the approval hook is asked about: the call (its arguments already
/// checked against the schema) and the tool's specification, whose
/// annotations say whether it is read-only or destructive.
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

/// A deferred call, serializable, for the application to resolve later.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call, as the model made it.
    pub call: ToolCall,
    /// The tool's specification at the time.
    pub specification: ToolSpecification,
}

/// One call's outcome: the response to send back, and the pending request
/// when the approval hook deferred it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// The call.
    pub call: ToolCall,
    /// What goes back to the model (for a deferred call: that the result
    /// will follow).
    pub response: ToolResponse,
    /// Set when the call was deferred and has not run.
    pub pending: Option<PendingCall>,
}

/// Runs the tool calls of one model turn against a box.
///
/// Read-only and unannotated calls run concurrently (at most `limit` at a
/// time); a destructive call waits for every call before it and blocks every
/// call after it. Results come back in the order of the calls, one per call,
/// whatever happened to it.
pub struct TurnRunner<'a, B: ?Sized> {
    toolbox: &'a B,
    handler: ToolHandler,
    limit: usize,
    approval: Option<Arc<dyn Approval>>,
}

impl<'a, B: ToolBox + ?Sized> TurnRunner<'a, B> {
    /// A runner for `toolbox`, 16 calls at a time, no approval hook.
    pub fn new(toolbox: &'a B) -> Self {
        TurnRunner {
            toolbox,
            handler: ToolHandler::empty(),
            limit: 16,
            approval: None,
        }
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

    /// Asks `approval` before each call whose arguments are valid.
    pub fn approval(mut self, approval: impl Approval + 'static) -> Self {
        self.approval = Some(Arc::new(approval));
        self
    }

    /// Runs `calls` and returns one outcome per call, in order.
    pub async fn run(&self, calls: Vec<ToolCall>, ctx: &Context) -> Vec<CallOutcome> {
        let semaphore = Semaphore::new(self.limit);
        let specs: Vec<Option<ToolSpecification>> = calls
            .iter()
            .map(|c| {
                self.toolbox
                    .specification(&c.name, ctx)
                    .map(std::borrow::Cow::into_owned)
            })
            .collect();
        let mut outcomes: Vec<Option<CallOutcome>> = calls.iter().map(|_| None).collect();
        let mut batch: Vec<usize> = Vec::new();
        for index in 0..calls.len() {
            if specs[index]
                .as_ref()
                .is_some_and(ToolSpecification::is_destructive)
            {
                self.run_batch(&batch, &calls, &specs, ctx, &semaphore, &mut outcomes)
                    .await;
                batch.clear();
                self.run_batch(&[index], &calls, &specs, ctx, &semaphore, &mut outcomes)
                    .await;
            } else {
                batch.push(index);
            }
        }
        self.run_batch(&batch, &calls, &specs, ctx, &semaphore, &mut outcomes)
            .await;
        outcomes
            .into_iter()
            .zip(calls)
            .map(|(outcome, call)| {
                outcome.unwrap_or_else(|| CallOutcome {
                    response: ToolResponse::error("the call was not run"),
                    call,
                    pending: None,
                })
            })
            .collect()
    }

    async fn run_batch(
        &self,
        batch: &[usize],
        calls: &[ToolCall],
        specs: &[Option<ToolSpecification>],
        ctx: &Context,
        semaphore: &Semaphore,
        outcomes: &mut [Option<CallOutcome>],
    ) {
        let futures: Vec<BoxFuture<'_, (usize, CallOutcome)>> = batch
            .iter()
            .map(|&i| -> BoxFuture<'_, (usize, CallOutcome)> {
                Box::pin(async move {
                    (
                        i,
                        self.one(&calls[i], specs[i].as_ref(), ctx, semaphore).await,
                    )
                })
            })
            .collect();
        for (index, outcome) in JoinAll::new(futures).await {
            outcomes[index] = Some(outcome);
        }
    }

    /// Settles a call deferred earlier, once the application has decided:
    /// `Approve` runs it, `Reject` answers with the reason (both through the
    /// lifecycle), `Defer` leaves it pending.
    pub async fn resume(
        &self,
        pending: &PendingCall,
        decision: Decision,
        ctx: &Context,
    ) -> CallOutcome {
        let ctx = call_context(&pending.call, ctx);
        self.settle(
            &pending.call,
            Some(&pending.specification),
            decision,
            &ctx,
            None,
        )
        .await
    }

    async fn one(
        &self,
        call: &ToolCall,
        spec: Option<&ToolSpecification>,
        ctx: &Context,
        semaphore: &Semaphore,
    ) -> CallOutcome {
        let ctx = call_context(call, ctx);
        let decision = match (&self.approval, spec) {
            (Some(approval), Some(spec)) if arguments_fit(&call.arguments, &spec.parameters) => {
                let request = ApprovalRequest {
                    call: call.clone(),
                    specification: spec.clone(),
                };
                approval.review(request).await
            }
            _ => Decision::Approve,
        };
        self.settle(call, spec, decision, &ctx, Some(semaphore))
            .await
    }

    async fn settle(
        &self,
        call: &ToolCall,
        spec: Option<&ToolSpecification>,
        decision: Decision,
        ctx: &Context,
        semaphore: Option<&Semaphore>,
    ) -> CallOutcome {
        let outcome = |response, pending| CallOutcome {
            call: call.clone(),
            response,
            pending,
        };
        match (decision, spec) {
            (Decision::Reject { reason }, _) => {
                let response = Refused(reason)
                    .call(&call.name, &call.arguments, ctx, &self.handler)
                    .await;
                outcome(response, None)
            }
            (Decision::Defer, Some(spec)) => outcome(
                ToolResponse::text(
                    "this call is waiting for approval; its result will follow in a later message",
                ),
                Some(PendingCall {
                    call: call.clone(),
                    specification: spec.clone(),
                }),
            ),
            _ => {
                let _permit = match semaphore {
                    Some(semaphore) => semaphore.acquire().await.ok(),
                    None => None,
                };
                let response = self
                    .toolbox
                    .call(&call.name, &call.arguments, ctx, &self.handler)
                    .await;
                outcome(response, None)
            }
        }
    }
}

/// The context of one call: the turn's, with the call's id.
fn call_context(call: &ToolCall, ctx: &Context) -> Context {
    match &call.id {
        Some(id) => ctx.clone().with_call_id(id.as_str()),
        None => ctx.clone(),
    }
}

impl CallOutcome {
    /// The `(call, response)` pair that result messages are built from.
    pub fn pair(&self) -> (ToolCall, ToolResponse) {
        (self.call.clone(), self.response.clone())
    }
}

/// Whether arguments fit the tool's schema. Calls that do not fit skip the
/// approval hook: nobody is asked to approve a call that cannot run, and the
/// dispatch refuses it with the exact reason before the tool runs.
fn arguments_fit(arguments: &Value, schema: &Value) -> bool {
    match normalize_arguments(arguments) {
        Ok(arguments) => {
            let defs = schema.get("$defs").or_else(|| schema.get("definitions"));
            fits(schema, &arguments, defs, 0)
        }
        Err(_) => false,
    }
}

/// A JSON Schema check over the keywords tool schemas use (`type`, `enum`,
/// `const`, `properties`, `required`, `additionalProperties`, `items`,
/// `anyOf`/`oneOf`/`allOf`, local `$ref`, numeric and length bounds);
/// other keywords are not checked.
fn fits(schema: &Value, value: &Value, defs: Option<&Value>, depth: usize) -> bool {
    let Some(schema) = schema.as_object() else {
        return schema != &Value::Bool(false);
    };
    if depth > 64 {
        return true;
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"));
        match name.and_then(|n| defs.and_then(|d| d.get(n))) {
            Some(target) if fits(target, value, defs, depth + 1) => {}
            _ => return false,
        }
    }
    if let Some(types) = schema.get("type") {
        let matches = |t: &Value| match t.as_str() {
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("null") => value.is_null(),
            Some("number") => value.is_number(),
            Some("integer") => value.as_i64().is_some() || value.as_u64().is_some(),
            _ => true,
        };
        let ok = match types {
            Value::Array(options) => options.iter().any(matches),
            single => matches(single),
        };
        if !ok {
            return false;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(value) {
            return false;
        }
    }
    if schema.get("const").is_some_and(|c| c != value) {
        return false;
    }
    for (key, all) in [("anyOf", false), ("oneOf", false), ("allOf", true)] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let mut results = branches.iter().map(|b| fits(b, value, defs, depth + 1));
            let ok = if all {
                results.all(|r| r)
            } else {
                results.any(|r| r)
            };
            if !ok {
                return false;
            }
        }
    }
    let number = value.as_f64();
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(n) = number {
        if bound("minimum").is_some_and(|m| n < m)
            || bound("maximum").is_some_and(|m| n > m)
            || bound("exclusiveMinimum").is_some_and(|m| n <= m)
            || bound("exclusiveMaximum").is_some_and(|m| n >= m)
        {
            return false;
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as f64;
        if bound("minLength").is_some_and(|m| length < m)
            || bound("maxLength").is_some_and(|m| length > m)
        {
            return false;
        }
    }
    if let Some(items) = value.as_array() {
        let count = items.len() as f64;
        if bound("minItems").is_some_and(|m| count < m)
            || bound("maxItems").is_some_and(|m| count > m)
        {
            return false;
        }
        if let Some(item_schema) = schema.get("items") {
            if !items
                .iter()
                .all(|item| fits(item_schema, item, defs, depth + 1))
            {
                return false;
            }
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            if !required
                .iter()
                .filter_map(Value::as_str)
                .all(|k| object.contains_key(k))
            {
                return false;
            }
        }
        for (key, field) in object {
            match properties.and_then(|p| p.get(key)) {
                Some(property) => {
                    if !fits(property, field, defs, depth + 1) {
                        return false;
                    }
                }
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return false,
                    Some(extra @ Value::Object(_)) if !fits(extra, field, defs, depth + 1) => {
                        return false
                    }
                    _ => {}
                },
            }
        }
    }
    true
}

/// The box a rejected call runs against, so that it passes the lifecycle
/// (start, then one error) like every other call.
struct Refused(String);

impl ToolBox for Refused {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        Vec::new()
    }

    fn dispatch<'a>(&'a self, _: &'a str, _: &'a Value, _: &'a Context) -> DispatchFuture<'a> {
        DispatchFuture::ready(Err(ToolError::failed(format!(
            "the call was not approved: {}",
            self.0
        ))))
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

#[cfg(test)]
mod tests {
    use super::arguments_fit;
    use serde_json::json;

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0, "maximum": 255},
                "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "maybe": {"type": ["string", "null"]}
            },
            "required": ["n"],
            "additionalProperties": false,
            "$defs": {"Unit": {"type": "string", "enum": ["C", "F"]}}
        });
        assert!(arguments_fit(
            &json!({"n": 1, "unit": "C", "tags": ["a"], "maybe": null}),
            &schema
        ));
        assert!(arguments_fit(&json!("{\"n\": 2}"), &schema));
        assert!(!arguments_fit(&json!({"n": 300}), &schema), "above maximum");
        assert!(
            !arguments_fit(&json!({"n": 1.5}), &schema),
            "not an integer"
        );
        assert!(
            !arguments_fit(&json!({"n": 1, "unit": "K"}), &schema),
            "not in the enum behind the ref"
        );
        assert!(
            !arguments_fit(&json!({"n": 1, "tags": [1]}), &schema),
            "item type"
        );
        assert!(
            !arguments_fit(&json!({"n": 1, "extra": true}), &schema),
            "closed object"
        );
        assert!(!arguments_fit(&json!({"unit": "C"}), &schema), "required");
        assert!(!arguments_fit(&json!([1]), &schema), "not an object");
    }
}
