use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Adds.
    #[tool]
    extern "C" fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
