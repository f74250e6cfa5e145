use toolbox::prelude::*;

struct W;

trait Lookup {
    fn get(&self, city: String) -> String;
}

#[tool_box]
impl Lookup for W {
    /// Gets the weather.
    #[tool]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {}
