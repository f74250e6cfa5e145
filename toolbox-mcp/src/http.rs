//! What a served Streamable HTTP endpoint admits: the `Origin` a browser
//! sends (the spec's MUST), how many sessions it holds and for how long,
//! and, when the application says so, only callers with a bearer token its
//! verifier accepts (RFC 6750), with the protected-resource metadata
//! document (RFC 9728) at the well-known path.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use toolbox_core::{Context, FromContext, ToolError};

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
    /// use toolbox_mcp::{BearerAuth, McpCaller, Rejected};
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
    /// use toolbox_mcp::{BearerAuth, HttpOptions};
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

/// How a served endpoint admits requests; [`HttpOptions::default`] is what
/// [`serve_http`](crate::serve_http) uses.
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
}

/// The origins a local endpoint admits by default: loopback pages only.
const LOCAL_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

impl Default for HttpOptions {
    /// Loopback `Host`s and `Origin`s only (a request without `Origin`, as
    /// non-browser clients send, passes); at most 1,000 sessions (the idle
    /// one used longest ago makes room for a new one), 100 of them per
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
    /// At the cap, the session used longest ago that has no call in flight
    /// is ended to make room (its next request is answered 404, and a
    /// conforming client opens a new session); only when every session
    /// has a call in flight is a new one answered 503 with `Retry-After`.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// At most `max` sessions held by one client (by default a tenth of
    /// [`max_sessions`](HttpOptions::max_sessions), and at least 16 or the
    /// cap itself when it is smaller): the
    /// verified subject when [`bearer_auth`](HttpOptions::bearer_auth) is
    /// set, else the peer's IP address. A session past it is answered 429
    /// with `Retry-After`. Behind a proxy every client has the proxy's
    /// address: authenticate, or raise this.
    pub fn max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = Some(max.max(1));
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
    /// is in each call's [`Context`] as [`McpCaller`].
    pub fn bearer_auth(mut self, auth: BearerAuth) -> Self {
        self.auth = Some(auth);
        self
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

/// Bearer tokens checked as JWTs (feature `jwt`, on `jsonwebtoken`):
/// signature by one of the keys, audience, issuer and expiry. The caller's
/// subject is `sub`, its scopes `scope` (space-separated) or `scp`.
///
/// The keys are given ([`new`](JwtVerifier::new),
/// [`hs256`](JwtVerifier::hs256), [`from_jwks`](JwtVerifier::from_jwks))
/// or fetched from the authorization server's JWKS URL
/// ([`from_jwks_url`](JwtVerifier::from_jwks_url)): on the first token,
/// again when a token names a key (`kid`) the set does not hold (key
/// rotation; at most once per [`min_refetch_interval`], 10 s by default),
/// and when the set is older than [`max_key_age`] (15 minutes by default).
///
/// [`min_refetch_interval`]: JwtVerifier::min_refetch_interval
/// [`max_key_age`]: JwtVerifier::max_key_age
///
/// ```
/// use toolbox_mcp::{JwtVerifier, TokenVerifier};
/// let verifier = JwtVerifier::hs256(b"a secret of the deployment", "https://tools.example.com/mcp", "https://auth.example.com");
/// let remote = JwtVerifier::from_jwks_url(
///     "https://auth.example.com/.well-known/jwks.json",
///     jsonwebtoken::Algorithm::RS256,
///     "https://tools.example.com/mcp",
///     "https://auth.example.com",
/// )?;
/// # let _ = (&verifier, &remote);
/// # Ok::<(), String>(())
/// ```
#[cfg(feature = "jwt")]
pub struct JwtVerifier {
    keys: Keys,
    validation: jsonwebtoken::Validation,
}

/// One verification key and the `kid` it is published under.
#[cfg(feature = "jwt")]
type Key = (Option<String>, jsonwebtoken::DecodingKey);

#[cfg(feature = "jwt")]
enum Keys {
    Given(Vec<Key>),
    Fetched(Box<Jwks>),
}

/// A JWKS URL and what was last fetched from it.
#[cfg(feature = "jwt")]
struct Jwks {
    url: reqwest::Url,
    connection: crate::connection::HttpConnection,
    min_refetch: Duration,
    max_age: Duration,
    cache: tokio::sync::Mutex<Option<(std::time::Instant, Arc<Vec<Key>>)>>,
}

#[cfg(feature = "jwt")]
fn keys_of(jwks: &Value) -> Result<Vec<Key>, String> {
    let set: jsonwebtoken::jwk::JwkSet =
        serde_json::from_value(jwks.clone()).map_err(|e| format!("not a JWKS document: {e}"))?;
    set.keys
        .iter()
        .map(|jwk| {
            jsonwebtoken::DecodingKey::from_jwk(jwk)
                .map(|key| (jwk.common.key_id.clone(), key))
                .map_err(|e| format!("a key of the JWKS document cannot be used: {e}"))
        })
        .collect()
}

#[cfg(feature = "jwt")]
impl Jwks {
    async fn fetch(&self) -> Result<Vec<Key>, String> {
        let failed = |why: String| format!("the JWKS at {} cannot be fetched: {why}", self.url);
        let client = self
            .connection
            .client()
            .map_err(|e| failed(e.to_string()))?;
        let mut request = client
            .get(self.url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        for (name, value) in self
            .connection
            .header_map()
            .map_err(|e| failed(e.to_string()))?
        {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            return Err(failed(format!("HTTP {}", response.status())));
        }
        let body = response.bytes().await.map_err(|e| failed(e.to_string()))?;
        let document: Value = serde_json::from_slice(&body)
            .map_err(|e| failed(format!("the answer is not JSON: {e}")))?;
        keys_of(&document).map_err(failed)
    }

    /// The keys to check a token naming `kid` with: the cached set, or a
    /// fresh one when the cache is empty, too old, or lacks `kid` (and was
    /// not fetched a moment ago).
    async fn keys(&self, kid: Option<&str>) -> Result<Arc<Vec<Key>>, String> {
        let mut cache = self.cache.lock().await;
        let stale = match &*cache {
            None => true,
            Some((at, keys)) => {
                let age = at.elapsed();
                let unknown =
                    kid.is_some_and(|kid| !keys.iter().any(|(id, _)| id.as_deref() == Some(kid)));
                age >= self.max_age || (unknown && age >= self.min_refetch)
            }
        };
        if stale {
            match self.fetch().await {
                Ok(keys) => *cache = Some((std::time::Instant::now(), Arc::new(keys))),
                // A set fetched before still serves while the URL fails.
                Err(why) if cache.is_none() => return Err(why),
                Err(why) => {
                    tracing::warn!(target: "toolbox::mcp", %why, "keeping the JWKS fetched before")
                }
            }
        }
        Ok(cache
            .as_ref()
            .map(|(_, keys)| keys.clone())
            .unwrap_or_default())
    }
}

#[cfg(feature = "jwt")]
impl JwtVerifier {
    /// Tokens signed with `algorithm` by one of `keys`, for `audience`
    /// (the endpoint's URL), from `issuer`; `exp` required.
    pub fn new(
        keys: impl IntoIterator<Item = jsonwebtoken::DecodingKey>,
        algorithm: jsonwebtoken::Algorithm,
        audience: &str,
        issuer: &str,
    ) -> Self {
        JwtVerifier {
            keys: Keys::Given(keys.into_iter().map(|key| (None, key)).collect()),
            validation: validation(algorithm, audience, issuer),
        }
    }

    /// HS256 tokens with a shared secret.
    pub fn hs256(secret: &[u8], audience: &str, issuer: &str) -> Self {
        JwtVerifier::new(
            [jsonwebtoken::DecodingKey::from_secret(secret)],
            jsonwebtoken::Algorithm::HS256,
            audience,
            issuer,
        )
    }

    /// Tokens signed by a key of a JWKS document (`{"keys": [..]}`, as an
    /// authorization server publishes it, fetched by the application).
    pub fn from_jwks(
        jwks: &Value,
        algorithm: jsonwebtoken::Algorithm,
        audience: &str,
        issuer: &str,
    ) -> Result<Self, String> {
        Ok(JwtVerifier {
            keys: Keys::Given(keys_of(jwks)?),
            validation: validation(algorithm, audience, issuer),
        })
    }

    /// Tokens signed by a key the authorization server publishes at `url`
    /// (its `jwks_uri`), fetched over https (http only to a loopback
    /// address) when tokens need it; see the type's docs. Refused when
    /// `url` is not such a URL.
    pub fn from_jwks_url(
        url: &str,
        algorithm: jsonwebtoken::Algorithm,
        audience: &str,
        issuer: &str,
    ) -> Result<Self, String> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| format!("the JWKS URL `{url}` is not a URL: {e}"))?;
        let host = parsed.host_str().unwrap_or_default();
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if parsed.scheme() != "https" && !(parsed.scheme() == "http" && loopback) {
            return Err(format!(
                "the JWKS URL `{url}` must be https (http only to a loopback address)"
            ));
        }
        Ok(JwtVerifier {
            keys: Keys::Fetched(Box::new(Jwks {
                url: parsed,
                connection: crate::connection::HttpConnection::default(),
                min_refetch: Duration::from_secs(10),
                max_age: Duration::from_secs(15 * 60),
                cache: tokio::sync::Mutex::new(None),
            })),
            validation: validation(algorithm, audience, issuer),
        })
    }

    /// How the JWKS URL is reached (roots to trust beyond the system's,
    /// headers); the default connection otherwise.
    pub fn jwks_connection(mut self, connection: crate::connection::HttpConnection) -> Self {
        if let Keys::Fetched(jwks) = &mut self.keys {
            jwks.connection = connection;
        }
        self
    }

    /// The least time between two fetches of the JWKS URL for tokens that
    /// name an unknown key (so a stream of forged `kid`s cannot flood the
    /// authorization server).
    pub fn min_refetch_interval(mut self, interval: Duration) -> Self {
        if let Keys::Fetched(jwks) = &mut self.keys {
            jwks.min_refetch = interval;
        }
        self
    }

    /// How long a fetched key set is used before it is fetched again.
    pub fn max_key_age(mut self, age: Duration) -> Self {
        if let Keys::Fetched(jwks) = &mut self.keys {
            jwks.max_age = age;
        }
        self
    }

    fn check(&self, token: &str, keys: &[Key]) -> Result<McpCaller, Rejected> {
        let kid = jsonwebtoken::decode_header(token)
            .map_err(|e| Rejected(e.to_string()))?
            .kid;
        let mut last = Rejected("no key to check the token with".to_owned());
        // A token naming its key is checked with that key (or, if the set
        // names none, with every key).
        let named = keys
            .iter()
            .filter(|(id, _)| kid.is_none() || id.is_none() || id == &kid);
        for (_, key) in named {
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &self.validation) {
                Ok(data) => return Ok(caller_of(data.claims)),
                Err(error) => last = Rejected(error.to_string()),
            }
        }
        Err(last)
    }
}

#[cfg(feature = "jwt")]
fn validation(
    algorithm: jsonwebtoken::Algorithm,
    audience: &str,
    issuer: &str,
) -> jsonwebtoken::Validation {
    let mut validation = jsonwebtoken::Validation::new(algorithm);
    validation.set_audience(&[audience]);
    validation.set_issuer(&[issuer]);
    validation
}

#[cfg(feature = "jwt")]
fn caller_of(claims: Map<String, Value>) -> McpCaller {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let scopes = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => scope.split_whitespace().map(str::to_owned).collect(),
        (_, Some(Value::Array(scp))) => scp
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    McpCaller {
        subject,
        scopes,
        claims,
    }
}

#[cfg(feature = "jwt")]
impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            match &self.keys {
                Keys::Given(keys) => self.check(token, keys),
                Keys::Fetched(jwks) => {
                    let kid = jsonwebtoken::decode_header(token)
                        .map_err(|e| Rejected(e.to_string()))?
                        .kid;
                    let keys = jwks.keys(kid.as_deref()).await.map_err(Rejected)?;
                    self.check(token, &keys)
                }
            }
        })
    }
}

#[cfg(all(test, feature = "jwt"))]
mod tests {
    use super::*;

    fn token(claims: Value) -> String {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::default(),
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(b"secret"),
        )
        .unwrap()
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    #[tokio::test]
    async fn a_jwt_is_checked_for_signature_audience_issuer_and_expiry() {
        let verifier = JwtVerifier::hs256(
            b"secret",
            "https://tools.example/mcp",
            "https://auth.example",
        );
        let good = serde_json::json!({"sub": "ada", "aud": "https://tools.example/mcp", "iss": "https://auth.example",
            "exp": now() + 600, "scope": "tools:call tools:list"});
        let caller = verifier.verify(&token(good.clone())).await.unwrap();
        assert_eq!(caller.subject, "ada");
        assert_eq!(caller.scopes, ["tools:call", "tools:list"]);
        let mut other_audience = good.clone();
        other_audience["aud"] = "https://elsewhere.example".into();
        assert_eq!(
            verifier.verify(&token(other_audience)).await.unwrap_err().0,
            "InvalidAudience"
        );
        let mut expired = good.clone();
        expired["exp"] = (now() - 3_600).into();
        assert_eq!(
            verifier.verify(&token(expired)).await.unwrap_err().0,
            "ExpiredSignature"
        );
        let mut other_issuer = good.clone();
        other_issuer["iss"] = "https://forger.example".into();
        assert_eq!(
            verifier.verify(&token(other_issuer)).await.unwrap_err().0,
            "InvalidIssuer"
        );
        let forged = jsonwebtoken::encode(
            &jsonwebtoken::Header::default(),
            &good,
            &jsonwebtoken::EncodingKey::from_secret(b"not the secret"),
        )
        .unwrap();
        assert_eq!(
            verifier.verify(&forged).await.unwrap_err().0,
            "InvalidSignature"
        );
    }

    /// A JWKS endpoint on 127.0.0.1 whose document the test swaps, counting
    /// the fetches.
    async fn jwks_server(
        document: Arc<std::sync::Mutex<Value>>,
        fetches: Arc<std::sync::atomic::AtomicUsize>,
    ) -> String {
        let router = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let document = document.lock().unwrap().to_string();
                fetches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move { document }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{address}/jwks.json")
    }

    fn signed(kid: &str, secret: &[u8], claims: &Value) -> String {
        let header = jsonwebtoken::Header {
            kid: Some(kid.to_owned()),
            ..Default::default()
        };
        jsonwebtoken::encode(
            &header,
            claims,
            &jsonwebtoken::EncodingKey::from_secret(secret),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn keys_come_from_the_jwks_url_and_a_rotated_key_is_fetched_again() {
        let first = serde_json::json!({"keys": [{"kty": "oct", "kid": "first", "alg": "HS256",
            "k": "Zmlyc3Qta2V5LTAxMjM0NTY3ODlhYmNkZWY"}]});
        let second = serde_json::json!({"keys": [{"kty": "oct", "kid": "second", "alg": "HS256",
            "k": "c2Vjb25kLWtleS0wMTIzNDU2Nzg5YWJjZGVm"}]});
        let document = Arc::new(std::sync::Mutex::new(first));
        let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let url = jwks_server(document.clone(), fetches.clone()).await;
        let verifier = JwtVerifier::from_jwks_url(
            &url,
            jsonwebtoken::Algorithm::HS256,
            "https://tools.example/mcp",
            "https://auth.example",
        )
        .unwrap()
        .min_refetch_interval(Duration::ZERO);
        let claims = serde_json::json!({"sub": "ada", "aud": "https://tools.example/mcp",
            "iss": "https://auth.example", "exp": now() + 600, "scope": "tools:call"});
        let count = || fetches.load(std::sync::atomic::Ordering::SeqCst);

        let token = signed("first", b"first-key-0123456789abcdef", &claims);
        assert_eq!(verifier.verify(&token).await.unwrap().subject, "ada");
        assert_eq!(
            verifier.verify(&token).await.unwrap().scopes,
            ["tools:call"]
        );
        assert_eq!(count(), 1, "a known key is not fetched again");

        // The authorization server rotates its key: a token naming the new
        // one makes the verifier fetch the set again.
        *document.lock().unwrap() = second;
        let rotated = signed("second", b"second-key-0123456789abcdef", &claims);
        assert_eq!(verifier.verify(&rotated).await.unwrap().subject, "ada");
        assert_eq!(count(), 2);
        // A token signed with another secret under a known kid is refused
        // without a fetch.
        let forged = signed("second", b"not-the-key-0123456789abcde", &claims);
        assert_eq!(
            verifier.verify(&forged).await.unwrap_err().0,
            "InvalidSignature"
        );
        assert_eq!(count(), 2);
    }

    #[tokio::test]
    async fn an_unreachable_or_insecure_jwks_url_is_named_in_the_refusal() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        drop(listener);
        let verifier = JwtVerifier::from_jwks_url(
            &url,
            jsonwebtoken::Algorithm::HS256,
            "https://tools.example/mcp",
            "https://auth.example",
        )
        .unwrap();
        let claims = serde_json::json!({"sub": "ada", "exp": now() + 600});
        let why = verifier
            .verify(&signed("a", b"secret", &claims))
            .await
            .unwrap_err()
            .0;
        assert!(
            why.starts_with(&format!("the JWKS at {url} cannot be fetched: ")),
            "{why}"
        );
        let refused = JwtVerifier::from_jwks_url(
            "http://auth.example.com/jwks.json",
            jsonwebtoken::Algorithm::RS256,
            "a",
            "b",
        )
        .err()
        .unwrap();
        assert_eq!(
            refused,
            "the JWKS URL `http://auth.example.com/jwks.json` must be https (http only to a loopback address)"
        );
    }
}
