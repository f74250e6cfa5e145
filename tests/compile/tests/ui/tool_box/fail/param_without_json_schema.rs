// A parameter type that deserializes but has no schema: the error is on
// the parameter and says what to derive.
use toolbox::prelude::*;

struct W;

#[derive(serde::Deserialize)]
enum Units {
    Celsius,
    Fahrenheit,
}

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
