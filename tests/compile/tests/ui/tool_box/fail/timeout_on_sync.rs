use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool(timeout = "5s")]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {}
