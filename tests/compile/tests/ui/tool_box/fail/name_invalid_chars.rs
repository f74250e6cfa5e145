use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool(name = "get weather")]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {}
