//! OAuth 2.1 for `McpToolBox` (feature `oauth`, on rmcp's `auth`): the
//! MCP authorization flow — the server's `401` challenge, its
//! protected-resource metadata (RFC 9728), the authorization server's
//! metadata, a client registration (pre-registered, a client ID metadata
//! document, or dynamic), PKCE, the code exchange and refresh — with the
//! application deciding how the user authorizes: it receives the
//! authorization URL and returns the URL the authorization server
//! redirected back to.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
use toolbox_core::ToolError;

use super::HttpConnection;

/// What the application's authorization step returns: the callback URL
/// (the redirect URI with `code` and `state`), or why it could not.
pub type AuthorizeFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

type Authorize = Arc<dyn Fn(String) -> AuthorizeFuture + Send + Sync>;

/// How `McpToolBox` authorizes with an MCP server that asks for it.
#[derive(Clone)]
pub struct OAuth {
    redirect_uri: String,
    client_name: String,
    scopes: Vec<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    authorize: Authorize,
}

impl OAuth {
    /// Authorization with `redirect_uri` as the client's redirect; for
    /// each authorization, `authorize` gets the URL to send the user to and
    /// returns the URL the user's browser was redirected back to.
    pub fn new<F, Fut>(redirect_uri: impl Into<String>, authorize: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        OAuth {
            redirect_uri: redirect_uri.into(),
            client_name: "toolbox".to_owned(),
            scopes: Vec::new(),
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            authorize: Arc::new(move |url| Box::pin(authorize(url))),
        }
    }

    /// The scopes to ask for (by default, what the server's challenge or
    /// metadata names).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The client's name in a dynamic registration (`toolbox` by default).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client registered with the authorization server beforehand.
    pub fn preregistered(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = client_secret;
        self
    }

    /// The client's ID metadata document (its URL is its client id).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("client_id", &self.client_id)
            .finish()
    }
}

fn failed(step: &str, error: impl std::fmt::Display) -> ToolError {
    ToolError::Transport {
        message: format!("the MCP server's authorization failed at {step}: {error}"),
        source: None,
    }
}

/// Runs the OAuth 2.1 flow `oauth` describes when the server at `url`
/// asks for it (a first request without a token answered `401`): the
/// client that sends the token (refreshed before it expires), or `None`
/// when the server asked for nothing.
pub(crate) async fn authorize(
    url: &str,
    http: &reqwest::Client,
    connection: &HttpConnection,
    oauth: &OAuth,
) -> Result<Option<AuthClient<reqwest::Client>>, ToolError> {
    let Some(challenge) = challenge(http, url, connection).await? else {
        return Ok(None);
    };
    let mut state = OAuthState::new(url, Some(http.clone()))
        .await
        .map_err(|e| failed("discovery", e))?;
    let mut request = AuthorizationRequest::new(oauth.redirect_uri.clone())
        .with_client_name(oauth.client_name.clone())
        .with_challenge(challenge);
    request = if oauth.scopes.is_empty() {
        request.with_initial_scope_selection()
    } else {
        request.with_scopes(oauth.scopes.iter().cloned())
    };
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &oauth.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if let Some(metadata) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(metadata.clone());
    }
    match state.start_authorization(request.clone()).await {
        Ok(()) => {}
        Err(rmcp::transport::auth::AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if legacy_issuer(url, &expected_issuer, &received_issuer) => {
            // A 2025-03-26 server: no protected-resource metadata, its own
            // origin is the authorization base URL, and the metadata it
            // serves there names an issuer under a path of that origin
            // (`http://host/oauth`). rmcp holds the issuer to RFC 8414's
            // exact match (rmcp 3.11 src/transport/auth.rs:2914,
            // `validate_authorization_metadata_issuer`); the 2025-03-26
            // spec predates that rule, so the metadata is taken as the
            // server's own, on its own origin only.
            let metadata = legacy_metadata(http, url, connection).await?;
            let placeholder = OAuthState::new(url, Some(http.clone()))
                .await
                .map_err(|e| failed("discovery", e))?;
            let OAuthState::Unauthorized(mut manager) = std::mem::replace(&mut state, placeholder)
            else {
                return Err(failed("registration", "the authorization did not start"));
            };
            manager.set_metadata(metadata);
            let session = rmcp::transport::auth::AuthorizationSession::new(manager, request)
                .await
                .map_err(|(_, e)| failed("registration", e))?;
            state = OAuthState::Session(session);
        }
        Err(e) => return Err(failed("registration", e)),
    }
    let authorization_url = state
        .get_authorization_url()
        .await
        .map_err(|e| failed("the authorization request", e))?;
    let callback = (oauth.authorize)(authorization_url)
        .await
        .map_err(|e| failed("the user's authorization", e))?;
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| failed("the code exchange", e))?;
    let manager = state
        .into_authorization_manager()
        .ok_or_else(|| failed("the code exchange", "no authorized session"))?;
    Ok(Some(AuthClient::new(http.clone(), manager)))
}

/// Whether an issuer mismatch is a 2025-03-26 server's: metadata found at
/// the MCP server's own origin (the expected issuer is that origin) naming
/// an issuer on the same origin.
fn legacy_issuer(url: &str, expected: &str, received: &str) -> bool {
    let origin = |u: &str| reqwest::Url::parse(u).ok().map(|u| u.origin());
    let (Some(server), Some(expected_origin), Some(received_origin)) =
        (origin(url), origin(expected), origin(received))
    else {
        return false;
    };
    let root = reqwest::Url::parse(expected).is_ok_and(|u| u.path() == "/" || u.path().is_empty());
    root && server == expected_origin && server == received_origin
}

/// The authorization server metadata a 2025-03-26 server serves at its
/// origin's `/.well-known/oauth-authorization-server`.
async fn legacy_metadata(
    http: &reqwest::Client,
    url: &str,
    connection: &HttpConnection,
) -> Result<rmcp::transport::auth::AuthorizationMetadata, ToolError> {
    let mut well_known = reqwest::Url::parse(url).map_err(|e| failed("discovery", e))?;
    well_known.set_path("/.well-known/oauth-authorization-server");
    well_known.set_query(None);
    let response = http
        .get(well_known)
        .headers(connection.header_map()?.into_iter().collect())
        .send()
        .await
        .map_err(|e| failed("discovery", e))?;
    if !response.status().is_success() {
        return Err(failed(
            "discovery",
            format!("the server's metadata answered {}", response.status()),
        ));
    }
    let body = response.bytes().await.map_err(|e| failed("discovery", e))?;
    serde_json::from_slice(&body).map_err(|e| failed("discovery", e))
}

async fn challenge(
    http: &reqwest::Client,
    url: &str,
    connection: &HttpConnection,
) -> Result<Option<String>, ToolError> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "toolbox", "version": env!("CARGO_PKG_VERSION")}}});
    let response = http
        .post(url)
        .headers(connection.header_map()?.into_iter().collect())
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| ToolError::Transport {
            message: "the MCP server could not be reached".to_owned(),
            source: Some(Box::new(e)),
        })?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(Some(
        response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("Bearer")
            .to_owned(),
    ))
}
