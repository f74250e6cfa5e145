//! How toolbox's HTTP clients reach a server ([`HttpConnection`]): the
//! MCP client's transport, the OAuth flow's requests and a JWT verifier's
//! key fetches share it.

use std::collections::HashMap;

use toolbox_core::ToolError;

/// How [`McpConnect`](crate::client::McpConnect) reaches an HTTP endpoint, and how a
/// `JwtVerifier` fetches its keys: extra headers,
/// roots to trust beside the system's, kept connections.
#[derive(Clone, Debug, Default)]
pub struct HttpConnection {
    headers: Vec<(String, String)>,
    roots: Vec<Vec<u8>>,
    reuse: bool,
}

impl HttpConnection {
    /// Sends `name: value` with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer {token}`.
    pub fn bearer(self, token: impl std::fmt::Display) -> Self {
        self.header("Authorization", format!("Bearer {token}"))
    }

    /// Keeps connections open between requests (off by default, as in
    /// rmcp's own client). A server that does not set `TCP_NODELAY` (a
    /// plain `axum::serve`, rmcp's examples) answers a kept connection
    /// only after the client's delayed ACK, ~40 ms a call; a new
    /// connection per request costs ~0.2 ms on loopback. Turn it on for
    /// servers that set it (toolbox's `serve_http` does): a call then
    /// takes ~25% less than on a new connection, and an https one skips
    /// the TLS handshake.
    pub fn reuse_connections(mut self, reuse: bool) -> Self {
        self.reuse = reuse;
        self
    }

    /// Trusts the root certificate(s) in `pem` beside the system's.
    pub fn trust_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots.push(pem.into());
        self
    }

    /// The headers, checked.
    pub(crate) fn header_map(
        &self,
    ) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, ToolError> {
        let mut map = HashMap::new();
        for (name, value) in &self.headers {
            let header_name: reqwest::header::HeaderName = name.parse().map_err(|_| {
                ToolError::configuration(format!(
                    "`{}` is not an HTTP header name (letters, digits and `-` only)",
                    toolbox_core::args::echo(name)
                ))
            })?;
            let header_value: reqwest::header::HeaderValue = value
                .parse()
                .map_err(|_| ToolError::configuration(bad_header_value(name, value)))?;
            map.insert(header_name, header_value);
        }
        Ok(map)
    }

    /// The HTTP client: rustls with the ring provider (unless the program
    /// installed one), the system's roots and these.
    pub(crate) fn client(&self) -> Result<reqwest::Client, ToolError> {
        // rustls 0.23.48 deprecates `ring::default_provider` (ring has no
        // post-quantum key exchange); ring stays, for needing no C build. A
        // program that wants aws-lc-rs installs its provider first.
        #[allow(deprecated)]
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut client = reqwest::Client::builder();
        if !self.reuse {
            client = client.pool_max_idle_per_host(0);
        }
        for pem in &self.roots {
            use rustls::pki_types::pem::PemObject;
            let not_pem =
                |source: Option<Box<dyn std::error::Error + Send + Sync>>| ToolError::Transport {
                    message: "a trusted root is not a PEM certificate".to_owned(),
                    source,
                };
            let certificates = rustls::pki_types::CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| not_pem(Some(Box::new(e))))?;
            if certificates.is_empty() {
                return Err(not_pem(None));
            }
            for der in certificates {
                let certificate = reqwest::Certificate::from_der(der.as_ref())
                    .map_err(|e| not_pem(Some(Box::new(e))))?;
                client = client.add_root_certificate(certificate);
            }
        }
        client.build().map_err(|e| ToolError::Transport {
            message: "the HTTP client could not be built".to_owned(),
            source: Some(Box::new(e)),
        })
    }
}

/// Why `value` cannot be sent as the header `name`, saying what to fix and
/// never showing the value (a token is a secret).
fn bad_header_value(name: &str, value: &str) -> String {
    let what = if name.eq_ignore_ascii_case("authorization") {
        "the token"
    } else {
        "its value"
    };
    let (position, bad) = match value
        .char_indices()
        .find(|(_, c)| c.is_control() || !c.is_ascii())
    {
        Some(found) => found,
        None => {
            return format!(
                "the header `{name}` cannot be sent: {what} is not a valid header value"
            )
        }
    };
    let trailing = value[position..].chars().all(char::is_whitespace);
    let described = match bad {
        '\n' => "a newline".to_owned(),
        '\r' => "a carriage return".to_owned(),
        '\t' => "a tab".to_owned(),
        c if c.is_control() => format!("the control character U+{:04X}", c as u32),
        c => format!("the non-ASCII character U+{:04X}", c as u32),
    };
    if trailing {
        format!(
            "the header `{name}` cannot be sent: {what} ends with {described} (read from a file or an environment variable? trim it)"
        )
    } else {
        format!(
            "the header `{name}` cannot be sent: {what} holds {described} at byte {position}; header values are visible ASCII"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::HttpConnection;

    #[test]
    fn a_token_with_a_newline_says_so_without_showing_it() {
        let error = HttpConnection::default()
            .bearer("sk-secret\n")
            .header_map()
            .unwrap_err();
        assert_eq!(error.kind(), toolbox_core::ToolErrorKind::Configuration);
        let report = error.report();
        assert_eq!(
            report,
            "configuration error: the header `Authorization` cannot be sent: the token ends with a newline (read from a file or an environment variable? trim it)"
        );
        assert!(!report.contains("sk-secret"));
        let inner = HttpConnection::default()
            .header("X-Key", "a\u{7}b")
            .header_map()
            .unwrap_err();
        assert!(inner
            .report()
            .ends_with("its value holds the control character U+0007 at byte 1; header values are visible ASCII"));
    }
}
