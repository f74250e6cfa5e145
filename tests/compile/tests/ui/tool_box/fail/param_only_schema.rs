// A parameter type with a schema but no `Deserialize`: one error, on the
// parameter, naming the missing derive (nothing about generated items).
use toolbox::prelude::*;

struct W;

#[derive(schemars::JsonSchema)]
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
