//! An MCP Apps server: `show_weather` names the view `ui://weather/card`,
//! which a host (Claude, ChatGPT, VS Code, Goose, …) renders with the
//! tool's result, and `refresh_weather` is for that view only: a host never
//! offers it to the model, the view's button calls it.
//!
//! ```sh
//! cargo run --features mcp --example apps_server -- 127.0.0.1:8766
//! ```
//!
//! The endpoint is `http://ADDRESS/mcp` (loopback `Host`s and `Origin`s
//! only). `--view FILE` serves another HTML document as the view.
//! `scripts/apps_browser` renders it in headless Chromium through the
//! extension's own host library.

use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::Serialize;
use toolbox::mcp::{apps::UiResource, serve_http, McpServer};
use toolbox::prelude::*;

/// The view a host renders: plain HTML and script speaking the extension's
/// `postMessage` protocol, so it needs no build step.
const CARD: &str = include_str!("apps/weather_card.html");

/// One reading of the weather in a city.
#[derive(Serialize, JsonSchema)]
struct Reading {
    city: String,
    temperature_c: f64,
    conditions: &'static str,
    /// How many readings the server has taken so far.
    reading: u32,
}

/// A weather station that counts its readings.
struct Weather {
    readings: AtomicU32,
}

impl Weather {
    fn read(&self, city: String) -> Reading {
        let reading = self.readings.fetch_add(1, Ordering::Relaxed) + 1;
        // A stand-in for a weather service: the same city reads the same,
        // each refresh a little warmer.
        let base = city.bytes().map(f64::from).sum::<f64>() % 25.0;
        Reading {
            temperature_c: base + f64::from(reading) / 10.0,
            conditions: ["sunny", "cloudy", "rain"][city.len() % 3],
            city,
            reading,
        }
    }
}

/// Weather on a card.
#[tool_box(register = false)]
impl Weather {
    /// Shows the current weather in a city on a card the user sees.
    #[tool(read_only, ui = "ui://weather/card")]
    fn show_weather(
        &self,
        /// The city, e.g. "Lisbon".
        city: String,
    ) -> Reading {
        self.read(city)
    }

    /// Takes a new reading for the city on the card (the card's button).
    #[tool(read_only, ui = "ui://weather/card", app_only)]
    fn refresh_weather(
        &self,
        /// The city the card shows.
        city: String,
    ) -> Reading {
        self.read(city)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let address = arguments
        .iter()
        .find(|a| !a.starts_with("--") && a.contains(':'))
        .map_or("127.0.0.1:8766", String::as_str);
    let html = match arguments.iter().position(|a| a == "--view") {
        Some(at) => {
            let path = arguments.get(at + 1).ok_or("`--view` needs a file")?;
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the view {path}: {e}"))?
        }
        None => CARD.to_owned(),
    };
    let view = UiResource::new("ui://weather/card", html).prefers_border(true);
    let weather = Weather {
        readings: AtomicU32::new(0),
    };
    let handler = ToolHandler::empty()
        .on_success(|e| eprintln!("ok    {} in {:?}", e.name, e.elapsed))
        .on_error(|e| eprintln!("error {}: {}", e.name, e.error.report()));
    let server = McpServer::new(weather, "weather")
        .ui_resource(view)
        .handler(handler);
    let running = serve_http(server, address).await?;
    eprintln!("serving MCP at {}", running.url());
    tokio::signal::ctrl_c().await?;
    running.shutdown(std::time::Duration::from_secs(5)).await;
    Ok(())
}
