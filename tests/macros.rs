//! `#[tool_box]` and `#[tool]` through the facade: schemas, descriptions,
//! injection, sync and async, errors, free functions, modules, generics.

use crate::common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::Counts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::Args;
use toolbox::NamedToolBox;
use toolbox::{ToolErrorKind, ToolSpecification};

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy, Debug, PartialEq)]
enum Units {
    Celsius,
    Fahrenheit,
}

/// A place on the map.
#[derive(Deserialize, JsonSchema, Debug)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct Place {
    /// Latitude in degrees.
    lat: f64,
    lon: f64,
}

#[derive(Deserialize, JsonSchema, Debug)]
#[allow(dead_code)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    city: String,
    temp: f64,
}

struct Weather {
    base: f64,
    calls: AtomicU32,
}

/// Weather lookups.
#[tool_box(register = false)]
impl Weather {
    /// Get the current weather for a city.
    ///
    /// Uses the nearest station.
    #[tool(read_only, title = "Current weather")]
    async fn get_weather(
        &self,
        ctx: &Context,
        /// The city to look up, e.g. "Prague".
        city: String,
        /// Temperature units; Celsius when absent.
        units: Option<Units>,
    ) -> Result<Forecast, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        assert!(ctx.call_id().is_some() || ctx.call_id().is_none());
        if city.is_empty() {
            return Err("the city is empty; pass a city name".into());
        }
        let temp = match units {
            Some(Units::Fahrenheit) => self.base * 1.8 + 32.0,
            _ => self.base,
        };
        Ok(Forecast { city, temp })
    }

    /// Forecast for the coming days.
    ///
    /// # Arguments
    ///
    /// * `city` - The city to forecast.
    /// * `days` - How many days ahead,
    ///   at most 14.
    #[tool(name = "forecast", idempotent)]
    fn get_forecast(&self, city: String, days: u8) -> String {
        format!("{days} days of sun in {city}")
    }

    /// Every parameter kind a schema can hold.
    #[tool]
    fn kinds(
        &self,
        text: String,
        count: i32,
        big: u64,
        ratio: f32,
        flag: bool,
        maybe: Option<String>,
        tags: Vec<String>,
        place: Place,
        units: Units,
        shape: Shape,
        #[arg(rename = "type")] kind: String,
        #[arg(default)] page: u32,
        #[arg(default = 25, description = "Page size")] size: u32,
    ) -> Value {
        let _ = (
            place, shape, units, flag, ratio, big, count, text, maybe, tags,
        );
        json!({"kind": kind, "page": page, "size": size})
    }

    /// Deletes everything.
    #[tool(destructive)]
    fn wipe(&self) {}

    /// Waits too long.
    #[tool(timeout = "30ms")]
    async fn hang(&self) -> &'static str {
        tokio::time::sleep(Duration::from_secs(10)).await;
        "never"
    }

    /// Fails in a way the model can fix.
    #[tool]
    fn strict(&self, n: i64) -> Result<i64, ToolError> {
        if n < 0 {
            Err(ToolError::retryable(
                "n must not be negative; pass 0 or more",
            ))
        } else {
            Ok(n)
        }
    }

    /// Fails with a chain of causes.
    #[tool]
    async fn ledger(&self) -> Result<u32, LedgerError> {
        Err(LedgerError(std::io::Error::other("disk /dev/sdb1 failed")))
    }

    /// An ordinary method, not a tool.
    fn helper(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct LedgerError(std::io::Error);

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("could not read the ledger")
    }
}

impl std::error::Error for LedgerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

fn weather() -> Weather {
    Weather {
        base: 20.0,
        calls: AtomicU32::new(0),
    }
}

fn spec(toolbox: &impl ToolBox, name: &str) -> ToolSpecification {
    toolbox
        .specification(name, &Context::new())
        .expect(name)
        .into_owned()
}

async fn call(toolbox: &impl ToolBox, name: &str, arguments: Value) -> ToolResponse {
    toolbox
        .call(name, &arguments, &Context::new(), &ToolHandler::empty())
        .await
}

#[test]
fn descriptions_come_from_doc_comments_and_attributes() {
    let w = weather();
    let get = spec(&w, "get_weather");
    assert_eq!(
        get.description,
        "Get the current weather for a city.\n\nUses the nearest station."
    );
    assert_eq!(get.title.as_deref(), Some("Current weather"));
    assert_eq!(
        get.parameters["properties"]["city"]["description"],
        "The city to look up, e.g. \"Prague\"."
    );
    let forecast = spec(&w, "forecast");
    assert_eq!(forecast.description, "Forecast for the coming days.");
    assert_eq!(
        forecast.parameters["properties"]["city"]["description"],
        "The city to forecast."
    );
    assert_eq!(
        forecast.parameters["properties"]["days"]["description"],
        "How many days ahead, at most 14."
    );
    assert_eq!(w.box_name(), "weather");
    assert_eq!(w.box_description(), Some("Weather lookups."));
    assert_eq!(w.helper(), 0, "ordinary methods stay ordinary");
}

#[test]
fn schemas_match_the_parameters() {
    let w = weather();
    let get = spec(&w, "get_weather");
    assert_eq!(
        get.parameters,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "city": {"type": "string", "description": "The city to look up, e.g. \"Prague\"."},
                "units": {
                    "anyOf": [{"$ref": "#/$defs/Units"}, {"type": "null"}],
                    "description": "Temperature units; Celsius when absent."
                }
            },
            "required": ["city"],
            "$defs": {"Units": {"type": "string", "enum": ["Celsius", "Fahrenheit"]}}
        })
    );
    let keys: Vec<&String> = get.parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["city", "units"], "declaration order is kept");

    let kinds = spec(&w, "kinds").parameters;
    let p = &kinds["properties"];
    assert_eq!(p["text"], json!({"type": "string"}));
    assert_eq!(p["count"], json!({"type": "integer", "format": "int32"}));
    assert_eq!(
        p["big"],
        json!({"type": "integer", "format": "uint64", "minimum": 0})
    );
    assert_eq!(p["ratio"], json!({"type": "number", "format": "float"}));
    assert_eq!(p["flag"], json!({"type": "boolean"}));
    assert_eq!(p["maybe"], json!({"type": ["string", "null"]}));
    assert_eq!(
        p["tags"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(p["place"], json!({"$ref": "#/$defs/Place"}));
    assert_eq!(p["units"], json!({"$ref": "#/$defs/Units"}));
    assert_eq!(p["shape"], json!({"$ref": "#/$defs/Shape"}));
    assert_eq!(p["type"], json!({"type": "string"}), "renamed");
    assert!(p.get("kind").is_none());
    assert_eq!(
        p["page"],
        json!({"type": "integer", "format": "uint32", "minimum": 0, "default": 0})
    );
    assert_eq!(
        p["size"],
        json!({"type": "integer", "format": "uint32", "minimum": 0, "default": 25, "description": "Page size"})
    );
    assert_eq!(
        kinds["required"],
        json!(["text", "count", "big", "ratio", "flag", "tags", "place", "units", "shape", "type"])
    );
    assert_eq!(
        kinds["$defs"]["Place"],
        json!({
            "description": "A place on the map.",
            "type": "object",
            "properties": {
                "lat": {"type": "number", "format": "double", "description": "Latitude in degrees."},
                "lon": {"type": "number", "format": "double"}
            },
            "additionalProperties": false,
            "required": ["lat", "lon"]
        })
    );
    assert_eq!(
        kinds["$defs"]["Shape"]["oneOf"][0]["properties"]["kind"],
        json!({"type": "string", "const": "circle"})
    );

    assert_eq!(
        spec(&w, "wipe").parameters,
        json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
}

#[test]
fn annotations_and_output_schemas() {
    let w = weather();
    let get = spec(&w, "get_weather");
    assert!(get.is_read_only());
    assert_eq!(
        get.output_schema.as_ref().unwrap()["required"],
        json!(["city", "temp"])
    );
    assert!(spec(&w, "wipe").is_destructive());
    assert_eq!(
        spec(&w, "forecast").annotations.unwrap().idempotent,
        Some(true)
    );
    assert!(
        spec(&w, "forecast").output_schema.is_none(),
        "no output schema for text"
    );
    assert!(spec(&w, "wipe").output_schema.is_none(), "none for ()");
    assert_eq!(spec(&w, "strict").output_schema.unwrap()["type"], "integer");
}

#[tokio::test]
async fn sync_and_async_tools_run_with_defaults_and_renames() {
    let w = weather();
    let r = call(
        &w,
        "get_weather",
        json!({"city": "Prague", "units": "Fahrenheit"}),
    )
    .await;
    assert_eq!(r.content, r#"{"city":"Prague","temp":68.0}"#);
    let r = call(&w, "forecast", json!({"city": "Brno", "days": 3})).await;
    assert_eq!(r.content, "3 days of sun in Brno");
    let args = json!({
        "text": "t", "count": -1, "big": 1, "ratio": 0.5, "flag": true, "tags": [],
        "place": {"lat": 1.0, "lon": 2.0}, "units": "Celsius", "shape": {"kind": "square", "side": 2.0},
        "type": "report"
    });
    let r = call(&w, "kinds", args).await;
    assert_eq!(r.content, r#"{"kind":"report","page":0,"size":25}"#);
    assert_eq!(call(&w, "wipe", json!(null)).await, ToolResponse::text(""));
}

#[tokio::test]
async fn bad_arguments_never_reach_the_method() {
    let w = weather();
    let r = call(
        &w,
        "get_weather",
        json!({"city": "Prague", "units": "Kelvin"}),
    )
    .await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "invalid arguments at `units`: unknown variant `Kelvin`, expected `Celsius` or `Fahrenheit`"
    );
    let r = call(&w, "forecast", json!({"city": "Brno", "days": 300})).await;
    assert_eq!(
        r.content,
        "invalid arguments at `days`: got `300`, expected an integer from 0 to 255"
    );
    let r = call(&w, "get_weather", json!({"city": "Prague", "extra": 1})).await;
    assert_eq!(
        r.content,
        "invalid arguments at `extra`: unknown field `extra`, expected `city` or `units`"
    );
    assert_eq!(w.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn errors_reach_the_model_as_error_responses() {
    let w = weather();
    let counts = Counts::default();
    let r = w
        .call(
            "get_weather",
            &json!({"city": ""}),
            &Context::new(),
            &counts.handler(),
        )
        .await;
    assert_eq!(
        r,
        ToolResponse::error("the city is empty; pass a city name")
    );
    assert_eq!(counts.get(), (1, 0, 1));

    let retry = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen = retry.clone();
    let handler = ToolHandler::empty().on_error(move |e| {
        *seen.lock().unwrap() = Some((e.error.kind(), e.error.is_retryable(), e.error.report()))
    });
    let r = w
        .call("strict", &json!({"n": -1}), &Context::new(), &handler)
        .await;
    assert_eq!(r.content, "n must not be negative; pass 0 or more");
    assert!(
        retry.lock().unwrap().clone().unwrap().1,
        "a ToolError keeps its retryability"
    );

    let r = w
        .call("ledger", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(r.content, "could not read the ledger");
    let (kind, _, report) = retry.lock().unwrap().clone().unwrap();
    assert_eq!(kind, ToolErrorKind::Failed);
    assert_eq!(report, "could not read the ledger: disk /dev/sdb1 failed");

    let r = call(&w, "hang", json!({})).await;
    assert_eq!(r.content, "the tool did not finish within 30ms");
}

// ---- injection ----

#[derive(Clone, Debug, PartialEq)]
struct UserId(u64);

impl FromContext for UserId {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<UserId>()
            .cloned()
            .ok_or_else(|| ToolError::failed("no signed-in user"))
    }
}

struct Accounts;

/// Account tools.
#[tool_box(register = false, name = "accounts")]
impl Accounts {
    /// Who am I, and what call is this.
    #[tool]
    fn whoami(&self, ctx: Context, #[inject] user: UserId, greeting: String) -> String {
        format!("{greeting} {} ({})", user.0, ctx.call_id().unwrap_or("-"))
    }

    /// A tool with only injected parameters.
    #[tool]
    async fn balance(&self, #[inject] user: UserId, #[inject] call: toolbox::CallId) -> String {
        format!("{}:{}", user.0, call.0.unwrap_or_default())
    }
}

#[tokio::test]
async fn context_and_from_context_are_injected_and_absent_from_the_schema() {
    let spec = spec(&Accounts, "whoami");
    assert_eq!(
        spec.parameters,
        json!({"type": "object", "additionalProperties": false, "properties": {"greeting": {"type": "string"}}, "required": ["greeting"]})
    );
    let ctx = Context::new().with_call_id("c1").with_extension(UserId(7));
    let handler = ToolHandler::empty();
    let r = Accounts
        .call("whoami", &json!({"greeting": "hi"}), &ctx, &handler)
        .await;
    assert_eq!(r.content, "hi 7 (c1)");
    let r = Accounts.call("balance", &json!({}), &ctx, &handler).await;
    assert_eq!(r.content, "7:c1");

    // The model cannot set an injected parameter: the argument is refused.
    let r = Accounts
        .call(
            "whoami",
            &json!({"greeting": "hi", "user": 1, "ctx": {}}),
            &ctx,
            &handler,
        )
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "invalid arguments at `user`: unknown field `user`, expected `greeting`"
    );
    let r = Accounts
        .call("balance", &json!({"user": 99}), &ctx, &handler)
        .await;
    assert!(
        r.content
            .starts_with("invalid arguments at `user`: unknown field `user`"),
        "{}",
        r.content
    );

    // A context without the user: the injection fails before the tool runs.
    let r = Accounts
        .call("balance", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(r, ToolResponse::error("no signed-in user"));
}

// ---- whole-object arguments ----

/// Search parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchParams {
    /// What to look for.
    query: String,
    limit: Option<u32>,
}

struct Catalogue;

#[tool_box(register = false)]
impl Catalogue {
    /// Search by params.
    #[tool]
    fn search(&self, #[args] params: SearchParams) -> String {
        format!("{}:{}", params.query, params.limit.unwrap_or(10))
    }

    /// Search by Args.
    #[tool]
    fn search_args(&self, params: Args<SearchParams>) -> String {
        format!("{}:{}", params.query, params.limit.unwrap_or(10))
    }
}

#[tokio::test]
async fn a_whole_argument_object_uses_its_type_schema() {
    let s = spec(&Catalogue, "search");
    assert_eq!(
        s.parameters["properties"]["query"]["description"],
        "What to look for."
    );
    assert_eq!(s.parameters["required"], json!(["query"]));
    assert_eq!(s.parameters, spec(&Catalogue, "search_args").parameters);
    assert_eq!(
        call(&Catalogue, "search", json!({"query": "q"}))
            .await
            .content,
        "q:10"
    );
    assert_eq!(
        call(&Catalogue, "search_args", json!({"query": "q", "limit": 2}))
            .await
            .content,
        "q:2"
    );
    assert_eq!(Catalogue.box_name(), "catalogue");
}

// ---- free functions and modules ----

/// Returns the current date and time in ISO 8601.
#[tool]
fn now() -> String {
    "2026-11-30T12:00:00Z".to_owned()
}

/// Adds two integers.
#[tool]
pub async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::test]
async fn a_free_function_stays_callable_and_gains_a_tool_value() {
    assert_eq!(now(), "2026-11-30T12:00:00Z");
    assert_eq!(add(1, 2).await, 3);
    assert_eq!(
        call(&NowTool, "now", json!(null)).await.content,
        "2026-11-30T12:00:00Z"
    );
    assert_eq!(
        call(&AddTool, "add", json!({"a": 40, "b": 2}))
            .await
            .content,
        "42"
    );
    assert_eq!(NowTool.box_name(), "now");
    assert_eq!(
        spec(&NowTool, "now").description,
        "Returns the current date and time in ISO 8601."
    );
}

/// Customer records.
#[tool_box]
mod crm {
    use super::*;

    /// Gets a customer by id.
    #[tool(read_only)]
    pub(crate) fn get_customer(id: u32) -> String {
        format!("customer {id}")
    }

    /// Lists customers.
    #[tool]
    async fn list_customers(ctx: &Context) -> Vec<String> {
        vec![ctx.call_id().unwrap_or("anonymous").to_owned()]
    }
}

#[tokio::test]
async fn an_inline_module_is_one_box() {
    assert_eq!(crm::get_customer(3), "customer 3");
    let names: Vec<String> = crm::Tools
        .specifications(&Context::new())
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["get_customer", "list_customers"]);
    assert_eq!(crm::Tools.box_name(), "crm");
    assert_eq!(crm::Tools.box_description(), Some("Customer records."));
    assert_eq!(
        call(&crm::Tools, "get_customer", json!({"id": 5}))
            .await
            .content,
        "customer 5"
    );
    let ctx = Context::new().with_call_id("c2");
    let r = crm::Tools
        .call("list_customers", &json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert_eq!(r.content, r#"["c2"]"#);
}

// ---- generic impl blocks ----

trait Store: Send + Sync + 'static {
    fn get(&self, id: u32) -> Option<String>;
}

struct MemoryStore;

impl Store for MemoryStore {
    fn get(&self, id: u32) -> Option<String> {
        (id == 1).then(|| "Ada".to_owned())
    }
}

struct Crm<S: Store> {
    store: S,
}

#[tool_box(name = "crm")]
impl<S: Store> Crm<S> {
    /// Finds a customer.
    #[tool]
    fn find(&self, id: u32) -> Result<String, String> {
        self.store
            .get(id)
            .ok_or_else(|| format!("no customer {id}; ids start at 1"))
    }
}

#[tokio::test]
async fn a_generic_impl_block_is_a_box() {
    let crm = Crm { store: MemoryStore };
    assert_eq!(call(&crm, "find", json!({"id": 1})).await.content, "Ada");
    assert_eq!(
        call(&crm, "find", json!({"id": 2})).await,
        ToolResponse::error("no customer 2; ids start at 1")
    );
}

#[tokio::test]
async fn macro_boxes_compose_in_a_multi_tool_box() {
    let merged = MultiToolBox::builder()
        .add_box(weather())
        .add_box(crm::Tools)
        .add_box(Crm { store: MemoryStore })
        .add_box(NowTool)
        .build();
    // `crm` twice: refused.
    let error = merged.unwrap_err();
    assert!(
        error
            .problems()
            .contains(&"two boxes are named `crm`".to_owned()),
        "{error}"
    );

    let merged = MultiToolBox::builder()
        .add_box(weather())
        .add_box(crm::Tools)
        .add("store", Crm { store: MemoryStore })
        .add_box(NowTool)
        .build()
        .unwrap();
    let counts = Counts::default();
    let handler = counts.handler();
    let ctx = Context::new();
    assert_eq!(
        merged
            .call("crm_get_customer", &json!({"id": 9}), &ctx, &handler)
            .await
            .content,
        "customer 9"
    );
    assert_eq!(
        merged
            .call("store_find", &json!({"id": 1}), &ctx, &handler)
            .await
            .content,
        "Ada"
    );
    assert_eq!(
        merged
            .call("now_now", &json!({}), &ctx, &handler)
            .await
            .content,
        "2026-11-30T12:00:00Z"
    );
    assert_eq!(
        merged
            .call(
                "weather_forecast",
                &json!({"city": "Oslo", "days": 2}),
                &ctx,
                &handler
            )
            .await
            .content,
        "2 days of sun in Oslo"
    );
    assert_eq!(counts.get(), (4, 4, 0));
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    common::assert_fits_every_provider(&weather());
    common::assert_fits_every_provider(&Accounts);
    common::assert_fits_every_provider(&Catalogue);
    common::assert_fits_every_provider(&crm::Tools);
    common::assert_fits_every_provider(&Crm { store: MemoryStore });
    common::assert_fits_every_provider(&NowTool);
    common::assert_fits_every_provider(&AddTool);
}

#[derive(serde::Serialize)]
struct Messages(Vec<&'static str>);

struct Cards;

#[tool_box(register = false)]
impl Cards {
    /// Shows a card to the user and tells the model what it shows.
    #[tool]
    fn show_card(&self, ctx: &Context, title: String) -> ToolResponse {
        let turns = ctx.request::<Messages>().map_or(0, |m| m.0.len());
        ToolResponse::text(format!("showed `{title}` after {turns} messages"))
            .with_element(json!({"card": {"title": title}}))
    }
}

#[tokio::test]
async fn a_tool_response_keeps_its_element_and_sees_the_request() {
    let ctx = Context::new().with_request(Messages(vec!["hi", "show me"]));
    let response = Cards
        .call(
            "show_card",
            &json!({"title": "Flights"}),
            &ctx,
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response.content, "showed `Flights` after 2 messages");
    assert_eq!(
        response.element,
        Some(json!({"card": {"title": "Flights"}}))
    );
    assert!(!response.is_error);
    assert!(spec(&Cards, "show_card").output_schema.is_none());
}

/// The weather card's data.
#[tool(ui = "ui://weather/card", app_only)]
fn refresh_card() -> String {
    "refreshed".to_owned()
}

/// The weather, shown with its card.
#[tool(ui = "ui://weather/card")]
fn weather_with_card() -> String {
    "sunny".to_owned()
}

#[test]
fn the_ui_key_gives_the_tool_an_mcp_apps_view() {
    let card = spec(&RefreshCardTool, "refresh_card");
    let ui = card.ui.expect("a view");
    assert_eq!(ui.resource_uri.as_deref(), Some("ui://weather/card"));
    assert_eq!(ui.visibility, Some(vec!["app".to_owned()]));
    assert!(!ui.for_model());
    let weather = spec(&WeatherWithCardTool, "weather_with_card");
    assert!(weather
        .ui
        .as_ref()
        .is_some_and(|ui| ui.for_model() && ui.for_app()));
}

/// Builds the site, a while.
#[tool(task)]
fn build_site() -> String {
    "built".to_owned()
}

/// Renders the film, only as a task.
#[tool(task = "required")]
fn render_film() -> String {
    "rendered".to_owned()
}

#[test]
fn the_task_key_marks_a_tool_to_run_as_an_mcp_task() {
    assert_eq!(
        spec(&BuildSiteTool, "build_site").task,
        toolbox::TaskSupport::Optional
    );
    assert_eq!(
        spec(&RenderFilmTool, "render_film").task,
        toolbox::TaskSupport::Required
    );
    assert_eq!(
        spec(&WeatherWithCardTool, "weather_with_card").task,
        toolbox::TaskSupport::Never
    );
    // Serialized only where set.
    let json = serde_json::to_value(spec(&RenderFilmTool, "render_film")).unwrap();
    assert_eq!(json["task"], "required");
    let json = serde_json::to_value(spec(&WeatherWithCardTool, "weather_with_card")).unwrap();
    assert!(json.get("task").is_none());
}

/// Units in stock, for code the model writes.
#[tool(callers(code))]
fn inventory_for_code() -> u32 {
    42
}

/// Stock and demand, callable by the model and by its code unless a tool
/// says otherwise.
#[derive(Default)]
struct Stock;

#[tool_box(callers(direct, code))]
impl Stock {
    /// Units requested.
    #[tool]
    fn demand(&self) -> u32 {
        31
    }

    /// Cancels an order: the model's decision alone.
    #[tool(callers(direct))]
    fn cancel(&self) -> String {
        "cancelled".to_owned()
    }
}

#[test]
fn the_callers_key_says_who_may_call_a_tool() {
    use toolbox::program::Callers;
    assert_eq!(
        spec(&InventoryForCodeTool, "inventory_for_code").callers,
        Callers::CODE
    );
    assert_eq!(spec(&Stock, "demand").callers, Callers::ANY);
    assert_eq!(spec(&Stock, "cancel").callers, Callers::DIRECT);
    // A tool without the key is the model's alone.
    assert_eq!(
        spec(&WeatherWithCardTool, "weather_with_card").callers,
        Callers::DIRECT
    );
}
