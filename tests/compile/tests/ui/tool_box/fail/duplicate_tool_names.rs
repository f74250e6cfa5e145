use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool(name = "weather")]
    fn get(&self, city: String) -> String {
        city
    }

    /// Also gets the weather.
    #[tool(name = "weather")]
    fn fetch(&self, city: String) -> String {
        city
    }
}

fn main() {}
