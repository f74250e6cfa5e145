use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool(name = "get_the_current_weather_for_a_city_with_a_name_that_is_far_too_long_for_providers")]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {}
