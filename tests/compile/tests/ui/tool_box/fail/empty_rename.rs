use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Echoes.
    #[tool]
    fn echo(&self, #[arg(rename = "")] text: String) -> String {
        text
    }
}

fn main() {}
