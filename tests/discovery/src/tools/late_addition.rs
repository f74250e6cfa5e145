//! A file added after the others; nothing lists it.

use toolbox::prelude::*;

/// Converts an amount between currencies.
#[tool(read_only, module = "money")]
pub fn convert(
    /// The amount.
    amount: f64,
    /// The currency to convert to, e.g. "EUR".
    to: String,
) -> String {
    format!("{amount} {to}")
}
