//! MCP Apps' views (`io.modelcontextprotocol/ui`): a [`UiResource`] is the
//! HTML a host renders for a tool whose `_meta.ui.resourceUri` names it,
//! with the CSP, permissions and border preference the host applies. A
//! server serves them ([`McpServer::ui_resource`](crate::McpServer::ui_resource));
//! a client reads them ([`McpToolBox::ui_resource`](crate::McpToolBox::ui_resource)).

use rmcp::model::{MetaObject, Resource, ResourceContents};
use serde_json::{Map, Value};

/// The extension's identifier, as declared in capabilities.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP Apps view.
pub const UI_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// One view: a `ui://` resource of HTML, with what the host applies.
/// Read from a server, every key of its `_meta.ui` is kept (those this
/// type does not name in [`other`](UiResource::other)), so a proxy serves
/// the view as the server sent it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct UiResource {
    /// The `ui://` URI tools name in `_meta.ui.resourceUri`.
    pub uri: String,
    /// The view's HTML document.
    pub html: String,
    /// `_meta.ui.csp`: the domains the view may reach
    /// (`connectDomains`, `resourceDomains`, `frameDomains`, …).
    pub csp: Option<Value>,
    /// `_meta.ui.permissions`: what the host grants the iframe
    /// (`camera`, `microphone`, `geolocation`, `clipboardWrite`).
    pub permissions: Option<Value>,
    /// `_meta.ui.prefersBorder`: whether the host draws a border.
    pub prefers_border: Option<bool>,
    /// `_meta.ui.domain`: the dedicated origin the view asks the host to
    /// render it on (its form is the host's).
    pub domain: Option<String>,
    /// Every other key of `_meta.ui`, unchanged.
    pub other: Map<String, Value>,
}

impl UiResource {
    /// A view at `uri` (which must start with `ui://`) made of `html`.
    pub fn new(uri: impl Into<String>, html: impl Into<String>) -> Self {
        UiResource {
            uri: uri.into(),
            html: html.into(),
            csp: None,
            permissions: None,
            prefers_border: None,
            domain: None,
            other: Map::new(),
        }
    }

    /// Sets the view's content security policy (`_meta.ui.csp`).
    pub fn csp(mut self, csp: Value) -> Self {
        self.csp = Some(csp);
        self
    }

    /// Sets what the host grants the view (`_meta.ui.permissions`).
    pub fn permissions(mut self, permissions: Value) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Sets whether the host draws a border (`_meta.ui.prefersBorder`).
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.prefers_border = Some(border);
        self
    }

    /// Sets the dedicated origin the view asks for (`_meta.ui.domain`).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// `_meta` with its `ui` object, or `None` when there is nothing to say.
    fn meta(&self) -> Option<MetaObject> {
        let mut ui = self.other.clone();
        if let Some(csp) = &self.csp {
            ui.insert("csp".into(), csp.clone());
        }
        if let Some(permissions) = &self.permissions {
            ui.insert("permissions".into(), permissions.clone());
        }
        if let Some(border) = self.prefers_border {
            ui.insert("prefersBorder".into(), Value::Bool(border));
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), Value::String(domain.clone()));
        }
        if ui.is_empty() {
            return None;
        }
        let mut meta = Map::new();
        meta.insert("ui".into(), Value::Object(ui));
        Some(MetaObject(meta))
    }

    /// The `resources/list` entry.
    pub(crate) fn listed(&self) -> Resource {
        let name = self.uri.trim_start_matches("ui://").to_owned();
        let mut resource = Resource::new(self.uri.clone(), name);
        resource.mime_type = Some(UI_MIME_TYPE.to_owned());
        resource.meta = self.meta();
        resource
    }

    /// The `resources/read` contents.
    pub(crate) fn contents(&self) -> ResourceContents {
        ResourceContents::TextResourceContents {
            uri: self.uri.clone(),
            mime_type: Some(UI_MIME_TYPE.to_owned()),
            text: self.html.clone(),
            meta: self.meta(),
        }
    }

    /// A view from `resources/read` contents: its text, and its `_meta.ui`
    /// from the contents or, where they carry none, the listing's.
    pub(crate) fn read(uri: &str, contents: &ResourceContents) -> Option<UiResource> {
        let ResourceContents::TextResourceContents { text, meta, .. } = contents else {
            return None;
        };
        let mut ui = meta
            .as_ref()
            .and_then(|meta| meta.0.get("ui"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let prefers_border = take(&mut ui, "prefersBorder", Value::as_bool);
        let domain = take(&mut ui, "domain", |v| v.as_str().map(str::to_owned));
        Some(UiResource {
            uri: uri.to_owned(),
            html: text.clone(),
            csp: ui.remove("csp"),
            permissions: ui.remove("permissions"),
            prefers_border,
            domain,
            other: ui,
        })
    }
}

/// `key`'s value taken out of `ui` where `typed` reads it; a value of
/// another type stays in `ui` (the view's `other` keys), unchanged.
fn take<T>(
    ui: &mut Map<String, Value>,
    key: &str,
    typed: impl FnOnce(&Value) -> Option<T>,
) -> Option<T> {
    let value = ui.get(key).and_then(typed)?;
    ui.remove(key);
    Some(value)
}
