//! Authorization both ways: a served endpoint admits only callers with a
//! bearer token its verifier accepts (RFC 6750, the protected-resource
//! metadata of RFC 9728 at the well-known path), JWTs checked by
#![cfg_attr(feature = "jwt", doc = "[`JwtVerifier`]")]
#![cfg_attr(not(feature = "jwt"), doc = "`JwtVerifier`")]
//! (feature `jwt`), and a client signs in to a server with
#![cfg_attr(feature = "oauth", doc = "[`OAuth`]")]
#![cfg_attr(not(feature = "oauth"), doc = "`OAuth`")]
//! (feature `oauth`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use toolbox_core::{Context, FromContext, ToolError};

#[cfg(feature = "jwt")]
mod jwt;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;

pub use crate::connection::HttpConnection;
#[cfg(feature = "jwt")]
pub use jwt::JwtVerifier;
#[cfg(feature = "oauth")]
pub use oauth::{AuthorizeFuture, OAuth};

/// The verified caller of a served call, from its bearer token:
/// injectable into a tool (`#[inject] caller: McpCaller`). A call without
/// authentication has none, and the tool is told so.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpCaller {
    /// Who the token is for (a JWT's `sub`).
    pub subject: String,
    /// What the token allows.
    pub scopes: Vec<String>,
    /// Everything else the verifier read from the token.
    pub claims: Map<String, Value>,
}

impl FromContext for McpCaller {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<McpCaller>()
            .cloned()
            .ok_or_else(|| ToolError::Failed {
                message: "this tool needs an authenticated caller".to_owned(),
                retryable: false,
                source: Some(
                    "the context has no `McpCaller`: the endpoint takes no bearer tokens".into(),
                ),
            })
    }
}

/// A verifier's answer to a token it does not accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected(pub String);

/// A future a verifier returns.
pub type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<McpCaller, Rejected>> + Send + 'a>>;

/// Checks a bearer token and says who it is for. Closures
/// `Fn(&str) -> Result<McpCaller, Rejected>` are verifiers.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies one token (its signature, audience, expiry: the verifier's
    /// job).
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

impl<F> TokenVerifier for F
where
    F: Fn(&str) -> Result<McpCaller, Rejected> + Send + Sync + 'static,
{
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        let answer = self(token);
        Box::pin(async move { answer })
    }
}

/// Bearer-token authentication for a served endpoint.
#[derive(Clone)]
pub struct BearerAuth {
    pub(crate) verifier: Arc<dyn TokenVerifier>,
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes: Vec<String>,
}

impl BearerAuth {
    /// Tokens checked by `verifier`, for the endpoint at `resource` (its
    /// public URL, as the metadata document and the tokens' audience name
    /// it), issued by `authorization_servers`.
    pub fn new(
        verifier: impl TokenVerifier,
        resource: impl Into<String>,
        authorization_servers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        BearerAuth {
            verifier: Arc::new(verifier),
            resource: resource.into(),
            authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
            scopes: Vec::new(),
        }
    }

    /// Tokens checked by `verify`, a closure taking the token (`|token|
    /// …`, no annotations needed), for the endpoint's own URL (filled in
    /// when it binds; [`resource`](BearerAuth::resource) to name another).
    ///
    /// ```
    /// use toolbox_mcp::auth::{BearerAuth, McpCaller, Rejected};
    /// let auth = BearerAuth::verify_with(|token| match token {
    ///     "alice-secret" => Ok(McpCaller { subject: "alice".into(), ..McpCaller::default() }),
    ///     _ => Err(Rejected("unknown token".into())),
    /// });
    /// # let _ = auth;
    /// ```
    pub fn verify_with<F>(verify: F) -> Self
    where
        F: Fn(&str) -> Result<McpCaller, Rejected> + Send + Sync + 'static,
    {
        BearerAuth::new(verify, String::new(), Vec::<String>::new())
    }

    /// One static token shared by every caller (a deployment secret): a
    /// request that sends `Authorization: Bearer {token}` is admitted as
    /// the subject `shared-token`; the comparison takes the same time
    /// however much of the token matches.
    ///
    /// ```
    /// use toolbox_mcp::{auth::BearerAuth, server::HttpOptions};
    /// let options = HttpOptions::default().bearer_auth(BearerAuth::shared_token("s3cret"));
    /// # let _ = options;
    /// ```
    pub fn shared_token(token: impl Into<String>) -> Self {
        let token: String = token.into();
        BearerAuth::verify_with(move |sent: &str| {
            if constant_time_eq(sent.as_bytes(), token.as_bytes()) {
                Ok(McpCaller {
                    subject: "shared-token".to_owned(),
                    ..McpCaller::default()
                })
            } else {
                Err(Rejected("not the shared token".to_owned()))
            }
        })
    }

    /// The endpoint's public URL, as the metadata document and the
    /// tokens' audience name it (the bound address by default).
    pub fn resource(mut self, url: impl Into<String>) -> Self {
        self.resource = url.into();
        self
    }

    /// Scopes every caller needs; a token without them is answered `403
    /// insufficient_scope` naming them.
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The protected-resource metadata document (RFC 9728).
    pub(crate) fn metadata(&self) -> Value {
        serde_json::json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
        })
    }
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths
/// only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut difference = a.len() ^ b.len();
    for (i, byte) in a.iter().enumerate() {
        difference |= usize::from(byte ^ b.get(i % b.len().max(1)).copied().unwrap_or(0));
    }
    difference == 0
}

/// The answer to a request the endpoint does not admit, with a
/// `Retry-After` (seconds) where waiting helps.
pub(crate) fn refusal_after(
    status: u16,
    retry_after: u64,
    message: &str,
) -> axum::response::Response {
    let mut response = refusal(status, None, message);
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from(retry_after),
    );
    response
}

/// The answer to a request the endpoint does not admit.
pub(crate) fn refusal(
    status: u16,
    challenge: Option<String>,
    message: &str,
) -> axum::response::Response {
    let mut response = axum::response::Response::new(axum::body::Body::from(
        serde_json::json!({"error": message}).to_string(),
    ));
    *response.status_mut() =
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::FORBIDDEN);
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    if let Some(value) = challenge.and_then(|c| axum::http::HeaderValue::from_str(&c).ok()) {
        headers.insert(axum::http::header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Checks a request's bearer token: the caller, or the refusal the spec
/// asks for (401 with a challenge naming the metadata document, 403
/// `insufficient_scope` naming the scopes).
pub(crate) async fn authenticate(
    auth: &BearerAuth,
    metadata_url: &str,
    authorization: Option<&str>,
) -> Result<McpCaller, axum::response::Response> {
    let scope = if auth.scopes.is_empty() {
        String::new()
    } else {
        format!(", scope=\"{}\"", auth.scopes.join(" "))
    };
    let challenge = |error: &str| {
        let error = if error.is_empty() {
            String::new()
        } else {
            format!(", error=\"{error}\"")
        };
        format!("Bearer resource_metadata=\"{metadata_url}\"{scope}{error}")
    };
    let Some(token) = authorization.and_then(|value| {
        value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }) else {
        return Err(refusal(
            401,
            Some(challenge("")),
            "a bearer token is required",
        ));
    };
    let caller = match auth.verifier.verify(token).await {
        Ok(caller) => caller,
        Err(Rejected(why)) => {
            tracing::info!(target: "toolbox::mcp", %why, "bearer token refused");
            return Err(refusal(
                401,
                Some(challenge("invalid_token")),
                "the bearer token is not accepted",
            ));
        }
    };
    let missing: Vec<&String> = auth
        .scopes
        .iter()
        .filter(|s| !caller.scopes.contains(s))
        .collect();
    if !missing.is_empty() {
        return Err(refusal(
            403,
            Some(challenge("insufficient_scope")),
            &format!(
                "the token lacks the scope(s) {}",
                missing
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(caller)
}
