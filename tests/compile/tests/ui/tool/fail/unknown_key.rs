use toolbox::prelude::*;

/// Returns the time.
#[tool(descripton = "typo")]
fn now() -> String {
    String::new()
}

fn main() {}
