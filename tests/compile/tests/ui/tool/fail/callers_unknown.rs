use toolbox::prelude::*;

/// Units in stock, for code the model writes.
#[tool(callers(model))]
fn get_inventory() -> u32 {
    42
}

/// Units requested.
#[tool(callers())]
fn get_demand() -> u32 {
    31
}

fn main() {}
