//! The attributes, read by darling: `#[tool_box(..)]`, `#[tool(..)]` and
//! `#[arg(..)]`. darling reports an unknown key with the closest known one
//! ("Did you mean `read_only`?"), a key given twice, and a value of the
//! wrong kind, each spanned on its cause.

use darling::ast::NestedMeta;
use darling::util::{Flag, Override};
use darling::FromMeta;
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Lit, LitStr, Path};

/// `#[tool_box(name = "…", crate = path, register = …, check(..))]`.
#[derive(Default, FromMeta)]
#[darling(default)]
pub(crate) struct BoxArgs {
    /// The box's name (default: the type's or module's name, snake_case).
    pub name: Option<LitStr>,
    /// Where the `toolbox` crate is (default: `::toolbox`).
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
    /// `register = false`, or the constructor discovery builds the box with.
    pub register: Option<Register>,
    /// Dialects a generated test checks the surface against.
    pub check: Option<Checks>,
    /// Every tool of the box is deferred (offered once a search revealed it).
    pub defer: Flag,
    /// Who may call the box's tools, unless a tool says: `callers(code)`.
    pub callers: Option<Callers>,
}

/// `register = false` (not discovered) or `register = Type::constructor`.
pub(crate) enum Register {
    Off,
    With(Expr),
}

impl FromMeta for Register {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) if !b.value => Ok(Register::Off),
            Expr::Lit(syn::ExprLit { lit: Lit::Bool(b), .. }) => Err(darling::Error::custom(
                "discovery is on by default: write `register = false` to turn it off, or `register = Type::constructor` to say how the box is built",
            )
            .with_span(b)),
            Expr::Path(_) => Ok(Register::With(expr.clone())),
            other => Err(darling::Error::custom(
                "`register` takes `false` or a constructor's path (`register = Crm::connect_default`)",
            )
            .with_span(other)),
        }
    }
}

/// `check(openai_strict, anthropic, gemini, mcp)`: the dialects, spanned.
#[derive(Default)]
pub(crate) struct Checks(pub Vec<(String, Span)>);

/// The dialects `check(..)` knows, as written.
pub(crate) const CHECK_DIALECTS: &[&str] = &[
    "openai_strict",
    "openai",
    "openai_responses",
    "anthropic_strict",
    "anthropic",
    "gemini",
    "gemini_legacy",
    "mcp",
];

impl FromMeta for Checks {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut out = Vec::new();
        for item in items {
            match item {
                NestedMeta::Meta(syn::Meta::Path(path)) if path.get_ident().is_some() => {
                    let name = path_text(path);
                    if CHECK_DIALECTS.contains(&name.as_str()) {
                        out.push((name, path.span()));
                    } else {
                        errors.push(
                            darling::Error::custom(format!(
                                "unknown dialect `{name}`; `check` takes {}",
                                CHECK_DIALECTS
                                    .iter()
                                    .map(|d| format!("`{d}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                            .with_span(path),
                        );
                    }
                }
                other => errors.push(
                    darling::Error::custom(
                        "`check` takes dialect names: `check(openai_strict, anthropic)`",
                    )
                    .with_span(other),
                ),
            }
        }
        if out.is_empty() && items.is_empty() {
            errors.push(darling::Error::custom(
                "name the dialects to check: `check(openai_strict, anthropic, gemini, mcp)`",
            ));
        }
        errors.finish_with(Checks(out))
    }
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
    /// `register = false`: not discovered (free functions).
    pub register: Option<bool>,
    /// The module of its discovered key (free functions; default: the last
    /// segment of the module path).
    pub module: Option<LitStr>,
    /// Dialects a generated test checks the surface against (free functions).
    pub check: Option<Checks>,
    /// Offered only once a tool search revealed it.
    pub defer: Flag,
    /// Example argument objects (repeatable): `example = r#"{"city": "Oslo"}"#`
    /// or `example = json!({..})`.
    #[darling(multiple)]
    pub example: Vec<Example>,
    /// MCP Apps: the `ui://` resource of the tool's view.
    pub ui: Option<LitStr>,
    /// MCP Apps: callable by the view only, never offered to a model.
    pub app_only: Flag,
    /// Who may call the tool: `callers(direct, code)`.
    pub callers: Option<Callers>,
    /// MCP Tasks: `task` (a task for clients that declared the extension)
    /// or `task = "required"` (only as a task).
    pub task: Option<Task>,
}

/// `#[tool(task)]` or `#[tool(task = "required")]`. A value neither
/// names is kept with its span and reported by `valid`, beside every other
/// mistake of the attribute.
#[derive(Clone, Copy)]
pub(crate) struct Task {
    pub required: bool,
    pub invalid: Option<proc_macro2::Span>,
}

/// What `valid` says of a `task` value it does not know.
pub(crate) const TASK_VALUES: &str = "a tool runs as an MCP task with `task` (for clients that declared the extension) or `task = \"required\"` (only as a task)";

impl FromMeta for Task {
    fn from_word() -> darling::Result<Self> {
        Ok(Task {
            required: false,
            invalid: None,
        })
    }

    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        let (required, invalid) = match value {
            syn::Lit::Str(text) => match text.value().as_str() {
                "optional" => (false, None),
                "required" => (true, None),
                _ => (false, Some(text.span())),
            },
            other => (false, Some(other.span())),
        };
        Ok(Task { required, invalid })
    }
}

/// `callers(direct, code)`: the model directly, code the model wrote, or
/// both.
#[derive(Clone, Copy)]
pub(crate) struct Callers {
    pub direct: bool,
    pub code: bool,
}

impl FromMeta for Callers {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut callers = Callers {
            direct: false,
            code: false,
        };
        let mut errors = darling::Error::accumulator();
        for item in items {
            match item {
                NestedMeta::Meta(syn::Meta::Path(path)) if path.is_ident("direct") => {
                    callers.direct = true;
                }
                NestedMeta::Meta(syn::Meta::Path(path)) if path.is_ident("code") => {
                    callers.code = true;
                }
                other => errors.push(
                    darling::Error::custom(
                        "a tool's callers are `direct` (the model) and `code` (code the model wrote): `callers(direct, code)`",
                    )
                    .with_span(other),
                ),
            }
        }
        if items.is_empty() {
            errors.push(darling::Error::custom(
                "name who may call the tool: `callers(direct)`, `callers(code)` or `callers(direct, code)`",
            ));
        }
        errors.finish_with(callers)
    }
}

/// An example's JSON text (checked as the macro runs) or expression.
pub(crate) enum Example {
    Text(LitStr),
    Expr(Expr),
}

impl FromMeta for Example {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(text), .. }) => {
                match serde_json::from_str::<serde_json::Value>(&text.value()) {
                    Ok(serde_json::Value::Object(_)) => Ok(Example::Text(text.clone())),
                    Ok(_) => Err(darling::Error::custom(
                        "an example is a JSON object of arguments: `example = r#\"{\"city\": \"Oslo\"}\"#`",
                    )
                    .with_span(text)),
                    Err(error) => Err(darling::Error::custom(format!(
                        "the example is not JSON: {error}"
                    ))
                    .with_span(text)),
                }
            }
            other => Ok(Example::Expr(other.clone())),
        }
    }
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

/// The keys each attribute takes, for an unknown key's error (darling
/// stops listing them past nine).
const TOOL_KEYS: &[&str] = &[
    "app_only",
    "callers",
    "check",
    "crate",
    "defer",
    "description",
    "destructive",
    "example",
    "idempotent",
    "module",
    "name",
    "open_world",
    "read_only",
    "register",
    "task",
    "timeout",
    "title",
    "ui",
];

/// Reads an attribute macro's own arguments (`#[tool(…)]` on a free
/// function, `#[tool_box(…)]`).
pub(crate) fn from_tokens<T: FromMeta + Default>(tokens: TokenStream) -> darling::Result<T> {
    if tokens.is_empty() {
        return Ok(T::default());
    }
    let items = NestedMeta::parse_meta_list(tokens)?;
    T::from_list(&items).map_err(|error| {
        if std::any::type_name::<T>().ends_with("ToolArgs") {
            with_known_keys(error, TOOL_KEYS)
        } else {
            error
        }
    })
}

/// An unknown key's error with the keys that are known, as darling writes
/// them for short lists ("Available values: …").
fn with_known_keys(error: darling::Error, keys: &[&str]) -> darling::Error {
    let errors: Vec<darling::Error> = error
        .into_iter()
        .map(|error| {
            let text = error.to_string();
            if text.starts_with("Unknown field: `") && !text.contains(". ") {
                let span = error.span();
                let listed: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
                darling::Error::custom(format!("{text}. Available values: {}", listed.join(", ")))
                    .with_span(&proc_macro2::Ident::new("key", span))
            } else {
                error
            }
        })
        .collect();
    darling::Error::multiple(errors)
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
