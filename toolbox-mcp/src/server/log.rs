//! Logging to the MCP client of a served call.
//!
//! MCP's logging (`logging/setLevel`, `notifications/message`) is
//! deprecated from protocol `2026-07-28` on (SEP-2577), where the level
//! comes per request; in `2025-11-25`, which clients speak today, it is how
//! a server logs to its client. rmcp marks it deprecated, hence the allow.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use toolbox_core::{Context, FromContext, ToolError};

/// The level of a log message, as MCP (RFC 5424's syslog levels) has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Debugging detail.
    Debug,
    /// Information.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    fn to_rmcp(self) -> LoggingLevel {
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }

    fn from_rmcp(level: LoggingLevel) -> Self {
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

/// The level below which a client does not want log messages, as it set
/// it with `logging/setLevel` (shared by one client's calls).
#[derive(Clone, Debug, Default)]
pub(crate) struct Threshold(Arc<Mutex<Option<LogLevel>>>);

impl Threshold {
    pub(crate) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(LogLevel::from_rmcp(level));
    }
}

/// Logging to the MCP client of a served call (`notifications/message`),
/// injectable into a tool (`#[inject] log: McpLog`). Messages below the
/// level the client set with `logging/setLevel` are not sent; before it
/// sets one, every message is. A call that did not come over MCP logs
/// nowhere (its messages go to `tracing` at debug).
#[derive(Clone, Debug)]
pub struct McpLog {
    peer: Option<Peer<RoleServer>>,
    threshold: Threshold,
    logger: Option<String>,
}

/// A level by its MCP name (`info`, `warning`, …).
fn level_named(name: &str) -> Option<LogLevel> {
    serde_json::from_value::<LoggingLevel>(Value::String(name.to_owned()))
        .ok()
        .map(LogLevel::from_rmcp)
}

impl McpLog {
    pub(crate) fn to(peer: Peer<RoleServer>, threshold: Threshold) -> Self {
        McpLog {
            peer: Some(peer),
            threshold,
            logger: None,
        }
    }

    /// A `2026-07-28` request's log: at the level it names, none without.
    pub(crate) fn per_request(peer: Peer<RoleServer>, level: Option<&str>) -> Self {
        match level.and_then(level_named) {
            Some(level) => McpLog {
                peer: Some(peer),
                threshold: Threshold(Arc::new(Mutex::new(Some(level)))),
                logger: None,
            },
            None => McpLog {
                peer: None,
                threshold: Threshold::default(),
                logger: None,
            },
        }
    }

    /// The same log under a logger name (the message's `logger`).
    pub fn with_logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }

    /// Whether a message at `level` would be sent.
    pub fn enabled(&self, level: LogLevel) -> bool {
        self.peer.is_some()
            && self
                .threshold
                .0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_none_or(|threshold| level >= threshold)
    }

    /// Sends `data` (text or any JSON) at `level`, if the client wants it.
    /// A message the transport cannot deliver is dropped: logging never
    /// fails a call.
    pub async fn log(&self, level: LogLevel, data: impl serde::Serialize) {
        let data = serde_json::to_value(data).unwrap_or(Value::Null);
        let Some(peer) = self.peer.as_ref().filter(|_| self.enabled(level)) else {
            tracing::debug!(target: "toolbox::mcp", ?level, %data, "log message not sent to an MCP client");
            return;
        };
        let mut param = LoggingMessageNotificationParam::new(level.to_rmcp(), data);
        param.logger = self.logger.clone();
        let _ = peer.notify_logging_message(param).await;
    }

    /// Logs at debug.
    pub async fn debug(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Debug, data).await;
    }

    /// Logs at info.
    pub async fn info(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Info, data).await;
    }

    /// Logs at notice.
    pub async fn notice(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Notice, data).await;
    }

    /// Logs at warning.
    pub async fn warning(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Warning, data).await;
    }

    /// Logs at error.
    pub async fn error(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Error, data).await;
    }

    /// Logs at critical.
    pub async fn critical(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Critical, data).await;
    }

    /// Logs at alert.
    pub async fn alert(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Alert, data).await;
    }

    /// Logs at emergency.
    pub async fn emergency(&self, data: impl serde::Serialize) {
        self.log(LogLevel::Emergency, data).await;
    }
}

impl FromContext for McpLog {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(ctx.extension::<McpLog>().cloned().unwrap_or(McpLog {
            peer: None,
            threshold: Threshold::default(),
            logger: None,
        }))
    }
}
