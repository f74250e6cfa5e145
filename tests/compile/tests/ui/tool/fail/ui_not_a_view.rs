use toolbox::prelude::*;

/// Refreshes the weather card.
#[tool(ui = "https://weather.example/card")]
fn refresh() -> String {
    String::new()
}

/// Refreshes the weather card, for the view only.
#[tool(app_only)]
fn refresh_only() -> String {
    String::new()
}

/// Refreshes the card as a task: two mistakes in one attribute, both reported.
#[tool(task = "sometimes", app_only)]
async fn refresh_later() -> String {
    String::new()
}

fn main() {}
