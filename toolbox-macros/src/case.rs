//! Names between Rust's cases: a type's name to a box's, a function's to its `{Name}Tool` type.

/// `CrmService` → `crm_service`, `HTTPClient` → `http_client`.
pub(crate) fn snake_case(ident: &str) -> String {
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
pub(crate) fn camel_case(ident: &str) -> String {
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
