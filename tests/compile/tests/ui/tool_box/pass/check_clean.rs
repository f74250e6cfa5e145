//! `check(..)` on a clean box and a free tool: the generated check
//! function runs and passes (the `#[test]` beside it is for `cargo test`).
use toolbox::prelude::*;

#[derive(Default)]
struct Weather;

/// Weather lookups.
#[tool_box(check(openai_strict, anthropic_strict, gemini, gemini_legacy, mcp))]
impl Weather {
    /// Gets the weather.
    #[tool]
    fn get_weather(&self, /// The city.
        city: String, /// How many days.
        #[arg(default)] days: u8) -> String {
        format!("{city} {days}")
    }
}

/// The time.
#[tool(check(openai_strict))]
fn now() -> String {
    "noon".into()
}

fn main() {
    __toolbox_check_weather();
    __toolbox_check_now();
}
