//! The client of a served call, as a tool sees it: the request's `_meta`
//! ([`McpMeta`]) and the peer ([`McpPeer`]) to elicit input from or sample
//! the model of.

use std::sync::{Arc, Mutex};

use rmcp::{Peer, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolbox_core::{Context, FromContext, ToolError};

/// A served call's MCP `_meta` (the request's metadata object: a progress
/// token, a trace id, whatever the client sent), injectable into a tool
/// (`#[inject] meta: McpMeta`) or read from its `Context`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpMeta(pub Map<String, Value>);

impl FromContext for McpMeta {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        Ok(ctx.extension::<McpMeta>().cloned().unwrap_or_default())
    }
}

/// The peer at the other end of a served call (the MCP client that made
/// it; [`McpToolBox`](crate::McpToolBox) is toolbox's own client): its name and version, the protocol
/// version it negotiated, its Streamable HTTP session, and its rmcp
/// [`Peer`] for requests back to it (roots, sampling, elicitation, where the
/// protocol era allows them). Injectable into a tool (`#[inject] client:
/// McpPeer`); a call that did not come over MCP has none, and the tool is
/// told so.
#[derive(Clone)]
pub struct McpPeer {
    pub(super) peer: Peer<RoleServer>,
    pub(super) session: Option<String>,
    /// In the `2026-07-28` era, the call's round of input requests
    /// (`InputRequiredResult`) instead of requests back to the client.
    pub(super) round: Option<Arc<InputRound>>,
    /// The key the next input request goes under.
    pub(super) key: Option<String>,
}

/// One round of a `2026-07-28` call: the client's answers it came with, and
/// the questions the tool asked that have none yet.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    pub(super) answers: std::collections::BTreeMap<String, Value>,
    pub(super) questions: Mutex<std::collections::BTreeMap<String, Value>>,
    pub(super) asked: std::sync::atomic::AtomicUsize,
    /// The client's capabilities, from the request's `_meta`.
    pub(super) capabilities: Value,
    /// A capability the tool needed and the client did not declare: the
    /// call is answered with the protocol's error for it (-32021).
    pub(super) missing: Mutex<Option<String>>,
}

impl InputRound {
    /// The questions asked without an answer, as `inputRequests`.
    pub(crate) fn questions(&self) -> std::collections::BTreeMap<String, Value> {
        self.questions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A capability the tool needed and the client did not declare.
    pub(crate) fn missing(&self) -> Option<String> {
        self.missing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl McpPeer {
    /// The client's name, as it announced itself (none in the stateless era,
    /// where clients do not introduce themselves).
    pub fn name(&self) -> Option<String> {
        Some(self.peer.peer_info()?.client_info.name.clone())
    }

    /// The client's version, as it announced itself.
    pub fn version(&self) -> Option<String> {
        Some(self.peer.peer_info()?.client_info.version.clone())
    }

    /// The protocol version negotiated with the client.
    pub fn protocol_version(&self) -> Option<String> {
        Some(self.peer.peer_info()?.protocol_version.to_string())
    }

    /// The Streamable HTTP session (`Mcp-Session-Id`), when there is one.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The client as an rmcp peer, for requests back to it.
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// The same client, whose next question (elicitation or sampling) goes
    /// under `key` in a `2026-07-28` round of input requests (by default,
    /// `elicitation-1`, `sampling-2`, … in the order the tool asks).
    pub fn keyed(&self, key: impl Into<String>) -> Self {
        McpPeer {
            key: Some(key.into()),
            ..self.clone()
        }
    }

    /// Whether the client declared `capability` (`elicitation`, `sampling`).
    fn declares(&self, capability: &str) -> bool {
        match &self.round {
            Some(round) => round.capabilities.get(capability).is_some(),
            None => self.peer.peer_info().is_some_and(|info| {
                serde_json::to_value(&info.capabilities)
                    .ok()
                    .and_then(|c| c.get(capability).cloned())
                    .is_some()
            }),
        }
    }

    /// Says the tool needs the client's `capability` (`sampling`,
    /// `elicitation`, `roots`): an error the tool passes on with `?` when
    /// the client did not declare it; in `2026-07-28` the call is then
    /// answered with the protocol's `MissingRequiredClientCapabilityError`
    /// (-32021) naming it.
    pub fn require(&self, capability: &str) -> Result<(), ToolError> {
        if self.declares(capability) {
            return Ok(());
        }
        if let Some(round) = &self.round {
            *round.missing.lock().unwrap_or_else(|p| p.into_inner()) = Some(capability.to_owned());
        }
        Err(unsupported(capability))
    }

    /// Asks the client `method` with `params`: a request back to it in
    /// `2025-11-25`; in `2026-07-28`, its answer from the call's
    /// `inputResponses`, or else a question for this round's
    /// `InputRequiredResult` (the tool then ends, and runs again with the
    /// answer).
    async fn ask(&self, method: &str, params: Value) -> Result<Value, ToolError> {
        let capability = method.split('/').next().unwrap_or(method);
        self.require(capability)?;
        let Some(round) = &self.round else {
            let request: rmcp::model::ServerRequest =
                serde_json::from_value(serde_json::json!({"method": method, "params": params}))
                    .map_err(|e| {
                        ToolError::failed(format!("the {capability} request cannot be built: {e}"))
                    })?;
            let answer = self
                .peer
                .send_request(request)
                .await
                .map_err(|e| transport(capability, e))?;
            return Ok(serde_json::to_value(answer).unwrap_or(Value::Null));
        };
        let index = round
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let key = self
            .key
            .clone()
            .unwrap_or_else(|| format!("{capability}-{index}"));
        if let Some(answer) = round.answers.get(&key) {
            return Ok(answer.clone());
        }
        round
            .questions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, serde_json::json!({"method": method, "params": params}));
        Err(ToolError::Failed {
            message: "this call needs the client's input; it runs again with the answer".to_owned(),
            retryable: true,
            source: None,
        })
    }

    /// Asks the client's user for a `T` (`elicitation/create`, form mode),
    /// with `T`'s schema as the form: a struct of strings, numbers, booleans
    /// and string enums, as the protocol allows. A client that did not
    /// declare elicitation gets no request: the tool gets an error it can
    /// report.
    ///
    /// Both protocol eras: in `2025-11-25` a request to the client; in
    /// `2026-07-28` the question goes out as the call's
    /// `InputRequiredResult` (this returns an error the tool passes on with
    /// `?`), and the client calls again with the answer, which this then
    /// returns — so a tool asks before it changes anything.
    ///
    /// ```no_run
    /// # use toolbox_mcp::{McpPeer, server::Elicitation};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Confirm { proceed: bool }
    /// # async fn tool(client: McpPeer) -> Result<String, toolbox_core::ToolError> {
    /// match client.elicit::<Confirm>("Delete the file?").await? {
    ///     Elicitation::Accept(Confirm { proceed: true }) => Ok("deleted".into()),
    ///     _ => Ok("kept".into()),
    /// }
    /// # }
    /// ```
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        let schema = toolbox_core::schema::arguments_schema::<T>().map_err(ToolError::failed)?;
        match self.elicit_with_schema(message, schema).await? {
            Elicitation::Accept(content) => serde_json::from_value(content.clone())
                .map(Elicitation::Accept)
                .map_err(|e| {
                    ToolError::failed(format!(
                        "the client's answer does not fit the form: {e}; got {}",
                        toolbox_core::args::echo(&content.to_string())
                    ))
                }),
            Elicitation::Decline => Ok(Elicitation::Decline),
            Elicitation::Cancel => Ok(Elicitation::Cancel),
        }
    }

    /// Asks the client's user to fill `schema` (an object of primitive
    /// properties), returning the answer as JSON.
    pub async fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicitation<Value>, ToolError> {
        let mut schema = schema;
        if let Some(object) = schema.as_object_mut() {
            object.remove("title");
        }
        let answer = self
            .ask(
                "elicitation/create",
                serde_json::json!({"mode": "form", "message": message.into(), "requestedSchema": schema}),
            )
            .await?;
        Ok(match answer.get("action").and_then(Value::as_str) {
            Some("accept") => Elicitation::Accept(
                answer
                    .get("content")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            ),
            Some("decline") => Elicitation::Decline,
            _ => Elicitation::Cancel,
        })
    }

    /// Asks the client's model for a completion of `prompt`
    /// (`sampling/createMessage`), at most `max_tokens` long, and returns
    /// its text. A client that did not declare sampling gets no request.
    ///
    /// In `2026-07-28` (where server→client requests are gone) the
    /// question goes out as the call's `InputRequiredResult` and the tool
    /// runs again with the answer, as [`elicit`](Self::elicit) does.
    pub async fn sample(
        &self,
        prompt: impl Into<String>,
        max_tokens: u32,
    ) -> Result<Sample, ToolError> {
        let answer = self
            .ask(
                "sampling/createMessage",
                serde_json::json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt.into()}}],
                    "maxTokens": max_tokens,
                }),
            )
            .await?;
        let text = match answer.get("content") {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Some(block) => block
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            None => String::new(),
        };
        let field = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
        Ok(Sample {
            text,
            model: field("model").unwrap_or_default(),
            stop_reason: field("stopReason"),
        })
    }
}

/// The user's answer to [`McpPeer::elicit`].
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// The user filled the form.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the form.
    Cancel,
}

/// The client model's answer to [`McpPeer::sample`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The completion's text.
    pub text: String,
    /// The model that wrote it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, …).
    pub stop_reason: Option<String>,
}

fn unsupported(capability: &str) -> ToolError {
    ToolError::Failed {
        message: format!("the MCP client does not support {capability}, which this tool needs"),
        retryable: false,
        source: Some(format!("the client did not declare the `{capability}` capability").into()),
    }
}

fn transport(what: &str, error: rmcp::service::ServiceError) -> ToolError {
    ToolError::Transport {
        message: format!("the MCP client did not answer the {what} request"),
        source: Some(Box::new(error)),
    }
}

impl std::fmt::Debug for McpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPeer")
            .field("name", &self.name())
            .field("protocol_version", &self.protocol_version())
            .field("session_id", &self.session)
            .finish()
    }
}

impl FromContext for McpPeer {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<McpPeer>()
            .cloned()
            .ok_or_else(|| ToolError::Failed {
                message: "this tool can only be called over MCP".to_owned(),
                retryable: false,
                source: Some(
                    "the context has no `McpPeer`: the call did not come from an MCP client".into(),
                ),
            })
    }
}
