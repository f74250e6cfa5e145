use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Adds.
    #[tool(name = 5, timeout = 5)]
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
