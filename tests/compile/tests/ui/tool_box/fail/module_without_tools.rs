use toolbox::prelude::*;

#[tool_box]
mod maths {
    pub fn add(a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
