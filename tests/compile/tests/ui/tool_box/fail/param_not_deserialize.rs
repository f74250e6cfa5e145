use toolbox::prelude::*;

struct W;

struct Units;

#[tool_box(register = false)]
impl W {
    /// Gets the weather.
    #[tool]
    fn get(&self, city: String, units: Units) -> String {
        let _ = units;
        city
    }
}

fn main() {}
