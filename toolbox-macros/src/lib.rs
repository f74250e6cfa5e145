//! `#[tool]` and `#[tool_box]`: tools from ordinary Rust functions and impl
//! blocks. Use them through the `toolbox` facade (`toolbox::tool`,
//! `toolbox::tool_box`, both in `toolbox::prelude`).
//!
//! The crate reads in stages, like `thiserror`: `entry` (the two entry
//! points, which read the item and run the stages), [`attr`](crate) (darling
//! structs for every attribute), `ast` (the tools, with every span), `valid`
//! (every rule and its message, errors accumulated so one mistake does not
//! hide the next), `expand` (the impl) and `fallback` (a stand-in impl when
//! there are errors, so only the real error shows).

mod ast;
mod attr;
mod case;
mod discover;
mod doc;
mod entry;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

#[doc = include_str!("../docs/tool.md")]
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry::tool(attr.into(), item.into()).into()
}

#[doc = include_str!("../docs/tool_box.md")]
#[proc_macro_attribute]
pub fn tool_box(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry::tool_box(attr.into(), item.into()).into()
}
