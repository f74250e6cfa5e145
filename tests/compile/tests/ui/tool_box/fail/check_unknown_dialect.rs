use toolbox::prelude::*;

#[derive(Default)]
struct Weather;

/// Weather lookups.
#[tool_box(check(openai_strikt))]
impl Weather {
    /// Gets the weather.
    #[tool]
    fn get_weather(&self, city: String) -> String {
        city
    }
}

fn main() {}
