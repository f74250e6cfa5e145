//! Checks across tools: names, duplicates, descriptions.

use std::collections::BTreeMap;

use proc_macro2::Span;

use crate::attr::Errors;
use crate::model::ToolFn;

/// Every rule a box's tools must follow, each error spanned on its cause.
pub fn tools(tools: &[ToolFn], errors: &mut Errors) {
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    for tool in tools {
        name(&tool.name, tool.name_span, "tool", errors);
        if tool
            .description
            .as_deref()
            .is_none_or(|d| d.trim().is_empty())
        {
            errors.at(
                tool.ident.span(),
                format!(
                    "tool `{}` has no description: the model needs one; add a doc comment or `#[tool(description = \"…\")]`",
                    tool.name
                ),
            );
        }
        if seen.insert(&tool.name, tool.name_span).is_some() {
            errors.at(
                tool.name_span,
                format!("two tools in this box are named `{}`", tool.name),
            );
        }
    }
}

/// `^[a-zA-Z0-9_-]{1,64}$`, the rule every provider accepts.
pub fn name(name: &str, span: Span, what: &str, errors: &mut Errors) {
    if name.is_empty() {
        errors.at(span, format!("a {what} name cannot be empty"));
    } else if name.len() > 64 {
        errors.at(
            span,
            format!(
                "{what} name `{name}` is {} characters long; providers accept at most 64",
                name.len()
            ),
        );
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        errors.at(
            span,
            format!("{what} name `{name}` contains `{c}`; providers accept only a-z, A-Z, 0-9, `_` and `-`"),
        );
    }
}

/// `CrmService` → `crm_service`, `HTTPClient` → `http_client`.
pub fn snake_case(ident: &str) -> String {
    let ident = ident.trim_start_matches("r#");
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if i > 0
                && (prev_lower || (next_lower && chars[i - 1].is_uppercase()))
                && !out.ends_with('_')
            {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `get_weather` → `GetWeather`.
pub fn camel_case(ident: &str) -> String {
    ident
        .trim_start_matches("r#")
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}
