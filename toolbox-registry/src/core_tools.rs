//! The built-in tools: `now@core` (on by default) and `http_get@core`
//! (opt-in, refusing private addresses unless allowed).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolbox_core::{tool_fn, try_tool_fn, ToolError, ToolSet};

use crate::net::refusal;
use crate::{Registry, RegistryError, ToolKey};

pub(crate) fn now_tool() -> ToolSet {
    ToolSet::new([tool_fn(
        "now",
        "Returns the current date and time in ISO 8601, in UTC (e.g. 2026-11-30T16:40:12Z).",
        |_: ()| async { iso8601_utc(SystemTime::now()) },
    )
    .read_only()])
    .unwrap_or_else(|e| unreachable!("the core tools are valid: {e}"))
}

/// `2026-11-30T16:40:12Z` for a moment (whole seconds, UTC).
pub fn iso8601_utc(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// What `http_get@core` may do.
#[derive(Clone, Debug)]
pub struct HttpGetOptions {
    /// The most body bytes returned; the rest is cut off, and said so.
    pub max_bytes: usize,
    /// The limit for the whole request, connection to last byte.
    pub timeout: Duration,
    /// Allow loopback addresses (127.0.0.0/8, ::1).
    pub allow_loopback: bool,
    /// Allow private, link-local, unique-local, shared and cloud-metadata
    /// addresses.
    pub allow_private: bool,
}

impl Default for HttpGetOptions {
    fn default() -> Self {
        HttpGetOptions {
            max_bytes: 256 * 1024,
            timeout: Duration::from_secs(10),
            allow_loopback: false,
            allow_private: false,
        }
    }
}

/// The arguments of `http_get`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HttpGetArgs {
    /// The `http://` URL to fetch.
    url: String,
}

impl Registry {
    /// Registers `http_get@core`: fetches an `http://` URL and returns the
    /// body as text. Every address the host resolves to is checked before
    /// connecting (so a public name resolving to a private address is
    /// refused too), and the connection goes to the checked address.
    pub fn enable_http_get(&self, options: HttpGetOptions) -> Result<ToolKey, RegistryError> {
        let tool = try_tool_fn(
            "http_get",
            "Fetches a public web page over HTTP and returns its body as text.",
            move |args: HttpGetArgs| {
                let options = options.clone();
                async move {
                    tokio::time::timeout(options.timeout, fetch(&args.url, &options))
                        .await
                        .unwrap_or_else(|_| {
                            Err(ToolError::failed(format!(
                                "`{}` did not answer within {:?}",
                                args.url, options.timeout
                            )))
                        })
                }
            },
        )
        .read_only();
        let tools = ToolSet::new([tool]).unwrap_or_else(|e| unreachable!("http_get is valid: {e}"));
        let mut keys = self.register_box(tools, "core")?;
        Ok(keys.remove(0))
    }
}

#[derive(Debug)]
struct Url<'a> {
    host: &'a str,
    port: u16,
    path: &'a str,
}

fn parse_url(url: &str) -> Result<Url<'_>, ToolError> {
    let rest = if let Some(rest) = url.strip_prefix("http://") {
        rest
    } else if url.starts_with("https://") {
        return Err(ToolError::failed(
            "https URLs are not supported by this build of http_get; use an http:// URL",
        ));
    } else {
        return Err(ToolError::retryable(format!(
            "`{url}` is not an http:// URL"
        )));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let end = v6
            .find(']')
            .ok_or_else(|| ToolError::retryable(format!("`{url}` has a malformed IPv6 host")))?;
        let port = v6[end + 1..].strip_prefix(':');
        (&v6[..end], port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(port) => port
            .parse()
            .map_err(|_| ToolError::retryable(format!("`{url}` has an invalid port")))?,
        None => 80,
    };
    if host.is_empty() || host.contains('@') {
        return Err(ToolError::retryable(format!("`{url}` has no usable host")));
    }
    Ok(Url { host, port, path })
}

async fn fetch(url: &str, options: &HttpGetOptions) -> Result<String, ToolError> {
    let parsed = parse_url(url)?;
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((parsed.host, parsed.port))
        .await
        .map_err(|e| ToolError::failed(format!("cannot resolve `{}`: {e}", parsed.host)))?
        .collect();
    if addresses.is_empty() {
        return Err(ToolError::failed(format!(
            "`{}` resolves to no address",
            parsed.host
        )));
    }
    for address in &addresses {
        if let Some(reason) = refusal(address.ip(), options) {
            return Err(ToolError::failed(format!(
                "refused: `{}` resolves to {}, {reason}; http_get only fetches public addresses",
                parsed.host,
                address.ip()
            )));
        }
    }
    let mut stream = tokio::net::TcpStream::connect(addresses[0])
        .await
        .map_err(|e| ToolError::failed(format!("cannot connect to `{}`: {e}", parsed.host)))?;
    let host_header = match addresses[0].ip() {
        IpAddr::V6(_) if parsed.host.contains(':') => format!("[{}]", parsed.host),
        _ => parsed.host.to_owned(),
    };
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {host_header}\r\nUser-Agent: toolbox-http_get/0.1\r\nAccept: */*\r\nConnection: close\r\n\r\n",
        parsed.path
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| ToolError::failed(format!("cannot send the request: {e}")))?;
    let limit = options.max_bytes + 64 * 1024;
    let mut raw = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = stream
            .read(&mut chunk)
            .await
            .map_err(|e| ToolError::failed(format!("cannot read the response: {e}")))?;
        if read == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..read]);
        if raw.len() > limit {
            break;
        }
    }
    let response = parse_response(&raw)?;
    if !(200..300).contains(&response.status) {
        let location = response
            .location
            .map(|l| format!(" (location: {l})"))
            .unwrap_or_default();
        return Err(ToolError::failed(format!(
            "HTTP {}{location}",
            response.status_line
        )));
    }
    let mut body = response.body;
    let truncated = body.len() > options.max_bytes;
    body.truncate(options.max_bytes);
    let mut text = String::from_utf8_lossy(&body).into_owned();
    if truncated {
        text.push_str(&format!("\n[truncated at {} bytes]", options.max_bytes));
    }
    Ok(text)
}

struct Response {
    status: u16,
    status_line: String,
    location: Option<String>,
    body: Vec<u8>,
}

fn parse_response(raw: &[u8]) -> Result<Response, ToolError> {
    let malformed = || ToolError::failed("the server sent a malformed HTTP response");
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(malformed)?;
    let head = std::str::from_utf8(&raw[..head_end]).map_err(|_| malformed())?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or_else(malformed)?;
    let mut parts = status_line.splitn(3, ' ');
    let _version = parts.next();
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(malformed)?;
    let reason = parts.next().unwrap_or("");
    let mut chunked = false;
    let mut length = None;
    let mut location = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "content-length" => length = value.parse::<usize>().ok(),
            "location" => location = Some(value.to_owned()),
            _ => {}
        }
    }
    let mut body = raw[head_end + 4..].to_vec();
    if chunked {
        body = dechunk(&body);
    } else if let Some(length) = length {
        body.truncate(length);
    }
    Ok(Response {
        status,
        status_line: format!("{status} {reason}").trim_end().to_owned(),
        location,
        body,
    })
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = std::str::from_utf8(&data[..line_end]).unwrap_or("0");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .unwrap_or(0);
        data = &data[line_end + 2..];
        if size == 0 {
            break;
        }
        let take = size.min(data.len());
        out.extend_from_slice(&data[..take]);
        data = data.get(take + 2..).unwrap_or(&[]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_is_utc_with_seconds() {
        assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = UNIX_EPOCH + Duration::from_secs(1_796_056_812);
        assert_eq!(iso8601_utc(at), "2026-11-30T16:40:12Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso8601_utc(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn urls_are_parsed_or_refused_clearly() {
        let url = parse_url("http://example.com:8080/a?b=1").unwrap();
        assert_eq!(
            (url.host, url.port, url.path),
            ("example.com", 8080, "/a?b=1")
        );
        let url = parse_url("http://[::1]:81").unwrap();
        assert_eq!((url.host, url.port, url.path), ("::1", 81, "/"));
        assert_eq!(
            parse_url("ftp://x").unwrap_err().to_string(),
            "`ftp://x` is not an http:// URL"
        );
        assert!(parse_url("https://x")
            .unwrap_err()
            .to_string()
            .contains("https URLs are not supported"));
        assert!(parse_url("http://user@evil/").is_err());
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        assert_eq!(parse_response(raw).unwrap().body, b"hello world");
    }
}
