use toolbox::prelude::*;

#[tool_box]
mod maths {
    /// Adds.
    #[tool]
    pub fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
