//! Content beyond the text a model reads: images, audio, embedded
//! resources and resource links, in the order a tool gave them.
//!
//! A [`ToolResponse`](crate::response::ToolResponse) always carries the text the model
//! reads. A tool that returns more — a chart, a recording, a file — gives
//! [`Content`] parts: an MCP client gets them as those content blocks, in
//! order; a provider gets what it accepts (see `docs/providers.md`), and the
//! model's text names what it cannot see.
//!
//! ```
//! use toolbox_core::{Content, ToolResponse};
//!
//! let png = [0x89, b'P', b'N', b'G'];
//! let response = ToolResponse::from_parts([
//!     Content::text("The chart:"),
//!     Content::image(png, "image/png"),
//! ]);
//! assert_eq!(response.content, "The chart:\n[image/png image]");
//! assert_eq!(response.parts()[1], Content::image(png, "image/png"));
//! ```

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One block of a result's content, in MCP's shape (`{"type": "image",
/// "data": …, "mimeType": …}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The image's bytes in base64.
        data: String,
        /// Its type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The audio's bytes in base64.
        data: String,
        /// Its type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource carried in the result.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

/// The resource of [`Content::Resource`]: text or base64 bytes under a URI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// Its type.
    #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text, for a text resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its bytes in base64, for a binary resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl Content {
    /// Text.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image from its bytes.
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// Audio from its bytes.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A text resource carried in the result.
    pub fn text_resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: Some(text.into()),
                blob: None,
            },
        }
    }

    /// A binary resource carried in the result.
    pub fn blob_resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: None,
                blob: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            },
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// The decoded bytes of an image, audio or binary resource.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        let data = match self {
            Content::Image { data, .. } | Content::Audio { data, .. } => data,
            Content::Resource { resource } => resource.blob.as_ref()?,
            _ => return None,
        };
        base64::engine::general_purpose::STANDARD.decode(data).ok()
    }

    /// What a model that cannot see this part reads instead: text as is,
    /// a text resource's text, and a short note for the rest.
    pub fn as_model_text(&self) -> String {
        match self {
            Content::Text { text } => text.clone(),
            Content::Image { mime_type, .. } => format!("[{mime_type} image]"),
            Content::Audio { mime_type, .. } => format!("[{mime_type} audio]"),
            Content::Resource { resource } => match &resource.text {
                Some(text) => text.clone(),
                None => format!("[resource {}]", resource.uri),
            },
            Content::ResourceLink { uri, name, .. } => format!("[resource link {name}: {uri}]"),
        }
    }
}

/// The key of a response's element that holds its content blocks (MCP's
/// name for them).
pub(crate) const CONTENT_KEY: &str = "content";

/// The content blocks of an element, as JSON, when it holds a list of
/// MCP-shaped blocks (each an object with a string `type`).
pub(crate) fn blocks(element: Option<&Value>) -> Option<&Vec<Value>> {
    let blocks = element?.get(CONTENT_KEY)?.as_array()?;
    blocks
        .iter()
        .all(|b| b.get("type").is_some_and(Value::is_string))
        .then_some(blocks)
}

/// An element holding `parts` as content blocks.
pub(crate) fn element_of(parts: &[Content]) -> Value {
    let blocks: Vec<Value> = parts
        .iter()
        .filter_map(|p| serde_json::to_value(p).ok())
        .collect();
    let mut element = Map::new();
    element.insert(CONTENT_KEY.into(), Value::Array(blocks));
    Value::Object(element)
}
