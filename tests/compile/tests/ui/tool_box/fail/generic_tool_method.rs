use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Echoes anything.
    #[tool]
    fn echo<T: serde::Serialize>(&self, value: T) -> String {
        serde_json::to_string(&value).unwrap()
    }
}

fn main() {}
