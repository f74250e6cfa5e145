//! MCP Apps on the client side: a tool whose `_meta.ui.visibility` leaves
//! out the model is kept from the model (the extension's MUST) and
//! reached only through the view's path: [`McpToolBox::app_tools`] and
//! [`McpToolBox::call_for_app`]. Served again ([`McpToolBox::for_proxy`],
//! [`McpToolBox::ui_resources`]), the box lists every tool and view as the
//! server did, for the host behind the proxy to sort.

use serde_json::Value;
use toolbox_core::dispatch::DispatchFuture;
use toolbox_core::{
    Arguments, Context, ToolBox, ToolBoxExt, ToolError, ToolHandler, ToolResponse,
    ToolSpecification,
};

use rmcp::model::ReadResourceRequestParams;

use super::McpToolBox;
use crate::apps::UiResource;

/// Who calls a remote tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Caller {
    /// The model (the box as a [`ToolBox`]).
    Model,
    /// An MCP Apps view, through the host.
    App,
    /// A host behind a proxy ([`ProxyTools`]): the model or a view, which
    /// the proxy cannot tell apart; the host sorts them.
    Host,
}

/// Why `caller` may not call `spec`: a view-only tool is unknown to the
/// model (as if never listed; the suggestions name only what the model
/// is offered); a tool whose visibility leaves out the view is refused to
/// it by name.
pub(super) fn refusal<'s>(
    spec: &ToolSpecification,
    caller: Caller,
    tools: impl Iterator<Item = &'s ToolSpecification>,
) -> Option<ToolError> {
    let ui = spec.ui.as_ref()?;
    match caller {
        Caller::Model if !ui.for_model() => Some(ToolError::unknown_tool(
            &spec.name,
            tools.filter(|t| t.for_model()).map(|t| t.name.as_str()),
        )),
        Caller::App if !ui.for_app() => Some(ToolError::failed(format!(
            "the tool `{}` is not callable from its app's view: its MCP Apps visibility is {}",
            spec.name,
            ui.visibility.as_deref().unwrap_or_default().join(", ")
        ))),
        _ => None,
    }
}

/// The box as an MCP Apps view sees it: the tools it may call, each call
/// through the whole lifecycle.
struct AppView<'a>(&'a McpToolBox);

impl ToolBox for AppView<'_> {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.0.app_tools()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        self.0.dispatch_as(name, arguments, ctx, Caller::App)
    }
}

/// An [`McpToolBox`] to serve again (a proxy, with
/// [`McpServer::proxy`](crate::server::McpServer::proxy) or
/// `McpServer::new(remote.for_proxy(), ..)`): every tool the server lists,
/// the model's and its views' alike, each with its `_meta.ui` unchanged,
/// and every call forwarded whoever makes it. A proxy cannot tell a
/// model's call from a view's; the host it serves can, and the extension
/// asks the host to keep view-only tools from its model and to refuse a
/// view's call to a tool whose visibility leaves out `"app"`. Provider
/// definitions and the `toolbox::catalog::Catalog` still
/// keep view-only tools from a model that is given this box directly.
pub struct ProxyTools(McpToolBox);

impl std::fmt::Debug for ProxyTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ProxyTools").field(&self.0.name()).finish()
    }
}

impl ProxyTools {
    /// The box inside.
    pub fn remote(&self) -> &McpToolBox {
        &self.0
    }
}

impl ToolBox for ProxyTools {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.0.snapshot().iter().map(|r| r.spec.clone()).collect()
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, _: &Context) -> Result<(), ToolError> {
        let tools = self.0.snapshot();
        let index = self.0.find(name, &tools, Caller::Host)?;
        super::prepared(&tools[index], name, arguments).map(drop)
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        self.0.dispatch_as(name, arguments, ctx, Caller::Host)
    }

    fn close(&self) -> toolbox_core::dispatch::BoxFuture<'_, Result<(), ToolError>> {
        self.0.close()
    }
}

impl McpToolBox {
    /// This box to serve again: see [`ProxyTools`].
    pub fn for_proxy(self) -> ProxyTools {
        ProxyTools(self)
    }

    /// Every MCP Apps view the server's tools name, each read once
    /// (`resources/read`), in the order the tools name them: what a proxy
    /// serves again ([`McpServer::proxy`](crate::server::McpServer::proxy) does).
    /// A view the server cannot serve is an error naming the view and the
    /// tool that names it.
    pub async fn ui_resources(&self) -> Result<Vec<UiResource>, ToolError> {
        let mut views: Vec<UiResource> = Vec::new();
        for remote in self.snapshot().iter() {
            let Some(uri) = remote
                .spec
                .ui
                .as_ref()
                .and_then(|ui| ui.resource_uri.as_deref())
            else {
                continue;
            };
            if views.iter().any(|view| view.uri == uri) {
                continue;
            }
            let view = self.ui_resource(uri).await.map_err(|error| {
                ToolError::failed(format!(
                    "the view `{uri}` of the tool `{}` could not be read: {error}",
                    remote.spec.name
                ))
            })?;
            views.push(view);
        }
        Ok(views)
    }

    /// The tools an MCP Apps view may call (visibility with `"app"`, or
    /// none given), view-only tools among them: what an application that
    /// renders Apps proxies the view's `tools/call` to. Each carries its
    /// `_meta.ui` in [`ToolSpecification::ui`].
    pub fn app_tools(&self) -> Vec<ToolSpecification> {
        self.snapshot()
            .iter()
            .filter(|r| r.spec.ui.as_ref().is_none_or(|ui| ui.for_app()))
            .map(|r| r.spec.clone())
            .collect()
    }

    /// Reads the MCP Apps view at `uri` (`resources/read`): its HTML with
    /// the CSP, permissions and border preference the host must apply.
    /// A URI that is not `ui://`, or contents that are not text, is an
    /// error naming it.
    pub async fn ui_resource(&self, uri: &str) -> Result<UiResource, ToolError> {
        if !uri.starts_with("ui://") {
            return Err(ToolError::failed(format!(
                "`{uri}` is not an MCP Apps view: views are ui:// resources"
            )));
        }
        let read = self.peer.read_resource(ReadResourceRequestParams::new(uri));
        let result = tokio::time::timeout(self.call_timeout, read)
            .await
            .map_err(|_| ToolError::TimedOut {
                after: self.call_timeout,
            })?
            .map_err(super::cause::service_error)?;
        result
            .contents
            .iter()
            .find_map(|contents| UiResource::read(uri, contents))
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "the server's `{uri}` holds no text: an MCP Apps view is an HTML document"
                ))
            })
    }

    /// Calls `name` on behalf of an MCP Apps view (the host proxying the
    /// view's `tools/call`), through the same lifecycle as a model's call;
    /// a tool whose visibility leaves out `"app"` is refused by name.
    pub async fn call_for_app(
        &self,
        name: &str,
        arguments: &Value,
        ctx: &Context,
        handler: &ToolHandler,
    ) -> ToolResponse {
        AppView(self).call(name, arguments, ctx, handler).await
    }
}
