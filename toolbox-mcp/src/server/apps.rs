//! MCP Apps on the server side: the `ui://` views a server registered,
//! listed and read (`resources/list`, `resources/read`, nothing else), the
//! extension advertised, and every UI tool's view checked to be
//! registered before serving starts.

use rmcp::model::{
    ErrorData, ExtensionCapabilities, ListResourcesResult, ReadResourceResult, ResourcesCapability,
    ServerCapabilities,
};
use serde_json::{json, Map};
use toolbox_core::ToolBox;

use crate::apps::{UiResource, UI_EXTENSION, UI_MIME_TYPE};

/// Announces the views: resources (listing and reading) and the extension.
pub(super) fn advertise(capabilities: &mut ServerCapabilities, views: &[UiResource]) {
    if views.is_empty() {
        return;
    }
    capabilities.resources = Some(ResourcesCapability::default());
    let mut settings = Map::new();
    settings.insert("mimeTypes".into(), json!([UI_MIME_TYPE]));
    capabilities
        .extensions
        .get_or_insert_with(ExtensionCapabilities::new)
        .insert(UI_EXTENSION.to_owned(), settings);
}

/// `resources/list`: the views.
pub(super) fn list(views: &[UiResource]) -> ListResourcesResult {
    ListResourcesResult::with_all_items(views.iter().map(UiResource::listed).collect())
}

/// `resources/read`: a view, or an error naming the URI and what is served.
pub(super) fn read(views: &[UiResource], uri: &str) -> Result<ReadResourceResult, ErrorData> {
    match views.iter().find(|view| view.uri == uri) {
        Some(view) => Ok(ReadResourceResult::new(vec![view.contents()])),
        None => Err(ErrorData::resource_not_found(
            format!(
                "no resource `{uri}`: this server serves only its MCP Apps views ({})",
                served(views)
            ),
            Some(json!({"uri": uri})),
        )),
    }
}

fn served(views: &[UiResource]) -> String {
    if views.is_empty() {
        return "none registered".to_owned();
    }
    views
        .iter()
        .map(|view| format!("`{}`", view.uri))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A view's URI that is not `ui://`, or a tool whose view was never
/// registered: what serving refuses to start with.
pub(super) fn check<B: ToolBox + ?Sized>(toolbox: &B, views: &[UiResource]) -> Result<(), String> {
    if let Some(view) = views.iter().find(|view| !view.uri.starts_with("ui://")) {
        return Err(format!(
            "the MCP Apps view `{}` is not a ui:// URI",
            view.uri
        ));
    }
    for spec in toolbox.catalog() {
        let Some(uri) = spec.ui.as_ref().and_then(|ui| ui.resource_uri.as_deref()) else {
            continue;
        };
        if !views.iter().any(|view| view.uri == uri) {
            return Err(format!(
                "the tool `{}` shows the view `{uri}`, which the server does not serve: register it with `McpServer::ui_resource(UiResource::new(\"{uri}\", html))` (served: {})",
                spec.name,
                served(views)
            ));
        }
    }
    Ok(())
}
