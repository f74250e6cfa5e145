//! `#[tool]` and `#[tool_box]`: tools from ordinary Rust functions and impl
//! blocks. Use them through the `toolbox` facade, whose documentation
//! describes the attributes; this crate holds only the expansion.

mod attr;
mod doc;
mod expand;
mod model;
mod validate;

use proc_macro::TokenStream;

/// Makes a free function a tool, or marks a method of a `#[tool_box]` impl
/// block (or a function of a `#[tool_box]` module) as one.
///
/// On a free function `fn get_weather(..)`, the function stays as written and
/// a unit struct `GetWeatherTool` is added: a one-tool box.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_fn::expand(attr.into(), item.into()).into()
}

/// Makes an inherent impl block or an inline module a box: every `#[tool]`
/// method (or function) in it becomes one of its tools.
#[proc_macro_attribute]
pub fn tool_box(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_box::expand(attr.into(), item.into()).into()
}
