//! A client built on `McpToolBox` for the official MCP conformance suite's
//! client scenarios. The suite starts it with the server's URL as the last
//! argument and the scenario in `MCP_CONFORMANCE_SCENARIO`;
//! `scripts/conformance` runs them.
//!
//! ```sh
//! MCP_CONFORMANCE_SCENARIO=initialize cargo run --features mcp --example conformance_client -- http://127.0.0.1:3000/mcp
//! ```

use serde_json::json;
use toolbox::mcp::rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData,
};
use toolbox::mcp::rmcp::service::RequestContext;
use toolbox::mcp::rmcp::{ClientHandler, RoleClient};
use toolbox::mcp::{auth::OAuth, McpToolBox};
use toolbox::prelude::*;

/// Accepts every form with nothing filled in: the fields come from the
/// schema's defaults (SEP-1034), which `McpToolBox` applies.
struct AcceptEmpty;

impl ClientHandler for AcceptEmpty {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({}));
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        let mut info = ClientConfig::default();
        info.capabilities = capabilities;
        info
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), ToolError> {
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    match scenario {
        "initialize" | "tools_call" | "tools-call" => {
            let remote = McpToolBox::http(url).connect().await?;
            if let Some(tool) = remote.specifications(&ctx).first() {
                let response = remote
                    .call(&tool.name, &json!({"a": 2, "b": 3}), &ctx, &handler)
                    .await;
                println!("{}: {}", tool.name, response.content);
            }
            remote.close().await
        }
        "sse-retry" => {
            let remote = McpToolBox::http(url).connect().await?;
            let response = remote
                .call("test_reconnection", &json!({}), &ctx, &handler)
                .await;
            println!("test_reconnection: {}", response.content);
            remote.close().await
        }
        "elicitation-sep1034-client-defaults" => {
            let remote = McpToolBox::http(url).handler(AcceptEmpty).connect().await?;
            let response = remote
                .call(
                    "test_client_elicitation_defaults",
                    &json!({}),
                    &ctx,
                    &handler,
                )
                .await;
            println!("test_client_elicitation_defaults: {}", response.content);
            remote.close().await
        }
        auth if auth.starts_with("auth/") => {
            // The suite's authorization server approves at once: the user's
            // step is to follow the authorization URL and read where it
            // redirects (a browser would land on the redirect URI).
            let mut oauth =
                OAuth::new("http://localhost:3000/callback", |url: String| async move {
                    let client = reqwest::Client::builder()
                        .redirect(reqwest::redirect::Policy::none())
                        .build()
                        .map_err(|e| e.to_string())?;
                    let response = client.get(&url).send().await.map_err(|e| e.to_string())?;
                    response
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|l| l.to_str().ok())
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            format!(
                                "the authorization server did not redirect ({})",
                                response.status()
                            )
                        })
                })
                .client_name("test-auth-client");
            let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or_default();
            if let Some(id) = context.get("client_id").and_then(|v| v.as_str()) {
                let secret = context
                    .get("client_secret")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned);
                oauth = oauth.preregistered(id, secret);
            } else {
                oauth = oauth
                    .client_metadata_url("https://conformance-test.local/client-metadata.json");
            }
            let remote = McpToolBox::http(url).oauth(oauth).connect().await?;
            if let Some(tool) = remote.specifications(&ctx).first() {
                let response = remote.call(&tool.name, &json!({}), &ctx, &handler).await;
                println!("{}: {}", tool.name, response.content);
            }
            remote.close().await
        }
        other => Err(ToolError::failed(format!(
            "scenario `{other}` is not handled by this client"
        ))),
    }
}

#[tokio::main]
async fn main() {
    let url = std::env::args().next_back().unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    if let Err(error) = run(&scenario, &url).await {
        eprintln!("{scenario}: {}", error.report());
        std::process::exit(1);
    }
}
