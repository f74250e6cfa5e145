use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Adds.
    #[tool(crate = toolbox)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
