use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Adds a pair.
    #[tool]
    fn add(&self, (a, b): (i32, i32)) -> i32 {
        a + b
    }
}

fn main() {}
