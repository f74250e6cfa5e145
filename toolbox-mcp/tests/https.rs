//! https to a remote MCP server: `McpToolBox` speaks TLS (rustls, no
//! system OpenSSL), trusting the system's roots and any the application
//! adds; a server whose certificate is not trusted is refused with a
//! transport error, never spoken to in the clear.

use std::sync::Arc;

use toolbox_core::{tool_fn, Context, FnToolBox, ToolBox, ToolBoxExt, ToolHandler};
use toolbox_mcp::{serve_http, McpServer, McpToolBox};

/// A TLS front for a plain local endpoint, with a fresh self-signed
/// certificate for 127.0.0.1: what a reverse proxy does in production.
async fn tls_front(plain: std::net::SocketAddr) -> (std::net::SocketAddr, String) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    let pem = certified.cert.pem();
    let chain = vec![certified.cert.der().clone()];
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    #[allow(deprecated)] // rustls 0.23.48 deprecates ring's provider
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let Ok(mut upstream) = tokio::net::TcpStream::connect(plain).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
            });
        }
    });
    (address, pem)
}

fn tools() -> impl ToolBox {
    FnToolBox::new([tool_fn("ping", "Answers", |_: ()| async { "pong" })]).unwrap()
}

#[tokio::test]
async fn mcp_tool_box_speaks_https_to_a_server_it_trusts() {
    let server = serve_http(McpServer::new(tools(), "tls"), "127.0.0.1:0")
        .await
        .unwrap();
    let (front, pem) = tls_front(server.local_addr()).await;
    let url = format!("https://127.0.0.1:{}/mcp", front.port());

    let untrusted = McpToolBox::http(&url).connect().await;
    let error = untrusted.expect_err("an untrusted certificate is refused");
    assert_eq!(
        error.to_string(),
        format!("transport error: the MCP handshake with {url} failed: the server's TLS certificate is not trusted (invalid peer certificate: UnknownIssuer); trust its root with `.trust_pem(..)`")
    );
    // The operator's report names the request that failed.
    assert!(error.report().contains(&url), "{}", error.report());

    let remote = McpToolBox::http(&url)
        .trust_pem(pem.as_bytes())
        .connect()
        .await
        .unwrap();
    let response = remote
        .call(
            "ping",
            &serde_json::json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response.content, "pong");
    remote.close().await.unwrap();
    server.shutdown(std::time::Duration::from_secs(5)).await;
}

#[test]
fn a_pem_that_is_no_certificate_is_refused_by_name() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let error = runtime
        .block_on(
            McpToolBox::http("https://127.0.0.1:1/mcp")
                .trust_pem(b"not a certificate")
                .connect(),
        )
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "transport error: a trusted root is not a PEM certificate"
    );
}
