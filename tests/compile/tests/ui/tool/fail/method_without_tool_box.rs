use toolbox::prelude::*;

struct W;

impl W {
    /// Gets the weather.
    #[tool]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {}
