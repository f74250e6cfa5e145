//! The model of a tool, read from a function's signature and attributes,
//! keeping every span a diagnostic may point at. Reading also strips the
//! parameter attributes rustc would reject (`///` on parameters, `#[arg]`,
//! `#[args]`, `#[inject]`), so the user's item can be emitted as is.
//! Problems of form (an attribute that does not parse, a parameter pattern
//! without a name) are reported here; every rule lives in `valid`.

use std::collections::BTreeMap;

use darling::error::Accumulator;
use darling::util::Override;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, LitStr, Pat, PathArguments, ReturnType, Signature,
    Type,
};

use crate::attr::{self, ArgArgs, DefaultExpr, ToolArgs};
use crate::doc;

/// Where the function sits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// A method of a `#[tool_box]` impl block.
    Method,
    /// A free function with `#[tool]`.
    Free,
    /// A function of a `#[tool_box]` module.
    Module,
}

/// One tool: its function, its attribute, its parameters and its output.
pub(crate) struct Tool {
    pub site: Site,
    /// The signature as the user wrote it (parameter attributes stripped).
    pub sig: Signature,
    pub args: ToolArgs,
    pub name: String,
    pub name_span: Span,
    pub description: Option<String>,
    pub params: Vec<Param>,
    pub output: Output,
}

pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: ParamKind,
    /// `#[arg]`, `#[inject]`, `#[args]` where given.
    pub arg_attr: Option<Span>,
    pub inject_attr: Option<Span>,
    pub whole_attr: Option<Span>,
}

pub(crate) enum ParamKind {
    /// A field of the argument object.
    Arg {
        rename: Option<LitStr>,
        description: Option<String>,
        default: Option<Override<DefaultExpr>>,
    },
    /// toolbox's `Context`, by value or by reference.
    Context { by_ref: bool },
    /// `#[inject]`: built by `FromContext`.
    Inject,
    /// `#[args]` (the type itself) or toolbox's `Args<T>` (`T`): the whole
    /// argument object.
    Whole { wrapped: Option<Type> },
}

pub(crate) enum Output {
    Unit,
    /// `Result<T, E>` (any `Result` with the ok type first).
    Result(Type),
    /// Any other type: serialized, or a `ToolResponse` kept as is (decided
    /// by the type, not its name).
    Value(Type),
    /// `impl Trait`: serialized, no schema.
    Opaque,
}

impl Tool {
    /// Reads a tool from its attribute and signature.
    pub(crate) fn read(
        site: Site,
        attrs: &[Attribute],
        args: ToolArgs,
        sig: &mut Signature,
        errors: &mut Accumulator,
    ) -> Tool {
        let doc_lines = doc::lines(attrs);
        let described = doc::arguments(&doc_lines);
        let name = args.name.as_ref().map_or_else(
            || sig.ident.to_string().trim_start_matches("r#").to_owned(),
            LitStr::value,
        );
        let name_span = args.name.as_ref().map_or(sig.ident.span(), LitStr::span);
        let description = args
            .description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| doc::description(&doc_lines));
        let mut params = Vec::new();
        for input in sig.inputs.iter_mut() {
            if let FnArg::Typed(typed) = input {
                if let Some(param) = read_param(typed, &described, errors) {
                    params.push(param);
                }
            }
        }
        Tool {
            site,
            output: read_output(&sig.output),
            sig: sig.clone(),
            args,
            name,
            name_span,
            description,
            params,
        }
    }

    /// Whether the tool is a `&self` method.
    pub(crate) fn has_receiver(&self) -> bool {
        self.sig.receiver().is_some()
    }
}

fn read_param(
    typed: &mut syn::PatType,
    described: &BTreeMap<String, String>,
    errors: &mut Accumulator,
) -> Option<Param> {
    let mut arg = ArgArgs::default();
    let (mut arg_attr, mut inject_attr, mut whole_attr) = (None, None, None);
    let mut doc_attrs = Vec::new();
    typed.attrs.retain(|attribute| {
        let path = attribute.path();
        if doc::is_doc(attribute) {
            doc_attrs.push(attribute.clone());
        } else if path.is_ident("arg") {
            arg_attr.get_or_insert(path.span());
            if let Some(parsed) = errors.handle(attr::from_attribute::<ArgArgs>(attribute)) {
                arg = parsed;
            }
        } else if path.is_ident("inject") {
            inject_attr = Some(path.span());
        } else if path.is_ident("args") {
            whole_attr = Some(path.span());
        } else {
            return true;
        }
        false
    });

    let ident = match &*typed.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
        other => {
            errors.push(
                darling::Error::custom(
                    "unsupported parameter pattern: give each tool parameter a name (`city: String`); the name is the argument's name",
                )
                .with_span(other),
            );
            return None;
        }
    };
    let ty = (*typed.ty).clone();
    let kind = if inject_attr.is_some() {
        ParamKind::Inject
    } else if whole_attr.is_some() {
        ParamKind::Whole { wrapped: None }
    } else if let (None, Some(by_ref)) = (arg_attr, context_type(&ty)) {
        ParamKind::Context { by_ref }
    } else if let (None, Some(inner)) = (arg_attr, args_inner(&ty)) {
        ParamKind::Whole {
            wrapped: Some(inner),
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
                    .get(ident.to_string().trim_start_matches("r#"))
                    .cloned()
            })
            .filter(|d| !d.is_empty());
        ParamKind::Arg {
            rename: arg.rename,
            description,
            default: arg.default,
        }
    };
    Some(Param {
        ident,
        ty,
        kind,
        arg_attr,
        inject_attr,
        whole_attr,
    })
}

/// Whether a path names one of toolbox's own items: `Name` as imported,
/// or `toolbox::Name`, `toolbox::prelude::Name`, `toolbox_core::Name`. A
/// path through any other crate (`tera::Context`) is that crate's type.
fn is_toolbox_path(path: &syn::Path, name: &str) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let (last, prefix) = match segments.split_last() {
        Some(split) => split,
        None => return false,
    };
    *last == name
        && matches!(
            prefix,
            [] | ["toolbox"] | ["toolbox", "prelude"] | ["toolbox_core"]
        )
}

/// toolbox's `Context` → `Some(false)`, `&Context` → `Some(true)`.
fn context_type(ty: &Type) -> Option<bool> {
    match ty {
        Type::Reference(reference) if reference.mutability.is_none() => {
            context_type(&reference.elem)
                .filter(|by_ref| !by_ref)
                .map(|_| true)
        }
        Type::Path(path)
            if path.qself.is_none()
                && is_toolbox_path(&path.path, "Context")
                && path.path.segments.last()?.arguments.is_none() =>
        {
            Some(false)
        }
        _ => None,
    }
}

/// toolbox's `Args<T>` → `T`.
fn args_inner(ty: &Type) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() || !is_toolbox_path(&path.path, "Args") {
        return None;
    }
    single_type_argument(&path.path.segments.last()?.arguments)
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

fn read_output(output: &ReturnType) -> Output {
    let ReturnType::Type(_, ty) = output else {
        return Output::Unit;
    };
    match &**ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => Output::Unit,
        Type::ImplTrait(_) => Output::Opaque,
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last();
            match last
                .filter(|s| s.ident == "Result")
                .and_then(|s| single_type_argument(&s.arguments))
            {
                Some(ok) => Output::Result(ok),
                None => Output::Value((**ty).clone()),
            }
        }
        other => Output::Value(other.clone()),
    }
}
