//! `#[tool]` on a free function: the function stays as written, and a unit
//! struct `{CamelName}Tool` becomes a one-tool box for it.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;

use crate::attr::{parse_tool_attr, Errors};
use crate::expand::{default_krate, generate, BoxTarget};
use crate::model::{Site, ToolFn};
use crate::validate;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let mut function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new(
                item.clone()
                    .into_iter()
                    .next()
                    .map_or_else(proc_macro2::Span::call_site, |t| t.span()),
                "`#[tool]` goes on a function (or on a method inside a `#[tool_box]` impl block)",
            )
            .to_compile_error();
            return quote!(#error #item);
        }
    };
    let tool_attr = parse_tool_attr(attr, &mut errors);
    let krate = default_krate(tool_attr.krate.as_ref());
    if let Some(receiver) = function.sig.receiver() {
        errors.at(
            receiver.self_token.span,
            "a `#[tool]` method needs `#[tool_box]` on its impl block, which reads the `#[tool]` methods",
        );
        strip_param_attributes(&mut function);
        let compile_errors = errors.to_compile_errors();
        return quote!(#compile_errors #function);
    }
    let attrs = function.attrs.clone();
    let tool = ToolFn::parse(
        Site::Free,
        &attrs,
        tool_attr,
        &mut function.sig,
        &mut errors,
    );
    validate::tools(std::slice::from_ref(&tool), &mut errors);
    if !errors.is_empty() {
        let compile_errors = errors.to_compile_errors();
        return quote!(#compile_errors #function);
    }
    // A tool's parameters mirror a JSON object; many of them is normal.
    function
        .attrs
        .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    let vis = &function.vis;
    let struct_ident = format_ident!(
        "{}Tool",
        validate::camel_case(&function.sig.ident.to_string())
    );
    let doc = format!(
        "The `#[tool]` function [`{0}`] as a box with one tool, `{1}`.",
        function.sig.ident, tool.name
    );
    let generics = syn::Generics::default();
    let target = BoxTarget {
        krate,
        self_ty: quote!(#struct_ident),
        generics: &generics,
        name: tool.name.clone(),
        description: tool.description.clone(),
        methods: false,
    };
    let generated = generate(&target, std::slice::from_ref(&tool));
    quote! {
        #function

        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #struct_ident;

        #generated
    }
}

fn strip_param_attributes(function: &mut ItemFn) {
    for input in function.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| {
                !(a.path().is_ident("doc")
                    || a.path().is_ident("arg")
                    || a.path().is_ident("inject")
                    || a.path().is_ident("args"))
            });
        }
    }
}
