//! The model of one tool, parsed from a function signature. Parsing also
//! strips the parameter attributes rustc would reject (`///` on parameters,
//! `#[arg]`, `#[args]`, `#[inject]`), so the user's item can be emitted as is.

use std::collections::BTreeMap;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, LitStr, Pat, PathArguments, ReturnType, Signature,
    Type,
};

use crate::attr::{parse_arg_attr, ArgAttr, ArgDefault, Errors, ToolAttr};
use crate::doc;

/// Where the function sits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// A method of a `#[tool_box]` impl block.
    Method,
    /// A free function with `#[tool]`.
    Free,
    /// A function of a `#[tool_box]` module.
    Module,
}

pub struct ToolFn {
    pub ident: Ident,
    pub name: String,
    pub name_span: Span,
    pub description: Option<String>,
    pub title: Option<String>,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    pub timeout_ms: Option<u64>,
    pub is_async: bool,
    pub has_receiver: bool,
    pub params: Vec<Param>,
    pub output: Output,
}

pub struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: ParamKind,
}

pub enum ParamKind {
    /// A field of the argument object.
    Arg {
        rename: Option<LitStr>,
        description: Option<String>,
        default: Option<ArgDefault>,
    },
    /// `Context` (by value) or `&Context`.
    Context { by_ref: bool },
    /// `#[inject]`: built by `FromContext`.
    Inject,
    /// `#[args]` or `Args<T>`: the whole argument object.
    Whole { wrapped: Option<Type> },
}

pub enum Output {
    Unit,
    Response,
    Result {
        ok: Type,
        ok_is_response: bool,
    },
    Value(Type),
    /// `impl Trait`: serialized, no schema.
    Opaque,
}

impl ToolFn {
    /// Parses a tool from its signature and attributes, reporting every
    /// problem into `errors`.
    pub fn parse(
        site: Site,
        attrs: &[Attribute],
        tool: ToolAttr,
        sig: &mut Signature,
        errors: &mut Errors,
    ) -> ToolFn {
        let doc_lines = doc::lines(attrs);
        let described_args = doc::arguments(&doc_lines);
        let name = tool.name.as_ref().map_or_else(
            || sig.ident.to_string().trim_start_matches("r#").to_owned(),
            LitStr::value,
        );
        let name_span = tool.name.as_ref().map_or(sig.ident.span(), LitStr::span);
        let description = tool
            .description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| doc::description(&doc_lines));

        if let Some(unsafety) = &sig.unsafety {
            errors.at(
                unsafety.span(),
                "a tool cannot be an `unsafe fn`: the model could call it with any arguments",
            );
        }
        if let Some(abi) = &sig.abi {
            errors.at(abi.span(), "a tool cannot have an `extern` ABI");
        }
        if let Some(variadic) = &sig.variadic {
            errors.at(variadic.span(), "a tool cannot be variadic");
        }
        for param in sig.generics.type_params() {
            errors.at(
                param.ident.span(),
                format!(
                    "a tool cannot be generic: the model cannot choose `{}`; use a concrete type",
                    param.ident
                ),
            );
        }
        for param in sig.generics.const_params() {
            errors.at(
                param.ident.span(),
                "a tool cannot have const generic parameters",
            );
        }
        if let (Some((_, span)), None) = (tool.timeout, sig.asyncness) {
            errors.at(
                span,
                "`timeout` needs an `async fn`: a sync tool cannot be interrupted",
            );
        }
        if let (Some(read_only), Some(_)) = (tool.read_only, tool.destructive) {
            errors.at(
                read_only,
                "a tool cannot be both `read_only` and `destructive`",
            );
        }

        let mut has_receiver = false;
        let mut params = Vec::new();
        for input in sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(receiver) => {
                    has_receiver = true;
                    if site != Site::Method {
                        errors.at(
                            receiver.span(),
                            "`self` is only allowed in a `#[tool_box]` impl block",
                        );
                    } else if receiver.reference.is_none() {
                        errors.at(
                            receiver.self_token.span,
                            "a tool takes `&self`, not `self`: the box keeps serving calls after this one",
                        );
                    } else if receiver.mutability.is_some() {
                        errors.at(
                            receiver.mutability.span(),
                            "a tool takes `&self`, not `&mut self`: calls may run concurrently; keep mutable state behind a `Mutex` or an atomic",
                        );
                    } else if receiver.colon_token.is_some() {
                        errors.at(
                            receiver.span(),
                            "a tool takes `&self`; custom receiver types are not supported",
                        );
                    }
                }
                FnArg::Typed(typed) => {
                    if let Some(param) = parse_param(typed, &described_args, errors) {
                        params.push(param);
                    }
                }
            }
        }
        check_params(&params, errors);

        ToolFn {
            ident: sig.ident.clone(),
            name,
            name_span,
            description,
            title: tool.title.as_ref().map(LitStr::value),
            read_only: tool.read_only.is_some(),
            destructive: tool.destructive.is_some(),
            idempotent: tool.idempotent.is_some(),
            open_world: tool.open_world.is_some(),
            timeout_ms: tool.timeout.map(|(ms, _)| ms),
            is_async: sig.asyncness.is_some(),
            has_receiver,
            params,
            output: parse_output(&sig.output),
        }
    }
}

fn parse_param(
    typed: &mut syn::PatType,
    described: &BTreeMap<String, String>,
    errors: &mut Errors,
) -> Option<Param> {
    let mut arg = ArgAttr::default();
    let mut inject = None;
    let mut whole = None;
    let mut doc_attrs = Vec::new();
    typed.attrs.retain(|attribute| {
        let path = attribute.path();
        if doc::is_doc(attribute) {
            doc_attrs.push(attribute.clone());
            false
        } else if path.is_ident("arg") {
            parse_arg_attr(attribute, &mut arg, errors);
            false
        } else if path.is_ident("inject") {
            inject = Some(path.span());
            false
        } else if path.is_ident("args") {
            whole = Some(path.span());
            false
        } else {
            true
        }
    });

    let ident = match &*typed.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
        other => {
            errors.at(
                other.span(),
                "unsupported parameter pattern: give each tool parameter a name (`city: String`); the name is the argument's name",
            );
            return None;
        }
    };
    let ty = (*typed.ty).clone();
    if let Type::ImplTrait(_) = ty {
        errors.at(ty.span(), "a tool parameter cannot be `impl Trait`: name a concrete type the model's JSON can deserialize into");
        return None;
    }

    let context = context_type(&ty);
    let args_wrapper = args_inner(&ty);
    let kind = if let Some(span) = inject {
        if whole.is_some() {
            errors.at(span, "a parameter cannot be both `#[inject]` and `#[args]`");
        }
        ParamKind::Inject
    } else if let Some(by_ref) = context {
        ParamKind::Context { by_ref }
    } else if whole.is_some() || args_wrapper.is_some() {
        ParamKind::Whole {
            wrapped: args_wrapper,
        }
    } else {
        let own = doc::description(&doc::lines(&doc_attrs));
        let description = arg
            .description
            .as_ref()
            .map(LitStr::value)
            .or(own)
            .or_else(|| {
                described
                    .get(&ident.to_string().trim_start_matches("r#").to_owned())
                    .cloned()
            })
            .filter(|d| !d.is_empty());
        if let Some(rename) = &arg.rename {
            if rename.value().is_empty() {
                errors.at(rename.span(), "`rename` needs a non-empty name");
            }
        }
        return Some(Param {
            ident,
            ty,
            kind: ParamKind::Arg {
                rename: arg.rename,
                description,
                default: arg.default,
            },
        });
    };
    if let Some(span) = arg.span {
        errors.at(
            span,
            "`#[arg]` describes an argument the model sends; this parameter is injected or is the whole argument object",
        );
    }
    Some(Param { ident, ty, kind })
}

fn check_params(params: &[Param], errors: &mut Errors) {
    let wholes: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Whole { .. }))
        .collect();
    for extra in wholes.iter().skip(1) {
        errors.at(
            extra.ident.span(),
            "only one parameter can be the whole argument object (`#[args]` / `Args<T>`)",
        );
    }
    if let Some(first) = wholes.first() {
        for param in params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Arg { .. }))
        {
            errors.at(
                param.ident.span(),
                format!(
                    "`{}` is an argument, but `{}` is already the whole argument object; move it into that type",
                    param.ident, first.ident
                ),
            );
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
                errors.at(span, format!("two arguments are named `{wire}`"));
            }
        }
    }
}

/// `Context` → `Some(false)`, `&Context` → `Some(true)`.
fn context_type(ty: &Type) -> Option<bool> {
    match ty {
        Type::Reference(reference) if reference.mutability.is_none() => {
            context_type(&reference.elem)
                .filter(|by_ref| !by_ref)
                .map(|_| true)
        }
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            (last.ident == "Context" && last.arguments.is_none()).then_some(false)
        }
        _ => None,
    }
}

/// `Args<T>` → `T`.
fn args_inner(ty: &Type) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Args" {
        return None;
    }
    single_type_argument(&last.arguments)
}

fn single_type_argument(arguments: &PathArguments) -> Option<Type> {
    let PathArguments::AngleBracketed(generics) = arguments else {
        return None;
    };
    generics.args.iter().find_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty.clone()),
        _ => None,
    })
}

fn is_named(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|s| s.ident == name && s.arguments.is_none()))
}

fn parse_output(output: &ReturnType) -> Output {
    let ReturnType::Type(_, ty) = output else {
        return Output::Unit;
    };
    match &**ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => Output::Unit,
        Type::ImplTrait(_) => Output::Opaque,
        ty if is_named(ty, "ToolResponse") => Output::Response,
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last();
            match last
                .filter(|s| s.ident == "Result")
                .and_then(|s| single_type_argument(&s.arguments))
            {
                Some(ok) => Output::Result {
                    ok_is_response: is_named(&ok, "ToolResponse"),
                    ok,
                },
                None => Output::Value((**ty).clone()),
            }
        }
        other => Output::Value(other.clone()),
    }
}
