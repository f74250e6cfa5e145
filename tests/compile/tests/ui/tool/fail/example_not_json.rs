// An example written as text is read as JSON when the macro runs: text
// that is not JSON, or not an object of arguments, is an error at its span.
use toolbox::prelude::*;

/// The weather in a city.
#[tool(example = r#"{"city": "Oslo",}"#, example = r#"["Oslo"]"#)]
fn weather(city: String) -> String {
    city
}

fn main() {
    let _ = WeatherTool;
}
