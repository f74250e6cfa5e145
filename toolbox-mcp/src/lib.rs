//! MCP for toolbox, on the official `rmcp` crate, both ways, in three
//! families:
//!
//! - [`client`]: an MCP server as a [`ToolBox`](toolbox_core::ToolBox)
//!   ([`McpToolBox`], connected with [`McpToolBox::http`] or
//!   [`McpToolBox::stdio`]), several at once ([`McpServers`]), with pins,
//!   timeouts and the server's instructions.
//! - [`server`]: any box as an MCP server ([`McpServer`], [`serve_stdio`],
//!   [`serve_http`]): tools listed per request context (conditions apply),
//!   every call through the lifecycle, tool errors as `isError` results,
//!   the request's `_meta` as [`McpMeta`](server::McpMeta), the client as
//!   [`McpPeer`] (to elicit input or sample its model), logging to it, and
//!   progress through [`McpProgress`] both ways.
//! - [`auth`]: bearer tokens for a served endpoint (a verifier, JWTs with
//!   feature `jwt`) and OAuth for a client (feature `oauth`).
//!
//! Only rmcp speaks the protocol: no JSON-RPC is written here.

pub mod apps;
pub mod auth;
pub mod client;
mod connection;
mod convert;
mod progress;
pub mod server;
mod telemetry;

/// The rmcp crate this one is built on, for its [`ClientHandler`](rmcp::ClientHandler)
/// (what [`McpConnect::handler`](client::McpConnect::handler) takes) and its
/// model types.
pub use rmcp;

pub use client::{McpServers, McpToolBox};
pub use progress::McpProgress;
pub use server::{serve_http, serve_stdio, McpPeer, McpServer};
