//! MCP for toolbox, on the official `rmcp` crate, both ways:
//!
//! - [`McpToolBox`]: an MCP server (a child process over stdio, or any rmcp
//!   transport) as a [`ToolBox`](toolbox_core::ToolBox): its tools with
//!   their schemas and annotations, every call through toolbox's lifecycle.
//! - [`McpServer`] / [`serve_stdio`]: any box as an MCP server: tools listed
//!   per request context (conditions apply), every call through the
//!   lifecycle, tool errors as `isError` results, the request's `_meta` in
//!   the tool's [`Context`](toolbox_core::Context) as [`McpMeta`], the
//!   client as [`McpPeer`] (to elicit input or sample its model), logging
//!   to it through [`McpLog`], progress through [`McpProgress`] both ways;
//!   content parts beyond text (images, audio, resources) as their blocks.
//!
//! Only rmcp speaks the protocol: no JSON-RPC is written here.

mod client;
mod connection;
mod convert;
mod http;
mod log;
#[cfg(feature = "oauth")]
mod oauth;
mod progress;
mod server;
mod service;
mod telemetry;

/// The rmcp crate this one is built on, for its [`ClientHandler`](rmcp::ClientHandler)
/// (what [`McpConnect::handler`] takes) and its model types.
pub use rmcp;

pub use connection::HttpConnection;

pub use client::{
    fingerprint, system_message, Connected, McpConnect, McpServers, McpToolBox, Pin, PinChangeKind,
    PinEvent, RemoteServer, ServerFailure, ServerSummary, Timeouts, INSTRUCTIONS_LIMIT,
};
#[cfg(feature = "jwt")]
pub use http::JwtVerifier;
pub use http::{BearerAuth, HttpOptions, McpCaller, Rejected, TokenVerifier, VerifyFuture};
pub use log::{LogLevel, McpLog};
#[cfg(feature = "oauth")]
pub use oauth::{AuthorizeFuture, OAuth};
pub use progress::{McpProgress, Progress};
pub use server::{
    serve_http, serve_http_with, serve_stdio, Elicitation, HttpServer, McpMeta, McpPeer, McpServer,
    Sample,
};
