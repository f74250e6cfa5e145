"""An MCP Apps server written with the official Python SDK (mcp 2.x's
MCPServer), over stdio, for toolbox-mcp/tests/apps_interop.rs: a tool
for the model and its view, a tool for the view only, a tool for the
model only, and the view as a `ui://` resource with its CSP, permissions
border preference, dedicated domain and a key of a vendor's in `_meta.ui`. With `--missing-view`, the card tool
names a view the server does not serve."""
import sys

from mcp.server.mcpserver import MCPServer

APP_MIME = "text/html;profile=mcp-app"
CARD_HTML = "<!doctype html><html><body><div id=card>weather</div></body></html>"
CARD = "ui://python-weather/card" if "--missing-view" not in sys.argv else "ui://python-weather/gone"

mcp = MCPServer("python-weather")
readings = {"count": 0}


@mcp.tool(
    description="The weather in a city, shown on a card",
    meta={"ui": {"resourceUri": CARD, "visibility": ["model", "app"]}},
)
def show_weather(city: str) -> str:
    readings["count"] += 1
    return f"{city}: 18 C, reading {readings['count']}"


@mcp.tool(
    description="Reads the weather again, for the card's button",
    meta={"ui": {"resourceUri": CARD, "visibility": ["app"]}},
)
def refresh_weather() -> str:
    readings["count"] += 1
    return f"refreshed, reading {readings['count']}"


@mcp.tool(
    description="Tomorrow's weather, as text",
    meta={"ui": {"visibility": ["model"]}},
)
def forecast(city: str) -> str:
    return f"{city}: rain tomorrow"


@mcp.resource(
    "ui://python-weather/card",
    name="weather-card",
    mime_type=APP_MIME,
    meta={
        "ui": {
            "csp": {"connectDomains": ["https://api.weather.example"]},
            "permissions": {"geolocation": {}},
            "prefersBorder": True,
            "domain": "python-weather.example",
            "vendorHint": {"compact": True},
        }
    },
)
def card() -> str:
    return CARD_HTML


if __name__ == "__main__":
    mcp.run("stdio")
