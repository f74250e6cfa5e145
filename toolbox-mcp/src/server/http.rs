//! Serving over Streamable HTTP: the options ([`HttpOptions`]), the server
//! ([`HttpServer`]) with its graceful shutdown, and `serve_http`.

use std::sync::Arc;
use std::time::Duration;

use toolbox_core::ToolBox;

use super::gate::{metadata_url, Gate, GatedRouter};
use super::sessions::{ServeState, Sessions};
use super::McpServer;
use crate::auth::BearerAuth;

/// How a served endpoint admits requests; [`HttpOptions::default`] is what
/// [`serve_http`] uses.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_client: Option<usize>,
    pub(crate) idle_timeout: Duration,
    pub(crate) readiness_path: Option<String>,
    pub(crate) drain_delay: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) auth: Option<BearerAuth>,
    pub(crate) trusted_proxies: Vec<String>,
}

/// The origins a local endpoint admits by default: loopback pages only.
const LOCAL_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

impl Default for HttpOptions {
    /// Loopback `Host`s and `Origin`s only (a request without `Origin`, as
    /// non-browser clients send, passes); at most 1,000 sessions (an idle
    /// one makes room for a new one, one that never made a request first),
    /// 100 of them per
    /// client, each ended after 5 minutes without a request; request bodies
    /// of at most 4 MiB; no authentication; readiness at `/healthz`; no
    /// drain delay.
    fn default() -> Self {
        HttpOptions {
            allowed_hosts: None,
            allowed_origins: LOCAL_ORIGINS.iter().map(|o| (*o).to_owned()).collect(),
            max_sessions: 1_000,
            max_sessions_per_client: None,
            idle_timeout: Duration::from_secs(300),
            readiness_path: Some("/healthz".to_owned()),
            drain_delay: Duration::ZERO,
            max_body_bytes: 4 * 1024 * 1024,
            auth: None,
            trusted_proxies: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// The `Host` names (or `host:port`) admitted, for a public endpoint
    /// (loopback names by default, against DNS rebinding).
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// The browser origins admitted (`https://app.example.com`,
    /// `http://localhost:*`); a request with another `Origin` is answered
    /// 403.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// At most `max` sessions at once (≈ 57 KB each: 1,000 hold ≈ 57 MB).
    /// At the cap, a session with no call in flight is ended to make room
    /// (its next request is answered 404, and a conforming client opens a
    /// new session), in this order: the sessions that never made a request
    /// after `initialize` (the `initialized` notification is not one)
    /// before those that did, and among either the one heard from longest
    /// ago. Only when every session has a call in flight is a new one
    /// answered 503 with `Retry-After`.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// At most `max` sessions held by one client (by default a tenth of
    /// [`max_sessions`](HttpOptions::max_sessions), and at least 16 or the
    /// cap itself when it is smaller): the
    /// verified subject when [`bearer_auth`](HttpOptions::bearer_auth) is
    /// set, else the client's IP address (the peer's, or the one a
    /// [trusted proxy](HttpOptions::trusted_proxies) forwarded). At its
    /// share, one of the client's own idle sessions is ended to make room
    /// for its new one, in the order of the cap in all (one that never made
    /// a request after `initialize` first, the oldest of them first); only
    /// when each of its sessions has a call in flight is a new one answered
    /// 429 with `Retry-After`. So one careless client (3,000 abandoned
    /// `initialize`s) uses up its own share, never the others', and its
    /// abandoned sessions end one another, never its session in use.
    pub fn max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = Some(max.max(1));
        self
    }

    /// The proxies (addresses like `10.0.0.7` or networks like
    /// `10.0.0.0/8`) whose forwarded client address is believed: a
    /// request that comes from one is counted for the client its
    /// `Forwarded` (RFC 7239) or `X-Forwarded-For` header names, read from
    /// the right past every trusted hop. Behind a load balancer, without
    /// this, every client has the balancer's address and shares one
    /// client's sessions. A request from any other address is counted for
    /// that address, whatever its headers say. An entry that is neither
    /// fails [`serve_http_with`] with `InvalidInput` naming it. None by
    /// default.
    pub fn trusted_proxies(mut self, proxies: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.trusted_proxies = proxies.into_iter().map(Into::into).collect();
        self
    }

    /// Where the readiness route answers `GET` (`/healthz` by default):
    /// `200 {"status":"ready"}`, or `503 {"status":"shutting down"}` once a
    /// shutdown begins. No authentication, off the MCP path. `None`: no
    /// route.
    pub fn readiness_path(mut self, path: Option<&str>) -> Self {
        self.readiness_path = path.map(str::to_owned);
        self
    }

    /// How long a shutdown keeps accepting connections after readiness
    /// turns "not ready" (new sessions answered 503), so a load balancer's
    /// probe sees it before connections are refused (none by default; a
    /// probe period is usual).
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.drain_delay = delay;
        self
    }

    /// A session with no request for `timeout` ends.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Request bodies of at most `bytes`; a larger one is answered 413
    /// while it streams in, whatever `Content-Length` says.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes.max(1024);
        self
    }

    /// Only callers whose bearer token `auth` accepts; the verified caller
    /// is in each call's [`Context`](toolbox_core::Context) as [`McpCaller`](crate::auth::McpCaller).
    pub fn bearer_auth(mut self, auth: BearerAuth) -> Self {
        self.auth = Some(auth);
        self
    }
}

/// A box served over Streamable HTTP at `/mcp`; stops when dropped, or
/// gracefully with [`shutdown`](HttpServer::shutdown) or
/// [`run_until`](HttpServer::run_until).
pub struct HttpServer {
    address: std::net::SocketAddr,
    /// Ends rmcp's sessions and streams.
    stop: tokio_util::sync::CancellationToken,
    /// Stops accepting connections.
    accepting: tokio_util::sync::CancellationToken,
    state: Arc<ServeState>,
    sessions: Arc<Sessions>,
    manager: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    drain_delay: std::time::Duration,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// Where the server listens; the endpoint is `http://{address}/mcp`.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.address
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// How many sessions the endpoint holds now (never more than
    /// [`HttpOptions::max_sessions`]).
    pub async fn session_count(&self) -> usize {
        self.manager.sessions.read().await.len()
    }

    /// How many calls are in flight now.
    pub fn calls_in_flight(&self) -> usize {
        self.state.calls.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Shuts down gracefully within `deadline`: readiness turns "not
    /// ready" and new sessions are refused (503) at once; after the
    /// [drain delay](HttpOptions::drain_delay) new connections are refused;
    /// calls in flight finish, or at the deadline are cancelled with an
    /// error their clients read ("the server is shutting down …"), never a
    /// dropped connection; then the sessions end and the server task is
    /// awaited.
    pub async fn shutdown(mut self, deadline: std::time::Duration) {
        use std::sync::atomic::Ordering;
        let started = tokio::time::Instant::now();
        self.sessions.draining.store(true, Ordering::SeqCst);
        tracing::info!(target: "toolbox::mcp", ?deadline, calls = self.calls_in_flight(), "shutting down: not ready");
        tokio::time::sleep(self.drain_delay.min(deadline)).await;
        self.accepting.cancel();
        let state = self.state.clone();
        let drained = async move {
            loop {
                let idle = state.idle.notified();
                if state.calls.load(Ordering::SeqCst) == 0 {
                    break;
                }
                idle.await;
            }
        };
        tokio::pin!(drained);
        if tokio::time::timeout_at(started + deadline, &mut drained)
            .await
            .is_err()
        {
            tracing::warn!(target: "toolbox::mcp", calls = self.calls_in_flight(), "shutdown deadline: cancelling the calls in flight");
            self.state.deadline.cancel();
            // The cancelled calls answer their clients before the sessions end.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), &mut drained).await;
        }
        // Let the last answers leave before their streams close.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(std::time::Duration::from_secs(5), task)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        tracing::info!(target: "toolbox::mcp", "shut down");
    }

    /// Serves until `signal` resolves (`tokio::signal::ctrl_c()`, a
    /// SIGTERM stream's `recv()`), then [shuts down](HttpServer::shutdown)
    /// within `deadline`; resolves when the server is down.
    ///
    /// ```no_run
    /// # async fn run(server: toolbox_mcp::server::HttpServer) {
    /// server
    ///     .run_until(tokio::signal::ctrl_c(), std::time::Duration::from_secs(30))
    ///     .await;
    /// # }
    /// ```
    pub async fn run_until<F: std::future::Future>(self, signal: F, deadline: std::time::Duration) {
        let _ = signal.await;
        self.shutdown(deadline).await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.accepting.cancel();
        self.stop.cancel();
    }
}

/// Serves `toolbox` over Streamable HTTP on `address` (use `127.0.0.1:0`
/// for a free local port), as [`serve_http_with`] does with
/// [`HttpOptions::default`]: loopback `Host`s and `Origin`s only, at most
/// 1,000 sessions (100 per client; an idle one makes room), each ended
/// after 5 minutes without a request, readiness at `/healthz`. Sessions and
/// both protocol eras come from rmcp.
pub async fn serve_http<B: ToolBox + 'static>(
    server: McpServer<B>,
    address: impl tokio::net::ToSocketAddrs,
) -> std::io::Result<HttpServer> {
    serve_http_with(server, address, HttpOptions::default()).await
}

/// Serves `toolbox` over Streamable HTTP on `address`, admitting what
/// `options` say: the `Host`s and browser `Origin`s allowed (403 for
/// others), how many sessions in all and per client and for how long (an
/// idle session makes room at the cap; 429 past a client's share), and
/// with [`HttpOptions::bearer_auth`] only callers whose bearer token the
/// verifier accepts (401 with a `WWW-Authenticate` challenge naming the
/// protected-resource metadata, which is served at
/// `/.well-known/oauth-protected-resource[/mcp]`; 403 `insufficient_scope`).
/// The verified caller is in each call's `Context` as [`McpCaller`](crate::auth::McpCaller).
pub async fn serve_http_with<B: ToolBox + 'static>(
    mut server: McpServer<B>,
    address: impl tokio::net::ToSocketAddrs,
    options: HttpOptions,
) -> std::io::Result<HttpServer> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    server
        .check_views()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // A replica takes over its peers' stopped tasks from its start, not
    // from its first task request.
    server.watch_tasks();
    let proxies = super::forwarded::TrustedProxies::parse(
        options.trusted_proxies.iter().map(String::as_str),
    )?;
    let stop = tokio_util::sync::CancellationToken::new();
    let accepting = tokio_util::sync::CancellationToken::new();
    let sessions = Arc::new(Sessions::default());
    // This endpoint's own counts and deadline (a server served twice
    // counts each endpoint apart).
    let state = Arc::new(ServeState::default());
    let _ = state.sessions.set(sessions.clone());
    server.state = state.clone();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.idle_timeout);
    let manager = Arc::new(manager);
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(options.max_body_bytes);
    if let Some(hosts) = &options.allowed_hosts {
        config.allowed_hosts = hosts.clone();
    }
    config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let service: StreamableHttpService<McpServer<B>, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), manager.clone(), config);
    let listener = tokio::net::TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    let mut options = options;
    if let Some(auth) = options.auth.as_mut().filter(|a| a.resource.is_empty()) {
        auth.resource = format!("http://{local}/mcp");
    }
    let metadata_url = options
        .auth
        .as_ref()
        .map(|auth| metadata_url(&auth.resource))
        .unwrap_or_default();
    let gate = Arc::new(Gate {
        manager: manager.clone(),
        max_sessions: options.max_sessions,
        max_per_client: options
            .max_sessions_per_client
            .unwrap_or((options.max_sessions / 10).max(options.max_sessions.min(16))),
        opening: std::sync::atomic::AtomicUsize::new(0),
        auth: options.auth.clone(),
        metadata_url,
        sessions: sessions.clone(),
        readiness: options.readiness_path.clone(),
        proxies,
    });
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(auth) = options.auth {
        let document = Arc::new(auth.metadata());
        let serve = move || {
            let document = document.clone();
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    document.to_string(),
                )
            }
        };
        router = router
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(serve.clone()),
            )
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                axum::routing::get(serve),
            );
    }
    let shutdown = accepting.clone();
    // Answers go out as soon as they are written: without TCP_NODELAY a
    // client that keeps its connection (httpx, reqwest's pool) waits for
    // its own delayed ACK (~40 ms) between the response's head and body.
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let admitted = GatedRouter { router, gate };
        let _ = axum::serve(
            listener,
            axum::ServiceExt::into_make_service_with_connect_info::<std::net::SocketAddr>(admitted),
        )
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await;
    });
    Ok(HttpServer {
        address: local,
        stop,
        accepting,
        state,
        sessions,
        manager,
        drain_delay: options.drain_delay,
        task: Some(task),
    })
}
