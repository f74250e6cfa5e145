//! Request-scoped data a tool may ask for, and how injected parameters are
//! built from it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::Notify;

use crate::error::ToolError;

/// Request-scoped data for one call: its id, the originating request the
/// caller attached (the chat messages, say), typed extensions, and a
/// cancellation signal. Cheap to clone; an empty context allocates nothing.
///
/// ```
/// use toolbox_core::Context;
///
/// #[derive(Clone)]
/// struct UserId(u64);
///
/// let ctx = Context::new().with_call_id("call_1").with_extension(UserId(7));
/// assert_eq!(ctx.call_id(), Some("call_1"));
/// assert_eq!(ctx.extension::<UserId>().map(|u| u.0), Some(7));
/// ```
#[derive(Clone, Default)]
pub struct Context {
    call_id: Option<CallIdText>,
    request: Option<Arc<dyn AttachedRequest>>,
    extensions: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
    cancellation: Option<CancellationToken>,
}

/// How long a call id is kept in the context itself rather than shared:
/// the providers' ids (`call_…`, `toolu_…`) fit.
const INLINE_ID: usize = 38;

/// A call id: short ones in place (a call's context is made without an
/// allocation), longer ones shared.
#[derive(Clone)]
enum CallIdText {
    Inline { len: u8, bytes: [u8; INLINE_ID] },
    Shared(Arc<str>),
}

impl CallIdText {
    /// `id` in place, when it fits.
    #[inline]
    fn inline(id: &str) -> Option<Self> {
        let mut bytes = [0; INLINE_ID];
        bytes.get_mut(..id.len())?.copy_from_slice(id.as_bytes());
        Some(CallIdText::Inline {
            len: id.len() as u8,
            bytes,
        })
    }

    /// `id`, in place when it fits.
    #[inline]
    fn of(id: &str) -> Self {
        Self::inline(id).unwrap_or_else(|| CallIdText::Shared(id.into()))
    }

    #[inline]
    fn as_str(&self) -> &str {
        match self {
            // The bytes of a `&str`, copied whole: always UTF-8.
            CallIdText::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            CallIdText::Shared(id) => id,
        }
    }
}

impl fmt::Debug for CallIdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

trait AttachedRequest: Any + Send + Sync {
    fn to_json(&self) -> Result<Value, serde_json::Error>;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Serialize + Send + Sync + 'static> AttachedRequest for T {
    fn to_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Context {
    /// An empty context.
    pub fn new() -> Self {
        Context::default()
    }

    /// Sets the provider's call id.
    pub fn with_call_id(mut self, id: impl Into<Arc<str>>) -> Self {
        let id: Arc<str> = id.into();
        self.call_id = Some(CallIdText::inline(&id).unwrap_or(CallIdText::Shared(id)));
        self
    }

    /// This context for the call `id`: a short id is kept in place,
    /// without an allocation.
    pub(crate) fn for_call(&self, id: &str) -> Self {
        Context {
            call_id: Some(CallIdText::of(id)),
            ..self.clone()
        }
    }

    /// Attaches the originating request (any `Serialize` value).
    pub fn with_request<T: Serialize + Send + Sync + 'static>(mut self, request: T) -> Self {
        self.request = Some(Arc::new(request));
        self
    }

    /// Adds a typed extension, replacing one of the same type.
    pub fn with_extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        let map = Arc::make_mut(self.extensions.get_or_insert_with(Default::default));
        map.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Makes the call cancellable through `token`.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// The provider's call id, when the caller set one.
    #[inline]
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_ref().map(CallIdText::as_str)
    }

    /// The attached request, when it is of type `T`.
    pub fn request<T: 'static>(&self) -> Option<&T> {
        self.request.as_deref()?.as_any().downcast_ref()
    }

    /// The attached request as JSON, whatever its type.
    pub fn request_json(&self) -> Option<Result<Value, serde_json::Error>> {
        self.request.as_deref().map(AttachedRequest::to_json)
    }

    /// The extension of type `T`, if one was added.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions
            .as_ref()?
            .get(&TypeId::of::<T>())?
            .downcast_ref()
    }

    /// The cancellation token, when the call is cancellable.
    #[inline]
    pub fn cancellation(&self) -> Option<&CancellationToken> {
        self.cancellation.as_ref()
    }

    /// Whether the caller has cancelled this call.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.cancellation
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("call_id", &self.call_id)
            .field("has_request", &self.request.is_some())
            .field(
                "extensions",
                &self.extensions.as_ref().map_or(0, |e| e.len()),
            )
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// A signal that ends a call early. Clones share the signal.
///
/// A cancelled call is not dropped at once: the tool sees its
/// [`Context::is_cancelled`] (or awaits [`cancelled`](Self::cancelled))
/// and has the token's [grace](Self::with_grace) (500 ms unless set) to
/// clean up or answer with what it has. The call ends `Cancelled` either
/// way (a text it answered is kept for the model), and a call still
/// running when the grace is over is dropped.
#[derive(Clone)]
pub struct CancellationToken {
    inner: Arc<CancellationInner>,
    grace: Duration,
}

impl Default for CancellationToken {
    fn default() -> Self {
        CancellationToken {
            inner: Arc::default(),
            grace: CancellationToken::DEFAULT_GRACE,
        }
    }
}

#[derive(Default)]
struct CancellationInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancellationToken {
    /// How long a cancelled call may go on to finish, unless set.
    pub const DEFAULT_GRACE: Duration = Duration::from_millis(500);

    /// A token not yet cancelled.
    pub fn new() -> Self {
        CancellationToken::default()
    }

    /// Gives calls holding this token `grace` to finish once it is
    /// cancelled (`Duration::ZERO`: they are dropped at once).
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// How long a cancelled call may go on to finish.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// Cancels every call holding a clone of this token.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// How an injected tool parameter is built from the call's [`Context`]
/// (axum's `FromRequestParts`, for tools). Injected parameters never appear
/// in the schema and the model cannot set them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into a tool",
    label = "this parameter is marked `#[inject]` but `{Self}` does not implement `FromContext`",
    note = "implement `toolbox::FromContext` for `{Self}`, wrap it as `Extension<{Self}>`, or take `&Context` and read what you need from it"
)]
pub trait FromContext: Sized {
    /// Builds the value, or explains why the context lacks it.
    fn from_context(ctx: &Context) -> Result<Self, ToolError>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(ctx.clone())
    }
}

impl<T: FromContext> FromContext for Option<T> {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(T::from_context(ctx).ok())
    }
}

impl FromContext for CancellationToken {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(ctx.cancellation.clone().unwrap_or_default())
    }
}

/// The provider's id of the current call, injectable into a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallId(pub Option<String>);

impl FromContext for CallId {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(CallId(ctx.call_id().map(str::to_owned)))
    }
}

/// A typed extension of the context, injected by value (`T: Clone`).
/// A missing extension is a configuration error reported to the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromContext for Extension<T> {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<T>().cloned().map(Extension).ok_or_else(|| ToolError::Failed {
            message: "the tool is not configured for this request".to_owned(),
            retryable: false,
            source: Some(
                format!(
                    "the context has no extension of type `{}`; add it with `Context::with_extension`",
                    std::any::type_name::<T>()
                )
                .into(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, PartialEq, Debug)]
    struct Messages(Vec<&'static str>);

    #[test]
    fn request_is_typed_and_json() {
        let ctx = Context::new().with_request(Messages(vec!["hi"]));
        assert_eq!(ctx.request::<Messages>(), Some(&Messages(vec!["hi"])));
        assert!(ctx.request::<String>().is_none());
        assert_eq!(
            ctx.request_json().unwrap().unwrap(),
            serde_json::json!(["hi"])
        );
    }

    #[test]
    fn missing_extension_is_reported_with_its_type() {
        let error = Extension::<u32>::from_context(&Context::new()).unwrap_err();
        assert_eq!(
            error.model_message(),
            "the tool is not configured for this request"
        );
        assert!(
            error.report().contains("no extension of type `u32`"),
            "{}",
            error.report()
        );
        let ctx = Context::new().with_extension(5u32);
        assert_eq!(Extension::<u32>::from_context(&ctx).unwrap(), Extension(5));
    }

    #[tokio::test]
    async fn cancellation_wakes_waiters() {
        let token = CancellationToken::new();
        let waiter = tokio::spawn({
            let token = token.clone();
            async move { token.cancelled().await }
        });
        tokio::task::yield_now().await;
        token.cancel();
        waiter.await.unwrap();
        assert!(Context::new().with_cancellation(token).is_cancelled());
    }

    /// A call id reads back as it was set, kept in place or shared, at
    /// and past the inline length, with multi-byte characters.
    #[test]
    fn call_ids_read_back_as_set() {
        let ids = [
            String::new(),
            "call_1".to_owned(),
            "a".repeat(INLINE_ID),
            "a".repeat(INLINE_ID + 1),
            format!("{}é", "a".repeat(INLINE_ID - 2)),
            format!("{}é", "a".repeat(INLINE_ID - 1)),
        ];
        for id in &ids {
            let base = Context::new().with_call_id("outer");
            assert_eq!(base.for_call(id).call_id(), Some(id.as_str()));
            assert_eq!(
                Context::new().with_call_id(id.as_str()).call_id(),
                Some(id.as_str())
            );
            let shown = format!("{:?}", base.for_call(id));
            assert!(shown.contains(&format!("call_id: Some({id:?})")), "{shown}");
        }
        assert_eq!(Context::new().call_id(), None);
    }
}
