use toolbox::prelude::*;
use toolbox::NamedToolBox;

use serde_json::json;

struct Weather;

/// Weather tools.
#[tool_box(register = false)]
impl Weather {
    /// Gets the weather.
    #[tool(read_only, title = "Weather")]
    async fn get(
        &self,
        /// The city.
        city: String,
        #[arg(default = 3)] days: u8,
    ) -> Result<String, String> {
        Ok(format!("{city} {days}"))
    }

    /// Forecast.
    #[toolbox::tool(name = "forecast-7d", idempotent, timeout = "2s")]
    async fn forecast(&self, ctx: &Context) -> Vec<u8> {
        let _ = ctx;
        vec![1, 2]
    }

    fn helper(&self) -> u8 {
        1
    }
}

fn main() {
    assert_eq!(Weather.helper(), 1);
    let specs = Weather.specifications(&Context::new());
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[1].name, "forecast-7d");
    assert_eq!(specs[0].parameters["properties"]["days"]["default"], json!(3));
    assert_eq!(Weather.box_name(), "weather");
}
