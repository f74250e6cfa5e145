//! `#[tool_box]` on an inherent impl block or an inline module: it reads and
//! strips the inner `#[tool]`s itself, through the same model as a free
//! `#[tool]`, and always emits the user's item.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{ImplItem, Item, ItemImpl, ItemMod, Type};

use crate::attr::{is_tool_attribute, parse_box_attr, parse_tool_attribute, BoxAttr, Errors};
use crate::doc;
use crate::expand::{default_krate, generate, mentions, BoxTarget};
use crate::model::{ParamKind, Site, ToolFn};
use crate::validate;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let box_attr = parse_box_attr(attr, &mut errors);
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Impl(block)) => expand_impl(block, box_attr, errors),
        Ok(Item::Mod(module)) => expand_mod(module, box_attr, errors),
        _ => {
            let span = item
                .clone()
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |t| t.span());
            let error = syn::Error::new(
                span,
                "`#[tool_box]` goes on an inherent impl block or an inline module",
            )
            .to_compile_error();
            quote!(#error #item)
        }
    }
}

/// Reads `#[tool]` functions out of a list of attributes + signatures.
fn take_tool(
    attrs: &mut Vec<syn::Attribute>,
    sig: &mut syn::Signature,
    site: Site,
    errors: &mut Errors,
) -> Option<ToolFn> {
    let position = attrs.iter().position(is_tool_attribute)?;
    let attribute = attrs.remove(position);
    if let Some(second) = attrs.iter().find(|a| is_tool_attribute(a)) {
        errors.at(second.span(), "`#[tool]` is given twice on this function");
    }
    let tool_attr = parse_tool_attribute(&attribute, errors);
    if let Some(krate) = &tool_attr.krate {
        errors.at(
            krate.span(),
            "`crate` goes on the `#[tool_box]` attribute, not on its tools",
        );
    }
    Some(ToolFn::parse(site, attrs, tool_attr, sig, errors))
}

fn expand_impl(mut block: ItemImpl, box_attr: BoxAttr, mut errors: Errors) -> TokenStream {
    if let Some((_, path, _)) = &block.trait_ {
        errors.at(
            path.span(),
            "`#[tool_box]` goes on an inherent impl block (`impl Weather { .. }`), not on a trait impl",
        );
    }
    let mut tools = Vec::new();
    for item in &mut block.items {
        if let ImplItem::Fn(method) = item {
            if let Some(tool) = take_tool(
                &mut method.attrs,
                &mut method.sig,
                Site::Method,
                &mut errors,
            ) {
                method
                    .attrs
                    .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
                tools.push(tool);
            }
        }
    }
    let type_name = match &*block.self_ty {
        Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    let name = match (&box_attr.name, &type_name) {
        (Some(name), _) => {
            validate::name(&name.value(), name.span(), "box", &mut errors);
            name.value()
        }
        (None, Some(type_name)) => validate::snake_case(type_name),
        (None, None) => {
            errors.at(
                block.self_ty.span(),
                "name this box: `#[tool_box(name = \"…\")]`",
            );
            String::new()
        }
    };
    for generic in block.generics.type_params() {
        for tool in &tools {
            for param in &tool.params {
                if matches!(param.kind, ParamKind::Arg { .. } | ParamKind::Whole { .. })
                    && mentions(&param.ty, &generic.ident)
                {
                    errors.at(
                        param.ty.span(),
                        format!(
                            "a tool argument's type cannot use the impl's generic parameter `{}`: its schema must be the same for every `{}`",
                            generic.ident, generic.ident
                        ),
                    );
                }
            }
        }
    }
    validate::tools(&tools, &mut errors);
    if tools.is_empty() && errors.is_empty() {
        errors.at(
            block.impl_token.span,
            "this `#[tool_box]` has no tools: mark methods with `#[tool]`",
        );
    }
    if !errors.is_empty() {
        let compile_errors = errors.to_compile_errors();
        return quote!(#compile_errors #block);
    }
    let description = doc::description(&doc::lines(&block.attrs));
    let target = BoxTarget {
        krate: default_krate(box_attr.krate.as_ref()),
        self_ty: block.self_ty.to_token_stream(),
        generics: &block.generics,
        name,
        description,
        methods: true,
    };
    let generated = generate(&target, &tools);
    quote! {
        #block
        #generated
    }
}

fn expand_mod(mut module: ItemMod, box_attr: BoxAttr, mut errors: Errors) -> TokenStream {
    let Some((_, items)) = &mut module.content else {
        let error = syn::Error::new(
            module.ident.span(),
            "`#[tool_box]` needs the module's items inline (`mod crm { .. }`), not in another file",
        )
        .to_compile_error();
        return quote!(#error #module);
    };
    let mut tools = Vec::new();
    for item in items.iter_mut() {
        if let Item::Fn(function) = item {
            if let Some(tool) = take_tool(
                &mut function.attrs,
                &mut function.sig,
                Site::Module,
                &mut errors,
            ) {
                function
                    .attrs
                    .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
                tools.push(tool);
            }
        }
    }
    let name = match &box_attr.name {
        Some(name) => {
            validate::name(&name.value(), name.span(), "box", &mut errors);
            name.value()
        }
        None => module.ident.to_string().trim_start_matches("r#").to_owned(),
    };
    validate::tools(&tools, &mut errors);
    if tools.is_empty() && errors.is_empty() {
        errors.at(
            module.ident.span(),
            "this `#[tool_box]` module has no tools: mark functions with `#[tool]`",
        );
    }
    if !errors.is_empty() {
        let compile_errors = errors.to_compile_errors();
        return quote!(#compile_errors #module);
    }
    let description = doc::description(&doc::lines(&module.attrs));
    let generics = syn::Generics::default();
    let target = BoxTarget {
        krate: default_krate(box_attr.krate.as_ref()),
        self_ty: quote!(Tools),
        generics: &generics,
        name: name.clone(),
        description,
        methods: false,
    };
    let generated = generate(&target, &tools);
    let doc = format!("The `#[tool]` functions of this module as one box, `{name}`.");
    if let Some((_, items)) = &mut module.content {
        items.push(syn::parse_quote! {
            #[doc = #doc]
            #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
            pub struct Tools;
        });
        items.push(Item::Verbatim(generated));
    }
    module.into_token_stream()
}
