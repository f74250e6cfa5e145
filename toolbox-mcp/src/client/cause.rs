//! What went wrong under an rmcp error, in words a user can act on: the
//! credentials refused (with the server's challenge), a connection
//! refused at `host:port`, an HTTP status at the URL. rmcp keeps the
//! transport's error in fields that are not `source()`s
//! (`ClientInitializeError::TransportError`, `StreamableHttpError::Client`),
//! so the walk steps into them by type; its type names never reach a text.

use std::error::Error as StdError;
use std::fmt;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
};
use toolbox_core::{BoxError, ToolError};

use super::shown_url;

/// Every error under `error`, itself first, through rmcp's hidden fields.
fn causes<'e>(error: &'e (dyn StdError + 'static)) -> Vec<&'e (dyn StdError + 'static)> {
    let mut out = Vec::new();
    let mut cause = Some(error);
    while let Some(current) = cause {
        out.push(current);
        if out.len() > 32 {
            break;
        }
        cause = if let Some(ClientInitializeError::TransportError { error, .. }) =
            current.downcast_ref::<ClientInitializeError>()
        {
            Some(error as &(dyn StdError + 'static))
        } else if let Some(ServiceError::TransportSend(error)) =
            current.downcast_ref::<ServiceError>()
        {
            Some(error as &(dyn StdError + 'static))
        } else if let Some(StreamableHttpError::Client(error)) =
            current.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            Some(error as &(dyn StdError + 'static))
        } else {
            current.source()
        };
    }
    out
}

/// What an authorization failure asked for: the kind and the server's
/// `WWW-Authenticate` challenge.
fn auth_failure(error: &(dyn StdError + 'static)) -> Option<(&'static str, String)> {
    causes(error).into_iter().find_map(|current| {
        if let Some(required) = current.downcast_ref::<AuthRequiredError>() {
            return Some((
                "refused the credentials",
                required.www_authenticate_header.clone(),
            ));
        }
        current
            .downcast_ref::<InsufficientScopeError>()
            .map(|scope| {
                (
                    "requires more scopes than the credentials carry",
                    scope.www_authenticate_header.clone(),
                )
            })
    })
}

/// The cause under a transport failure, said plainly: `connection refused
/// at 127.0.0.1:9`, `HTTP 404 at http://…/ (is the path `/mcp`?)`, a
/// timeout, an untrusted certificate; else the deepest cause's own words.
/// `origin` stands for the URL where the error carries none.
fn transport_cause(error: &(dyn StdError + 'static), origin: Option<&str>) -> String {
    let chain = causes(error);
    let url = chain
        .iter()
        .find_map(|c| {
            c.downcast_ref::<reqwest::Error>()
                .and_then(reqwest::Error::url)
                .map(|u| u.to_string())
        })
        .or_else(|| origin.map(str::to_owned));
    let at = |url: &Option<String>| -> String {
        match url.as_deref().map(url::Url::parse) {
            Some(Ok(u)) => format!(
                "{}:{}",
                u.host_str().unwrap_or_default(),
                u.port_or_known_default().unwrap_or_default()
            ),
            _ => "its address".to_owned(),
        }
    };
    for current in &chain {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return format!("connection refused at {}", at(&url))
                }
                std::io::ErrorKind::ConnectionReset => {
                    return format!("the connection to {} was reset", at(&url))
                }
                _ => {}
            }
        }
        if let Some(status) = current.downcast_ref::<HttpStatusError>() {
            return http_status(status.status, url.as_deref());
        }
        if let Some(http) = current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            match http {
                StreamableHttpError::UnexpectedServerResponse(text) => {
                    if let Some(code) = text
                        .strip_prefix("HTTP ")
                        .and_then(|rest| rest.get(..3))
                        .and_then(|code| code.parse::<u16>().ok())
                    {
                        return http_status(code, url.as_deref());
                    }
                }
                StreamableHttpError::SessionExpired => {
                    return "the server no longer knows the session (HTTP 404): it restarted or let the session expire".to_owned()
                }
                StreamableHttpError::UnexpectedContentType(kind) => {
                    return format!(
                        "the server answered with content type {} where MCP sends JSON or an event stream: is the URL an MCP endpoint?",
                        kind.as_deref().unwrap_or("(none)")
                    )
                }
                _ => {}
            }
        }
        if let Some(request) = current.downcast_ref::<reqwest::Error>() {
            if request.is_timeout() {
                return format!("the request to {} timed out", at(&url));
            }
            if let Some(status) = request.status() {
                return http_status(status.as_u16(), url.as_deref());
            }
        }
        let text = current.to_string();
        if text.contains("certificate") || text.contains("UnknownIssuer") {
            return format!(
                "the server's TLS certificate is not trusted ({text}); trust its root with `.trust_pem(..)`"
            );
        }
    }
    if let Some(request) = chain
        .iter()
        .find_map(|c| c.downcast_ref::<reqwest::Error>())
    {
        if request.is_connect() {
            let deepest = chain.last().map(|c| c.to_string()).unwrap_or_default();
            return format!("could not connect to {}: {deepest}", at(&url));
        }
    }
    match chain.last() {
        Some(deepest) if !deepest.to_string().contains("rmcp::") => {
            toolbox_core::args::echo(&deepest.to_string()).into_owned()
        }
        _ => "the connection ended".to_owned(),
    }
}

fn http_status(code: u16, url: Option<&str>) -> String {
    let at = url
        .map(shown_url)
        .map(|u| format!(" at {u}"))
        .unwrap_or_default();
    match code {
        404 => format!(
            "HTTP 404{at}: no MCP endpoint there; is the path right (most servers serve `/mcp`)?"
        ),
        405 => format!("HTTP 405{at}: the URL does not take MCP's POST; is it the MCP endpoint?"),
        429 => format!("HTTP 429{at}: the server is refusing requests for now (rate limit)"),
        code if code >= 500 => format!("HTTP {code}{at}: the server failed"),
        code => format!("HTTP {code}{at}"),
    }
}

/// An rmcp error kept for the operator's `{:?}`, shown by its plain cause
/// (rmcp's own texts name its generic types).
struct Cause {
    text: String,
    inner: BoxError,
}

impl Cause {
    fn new(inner: impl StdError + Send + Sync + 'static, origin: Option<&str>) -> Self {
        let text = transport_cause(&inner, origin);
        Cause {
            text,
            inner: Box::new(inner),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl StdError for Cause {}

/// The error for a refused authorization, naming the challenge.
fn unauthorized(
    origin: &str,
    (what, challenge): (&'static str, String),
    source: BoxError,
) -> ToolError {
    ToolError::Unauthorized {
        message: format!(
            "the MCP server at {origin} {what} (`WWW-Authenticate: {}`); give it a token it accepts (`.bearer(..)`) or authorize with `.oauth(..)` (feature `oauth`)",
            toolbox_core::args::echo(&challenge)
        ),
        challenge: Some(challenge),
        source: Some(source),
    }
}

/// A failed handshake: refused credentials named with what the server
/// asked for (its `WWW-Authenticate` challenge), anything else with its
/// plain cause.
pub(crate) fn handshake_error(error: ClientInitializeError, origin: &str) -> ToolError {
    if let Some(asked) = auth_failure(&error) {
        return unauthorized(origin, asked, Box::new(error));
    }
    let cause = Cause::new(error, Some(origin));
    ToolError::Transport {
        message: format!("the MCP handshake with {origin} failed: {}", cause.text),
        source: Some(Box::new(cause)),
    }
}

/// A failed request of an open session.
pub(crate) fn service_error(error: ServiceError) -> ToolError {
    match error {
        ServiceError::McpError(error) => {
            ToolError::failed(format!("MCP error {}: {}", error.code.0, error.message))
        }
        other => match auth_failure(&other) {
            Some(asked) => unauthorized("its address", asked, Box::new(other)),
            None => {
                let cause = Cause::new(other, None);
                ToolError::Transport {
                    message: format!("the MCP server is gone or did not answer: {}", cause.text),
                    source: Some(Box::new(cause)),
                }
            }
        },
    }
}
