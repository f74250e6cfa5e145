use toolbox::prelude::*;

#[tool_box]
struct W {
    city: String,
}

fn main() {}
