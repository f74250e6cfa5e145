//! Where a server is, as texts may show it: a URL without the secrets a
//! configuration often carries in it (`user:password@`, `?api_key=…`,
//! a `#fragment`).

/// `url` as the model, a log line or a `Display` may read it: scheme, host,
/// port and path only. Credentials, the query and the fragment are left
/// out; a text that is not a URL is shown as its part before any `?` or
/// `#`, with anything up to an `@` dropped.
///
/// ```
/// use toolbox_mcp::client::shown_url;
///
/// assert_eq!(
///     shown_url("https://bot:hunter2@crm.example:8443/mcp?api_key=sk-123#x"),
///     "https://crm.example:8443/mcp"
/// );
/// assert_eq!(shown_url("http://127.0.0.1:8001/mcp"), "http://127.0.0.1:8001/mcp");
/// ```
pub fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) if parsed.has_host() => {
            let mut shown = format!(
                "{}://{}",
                parsed.scheme(),
                parsed.host_str().unwrap_or_default()
            );
            if let Some(port) = parsed.port() {
                shown.push_str(&format!(":{port}"));
            }
            shown.push_str(parsed.path());
            shown
        }
        _ => {
            let before = url.split(['?', '#']).next().unwrap_or_default();
            match before.rsplit_once('@') {
                Some((_, after)) => after.to_owned(),
                None => before.to_owned(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shown_url;

    #[test]
    fn secrets_are_left_out() {
        assert_eq!(
            shown_url("http://user:pass@127.0.0.1:9/mcp?api_key=k&x=1"),
            "http://127.0.0.1:9/mcp"
        );
        assert_eq!(shown_url("https://example.com"), "https://example.com/");
        assert_eq!(shown_url("not a url?token=1"), "not a url");
        assert_eq!(shown_url("user:pw@host/mcp?k=1"), "host/mcp");
    }
}
