use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Copies.
    #[tool]
    fn copy(&self, #[arg(rename = "path")] from: String, path: String) -> String {
        from + &path
    }
}

fn main() {}
