use toolbox::prelude::*;

#[tool_box]
mod maths;

fn main() {}
