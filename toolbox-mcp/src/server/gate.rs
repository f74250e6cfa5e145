//! The gate in front of a served endpoint: the bearer check, the session
//! caps (all clients', each client's) and the readiness route, before rmcp
//! sees a request.

use std::sync::Arc;

use super::sessions::Sessions;
use crate::auth::McpCaller;

/// What the endpoint checks before rmcp sees a request: the bearer token,
/// the session caps (all clients', each client's), readiness.
pub(super) struct Gate {
    pub(super) manager:
        Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    pub(super) max_sessions: usize,
    pub(super) max_per_client: usize,
    /// Requests that may open a session and have not been answered yet:
    /// counted with the sessions, so concurrent ones cannot pass the cap.
    pub(super) opening: std::sync::atomic::AtomicUsize,
    pub(super) auth: Option<crate::auth::BearerAuth>,
    pub(super) metadata_url: String,
    pub(super) sessions: Arc<Sessions>,
    pub(super) readiness: Option<String>,
    /// The proxies whose forwarded client address is believed.
    pub(super) proxies: super::forwarded::TrustedProxies,
}

/// Where the protected-resource metadata of `resource` is (RFC 9728: the
/// well-known path inserted before the resource's path).
pub(super) fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("http", resource));
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource")
    } else {
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource/{path}")
    }
}

/// The router behind the admission checks. A request that needs none
/// (no bearer tokens asked for, and not one that may open a session) goes
/// to the router as it is, with no box and no middleware; the others are
/// checked first ([`admit`]).
#[derive(Clone)]
pub(super) struct GatedRouter {
    pub(super) router: axum::Router,
    pub(super) gate: Arc<Gate>,
}

/// An admitted request's answer: the router's own future, or the checks
/// and then the router's. (The router's future stays inline: boxing it is
/// what this type saves the common request.)
#[allow(clippy::large_enum_variant)]
pub(super) enum GateFuture {
    Direct(
        axum::routing::future::RouteFuture<std::convert::Infallible>,
        Option<Watched>,
    ),
    Checked(
        std::pin::Pin<
            Box<
                dyn std::future::Future<
                        Output = Result<axum::response::Response, std::convert::Infallible>,
                    > + Send,
            >,
        >,
    ),
    Ready(Option<axum::response::Response>),
}

impl std::future::Future for GateFuture {
    type Output = Result<axum::response::Response, std::convert::Infallible>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        // Every variant is `Unpin` (the router's future is, the other is a box).
        match self.get_mut() {
            GateFuture::Direct(future, watched) => {
                let answer = std::task::ready!(std::pin::Pin::new(future).poll(cx));
                if let (Some(watched), Ok(response)) = (watched.take(), &answer) {
                    watched.read(response);
                }
                std::task::Poll::Ready(answer)
            }
            GateFuture::Checked(future) => future.as_mut().poll(cx),
            GateFuture::Ready(response) => std::task::Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(|| crate::auth::refusal(500, None, "polled twice")))),
        }
    }
}

impl tower_service::Service<axum::extract::Request> for GatedRouter {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = GateFuture;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // A router is always ready.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> GateFuture {
        use std::sync::atomic::Ordering;
        let path = request.uri().path();
        if self.gate.readiness.as_deref() == Some(path)
            && request.method() == axum::http::Method::GET
        {
            return GateFuture::Ready(Some(readiness(
                !self.gate.sessions.draining.load(Ordering::SeqCst),
            )));
        }
        let post = request.method() == axum::http::Method::POST;
        let session = request.headers().get("mcp-session-id");
        let watched = session
            .and_then(|v| v.to_str().ok())
            .filter(|id| self.gate.sessions.touch(id) && post)
            .map(|id| Watched {
                sessions: self.gate.sessions.clone(),
                id: id.to_owned(),
            });
        let opens_session = post && session.is_none();
        // The protected-resource metadata is public: it is how a client
        // learns where to get a token.
        let public = path.starts_with("/.well-known/");
        if public || (self.gate.auth.is_none() && !opens_session) {
            return GateFuture::Direct(self.router.call(request), watched);
        }
        let (gate, router) = (self.gate.clone(), self.router.clone());
        GateFuture::Checked(Box::pin(async move {
            let response = admit(gate, router, request, opens_session).await;
            if let Some(watched) = watched {
                watched.read(&response);
            }
            Ok(response)
        }))
    }
}

/// A POST of a session yet to make a request after `initialize`: its
/// answer tells whether it was one (`200`; a notification, such as
/// `initialized`, is answered `202`), and if so the session is noted as
/// used, to be ended only after the sessions that made none.
pub(super) struct Watched {
    sessions: Arc<Sessions>,
    id: String,
}

impl Watched {
    fn read(self, response: &axum::response::Response) {
        if response.status() == axum::http::StatusCode::OK {
            self.sessions.used(&self.id);
        }
    }
}

/// The readiness route's answer.
fn readiness(ready: bool) -> axum::response::Response {
    let (status, text) = if ready {
        (axum::http::StatusCode::OK, r#"{"status":"ready"}"#)
    } else {
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            r#"{"status":"shutting down"}"#,
        )
    };
    let mut response = axum::response::Response::new(axum::body::Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Who a request is from, for the per-client cap: the verified subject,
/// else the client's IP address (the peer's, or the one a trusted proxy
/// forwarded).
fn client_of(gate: &Gate, request: &axum::extract::Request) -> String {
    if let Some(caller) = request.extensions().get::<McpCaller>() {
        return format!("subject:{}", caller.subject);
    }
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| gate.proxies.client(info.0.ip(), request.headers()))
        .unwrap_or_default()
}

async fn admit(
    gate: Arc<Gate>,
    mut router: axum::Router,
    mut request: axum::extract::Request,
    opens_session: bool,
) -> axum::response::Response {
    use rmcp::transport::streamable_http_server::session::SessionManager as _;
    use std::sync::atomic::Ordering;
    use tower_service::Service as _;
    let mut next = |request| {
        let answer = router.call(request);
        async move {
            match answer.await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        }
    };
    if let Some(auth) = &gate.auth {
        let authorization = request
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match crate::auth::authenticate(auth, &gate.metadata_url, authorization.as_deref()).await {
            Ok(caller) => {
                request.extensions_mut().insert(caller);
            }
            Err(refused) => return refused,
        }
    }
    if !opens_session {
        return next(request).await;
    }
    if gate.sessions.draining.load(Ordering::SeqCst) {
        return crate::auth::refusal_after(
            503,
            1,
            "the server is shutting down; connect again (another instance will answer)",
        );
    }
    let client = client_of(&gate, &request);
    {
        let live = gate.manager.sessions.read().await;
        gate.sessions.retain_live(|id| live.contains_key(id));
    }
    while gate.sessions.held_by(&client) >= gate.max_per_client {
        // The client's own idle session used longest ago makes room: a
        // client that abandons sessions uses up its own share only.
        let Some(id) = gate.sessions.evict_idle_of(&client) else {
            tracing::warn!(target: "toolbox::mcp", client = %toolbox_core::args::echo(&client), max = gate.max_per_client, "a new session was refused: the client holds its share, each with a call in flight");
            return crate::auth::refusal_after(
                429,
                30,
                &format!(
                    "this client holds {} sessions, its share of this server, each with a call in flight; wait for one to finish, or end one (DELETE)",
                    gate.max_per_client
                ),
            );
        };
        tracing::debug!(target: "toolbox::mcp", client = %toolbox_core::args::echo(&client), "the client's idle session used longest ago was ended to make room in its share");
        let _ = gate.manager.close_session(&Arc::from(id.as_str())).await;
    }
    let opening = gate.opening.fetch_add(1, Ordering::SeqCst);
    while gate.manager.sessions.read().await.len() + opening >= gate.max_sessions {
        // Room is made: the idle session used longest ago ends (its next
        // request is answered 404, and its client opens a new one).
        let Some(id) = gate.sessions.evict_idle() else {
            gate.opening.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(target: "toolbox::mcp", max = gate.max_sessions, "a new session was refused: every session has a call in flight");
            return crate::auth::refusal_after(
                503,
                5,
                "the server holds as many sessions as it may, each with a call in flight; try again shortly",
            );
        };
        tracing::info!(target: "toolbox::mcp", max = gate.max_sessions, "the idle session used longest ago was ended to make room");
        let _ = gate.manager.close_session(&Arc::from(id.as_str())).await;
    }
    let response = next(request).await;
    gate.opening.fetch_sub(1, Ordering::SeqCst);
    if let Some(id) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        gate.sessions.opened(id.to_owned(), client);
    }
    response
}
