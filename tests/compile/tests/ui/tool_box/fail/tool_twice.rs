use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Adds.
    #[tool]
    #[tool(read_only)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
