//! A caught panic as a tool error: the one place the lifecycle, the
//! handler's guards and the response's serialization turn a payload into
//! text.

use std::any::Any;

use crate::error::ToolError;

/// The error a caught panic becomes.
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    ToolError::Panicked {
        message: panic_text(&*payload),
    }
}

/// A panic payload's text, when it has one.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}
