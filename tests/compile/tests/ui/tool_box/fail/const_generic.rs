use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Repeats.
    #[tool]
    fn repeat<const N: usize>(&self, text: String) -> String {
        text.repeat(N)
    }
}

fn main() {}
