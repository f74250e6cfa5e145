//! Doc comments into descriptions: the text before the first heading for the
//! tool, a rustdoc `# Arguments` list for parameters.

use std::collections::BTreeMap;

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The lines of an item's doc comments, one leading space removed.
pub(crate) fn lines(attrs: &[Attribute]) -> Vec<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(nv) = &attr.meta {
            if let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &nv.value
            {
                for line in text.value().split('\n') {
                    lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
                }
            }
        }
    }
    lines
}

/// The description: everything before the first `#` heading, trimmed;
/// `None` when empty.
pub(crate) fn description(lines: &[String]) -> Option<String> {
    let body: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .take_while(|line| !line.trim_start().starts_with('#'))
        .collect();
    let text = body.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Parameter descriptions from a `# Arguments` (or `# Parameters`) section:
/// bullets like ``* `city` - The city`` or `- city: The city`; continuation
/// lines are joined.
pub(crate) fn arguments(lines: &[String]) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut in_section = false;
    let mut current: Option<String> = None;
    for line in lines {
        let trimmed = line.trim();
        if let Some(heading) = trimmed.strip_prefix('#') {
            let heading = heading.trim_start_matches('#').trim().to_ascii_lowercase();
            in_section = heading == "arguments" || heading == "parameters";
            current = None;
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some(item) = trimmed
            .strip_prefix("* ")
            .or_else(|| trimmed.strip_prefix("- "))
        {
            if let Some((name, text)) = split_item(item) {
                found.insert(name.clone(), text);
                current = Some(name);
                continue;
            }
        }
        match (&current, trimmed.is_empty()) {
            (Some(name), false) => {
                let entry = found.entry(name.clone()).or_default();
                if !entry.is_empty() {
                    entry.push(' ');
                }
                entry.push_str(trimmed);
            }
            _ => current = None,
        }
    }
    found
}

fn split_item(item: &str) -> Option<(String, String)> {
    let item = item.trim();
    let (name, rest) = if let Some(stripped) = item.strip_prefix('`') {
        let end = stripped.find('`')?;
        (&stripped[..end], &stripped[end + 1..])
    } else {
        let end = item.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        (&item[..end], &item[end..])
    };
    if name.is_empty() {
        return None;
    }
    let text = rest
        .trim_start()
        .trim_start_matches(['-', ':', '—', '–'])
        .trim();
    Some((name.to_owned(), text.to_owned()))
}

/// Whether an attribute is a doc comment.
pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}
