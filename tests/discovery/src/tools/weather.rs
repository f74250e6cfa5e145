//! Weather tools: free functions.

use toolbox::prelude::*;

/// Gets the current weather for a city.
#[tool(read_only)]
pub fn get_weather(
    /// The city, e.g. "Oslo".
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Gets tomorrow's forecast for a city.
#[tool(read_only)]
pub fn forecast(
    /// The city.
    city: String,
) -> String {
    format!("rain in {city} tomorrow")
}

/// A helper that is no tool: never registered.
pub fn celsius(fahrenheit: f64) -> f64 {
    (fahrenheit - 32.0) / 1.8
}

/// An internal tool the application lists by hand only.
#[tool(register = false)]
pub fn debug_dump() -> String {
    "state".to_owned()
}
