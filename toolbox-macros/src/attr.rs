//! The attributes: `#[tool_box(..)]`, `#[tool(..)]`, `#[arg(..)]`,
//! `#[args]`, `#[inject]`. Every unknown key is an error spanned on the key.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, Expr, LitStr, Path};

/// Collects every error, so one mistake does not hide the next.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_compile_errors(&self) -> TokenStream {
        self.0.iter().map(syn::Error::to_compile_error).collect()
    }
}

/// `#[tool_box(name = "…", crate = path)]` and the `crate = path` of `#[tool]`.
#[derive(Default)]
pub struct BoxAttr {
    pub name: Option<LitStr>,
    pub krate: Option<Path>,
}

/// `#[tool(..)]`.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub title: Option<LitStr>,
    pub read_only: Option<Span>,
    pub destructive: Option<Span>,
    pub idempotent: Option<Span>,
    pub open_world: Option<Span>,
    pub timeout: Option<(u64, Span)>,
    pub krate: Option<Path>,
}

/// `#[arg(..)]`.
#[derive(Default)]
pub struct ArgAttr {
    pub description: Option<LitStr>,
    pub default: Option<ArgDefault>,
    pub rename: Option<LitStr>,
    pub span: Option<Span>,
}

pub enum ArgDefault {
    Trait,
    Expr(Box<Expr>),
}

fn unknown(meta: &ParseNestedMeta<'_>, attribute: &str, known: &str) -> syn::Error {
    let key = meta
        .path
        .get_ident()
        .map_or_else(|| "this key".to_owned(), |i| format!("`{i}`"));
    meta.error(format!(
        "unknown key {key} in `#[{attribute}]`; expected one of: {known}"
    ))
}

fn set_once<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>, errors: &mut Errors) {
    if slot.is_some() {
        errors.push(meta.error("this key is given twice"));
    }
    *slot = Some(value);
}

pub fn parse_box_attr(tokens: TokenStream, errors: &mut Errors) -> BoxAttr {
    let mut attr = BoxAttr::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            let value: LitStr = meta.value()?.parse()?;
            set_once(&mut attr.name, value, &meta, errors);
        } else if meta.path.is_ident("crate") {
            let value: Path = meta.value()?.parse()?;
            set_once(&mut attr.krate, value, &meta, errors);
        } else {
            return Err(unknown(&meta, "tool_box", "`name`, `crate`"));
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(tokens) {
        errors.push(error);
    }
    attr
}

const TOOL_KEYS: &str = "`name`, `description`, `title`, `read_only`, `destructive`, `idempotent`, `open_world`, `timeout`, `crate`";

pub fn parse_tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        let path = &meta.path;
        if path.is_ident("name") {
            let value: LitStr = meta.value()?.parse()?;
            set_once(&mut attr.name, value, &meta, errors);
        } else if path.is_ident("description") {
            let value: LitStr = meta.value()?.parse()?;
            set_once(&mut attr.description, value, &meta, errors);
        } else if path.is_ident("title") {
            let value: LitStr = meta.value()?.parse()?;
            set_once(&mut attr.title, value, &meta, errors);
        } else if path.is_ident("read_only") {
            set_once(&mut attr.read_only, path_span(path), &meta, errors);
        } else if path.is_ident("destructive") {
            set_once(&mut attr.destructive, path_span(path), &meta, errors);
        } else if path.is_ident("idempotent") {
            set_once(&mut attr.idempotent, path_span(path), &meta, errors);
        } else if path.is_ident("open_world") {
            set_once(&mut attr.open_world, path_span(path), &meta, errors);
        } else if path.is_ident("timeout") {
            let value: LitStr = meta.value()?.parse()?;
            match parse_duration(&value.value()) {
                Some(millis) => set_once(&mut attr.timeout, (millis, value.span()), &meta, errors),
                None => errors.at(
                    value.span(),
                    "a timeout is a positive whole number with a unit: \"250ms\", \"5s\", \"2m\" or \"1h\"",
                ),
            }
        } else if path.is_ident("crate") {
            let value: Path = meta.value()?.parse()?;
            set_once(&mut attr.krate, value, &meta, errors);
        } else {
            return Err(unknown(&meta, "tool", TOOL_KEYS));
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(tokens) {
        errors.push(error);
    }
    attr
}

/// `#[tool]` / `#[tool(..)]` inside a `#[tool_box]`.
pub fn parse_tool_attribute(attribute: &Attribute, errors: &mut Errors) -> ToolAttr {
    match &attribute.meta {
        syn::Meta::Path(_) => ToolAttr::default(),
        syn::Meta::List(list) => parse_tool_attr(list.tokens.clone(), errors),
        syn::Meta::NameValue(nv) => {
            errors.at(
                path_span(&nv.path),
                "write `#[tool]` or `#[tool(key = value, ..)]`",
            );
            ToolAttr::default()
        }
    }
}

pub fn parse_arg_attr(attribute: &Attribute, into: &mut ArgAttr, errors: &mut Errors) {
    into.span.get_or_insert(path_span(attribute.path()));
    let syn::Meta::List(list) = &attribute.meta else {
        errors.at(
            path_span(attribute.path()),
            "write `#[arg(description = \"…\")]`, `#[arg(default)]`, `#[arg(default = expr)]` or `#[arg(rename = \"…\")]`",
        );
        return;
    };
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("description") {
            let value: LitStr = meta.value()?.parse()?;
            set_once(&mut into.description, value, &meta, errors);
        } else if meta.path.is_ident("rename") {
            let value: LitStr = meta.value()?.parse()?;
            set_once(&mut into.rename, value, &meta, errors);
        } else if meta.path.is_ident("default") {
            let default = if meta.input.peek(syn::Token![=]) {
                ArgDefault::Expr(Box::new(meta.value()?.parse()?))
            } else {
                ArgDefault::Trait
            };
            set_once(&mut into.default, default, &meta, errors);
        } else {
            return Err(unknown(&meta, "arg", "`description`, `default`, `rename`"));
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(list.tokens.clone()) {
        errors.push(error);
    }
}

/// Whether `attribute` is this crate's `#[tool]`: `tool`, `toolbox::tool`,
/// `toolbox_macros::tool` or `toolbox::prelude::tool`, never any other
/// crate's attribute that happens to end in `tool`.
pub fn is_tool_attribute(attribute: &Attribute) -> bool {
    let segments: Vec<String> = attribute
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    matches!(
        segments.as_slice(),
        ["tool"]
            | ["toolbox", "tool"]
            | ["toolbox_macros", "tool"]
            | ["toolbox", "prelude", "tool"]
    )
}

pub fn path_span(path: &Path) -> Span {
    path.segments
        .last()
        .map_or_else(Span::call_site, |s| s.ident.span())
}

/// "250ms", "5s", "2m", "1h" into milliseconds.
fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    (number > 0).then(|| number.checked_mul(factor)).flatten()
}
