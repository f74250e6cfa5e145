//! `http_get@core` against a local server fed crafted URLs and crafted
//! responses: nothing raw reaches the wire, every hop is checked, broken
//! responses are errors, never partial successes.
#![cfg(feature = "http-get")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolbox::prelude::*;
use toolbox::registry::HttpGetOptions;

/// A server on 127.0.0.1 that answers each connection with the next
/// scripted response (the last one repeats) and keeps every raw request.
async fn server(responses: Vec<String>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        let mut index = 0;
        while let Ok((mut socket, _)) = listener.accept().await {
            let response = responses[index.min(responses.len() - 1)].clone();
            index += 1;
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                // A TLS hello (0x16) never ends in a blank line: answer it at once.
                while !request.windows(4).any(|w| w == b"\r\n\r\n")
                    && request.first() != Some(&0x16)
                {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                seen.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&request).into_owned());
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (format!("127.0.0.1:{}", address.port()), requests)
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn tools(options: HttpGetOptions) -> impl ToolBox {
    let registry = Registry::new();
    registry.enable_http_get(options).unwrap();
    registry.resolve(["http_get@core"]).unwrap()
}

fn local() -> HttpGetOptions {
    HttpGetOptions {
        allow_loopback: true,
        timeout: Duration::from_secs(5),
        ..HttpGetOptions::default()
    }
}

async fn get(tools: &impl ToolBox, url: &str) -> ToolResponse {
    tools
        .call(
            "http_get",
            &json!({ "url": url }),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await
}

#[tokio::test]
async fn loopback_is_refused_unless_allowed_by_ip_and_by_name() {
    let (address, requests) = server(vec![ok("hello from 127.0.0.1")]).await;
    let registry = Registry::new();
    assert!(
        registry.get("http_get").is_err(),
        "not registered by default"
    );
    let strict = tools(HttpGetOptions::default());
    let response = get(&strict, &format!("http://{address}/page")).await;
    assert!(response.is_error);
    assert_eq!(
        response.content,
        "refused: `127.0.0.1` resolves to 127.0.0.1, a loopback address; http_get only fetches public addresses"
    );
    let port = address.rsplit(':').next().unwrap();
    let response = get(&strict, &format!("http://localhost:{port}/page")).await;
    assert!(
        response
            .content
            .starts_with("refused: `localhost` resolves to"),
        "{}",
        response.content
    );
    for url in [
        format!("http://0.0.0.0:{port}/"),
        format!("http://[::]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
    ] {
        let private_only = tools(HttpGetOptions {
            allow_private: true,
            ..HttpGetOptions::default()
        });
        assert!(
            get(&private_only, &url)
                .await
                .content
                .starts_with("refused:"),
            "{url}"
        );
    }
    assert!(requests.lock().unwrap().is_empty(), "nothing was sent");

    let response = get(
        &tools(HttpGetOptions {
            max_bytes: 10,
            ..local()
        }),
        &format!("http://{address}/page"),
    )
    .await;
    assert_eq!(
        response,
        ToolResponse::text("hello from\n[truncated at 10 bytes]")
    );
    let response = get(
        &tools(HttpGetOptions {
            max_bytes: usize::MAX,
            ..local()
        }),
        &format!("http://{address}/page"),
    )
    .await;
    assert_eq!(response.content, "hello from 127.0.0.1");
}

#[tokio::test]
async fn crafted_urls_never_reach_the_wire_raw() {
    let (address, requests) = server(vec![ok("fine")]).await;
    let tools = tools(local());
    let smuggle =
        format!("http://{address}/a HTTP/1.1\r\nHost: evil\r\n\r\nGET /second HTTP/1.1\r\nX: y");
    let response = get(&tools, &smuggle).await;
    assert!(response.is_error);
    assert!(
        response.content.contains("control characters"),
        "{}",
        response.content
    );
    let spaced = format!("http://{address}/a b?q=1 2");
    let response = get(&tools, &spaced).await;
    assert_eq!(response.content, "fine");
    let requests = requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "one request, none smuggled");
    let request_line = requests[0].lines().next().unwrap();
    assert_eq!(request_line, "GET /a%20b?q=1%202 HTTP/1.1");
    assert!(!requests[0].contains("evil"));
}

#[tokio::test]
async fn every_redirect_hop_is_checked_and_counted() {
    let redirect = |to: &str| {
        format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    };
    let (address, _) = server(vec![redirect("http://169.254.169.254/latest/meta-data/")]).await;
    let response = get(&tools(local()), &format!("http://{address}/")).await;
    assert_eq!(
        response.content,
        "redirect refused: `169.254.169.254` resolves to 169.254.169.254, a cloud metadata address; http_get only fetches public addresses"
    );

    let (target, _) = server(vec![ok("arrived")]).await;
    let (address, _) = server(vec![redirect(&format!("http://{target}/end"))]).await;
    assert_eq!(
        get(&tools(local()), &format!("http://{address}/"))
            .await
            .content,
        "arrived"
    );

    let (looping, _) = server(vec![redirect("/again")]).await;
    let response = get(&tools(local()), &format!("http://{looping}/")).await;
    assert_eq!(response.content, "more than 5 redirects");
}

#[tokio::test]
async fn broken_responses_are_errors_not_partial_successes() {
    let bad_chunk =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n".to_owned();
    let short = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b".to_owned();
    for response in [bad_chunk, short] {
        let (address, _) = server(vec![response.clone()]).await;
        let answer = get(&tools(local()), &format!("http://{address}/")).await;
        assert!(answer.is_error, "{response:?} gave {answer:?}");
        assert!(
            answer.content.contains("cut short or malformed"),
            "{}",
            answer.content
        );
    }
    let continued = format!("HTTP/1.1 100 Continue\r\n\r\n{}", ok("after continue"));
    let (address, _) = server(vec![continued]).await;
    assert_eq!(
        get(&tools(local()), &format!("http://{address}/"))
            .await
            .content,
        "after continue"
    );

    let (address, _) = server(vec![
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".into()
    ])
    .await;
    assert_eq!(
        get(&tools(local()), &format!("http://{address}/"))
            .await
            .content,
        "HTTP 404 Not Found"
    );
}

#[tokio::test]
async fn https_is_spoken_and_other_schemes_refused() {
    // A plain-HTTP server answering a TLS hello: the https path was taken
    // (a handshake failure), not refused as unsupported.
    let (address, _) = server(vec![ok("not tls")]).await;
    let response = get(&tools(local()), &format!("https://{address}/")).await;
    assert!(response.is_error);
    assert!(
        response.content.starts_with("cannot connect to"),
        "{}",
        response.content
    );
    let response = get(&tools(local()), "ftp://example.com/file").await;
    assert_eq!(
        response.content,
        "`ftp://example.com/file` is not an http:// or https:// URL"
    );
    let response = get(&tools(local()), "http://user:pw@example.com/").await;
    assert_eq!(
        response.content,
        "URLs with credentials (`user@host`) are not fetched"
    );
}
