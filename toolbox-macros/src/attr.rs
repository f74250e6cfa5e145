//! The attributes, read by darling: `#[tool_box(..)]`, `#[tool(..)]` and
//! `#[arg(..)]`. darling reports an unknown key with the closest known one
//! ("Did you mean `read_only`?"), a key given twice, and a value of the
//! wrong kind, each spanned on its cause.

use darling::ast::NestedMeta;
use darling::util::{Flag, Override};
use darling::FromMeta;
use proc_macro2::{Span, TokenStream};
use syn::{Attribute, Expr, Lit, LitStr, Path};

/// `#[tool_box(name = "…", crate = path)]`.
#[derive(Default, FromMeta)]
#[darling(default)]
pub(crate) struct BoxArgs {
    /// The box's name (default: the type's or module's name, snake_case).
    pub name: Option<LitStr>,
    /// Where the `toolbox` crate is (default: `::toolbox`).
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
}

/// `#[tool(..)]`.
#[derive(Default, FromMeta)]
#[darling(default)]
pub(crate) struct ToolArgs {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub title: Option<LitStr>,
    pub read_only: Flag,
    pub destructive: Flag,
    pub idempotent: Flag,
    pub open_world: Flag,
    pub timeout: Option<Timeout>,
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
}

/// `#[arg(..)]` on a parameter.
#[derive(Default, FromMeta)]
#[darling(default)]
pub(crate) struct ArgArgs {
    pub description: Option<LitStr>,
    /// `default` (the type's `Default`) or `default = expr`.
    pub default: Option<Override<DefaultExpr>>,
    pub rename: Option<LitStr>,
}

/// A default's expression, taken as written (a string literal stays one).
pub(crate) struct DefaultExpr(pub Expr);

impl FromMeta for DefaultExpr {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Ok(DefaultExpr(expr.clone()))
    }
}

/// `timeout = "5s"`, in milliseconds, with the literal's span.
pub(crate) struct Timeout {
    pub millis: u64,
    pub span: Span,
}

impl FromMeta for Timeout {
    fn from_value(value: &Lit) -> darling::Result<Self> {
        let Lit::Str(text) = value else {
            return Err(darling::Error::unexpected_lit_type(value));
        };
        match parse_duration(&text.value()) {
            Some(millis) => Ok(Timeout {
                millis,
                span: text.span(),
            }),
            None => Err(darling::Error::custom(
                "a timeout is a positive whole number with a unit: \"250ms\", \"5s\", \"2m\" or \"1h\"",
            )
            .with_span(text)),
        }
    }
}

/// Reads an attribute macro's own arguments (`#[tool(…)]` on a free
/// function, `#[tool_box(…)]`).
pub(crate) fn from_tokens<T: FromMeta + Default>(tokens: TokenStream) -> darling::Result<T> {
    if tokens.is_empty() {
        return Ok(T::default());
    }
    let items = NestedMeta::parse_meta_list(tokens)?;
    T::from_list(&items)
}

/// Reads an inner attribute: `#[tool]` / `#[tool(…)]`, `#[arg(…)]`.
pub(crate) fn from_attribute<T: FromMeta + Default>(attribute: &Attribute) -> darling::Result<T> {
    match &attribute.meta {
        syn::Meta::Path(_) => Ok(T::default()),
        syn::Meta::List(list) => from_tokens(list.tokens.clone()),
        syn::Meta::NameValue(_) => Err(darling::Error::custom(format!(
            "write `#[{0}]` or `#[{0}(key = value, ..)]`",
            path_text(attribute.path())
        ))
        .with_span(attribute.path())),
    }
}

/// Whether `attribute` is this crate's `#[tool]`: `tool`, `toolbox::tool`,
/// `toolbox_macros::tool` or `toolbox::prelude::tool`, never any other
/// crate's attribute that happens to end in `tool`.
pub(crate) fn is_tool_attribute(attribute: &Attribute) -> bool {
    let text = path_text(attribute.path());
    matches!(
        text.as_str(),
        "tool" | "toolbox::tool" | "toolbox_macros::tool" | "toolbox::prelude::tool"
    )
}

/// A path as written, without spaces or a leading `::`.
pub(crate) fn path_text(path: &Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
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
