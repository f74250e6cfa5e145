//! One way to connect to an MCP server: [`McpConnect`], from
//! [`McpToolBox::http`], [`McpToolBox::stdio`] or [`McpToolBox::transport`].

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin as StdPin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, ClientNotification};
use rmcp::service::{ClientInitializeError, DynService, ServiceExt};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient};
use toolbox_core::{Context, ToolError};

use super::journal::{FileTaskJournal, TaskJournal};
use super::pin::{Pin, PinEvent, PinListener, Pins};
use super::{McpToolBox, MetaFn, Session};
use crate::connection::HttpConnection;

/// How long a remote server may take. Every remote call has a limit: a
/// server that accepts a request and never answers ends the call, not the
/// turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// The handshake and the first listing together (default 30 s).
    pub connect: Duration,
    /// Each tool call (default 300 s, as rig-rmcp's). A call past it ends
    /// as [`ToolError::TimedOut`], the server is told
    /// (`notifications/cancelled`) and the box stays usable.
    pub call: Duration,
    /// Each listing of the tools after the first: on `list_changed`, after
    /// a reconnect, on [`McpToolBox::refresh`] (default 30 s).
    pub list: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(30),
            call: Duration::from_secs(300),
            list: Duration::from_secs(30),
        }
    }
}

impl Timeouts {
    /// The handshake's limit.
    pub fn connect(mut self, limit: Duration) -> Self {
        self.connect = limit;
        self
    }

    /// Each call's limit.
    pub fn call(mut self, limit: Duration) -> Self {
        self.call = limit;
        self
    }

    /// Each listing's limit.
    pub fn list(mut self, limit: Duration) -> Self {
        self.list = limit;
        self
    }
}

pub(crate) type Opened =
    StdPin<Box<dyn Future<Output = Result<Session, ClientInitializeError>> + Send>>;
type Open = Box<dyn FnOnce(Box<dyn DynService<RoleClient>>) -> Opened + Send>;

/// Where the server is.
enum Target {
    Http(String),
    Stdio(tokio::process::Command),
    Transport(Open),
}

/// Connects to one MCP server: where it is, how to authenticate, how long
/// it may take, what its tools may change. Made by [`McpToolBox::http`],
/// [`McpToolBox::stdio`] or [`McpToolBox::transport`]; ends with
/// [`connect`](McpConnect::connect).
///
/// ```no_run
/// # async fn run() -> Result<(), toolbox_core::ToolError> {
/// use std::time::Duration;
/// use toolbox_mcp::{McpToolBox, client::{Pin, Timeouts}};
///
/// let weather = McpToolBox::http("https://weather.example/mcp")
///     .bearer("secret")
///     .timeouts(Timeouts::default().call(Duration::from_secs(20)))
///     .pin_file("weather.lock.json") // held: a changed description never reaches the model unseen
///     .on_pin_event(|event| eprintln!("{event}"))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
pub struct McpConnect<H = ()> {
    target: Target,
    http: HttpConnection,
    #[cfg(feature = "oauth")]
    oauth: Option<crate::auth::oauth::OAuth>,
    handler: H,
    timeouts: Timeouts,
    pin: Option<Pin>,
    accept_compatible: bool,
    pin_file: Option<PathBuf>,
    listener: Option<PinListener>,
    name: Option<String>,
    meta: Option<MetaFn>,
    renders_apps: bool,
    journal: Option<Journal>,
}

/// The task journal a box is given: a file opened when it connects, or a
/// store of the application's.
enum Journal {
    File(PathBuf),
    Store(Arc<dyn TaskJournal>),
}

impl McpToolBox {
    /// A server at a Streamable HTTP endpoint, `http://` or `https://`
    /// (`http://host:port/mcp`).
    pub fn http(url: impl Into<String>) -> McpConnect {
        McpConnect::new(Target::Http(url.into()))
    }

    /// A server started as a child process speaking MCP over stdio.
    /// [`close`](toolbox_core::ToolBox::close) ends the session and the child.
    pub fn stdio(command: tokio::process::Command) -> McpConnect {
        McpConnect::new(Target::Stdio(command))
    }

    /// A server over any rmcp client transport (a stream pair in a test,
    /// a transport of the application's).
    pub fn transport<T, E, A>(transport: T) -> McpConnect
    where
        T: IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        McpConnect::new(Target::Transport(Box::new(move |service| {
            Box::pin(async move { service.serve(transport).await })
        })))
    }
}

impl McpConnect {
    fn new(target: Target) -> Self {
        McpConnect {
            target,
            http: HttpConnection::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
            handler: (),
            timeouts: Timeouts::default(),
            pin: None,
            accept_compatible: false,
            pin_file: None,
            listener: None,
            name: None,
            meta: None,
            renders_apps: false,
            journal: None,
        }
    }
}

impl<H: ClientHandler> McpConnect<H> {
    /// Sends `Authorization: Bearer {token}` (HTTP).
    pub fn bearer(mut self, token: impl std::fmt::Display) -> Self {
        self.http = self.http.bearer(token);
        self
    }

    /// Sends `name: value` with every request (HTTP).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http = self.http.header(name, value);
        self
    }

    /// Trusts the root certificate(s) in `pem` beside the system's (HTTPS
    /// to a private CA). An untrusted certificate ends the handshake.
    pub fn trust_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.http = self.http.trust_pem(pem);
        self
    }

    /// Keeps HTTP connections open between requests (see
    /// [`HttpConnection::reuse_connections`]).
    pub fn reuse_connections(mut self, reuse: bool) -> Self {
        self.http = self.http.reuse_connections(reuse);
        self
    }

    /// All HTTP settings at once.
    pub fn http_connection(mut self, connection: HttpConnection) -> Self {
        self.http = connection;
        self
    }

    /// Authorizes with OAuth 2.1 when the server asks for it (its `401`
    /// challenge); a server that does not ask is connected as it is.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: crate::auth::oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Answers the server's requests to the client (`roots/list`,
    /// sampling, elicitation) with the application's rmcp
    /// [`ClientHandler`], whose `get_info` also names the client and its
    /// capabilities. Without one: no roots, sampling refused, elicitation
    /// declined.
    pub fn handler<H2: ClientHandler>(self, handler: H2) -> McpConnect<H2> {
        McpConnect {
            target: self.target,
            http: self.http,
            #[cfg(feature = "oauth")]
            oauth: self.oauth,
            handler,
            timeouts: self.timeouts,
            pin: self.pin,
            accept_compatible: self.accept_compatible,
            pin_file: self.pin_file,
            listener: self.listener,
            name: self.name,
            meta: self.meta,
            renders_apps: self.renders_apps,
            journal: self.journal,
        }
    }

    /// The time limits ([`Timeouts::default`]: 30 s to connect, 300 s a
    /// call, 30 s a listing).
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// What a changed or new tool does ([`Pin`]). Without a pin file the
    /// first listing is the baseline (trust on first use).
    pub fn pin(mut self, pin: Pin) -> Self {
        self.pin = Some(pin);
        self
    }

    /// Pins the surface to the lock at `path`, in the format
    /// `toolbox::testing::assert_surface_lock` writes, so one file serves
    /// CI and the running agent: the tools it has are the baseline, a
    /// missing file is written from the first listing, an approval
    /// rewrites it. [`Pin::Hold`] unless [`pin`](McpConnect::pin) says
    /// otherwise.
    pub fn pin_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.pin_file = Some(path.into());
        self
    }

    /// Under [`Pin::Hold`], accepts a compatible schema change (an
    /// optional argument added, a type widened) whose texts are unchanged;
    /// a breaking change, a changed text and a new tool are still held.
    pub fn accept_compatible(mut self, accept: bool) -> Self {
        self.accept_compatible = accept;
        self
    }

    /// Called with every change a pinned box sees ([`Pin::Warn`],
    /// [`Pin::Hold`]): the tool, the classified changes with their paths,
    /// the old and new texts, whether it is held.
    pub fn on_pin_event(mut self, listener: impl Fn(&PinEvent) + Send + Sync + 'static) -> Self {
        self.listener = Some(Arc::new(listener));
        self
    }

    /// Says in the handshake that this application renders MCP Apps' views
    /// (`capabilities.extensions["io.modelcontextprotocol/ui"]` with
    /// `mimeTypes: ["text/html;profile=mcp-app"]`), so a server that checks
    /// it registers its UI tools. Off by default: a client that shows no
    /// views should not make servers offer tools meant for them. Either
    /// way, app-only tools stay out of the model's list
    /// ([`McpToolBox::app_tools`](crate::McpToolBox::app_tools) lists them).
    pub fn renders_apps(mut self, renders: bool) -> Self {
        self.renders_apps = renders;
        self
    }

    /// Keeps the tasks of this box's calls in the file at `path` (a
    /// [`FileTaskJournal`], JSON lines, opened when the box connects) until
    /// their calls end, so that after a restart
    /// [`McpToolBox::unfinished_tasks`] lists them and
    /// [`McpToolBox::resume_task`] polls them again and ends their calls.
    ///
    /// Off by default: the journal is a file the application must own (one
    /// per process, somewhere it keeps state), and only an application that
    /// resumes after a restart gains from it; a crash otherwise leaves the
    /// task to finish or expire on the server, as before.
    pub fn task_journal(mut self, path: impl Into<PathBuf>) -> Self {
        self.journal = Some(Journal::File(path.into()));
        self
    }

    /// Keeps the tasks of this box's calls in a [`TaskJournal`] of the
    /// application's (a database, one journal shared by several boxes).
    pub fn task_journal_with(mut self, journal: Arc<dyn TaskJournal>) -> Self {
        self.journal = Some(Journal::Store(journal));
        self
    }

    /// The server's name in this program (in `{server}_{tool}` names, the
    /// system message, pin events); the name it announces otherwise.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sends chosen values of each call's [`Context`] to the server in the
    /// request's `_meta` (a user id, a trace id: the application decides).
    pub fn forward_meta(
        mut self,
        choose: impl Fn(&Context) -> serde_json::Map<String, serde_json::Value> + Send + Sync + 'static,
    ) -> Self {
        self.meta = Some(Arc::new(choose));
        self
    }

    /// Where the server is, as texts show it: the URL without its
    /// credentials and query ([`shown_url`](super::shown_url)), or the
    /// command line.
    pub(crate) fn origin(&self) -> String {
        match &self.target {
            Target::Http(url) => super::shown_url(url),
            Target::Stdio(command) => {
                let command = command.as_std();
                std::iter::once(command.get_program())
                    .chain(command.get_args())
                    .map(|part| part.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            Target::Transport(_) => "(transport)".to_owned(),
        }
    }

    pub(crate) fn given_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Connects: the handshake and the first listing within the connect
    /// limit, through the pins.
    pub async fn connect(self) -> Result<McpToolBox, ToolError> {
        let limit = self.timeouts.connect;
        let origin = self.origin();
        match tokio::time::timeout(limit, self.connect_unbounded(origin.clone())).await {
            Ok(result) => result,
            Err(_) => Err(ToolError::Transport {
                message: format!(
                    "the MCP server at {origin} did not finish the handshake within {limit:?}"
                ),
                source: None,
            }),
        }
    }

    async fn connect_unbounded(self, origin: String) -> Result<McpToolBox, ToolError> {
        let policy = self.pin.unwrap_or(if self.pin_file.is_some() {
            Pin::Hold
        } else {
            Pin::Trust
        });
        let pins = Pins::new(
            policy,
            self.accept_compatible,
            self.pin_file.clone(),
            self.listener.clone(),
        )?;
        let journal: Option<Arc<dyn TaskJournal>> = match self.journal {
            Some(Journal::File(path)) => Some(Arc::new(FileTaskJournal::open(path)?)),
            Some(Journal::Store(store)) => Some(store),
            None => None,
        };
        let reconnects = Reconnects::default();
        let settings = super::Settings {
            pins,
            timeouts: self.timeouts,
            origin,
            name: self.name,
            meta: self.meta,
            child: None,
            reconnects: reconnects.clone(),
            renders_apps: self.renders_apps,
            journal,
        };
        match self.target {
            Target::Transport(open) => {
                McpToolBox::start(|service| open(service), self.handler, settings).await
            }
            Target::Stdio(command) => {
                let transport =
                    TokioChildProcess::new(command).map_err(|e| ToolError::Transport {
                        message: format!(
                            "the MCP server `{}` could not be started",
                            settings.origin
                        ),
                        source: Some(Box::new(e)),
                    })?;
                let mut settings = settings;
                settings.child = transport.id();
                McpToolBox::start(
                    |service| Box::pin(async move { service.serve(transport).await }),
                    self.handler,
                    settings,
                )
                .await
            }
            Target::Http(url) => {
                let client = self.http.client()?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                config.custom_headers = self.http.header_map()?;
                #[cfg(feature = "oauth")]
                if let Some(oauth) = &self.oauth {
                    if let Some(authorized) =
                        crate::auth::oauth::authorize(&url, &client, &self.http, oauth).await?
                    {
                        let transport = StreamableHttpClientTransport::with_client(
                            Watched::new(authorized, reconnects),
                            config,
                        );
                        return McpToolBox::start(
                            |service| Box::pin(async move { service.serve(transport).await }),
                            self.handler,
                            settings,
                        )
                        .await;
                    }
                }
                let transport = StreamableHttpClientTransport::with_client(
                    Watched::new(client, reconnects),
                    config,
                );
                McpToolBox::start(
                    |service| Box::pin(async move { service.serve(transport).await }),
                    self.handler,
                    settings,
                )
                .await
            }
        }
    }
}

/// Tells the box when the transport made a new session (rmcp's client
/// re-initializes by itself when a server answers 404 for its session: a
/// restart, an expired session) or lost its event stream, so the tools are
/// listed again; and keeps calls from a new session until its listing has
/// passed the pins.
#[derive(Clone, Default)]
pub(crate) struct Reconnects {
    pub(crate) signal: Arc<tokio::sync::Notify>,
    handshakes: Arc<AtomicUsize>,
    /// How many times the session was made again.
    sessions: Arc<AtomicUsize>,
    /// The session whose listing the box has stored.
    listed: Arc<AtomicUsize>,
    /// Recent `tools/call` request ids with the session they were first
    /// sent in: rmcp resends a call the old session lost, and that resend
    /// must not reach a server the pins have not seen.
    calls: Arc<std::sync::Mutex<std::collections::VecDeque<(rmcp::model::RequestId, usize)>>>,
}

/// How many recent call ids [`Reconnects`] remembers.
const REMEMBERED_CALLS: usize = 1024;

impl Reconnects {
    /// The current session's number (0 for the first).
    pub(crate) fn session(&self) -> usize {
        self.sessions.load(Ordering::SeqCst)
    }

    /// The session a listing about to be read belongs to; give it to
    /// [`listed`](Reconnects::listed) once that listing is stored.
    pub(crate) fn listed(&self, session: usize) {
        self.listed.store(session, Ordering::SeqCst);
    }

    /// Whether a new session's tools have not been listed yet.
    pub(crate) fn stale(&self) -> bool {
        self.session() != self.listed.load(Ordering::SeqCst)
    }

    /// Whether a `tools/call` may go out now: not while the session's
    /// listing is unread, and not as a resend into a session other than
    /// the one it was first sent in.
    fn may_send(&self, id: &rmcp::model::RequestId) -> bool {
        let session = self.session();
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, first)) = calls.iter().find(|(known, _)| known == id) {
            return *first == session && !self.stale();
        }
        if calls.len() == REMEMBERED_CALLS {
            calls.pop_front();
        }
        calls.push_back((id.clone(), session));
        !self.stale()
    }
}

/// What the transport answers a call it keeps from a session whose tools
/// have not passed the pins.
pub(crate) const KEPT: &str =
    "the server's session was made again; its tools are listed again before any call";

/// The `Mcp-Name` header of a request about a task (`tasks/get`,
/// `tasks/update`, `tasks/cancel`): its task id, so a load balancer can
/// send it to the replica that holds the task (SEP-2663). rmcp sets it only
/// under the `2026-07-28` protocol; a client of an earlier one sends it too
/// (it is only a header). A value that cannot travel as it is goes as
/// `=?base64?…?=`, as SEP-2243 writes it.
fn task_routing(
    message: &ClientJsonRpcMessage,
) -> Option<(reqwest::header::HeaderName, reqwest::header::HeaderValue)> {
    use rmcp::model::ClientRequest;
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let task_id = match &request.request {
        ClientRequest::GetTaskRequest(r) => &r.params.task_id,
        ClientRequest::UpdateTaskRequest(r) => &r.params.task_id,
        ClientRequest::CancelTaskRequest(r) => &r.params.task_id,
        _ => return None,
    };
    let value = reqwest::header::HeaderValue::from_str(&header_value(task_id)).ok()?;
    Some((reqwest::header::HeaderName::from_static("mcp-name"), value))
}

/// `value` as SEP-2243 sends it in a header: as it is when it is printable
/// ASCII without spaces at its ends, else Base64 in `=?base64?…?=`.
fn header_value(value: &str) -> String {
    use base64::Engine as _;
    let wrapped = !value.chars().all(|c| (' '..='~').contains(&c))
        || value.starts_with(' ')
        || value.ends_with(' ')
        || (value.starts_with("=?base64?") && value.ends_with("?="));
    if !wrapped {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// An HTTP client that reports new sessions and lost event streams.
#[derive(Clone)]
struct Watched<C> {
    inner: C,
    reconnects: Reconnects,
}

impl<C> Watched<C> {
    fn new(inner: C, reconnects: Reconnects) -> Self {
        Watched { inner, reconnects }
    }
}

type SseStream = futures_core::stream::BoxStream<
    'static,
    Result<sse_stream::Sse, rmcp::transport::streamable_http_client::SseError>,
>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Watched<C> {
    type Error = C::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
           + Send
           + '_ {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
    }

    fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
           + Send
           + '_ {
        let initialized = matches!(
            &message,
            ClientJsonRpcMessage::Notification(n)
                if matches!(n.notification, ClientNotification::InitializedNotification(_))
        );
        let kept = match &message {
            ClientJsonRpcMessage::Request(request)
                if matches!(
                    request.request,
                    rmcp::model::ClientRequest::CallToolRequest(_)
                ) =>
            {
                !self.reconnects.may_send(&request.id)
            }
            _ => false,
        };
        let mut custom_headers = custom_headers;
        if let Some((name, value)) = task_routing(&message) {
            custom_headers.entry(name).or_insert(value);
        }
        async move {
            if kept {
                return Err(StreamableHttpError::UnexpectedServerResponse(
                    std::borrow::Cow::Borrowed(KEPT),
                ));
            }
            let response = self
                .inner
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await;
            if initialized
                && response.is_ok()
                && self.reconnects.handshakes.fetch_add(1, Ordering::SeqCst) > 0
            {
                self.reconnects.sessions.fetch_add(1, Ordering::SeqCst);
                self.reconnects.signal.notify_one();
            }
            response
        }
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    ) -> impl Future<Output = Result<SseStream, StreamableHttpError<Self::Error>>> + Send + '_ {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpClientTransportConfig::default().max_sse_event_size,
        )
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        // The event stream of the session could not be opened again:
        // the server restarted or forgot the session. Listing the tools
        // makes rmcp notice (a 404 re-initializes) and reads the new list.
        if matches!(&stream, Err(e) if !matches!(e, StreamableHttpError::ServerDoesNotSupportSse)) {
            self.reconnects.signal.notify_one();
        }
        stream
    }
}

#[cfg(test)]
mod tests {
    use super::header_value;

    #[test]
    fn a_task_id_goes_in_mcp_name_as_it_is_or_in_base64() {
        let id = "54fbc2d7-c64e-4f49-9f80-a9b070af2376";
        assert_eq!(header_value(id), id);
        assert_eq!(header_value("a b"), "a b");
        // What a header cannot carry as it is, as SEP-2243 wraps it.
        assert_eq!(header_value("tâche"), "=?base64?dMOiY2hl?=");
        assert_eq!(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(header_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }
}
