//! The items the macros go on, read in stages: the attribute (`attr`), the
//! tools (`ast`), every rule (`valid`), then the impl (`expand`) or, when
//! anything was reported, the stand-in (`fallback`). Impl blocks and inline
//! modules share one path; a free `#[tool]` is a box of one.

use darling::error::Accumulator;
use darling::Error;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::spanned::Spanned;
use syn::{Attribute, Generics, ImplItem, Item, ItemFn, ItemImpl, ItemMod, Signature, Type};

use crate::ast::{Site, Tool};
use crate::attr::{self, BoxArgs, ToolArgs};
use crate::expand::{self, BoxTarget};
use crate::valid;
use crate::{case, discover, doc, fallback};

/// What `#[tool_box]` goes on.
enum Container {
    Impl(ItemImpl),
    Mod(ItemMod),
}

impl Container {
    fn site(&self) -> Site {
        match self {
            Container::Impl(_) => Site::Method,
            Container::Mod(_) => Site::Module,
        }
    }

    /// Every function of the container, with its attributes.
    fn functions(&mut self) -> Vec<(&mut Vec<Attribute>, &mut Signature)> {
        match self {
            Container::Impl(block) => block
                .items
                .iter_mut()
                .filter_map(|item| match item {
                    ImplItem::Fn(method) => Some((&mut method.attrs, &mut method.sig)),
                    _ => None,
                })
                .collect(),
            Container::Mod(module) => module
                .content
                .iter_mut()
                .flat_map(|(_, items)| items.iter_mut())
                .filter_map(|item| match item {
                    Item::Fn(function) => Some((&mut function.attrs, &mut function.sig)),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The rules of the container itself, and its default box name.
    fn default_name(&self, errors: &mut Accumulator) -> String {
        match self {
            Container::Impl(block) => {
                if let Some((path, _)) = &block.trait_ {
                    errors.push(valid::trait_impl(path.span()));
                }
                match &*block.self_ty {
                    Type::Path(path) => path
                        .path
                        .segments
                        .last()
                        .map(|s| case::snake_case(&s.ident.to_string()))
                        .unwrap_or_default(),
                    other => {
                        errors.push(valid::unnamed_box(other.span()));
                        String::new()
                    }
                }
            }
            Container::Mod(module) => module.ident.to_string().trim_start_matches("r#").to_owned(),
        }
    }

    fn no_tools(&self) -> Error {
        match self {
            Container::Impl(block) => valid::impl_without_tools(block.impl_token.span),
            Container::Mod(module) => valid::module_without_tools(module.ident.span()),
        }
    }

    fn description(&self) -> Option<String> {
        let attrs = match self {
            Container::Impl(block) => &block.attrs,
            Container::Mod(module) => &module.attrs,
        };
        doc::description(&doc::lines(attrs))
    }

    fn self_ty(&self) -> TokenStream {
        match self {
            Container::Impl(block) => block.self_ty.to_token_stream(),
            Container::Mod(_) => quote!(Tools),
        }
    }

    fn generics(&self) -> Generics {
        match self {
            Container::Impl(block) => block.generics.clone(),
            Container::Mod(_) => Generics::default(),
        }
    }

    /// The item as written (tool attributes read), with `generated` beside
    /// it; a module gains its `Tools` type and keeps the impl inside.
    fn emit(self, name: &str, generated: TokenStream) -> TokenStream {
        match self {
            Container::Impl(block) => quote!(#block #generated),
            Container::Mod(mut module) => {
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
        }
    }
}

fn first_span(item: &TokenStream) -> Span {
    item.clone()
        .into_iter()
        .find(|token| !matches!(token, proc_macro2::TokenTree::Punct(p) if p.as_char() == '#'))
        .map_or_else(Span::call_site, |token| token.span())
}

/// The errors as `compile_error!`s, before `item`.
fn failed(errors: Accumulator, item: impl ToTokens) -> TokenStream {
    let errors = match errors.finish() {
        Ok(()) => TokenStream::new(),
        Err(error) => error.write_errors(),
    };
    quote!(#errors #item)
}

/// `#[tool_box]` on an impl block or an inline module.
pub(crate) fn tool_box(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Error::accumulator();
    let args: BoxArgs = errors.handle(attr::from_tokens(attr)).unwrap_or_default();
    if let Some(error) = valid::check_without_facade(args.krate.as_ref(), args.check.as_ref()) {
        errors.push(error);
    }
    let mut container = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Impl(block)) => Container::Impl(block),
        Ok(Item::Mod(module)) if module.content.is_some() => Container::Mod(module),
        Ok(Item::Mod(module)) => {
            errors.push(valid::module_not_inline(module.ident.span()));
            return failed(errors, module);
        }
        _ => {
            errors.push(valid::not_a_box_item(first_span(&item)));
            return failed(errors, item);
        }
    };
    let site = container.site();
    let mut tools = Vec::new();
    for (attrs, sig) in container.functions() {
        let Some(position) = attrs.iter().position(attr::is_tool_attribute) else {
            continue;
        };
        let attribute = attrs.remove(position);
        while let Some(second) = attrs.iter().position(attr::is_tool_attribute) {
            let second = attrs.remove(second);
            errors.push(valid::tool_twice(second.path().span()));
        }
        let args: ToolArgs = errors
            .handle(attr::from_attribute(&attribute))
            .unwrap_or_default();
        tools.push(Tool::read(site, attrs, args, sig, &mut errors));
        // A tool's parameters mirror a JSON object; many of them is normal.
        attrs.push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    }
    let default_name = container.default_name(&mut errors);
    let name = match &args.name {
        Some(name) => {
            valid::name(&name.value(), name.span(), "box", &mut errors);
            name.value()
        }
        None => default_name,
    };
    for tool in &tools {
        valid::tool(tool, &mut errors);
    }
    valid::tools(&tools, &mut errors);
    valid::generic_arguments(&container.generics(), &tools, &mut errors);
    if tools.is_empty() {
        errors.push(container.no_tools());
    }
    let target = BoxTarget {
        krate: expand::krate(args.krate.as_ref()),
        self_ty: container.self_ty(),
        generics: container.generics(),
        name: name.clone(),
        description: container.description(),
        defer: args.defer.is_present(),
        callers: args.callers,
    };
    match errors.finish() {
        Ok(()) => {
            let mut generated = expand::generate(&target, &tools);
            let generic = !target.generics.params.is_empty();
            let build = match &container {
                Container::Mod(_) if matches!(args.register, Some(attr::Register::Off)) => None,
                Container::Mod(_) => Some(discover::Build::Unit),
                Container::Impl(_) => discover::Build::from_register(args.register.as_ref()),
            };
            let span = match &container {
                Container::Impl(block) => block.self_ty.span(),
                Container::Mod(module) => module.ident.span(),
            };
            let item = |build| discover::Item {
                krate: &target.krate,
                ty: target.self_ty.clone(),
                name: &name,
                module: Some(name.clone()),
                build,
                span,
            };
            // A generic impl has no one type to build: it is not
            // discovered (`scan` a built box instead).
            if let (Some(build), false) = (build, generic) {
                generated.extend(discover::submit(&item(build)));
            }
            if let Some(checks) = &args.check {
                if generic {
                    let error = valid::check_on_generic(span);
                    generated.extend(error.write_errors());
                } else {
                    let build = match (&container, &args.register) {
                        (Container::Mod(_), _) => discover::Build::Unit,
                        (_, Some(attr::Register::With(expr))) => discover::Build::With(expr),
                        _ => discover::Build::IfDefault,
                    };
                    generated.extend(discover::check(&item(build), checks, &name));
                }
            }
            container.emit(&name, generated)
        }
        Err(error) => {
            let errors = error.write_errors();
            // A stand-in needs a type to stand for: none for `impl (u8, u8)`.
            let stand_in = match &container {
                Container::Impl(block) if !matches!(&*block.self_ty, Type::Path(_)) => {
                    TokenStream::new()
                }
                _ => fallback::stand_in(&target),
            };
            let item = container.emit(&name, stand_in);
            quote!(#errors #item)
        }
    }
}

/// `#[tool]` on a free function: the function stays as written, and a unit
/// struct `{CamelName}Tool` becomes a one-tool box for it.
pub(crate) fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Error::accumulator();
    let args: ToolArgs = errors.handle(attr::from_tokens(attr)).unwrap_or_default();
    if let Some(error) = valid::check_without_facade(args.krate.as_ref(), args.check.as_ref()) {
        errors.push(error);
    }
    let mut function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            errors.push(valid::not_a_function(first_span(&item)));
            return failed(errors, item);
        }
    };
    let krate = expand::krate(args.krate.as_ref());
    let attrs = function.attrs.clone();
    let tool = Tool::read(Site::Free, &attrs, args, &mut function.sig, &mut errors);
    valid::tool(&tool, &mut errors);
    if tool.has_receiver() {
        // A method: no `{Name}Tool` can call it.
        return failed(errors, function);
    }
    function
        .attrs
        .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    let vis = &function.vis;
    let struct_ident = format_ident!("{}Tool", case::camel_case(&function.sig.ident.to_string()));
    let doc = format!(
        "The `#[tool]` function [`{0}`] as a box with one tool, `{1}`.",
        function.sig.ident, tool.name
    );
    let target = BoxTarget {
        krate,
        self_ty: quote!(#struct_ident),
        generics: Generics::default(),
        name: tool.name.clone(),
        description: tool.description.clone(),
        defer: false,
        callers: None,
    };
    let (errors, generated) = match errors.finish() {
        Ok(()) => {
            let mut generated = expand::generate(&target, std::slice::from_ref(&tool));
            let item = discover::Item {
                krate: &target.krate,
                ty: quote!(#struct_ident),
                name: &tool.name,
                module: tool.args.module.as_ref().map(|m| m.value()),
                build: discover::Build::Unit,
                span: function.sig.ident.span(),
            };
            if tool.args.register != Some(false) {
                generated.extend(discover::submit(&item));
            }
            if let Some(checks) = &tool.args.check {
                let ident = function.sig.ident.to_string();
                generated.extend(discover::check(
                    &item,
                    checks,
                    ident.trim_start_matches("r#"),
                ));
            }
            (TokenStream::new(), generated)
        }
        Err(error) => (error.write_errors(), fallback::stand_in(&target)),
    };
    quote! {
        #errors

        #function

        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #struct_ident;

        #generated
    }
}
