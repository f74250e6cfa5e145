//! The box with no tools.

use crate::dispatch::DispatchFuture;
use crate::{
    args::Arguments, context::Context, error::ToolError, spec::ToolSpecification, toolbox::ToolBox,
};

/// A box with no tools: the default when an agent should call nothing.
/// Every call is an unknown tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyToolBox;

impl ToolBox for EmptyToolBox {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        Vec::new()
    }

    fn specification(
        &self,
        _: &str,
        _: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        None
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::ready(Err(ToolError::unknown_tool(name, [])))
    }
}
