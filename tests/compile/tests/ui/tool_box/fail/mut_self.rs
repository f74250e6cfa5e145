use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool]
    fn get(&mut self, city: String) -> String {
        city
    }
}

fn main() {}
