use std::sync::Arc;
use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Adds.
    #[tool]
    fn add(self: Arc<Self>, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
