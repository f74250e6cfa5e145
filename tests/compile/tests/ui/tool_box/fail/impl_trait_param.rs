use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Shows anything.
    #[tool]
    fn show(&self, value: impl std::fmt::Display) -> String {
        value.to_string()
    }
}

fn main() {}
