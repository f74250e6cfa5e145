//! Any MCP server as a toolbox box: connects to a server given as a command
//! (a child process over stdio) or a URL (Streamable HTTP), prints its tools
//! as OpenAI definitions, and calls one with JSON arguments, printing the
//! server's progress reports as they come.
//!
//! ```sh
//! cargo run --features mcp --example mcp_proxy -- "npx @modelcontextprotocol/server-everything stdio"
//! cargo run --features mcp --example mcp_proxy -- http://127.0.0.1:8765/mcp math_add '{"a": 40, "b": 2}'
//! ```
//!
//! With `--serve` first, the proxied server is served again over stdio
//! (`McpServer::proxy`), results (images, resources, structured content)
//! as the server sent them, and its MCP Apps tools and views as well.

use toolbox::mcp::{McpProgress, McpServer, McpToolBox};
use toolbox::prelude::*;
use toolbox::provider::Provider;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut arguments = std::env::args().skip(1).peekable();
    let serve = arguments.next_if(|a| a == "--serve").is_some();
    let Some(server) = arguments.next() else {
        return Err("usage: mcp_proxy [--serve] <command or URL> [tool] [JSON arguments]".into());
    };
    let remote = if server.starts_with("http://") || server.starts_with("https://") {
        McpToolBox::http(&server).connect().await?
    } else {
        let mut words = server.split_whitespace();
        let program = words.next().ok_or("the server command is empty")?;
        let mut command = tokio::process::Command::new(program);
        command.args(words);
        McpToolBox::stdio(command).connect().await?
    };
    if let Some((version, name)) = remote.server_info() {
        eprintln!("connected to `{name}`, protocol {version}");
    }
    if serve {
        return McpServer::proxy(remote, "toolbox-proxy")
            .await?
            .serve_stdio()
            .await;
    }
    let ctx = Context::new();
    let specifications = remote.specifications(&ctx);
    let definitions = Provider::OpenAiChat { strict: false }.definitions(&specifications)?;
    println!("{}", serde_json::to_string_pretty(&definitions)?);
    if let Some(tool) = arguments.next() {
        let json = arguments.next().unwrap_or_else(|| "{}".to_owned());
        let handler = ToolHandler::empty()
            .on_success(|e| eprintln!("ok    {} in {:?}", e.name, e.elapsed))
            .on_error(|e| eprintln!("error {}: {}", e.name, e.error.report()));
        let ctx = ctx.with_extension(McpProgress::new(|p| {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p.message.map(|m| format!(" {m}")).unwrap_or_default();
            eprintln!("progress {}{total}{message}", p.progress);
        }));
        let response = remote.call(&tool, json.as_str(), &ctx, &handler).await;
        println!("{}", response.content);
        if let Some(element) = &response.element {
            println!("element: {element}");
        }
    }
    remote.close().await?;
    Ok(())
}
