//! `http_get@core`: fetch a public web page, on reqwest (rustls, no system
//! proxy). The URL is parsed by the `url` crate and the request written by
//! hyper, so nothing the model sends reaches the wire raw. The address
//! policy ([`HttpGetOptions`]) is enforced in the client's DNS resolver, so
//! every connection — each redirect hop included — is checked on the IP it
//! resolved to; hosts written as IP literals, which skip the resolver, are
//! checked before the request and at every redirect.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use schemars::JsonSchema;
use serde::Deserialize;
use toolbox_core::{args::echo, try_tool_fn, FnToolBox, ToolError};
use url::{Host, Url};

use super::address::refusal;
use crate::core_tools::HttpGetOptions;
use crate::error::RegistryError;
use crate::key::ToolKey;
use crate::registry::Registry;

/// The arguments of `http_get`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HttpGetArgs {
    /// The `http://` or `https://` URL to fetch.
    url: String,
}

impl Registry {
    /// Registers `http_get@core`: fetches an `http://` or `https://` URL and
    /// returns the body as text. Every address a host resolves to is checked
    /// against `options` before connecting (a public name resolving to a
    /// private address is refused too), redirects are followed up to
    /// `options.max_redirects` with each hop checked the same way, and the
    /// body is cut at `options.max_bytes`.
    pub fn enable_http_get(&self, options: HttpGetOptions) -> Result<ToolKey, RegistryError> {
        let fetcher = Arc::new(Fetcher::new(options).map_err(RegistryError::InvalidName)?);
        let tool = try_tool_fn(
            "http_get",
            "Fetches a public web page over HTTP(S) and returns its body as text.",
            move |args: HttpGetArgs| {
                let fetcher = fetcher.clone();
                async move { fetcher.fetch(&args.url).await }
            },
        )
        .read_only()
        .open_world();
        let tools =
            FnToolBox::new([tool]).unwrap_or_else(|e| unreachable!("http_get is valid: {e}"));
        let mut keys = self.register_box(tools, "core")?;
        Ok(keys.remove(0))
    }
}

/// The HTTP client of `http_get`, with the address policy in its resolver.
pub(crate) struct Fetcher {
    client: reqwest::Client,
    options: Arc<HttpGetOptions>,
}

/// A resolver that refuses names resolving to a refused address.
struct GuardedResolver {
    options: Arc<HttpGetOptions>,
}

/// Why a connection was refused by the address policy.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let options = self.options.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|e| Box::new(Refused(format!("cannot resolve `{host}`: {e}"))))?
                .collect();
            if addresses.is_empty() {
                return Err(Box::new(Refused(format!("`{host}` resolves to no address"))).into());
            }
            for address in &addresses {
                if let Some(reason) = refusal(address.ip(), &options) {
                    return Err(
                        Box::new(Refused(refused_text(&host, address.ip(), &reason))).into(),
                    );
                }
            }
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

fn refused_text(host: &str, ip: IpAddr, reason: &str) -> String {
    format!("refused: `{host}` resolves to {ip}, {reason}; http_get only fetches public addresses")
}

/// Checks a URL before any connection: its scheme, its characters, and a
/// host written as an IP literal (which no resolver sees).
fn check_url(url: &Url, options: &HttpGetOptions) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "`{}` is not an http:// or https:// URL",
            echo(url.as_str())
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("URLs with credentials (`user@host`) are not fetched".to_owned());
    }
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(Host::Domain(_)) => return Ok(()),
        None => return Err(format!("`{}` has no host", echo(url.as_str()))),
    };
    match refusal(ip, options) {
        Some(reason) => Err(refused_text(&ip.to_string(), ip, &reason)),
        None => Ok(()),
    }
}

impl Fetcher {
    pub(crate) fn new(options: HttpGetOptions) -> Result<Self, String> {
        let options = Arc::new(options);
        let policy_options = options.clone();
        let max_redirects = options.max_redirects;
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > max_redirects {
                let error = Refused(format!("more than {max_redirects} redirects"));
                return attempt.error(error);
            }
            match check_url(attempt.url(), &policy_options) {
                Ok(()) => attempt.follow(),
                Err(reason) => attempt.error(Refused(format!("redirect {reason}"))),
            }
        });
        // rustls needs a process-wide provider: ring, unless the program
        // installed one already. rustls 0.23.48 deprecates
        // `ring::default_provider` (no post-quantum key exchange); ring
        // stays, for needing no C build.
        #[allow(deprecated)]
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirects)
            .dns_resolver(Arc::new(GuardedResolver {
                options: options.clone(),
            }))
            .timeout(options.timeout)
            .user_agent(concat!("toolbox-http_get/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the HTTP client could not be built: {e}"))?;
        Ok(Fetcher { client, options })
    }

    pub(crate) async fn fetch(&self, url: &str) -> Result<String, ToolError> {
        if url.chars().any(|c| c.is_control()) {
            return Err(ToolError::retryable(format!(
                "`{}` contains control characters; send a URL without them",
                echo(url)
            )));
        }
        let parsed = Url::parse(url.trim()).map_err(|e| {
            ToolError::retryable(format!("`{}` is not a valid URL: {e}", echo(url)))
        })?;
        check_url(&parsed, &self.options).map_err(ToolError::failed)?;
        let mut response = self
            .client
            .get(parsed)
            .send()
            .await
            .map_err(|e| ToolError::failed(describe(&e, self.options.timeout)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ToolError::failed(
                format!(
                    "HTTP {} {}",
                    status.as_u16(),
                    status.canonical_reason().unwrap_or("")
                )
                .trim_end()
                .to_owned(),
            ));
        }
        let limit = self.options.max_bytes;
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ToolError::failed(describe(&e, self.options.timeout)))?
        {
            let room = limit.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let mut text = String::from_utf8_lossy(&body).into_owned();
        if truncated {
            text.push_str(&format!("\n[truncated at {limit} bytes]"));
        }
        Ok(text)
    }
}

/// A reqwest error as a sentence: the policy's refusal when that is the
/// cause, else what failed.
fn describe(error: &reqwest::Error, timeout: std::time::Duration) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return refused.0.clone();
        }
        source = cause.source();
    }
    // hyper turns a resolver error into text: find the policy's refusal in it.
    let root = root_cause(error);
    if root.starts_with("refused: ") {
        return root;
    }
    let url = error
        .url()
        .map(|u| format!("`{}`", echo(u.as_str())))
        .unwrap_or_else(|| "the page".to_owned());
    if error.is_timeout() {
        format!("{url} did not answer within {timeout:?}")
    } else if error.is_connect() {
        format!("cannot connect to {url}: {}", root_cause(error))
    } else if error.is_body() || error.is_decode() {
        format!(
            "the response from {url} was cut short or malformed: {}",
            root_cause(error)
        )
    } else {
        format!("fetching {url} failed: {}", root_cause(error))
    }
}

fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut last = error;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}
