use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    #[tool(name = "bad name")]
    fn first(&mut self, city: String) -> String {
        city
    }

    /// Second.
    #[tool(colour = "red")]
    fn second<T>(&self, value: T) {
        let _ = value;
    }
}

fn main() {}
