//! Bearer tokens checked as JWTs (feature `jwt`): the keys (fixed or read
//! from a JWKS URL), the validation, the caller the claims name.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{McpCaller, Rejected, TokenVerifier, VerifyFuture};

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
/// use toolbox_mcp::auth::{JwtVerifier, TokenVerifier};
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
pub struct JwtVerifier {
    keys: Keys,
    validation: jsonwebtoken::Validation,
}

/// One verification key and the `kid` it is published under.
type Key = (Option<String>, jsonwebtoken::DecodingKey);

enum Keys {
    Given(Vec<Key>),
    Fetched(Box<Jwks>),
}

/// A JWKS URL and what was last fetched from it.
struct Jwks {
    url: reqwest::Url,
    connection: crate::connection::HttpConnection,
    min_refetch: Duration,
    max_age: Duration,
    cache: tokio::sync::Mutex<Option<(std::time::Instant, Arc<Vec<Key>>)>>,
}

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

#[cfg(test)]
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
