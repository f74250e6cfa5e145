use toolbox::prelude::*;

struct W;

struct Forecast;

#[tool_box(register = false)]
impl W {
    /// Gets the weather.
    #[tool]
    fn get(&self, city: String) -> Forecast {
        let _ = city;
        Forecast
    }
}

fn main() {}
