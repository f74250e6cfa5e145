use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool]
    fn get(&self, #[arg(desc = "The city")] city: String) -> String {
        city
    }
}

fn main() {}
