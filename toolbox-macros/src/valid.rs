//! Every rule of the macros, each error spanned on its cause and pushed
//! into the one accumulator of the expansion (darling's, which panics if it
//! is dropped unchecked, so no error can be lost).

use std::collections::BTreeMap;

use darling::error::Accumulator;
use darling::Error;
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Generics, ReceiverKind, Safety, Type};

use crate::ast::{Param, ParamKind, Site, Tool};

/// An error at `span`.
pub(crate) fn at(span: Span, message: impl std::fmt::Display) -> Error {
    Error::from(syn::Error::new(span, message))
}

/// The rules of one tool: its signature, its attribute, its parameters.
pub(crate) fn tool(tool: &Tool, errors: &mut Accumulator) {
    let sig = &tool.sig;
    name(&tool.name, tool.name_span, "tool", errors);
    if tool
        .description
        .as_deref()
        .is_none_or(|d| d.trim().is_empty())
    {
        errors.push(at(
            sig.ident.span(),
            format!(
                "tool `{}` has no description: the model needs one; add a doc comment or `#[tool(description = \"…\")]`",
                tool.name
            ),
        ));
    }
    if let Safety::Unsafe(unsafety) = &sig.safety {
        errors.push(at(
            unsafety.span,
            "a tool cannot be an `unsafe fn`: the model could call it with any arguments",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(at(abi.span(), "a tool cannot have an `extern` ABI"));
    }
    for param in sig.generics.type_params() {
        errors.push(at(
            param.ident.span(),
            format!(
                "a tool cannot be generic: the model cannot choose `{}`; use a concrete type",
                param.ident
            ),
        ));
    }
    for param in sig.generics.const_params() {
        errors.push(at(
            param.ident.span(),
            "a tool cannot have const generic parameters",
        ));
    }
    if let Some(ui) = &tool.args.ui {
        if !ui.value().starts_with("ui://") {
            errors.push(at(
                ui.span(),
                "`ui` names the view's resource, a `ui://` URI: `ui = \"ui://weather/card\"`",
            ));
        }
    }
    if let Some(invalid) = tool.args.task.and_then(|task| task.invalid) {
        errors.push(at(invalid, crate::attr::TASK_VALUES));
    }
    if let (Some(app_only), None) = (tool.args.app_only.span_if_present(), &tool.args.ui) {
        errors.push(at(
            app_only,
            "`app_only` needs a view to call the tool: add `ui = \"ui://…\"`",
        ));
    }
    if let (Some(timeout), None) = (&tool.args.timeout, sig.asyncness) {
        errors.push(at(
            timeout.span,
            "`timeout` needs an `async fn`: a sync tool cannot be interrupted",
        ));
    }
    if let (Some(read_only), true) = (
        tool.args.read_only.span_if_present(),
        tool.args.destructive.is_present(),
    ) {
        errors.push(at(
            read_only,
            "a tool cannot be both `read_only` and `destructive`",
        ));
    }
    if let (Some(krate), Site::Method | Site::Module) = (&tool.args.krate, tool.site) {
        errors.push(at(
            krate.span(),
            "`crate` goes on the `#[tool_box]` attribute, not on its tools",
        ));
    }
    receiver(tool, errors);
    for param in &tool.params {
        parameter(param, errors);
    }
    parameters(&tool.params, errors);
}

/// Trait-like flags: darling's `Flag` keeps the word's span.
trait Present {
    fn span_if_present(&self) -> Option<Span>;
}

impl Present for darling::util::Flag {
    fn span_if_present(&self) -> Option<Span> {
        self.is_present().then(|| self.span())
    }
}

fn receiver(tool: &Tool, errors: &mut Accumulator) {
    let Some(receiver) = tool.sig.receiver() else {
        return;
    };
    let error = match (&receiver.kind, tool.site) {
        (_, Site::Free) => Some((
            receiver.self_token.span,
            "a `#[tool]` method needs `#[tool_box]` on its impl block, which reads the `#[tool]` methods",
        )),
        (_, Site::Module) => Some((
            receiver.self_token.span,
            "`self` is only allowed in a `#[tool_box]` impl block",
        )),
        (ReceiverKind::Value, _) => Some((
            receiver.self_token.span,
            "a tool takes `&self`, not `self`: the box keeps serving calls after this one",
        )),
        (ReceiverKind::Reference(_, _, Some(mutability)), _) => Some((
            mutability.span,
            "a tool takes `&self`, not `&mut self`: calls may run concurrently; keep mutable state behind a `Mutex` or an atomic",
        )),
        (ReceiverKind::Reference(..), _) => None,
        _ => Some((
            receiver.span(),
            "a tool takes `&self`; custom receiver types are not supported",
        )),
    };
    if let Some((span, message)) = error {
        errors.push(at(span, message));
    }
}

fn parameter(param: &Param, errors: &mut Accumulator) {
    if let Type::ImplTrait(_) = param.ty {
        errors.push(at(
            param.ty.span(),
            "a tool parameter cannot be `impl Trait`: name a concrete type the model's JSON can deserialize into",
        ));
    }
    if let (Type::Reference(reference), ParamKind::Arg { .. } | ParamKind::Whole { .. }) =
        (&param.ty, &param.kind)
    {
        errors.push(at(
            reference.and_token.span,
            "a tool argument cannot be a reference: arguments are deserialized into owned values; take the type itself",
        ));
    }
    if let (Some(inject), Some(_)) = (param.inject_attr, param.whole_attr) {
        errors.push(at(
            inject,
            "a parameter cannot be both `#[inject]` and `#[args]`",
        ));
    }
    if let (Some(arg), true) = (
        param.arg_attr,
        param.inject_attr.is_some() || param.whole_attr.is_some(),
    ) {
        errors.push(at(
            arg,
            "`#[arg]` describes an argument the model sends; this parameter is injected or is the whole argument object",
        ));
    }
    if let ParamKind::Arg {
        rename: Some(rename),
        ..
    } = &param.kind
    {
        if rename.value().is_empty() {
            errors.push(at(rename.span(), "`rename` needs a non-empty name"));
        }
    }
}

fn parameters(params: &[Param], errors: &mut Accumulator) {
    let wholes: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Whole { .. }))
        .collect();
    for extra in wholes.iter().skip(1) {
        errors.push(at(
            extra.ident.span(),
            "only one parameter can be the whole argument object (`#[args]` / `Args<T>`)",
        ));
    }
    if let Some(first) = wholes.first() {
        for param in params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Arg { .. }))
        {
            errors.push(at(
                param.ident.span(),
                format!(
                    "`{}` is an argument, but `{}` is already the whole argument object; move it into that type",
                    param.ident, first.ident
                ),
            ));
        }
    }
    let mut seen = BTreeMap::new();
    for param in params {
        if let ParamKind::Arg { rename, .. } = &param.kind {
            let (wire, span) = rename.as_ref().map_or_else(
                || {
                    (
                        param.ident.to_string().trim_start_matches("r#").to_owned(),
                        param.ident.span(),
                    )
                },
                |r| (r.value(), r.span()),
            );
            if seen.insert(wire.clone(), ()).is_some() {
                errors.push(at(span, format!("two arguments are named `{wire}`")));
            }
        }
    }
}

/// The rules across a box's tools.
pub(crate) fn tools(tools: &[Tool], errors: &mut Accumulator) {
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for tool in tools {
        if seen.insert(&tool.name, tool.name_span).is_some() {
            errors.push(at(
                tool.name_span,
                format!("two tools in this box are named `{}`", tool.name),
            ));
        }
    }
}

/// An impl's generic parameters cannot shape a tool's arguments: the schema
/// is one for every instantiation.
pub(crate) fn generic_arguments(generics: &Generics, tools: &[Tool], errors: &mut Accumulator) {
    for generic in generics.type_params() {
        for tool in tools {
            for param in &tool.params {
                if matches!(param.kind, ParamKind::Arg { .. } | ParamKind::Whole { .. })
                    && mentions(&param.ty, &generic.ident)
                {
                    errors.push(at(
                        param.ty.span(),
                        format!(
                            "a tool argument's type cannot use the impl's generic parameter `{}`: its schema must be the same for every `{}`",
                            generic.ident, generic.ident
                        ),
                    ));
                }
            }
        }
    }
}

/// Whether a type names `generic` anywhere.
fn mentions(ty: &Type, generic: &syn::Ident) -> bool {
    fn walk(tokens: TokenStream, generic: &syn::Ident) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == *generic,
            proc_macro2::TokenTree::Group(group) => walk(group.stream(), generic),
            _ => false,
        })
    }
    walk(ty.to_token_stream(), generic)
}

/// `^[a-zA-Z0-9_-]{1,64}$`, the rule every provider accepts.
pub(crate) fn name(name: &str, span: Span, what: &str, errors: &mut Accumulator) {
    let message = if name.is_empty() {
        format!("a {what} name cannot be empty")
    } else if name.len() > 64 {
        format!(
            "{what} name `{name}` is {} characters long; providers accept at most 64",
            name.len()
        )
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        format!(
            "{what} name `{name}` contains `{c}`; providers accept only a-z, A-Z, 0-9, `_` and `-`"
        )
    } else {
        return;
    };
    errors.push(at(span, message));
}

// Where the attributes go: checked as the item is read, stated here.

/// A trait impl cannot hold tools: `#[tool_box]` generates the box's impl beside the user's.
pub(crate) fn trait_impl(span: Span) -> Error {
    at(
        span,
        "`#[tool_box]` goes on an inherent impl block (`impl Weather { .. }`), not on a trait impl",
    )
}

/// A box whose self type has no last path segment to name it by needs a name.
pub(crate) fn unnamed_box(span: Span) -> Error {
    at(span, "name this box: `#[tool_box(name = \"…\")]`")
}

/// A module box needs its items in the attribute's input.
pub(crate) fn module_not_inline(span: Span) -> Error {
    at(
        span,
        "`#[tool_box]` needs the module's items inline (`mod crm { .. }`), not in another file",
    )
}

/// What `#[tool_box]` goes on.
pub(crate) fn not_a_box_item(span: Span) -> Error {
    at(
        span,
        "`#[tool_box]` goes on an inherent impl block or an inline module",
    )
}

/// One `#[tool]` per function.
pub(crate) fn tool_twice(span: Span) -> Error {
    at(span, "`#[tool]` is given twice on this function")
}

/// What `#[tool]` goes on.
pub(crate) fn not_a_function(span: Span) -> Error {
    at(
        span,
        "`#[tool]` goes on a function (or on a method inside a `#[tool_box]` impl block)",
    )
}

/// A box has at least one tool.
pub(crate) fn impl_without_tools(span: Span) -> Error {
    at(
        span,
        "this `#[tool_box]` has no tools: mark methods with `#[tool]`",
    )
}

/// A module box has at least one tool.
pub(crate) fn module_without_tools(span: Span) -> Error {
    at(
        span,
        "this `#[tool_box]` module has no tools: mark functions with `#[tool]`",
    )
}

/// `check(..)` builds the box, so it needs one type.
/// `check(..)` with `crate = toolbox_core`: the surface checks live above
/// toolbox-core (in the facade's `macro_support`, from toolbox-surface).
pub(crate) fn check_without_facade(
    krate: Option<&syn::Path>,
    check: Option<&crate::attr::Checks>,
) -> Option<Error> {
    let (krate, check) = (krate?, check?);
    let last = krate.segments.last()?;
    if last.ident != "toolbox_core" {
        return None;
    }
    let span = check
        .0
        .first()
        .map_or_else(|| krate.span(), |(_, span)| *span);
    Some(at(
        span,
        "`check(..)` runs toolbox's surface checks, which toolbox-core alone does not have: depend on the facade (`toolbox`, package `toolbox-sdk`) and drop `crate = toolbox_core`, or check a built box with `toolbox::testing::check_surface` in a test of your own",
    ))
}

pub(crate) fn check_on_generic(span: Span) -> Error {
    at(
        span,
        "`check(..)` needs one type to build, and this impl is generic: check a built box with `toolbox::testing::check_surface` in a test of your own",
    )
}
