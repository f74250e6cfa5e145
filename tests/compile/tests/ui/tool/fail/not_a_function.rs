use toolbox::prelude::*;

#[tool]
struct Now;

fn main() {}
