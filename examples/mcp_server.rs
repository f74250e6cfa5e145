//! The quickstart's support-desk tools as an MCP server, for Claude Desktop,
//! an IDE, the MCP Inspector or any MCP client.
//!
//! ```sh
//! cargo run --features mcp --example mcp_server -- --stdio
//! cargo run --features mcp --example mcp_server -- --http 127.0.0.1:8765
//! cargo run --features mcp --example mcp_server -- --http 127.0.0.1:8765 --token s3cret
//! ```
//!
//! Over HTTP the endpoint is `http://ADDRESS/mcp`; it binds the address
//! given (127.0.0.1 when only a port is wanted) and refuses foreign `Host`
//! headers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbox::mcp::{
    auth::{BearerAuth, McpCaller, Rejected},
    server::{serve_http_with, HttpOptions},
    McpServer,
};
use toolbox::prelude::*;

/// Two integers.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Customer {
    id: u32,
    name: String,
    tier: &'static str,
}

/// Customer records.
struct Crm;

/// Customer records.
#[tool_box(register = false)]
impl Crm {
    /// Gets a customer by id.
    #[tool(read_only)]
    fn get_customer(
        &self,
        /// The customer's id, e.g. 42.
        id: u32,
    ) -> Result<Customer, String> {
        match id {
            42 => Ok(Customer {
                id,
                name: "Ada Lovelace".into(),
                tier: "gold",
            }),
            _ => Err(format!(
                "no customer {id}; customer ids are 42 in this demo"
            )),
        }
    }
}

fn tools() -> Result<MultiToolBox, DefinitionError> {
    let math = FnToolBox::new([
        tool_fn(
            "add",
            "Adds two integers.",
            |x: Pair| async move { x.a + x.b },
        )
        .read_only(),
        tool_fn("divide", "Divides a by b.", |x: Pair| async move {
            if x.b == 0 {
                Err("cannot divide by zero; pass a non-zero b".to_owned())
            } else {
                Ok(x.a / x.b)
            }
        }),
    ])?;
    MultiToolBox::builder()
        .add("math", math)
        .add_box(Crm)
        .build()
}

/// Ctrl-C, or SIGTERM where there is one.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let handler = ToolHandler::empty()
        .on_success(|e| eprintln!("ok    {} in {:?}", e.name, e.elapsed))
        .on_error(|e| eprintln!("error {}: {}", e.name, e.error.report()));
    let server = McpServer::new(tools()?, "toolbox-quickstart").handler(handler);
    match arguments.first().map(String::as_str) {
        Some("--stdio") | None => server.serve_stdio().await,
        Some("--http") => {
            let address = arguments.get(1).map_or("127.0.0.1:8765", String::as_str);
            // `--drain MS`: on shutdown, readiness says "not ready" this
            // long before connections are refused (a balancer's probe period).
            let mut options = HttpOptions::default();
            if let Some(at) = arguments.iter().position(|a| a == "--drain") {
                let ms: u64 = arguments
                    .get(at + 1)
                    .and_then(|ms| ms.parse().ok())
                    .ok_or("`--drain` needs a number of milliseconds")?;
                options = options.drain_delay(std::time::Duration::from_millis(ms));
            }
            // `--trusted-proxy ADDR` (repeatable): behind a load balancer,
            // the client address it forwards counts for each client's share.
            let proxies: Vec<&String> = arguments
                .windows(2)
                .filter(|pair| pair[0] == "--trusted-proxy")
                .map(|pair| &pair[1])
                .collect();
            if !proxies.is_empty() {
                options = options.trusted_proxies(proxies);
            }
            // `--sessions-per-client N`: each client's share of the sessions.
            if let Some(at) = arguments.iter().position(|a| a == "--sessions-per-client") {
                let max: usize = arguments
                    .get(at + 1)
                    .and_then(|n| n.parse().ok())
                    .ok_or("`--sessions-per-client` needs a number")?;
                options = options.max_sessions_per_client(max);
            }
            // `--token T`: only callers that send `Authorization: Bearer T`.
            let running = match arguments.iter().position(|a| a == "--token") {
                Some(at) => {
                    let token = arguments
                        .get(at + 1)
                        .cloned()
                        .ok_or("`--token` needs a value")?;
                    let verifier = move |sent: &str| {
                        if sent == token {
                            Ok(McpCaller {
                                subject: "operator".into(),
                                ..McpCaller::default()
                            })
                        } else {
                            Err(Rejected("not the server's token".into()))
                        }
                    };
                    let auth = BearerAuth::new(
                        verifier,
                        format!("http://{address}/mcp"),
                        Vec::<String>::new(),
                    );
                    serve_http_with(server, address, options.bearer_auth(auth)).await?
                }
                None => serve_http_with(server, address, options).await?,
            };
            eprintln!("serving MCP at {}", running.url());
            // Ctrl-C or SIGTERM (a rolling restart): readiness turns "not
            // ready", calls in flight get up to 10 s, then the sessions end.
            running
                .run_until(stop_signal(), std::time::Duration::from_secs(10))
                .await;
            eprintln!("shut down");
            Ok(())
        }
        Some(other) => {
            Err(format!("unknown option `{other}`; use --stdio or --http ADDRESS").into())
        }
    }
}
