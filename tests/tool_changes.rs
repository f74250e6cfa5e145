//! Anthropic's mid-conversation tool changes and MCP tool-list pinning: a
//! catalogue with inline tool changes keeps the request's `tools` byte for
//! byte as searches load tools (each a `tool_addition` in the
//! conversation) and the least recently used leave (`tool_removal`); an
//! `mcp_tool_listing` a response carries goes back as it came.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use toolbox::catalog::{Catalog, Revealed, SEARCH_TOOL};
use toolbox::provider::{McpToolListings, Provider, ANTHROPIC_INLINE_TOOLS_BETA};
use toolbox::turn::TurnRunner;
use toolbox::{
    Arguments, Context, DispatchFuture, Namespace, ToolBox, ToolCall, ToolResponse,
    ToolSpecification,
};

const TOPICS: [&str; 4] = ["invoice", "shipment", "ticket", "contract"];
const ACTIONS: [&str; 5] = ["create", "read", "update", "archive", "export"];

/// Twenty deferred tools (four topics of five actions) and one eager tool.
struct Records {
    specs: Vec<ToolSpecification>,
}

impl Records {
    fn new() -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The record's id."}},
            "required": ["id"],
            "additionalProperties": false
        });
        let mut specs = vec![ToolSpecification::new("now", "The current time.")];
        for topic in TOPICS {
            let namespace = Namespace::new(topic, format!("Everything about {topic}s."));
            for action in ACTIONS {
                specs.push(
                    ToolSpecification::new(
                        format!("{action}_{topic}"),
                        format!("Does {action} on one {topic} record, by its id."),
                    )
                    .with_parameters(parameters.clone())
                    .with_namespace(namespace.clone())
                    .with_deferred(true),
                );
            }
        }
        Records { specs }
    }
}

impl ToolBox for Records {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.specs.clone()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::ready(Ok(ToolResponse::text(format!("{name} done"))))
    }
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/providers/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn blocks_of<'v>(message: &'v Value, kind: &str) -> Vec<&'v Value> {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == kind)
        .collect()
}

/// Each search reveals one tool under Anthropic strict (20 tools a
/// request): the first 18 fit beside `now` and the search, the 19th
/// unloads the least recently used. The request's `tools` never change.
#[tokio::test]
async fn reveals_reach_anthropic_as_tool_changes_and_the_tools_keep_their_bytes() {
    let tools = Records::new();
    let ctx = Context::new();
    let catalog = Catalog::of(&tools, &ctx)
        .unwrap()
        .results(1)
        .inline_tool_changes(true);
    assert_eq!(catalog.anthropic_betas(), [ANTHROPIC_INLINE_TOOLS_BETA]);
    let provider = Provider::Anthropic { strict: true };
    let runner = TurnRunner::new(&tools).provider(provider).catalog(&catalog);
    let first = runner.definitions(&ctx).unwrap();
    let names: Vec<&str> = first
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["now", SEARCH_TOOL]);
    let first = first.to_string();

    let pairs: Vec<(&str, &str)> = TOPICS
        .iter()
        .flat_map(|topic| ACTIONS.iter().map(move |action| (*action, *topic)))
        .take(19)
        .collect();
    for (round, (action, topic)) in pairs.iter().enumerate() {
        let tool = format!("{action}_{topic}");
        let body = json!({"content": [{"type": "tool_use", "id": format!("toolu_s{round}"),
            "name": SEARCH_TOOL, "input": {"query": format!("{action} {topic}")}}]});
        let calls = provider
            .parse_response(body.to_string().as_bytes())
            .unwrap();
        let outcomes = runner.run(calls, &ctx).await;
        let messages = provider.result_messages(&outcomes);
        assert_eq!(messages.len(), 2, "round {round}: {messages:?}");
        // The result names what was loaded, as text (no `tool_reference`:
        // the tool is not in `tools`).
        let result = &messages[0]["content"][0];
        assert_eq!(result["type"], "tool_result");
        let text = result["content"].as_str().unwrap();
        assert!(text.contains(&format!("\"name\":\"{tool}\"")), "{text}");
        // The tool joins the conversation with its whole definition.
        let changes = &messages[1];
        assert_eq!(changes["role"], "system");
        let additions = blocks_of(changes, "tool_addition");
        assert_eq!(additions.len(), 1, "round {round}: {changes}");
        let spec = catalog.specification(&tool).unwrap();
        assert_eq!(
            *additions[0],
            json!({"type": "tool_addition", "tool": {"type": "tool_definition",
                "definition": provider.definition(spec).unwrap()}})
        );
        assert_eq!(additions[0]["tool"]["definition"]["strict"], true);
        let removals = blocks_of(changes, "tool_removal");
        if round < 18 {
            assert!(removals.is_empty(), "round {round}: {changes}");
        } else {
            // No room for a 21st strict tool: the first revealed leaves.
            assert_eq!(
                removals,
                [
                    &json!({"type": "tool_removal", "tool": {"type": "tool_reference", "name": "create_invoice"}})
                ]
            );
            assert!(text.contains("create_invoice"), "{text}");
            assert!(!runner.revealed().contains("create_invoice"));
        }
        assert!(runner.revealed().contains(&tool));
        // The next request's tools: the same bytes as the first's.
        assert_eq!(
            runner.definitions(&ctx).unwrap().to_string(),
            first,
            "round {round}"
        );
    }
    // A revealed tool runs; the unloaded one is refused until searched again.
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_c1", "name": "read_shipment", "input": {"id": "7"}}]});
    let outcomes = runner
        .run(
            provider
                .parse_response(call.to_string().as_bytes())
                .unwrap(),
            &ctx,
        )
        .await;
    assert_eq!(outcomes[0].response.content, "read_shipment done");
    let messages = provider.result_messages(&outcomes);
    assert_eq!(messages.len(), 1, "a plain call changes no tool");
    let call = json!({"content": [{"type": "tool_use", "id": "toolu_c2", "name": "create_invoice", "input": {"id": "7"}}]});
    let outcomes = runner
        .run(
            provider
                .parse_response(call.to_string().as_bytes())
                .unwrap(),
            &ctx,
        )
        .await;
    assert!(outcomes[0].response.is_error);
}

/// Off by default: reveals go in `tools`, as `tool_reference` blocks
/// announce them, and no beta is needed; the provider's own search and
/// other providers are not affected by the option.
#[test]
fn without_inline_changes_reveals_go_in_the_tools() {
    let tools = Records::new();
    let ctx = Context::new();
    let provider = Provider::Anthropic { strict: false };
    let catalog = Catalog::of(&tools, &ctx).unwrap();
    assert!(catalog.anthropic_betas().is_empty());
    let hosted = Catalog::of(&tools, &ctx)
        .unwrap()
        .inline_tool_changes(true)
        .hosted_search(true);
    assert!(hosted.anthropic_betas().is_empty());
    let mut revealed = Revealed::new();
    let before = catalog.definitions(provider, &revealed).unwrap();
    let mut search = ToolCall::new(SEARCH_TOOL, json!({"query": "read invoice"})).with_id("t1");
    let found = catalog.answer(Some(provider), &mut search, &mut revealed);
    assert_ne!(catalog.definitions(provider, &revealed).unwrap(), before);
    let messages = provider.result_messages(&[(search, found)]);
    assert_eq!(messages.len(), 1);
    assert_eq!(
        messages[0]["content"][0]["content"][0]["type"],
        "tool_reference"
    );

    let inline = Catalog::of(&tools, &ctx).unwrap().inline_tool_changes(true);
    let gemini = Provider::Gemini;
    let mut revealed = Revealed::new();
    let before = inline.definitions(gemini, &revealed).unwrap();
    let mut search = ToolCall::new(SEARCH_TOOL, json!({"query": "read invoice"})).with_id("c1");
    let found = inline.answer(Some(gemini), &mut search, &mut revealed);
    assert_ne!(inline.definitions(gemini, &revealed).unwrap(), before);
    assert_eq!(gemini.result_messages(&[(search, found)]).len(), 1);
}

/// The blocks toolbox writes have the documented shapes (the fixture is
/// the inline tools example: a definition added, a tool removed, in a
/// `system` message).
#[test]
fn tool_change_blocks_have_the_documented_shape() {
    let documented: Value = serde_json::from_str(&fixture("anthropic_inline_tools.json")).unwrap();
    assert_eq!(
        documented["headers"]["anthropic-beta"],
        ANTHROPIC_INLINE_TOOLS_BETA
    );
    let request = &documented["request"];
    let system = &request["messages"][2];
    let forecast = &system["content"][0]["tool"]["definition"];
    let spec = ToolSpecification::new("get_forecast", forecast["description"].as_str().unwrap())
        .with_parameters(forecast["input_schema"].clone())
        .with_deferred(true);
    let weather = &request["tools"][0];
    let eager = ToolSpecification::new("get_weather", weather["description"].as_str().unwrap())
        .with_parameters(weather["input_schema"].clone());
    let catalog = Catalog::new(vec![eager, spec])
        .unwrap()
        .inline_tool_changes(true);
    let provider = Provider::Anthropic { strict: false };
    let mut revealed = Revealed::new();
    let mut search = ToolCall::new(SEARCH_TOOL, json!({"query": "forecast"})).with_id("t1");
    let found = catalog.answer(Some(provider), &mut search, &mut revealed);
    let messages = provider.result_messages(&[(search, found)]);
    assert_eq!(messages[1]["role"], system["role"]);
    assert_eq!(messages[1]["content"][0], system["content"][0]);
    // Unloading writes the documented removal.
    let removal = &system["content"][1];
    assert_eq!(removal["tool"]["type"], "tool_reference");
    assert_eq!(
        serde_json::to_string(removal).unwrap(),
        r#"{"type":"tool_removal","tool":{"type":"tool_reference","name":"get_weather"}}"#
    );
}

/// The raw text of each block of a response body's `content`.
#[derive(Deserialize)]
struct RawBody<'a> {
    #[serde(borrow)]
    content: Vec<&'a RawValue>,
}

#[test]
fn an_mcp_tool_listing_goes_back_byte_for_byte() {
    let body = fixture("anthropic_mcp_tool_listing.json");
    let body = body.trim_end();
    let raw: RawBody<'_> = serde_json::from_str(body).unwrap();
    let listing = raw.content[0].get();
    assert!(listing.starts_with(r#"{"type":"mcp_tool_listing","mcp_server_name":"crm""#));
    let provider = Provider::Anthropic { strict: false };
    // The client tool's call is read as before.
    let calls = provider.parse_response(body.as_bytes()).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "get_weather");
    let response: Value = serde_json::from_str(body).unwrap();
    let mut listings = McpToolListings::new();
    listings.update(provider, &response);
    assert_eq!(listings.servers().collect::<Vec<_>>(), ["crm"]);
    assert_eq!(listings.tools("crm").unwrap()[1]["name"], "list_orders");

    // Sent back as it came: the listing is there, and carry changes nothing.
    let question = json!({"role": "user", "content": "Does ACME have open orders, and what is the weather in Paris?"});
    let results = provider.result_messages(&[(calls[0].clone(), ToolResponse::text("15 degrees"))]);
    let mut request = json!({"model": "claude-opus-5", "messages": [question.clone(),
        {"role": "assistant", "content": response["content"]}]});
    request["messages"]
        .as_array_mut()
        .unwrap()
        .extend(results.clone());
    let sent = request.to_string();
    listings.carry(provider, &mut request);
    assert_eq!(request.to_string(), sent);
    assert!(
        sent.contains(listing),
        "the listing's bytes are in the request"
    );

    // An assistant turn rebuilt from its thinking and its call: the
    // listing goes back in after the thinking, byte for byte.
    let thinking = json!({"type": "thinking", "thinking": "Look up ACME.", "signature": "sig"});
    let mut request = json!({"model": "claude-opus-5", "messages": [question,
        {"role": "assistant", "content": [thinking, response["content"][4]]}]});
    request["messages"].as_array_mut().unwrap().extend(results);
    listings.carry(provider, &mut request);
    let content = &request["messages"][1]["content"];
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(serde_json::to_string(&content[1]).unwrap(), listing);
    assert_eq!(content[2]["type"], "tool_use");
    assert!(request.to_string().contains(listing));
    // Carried once: a second carry does not send it twice.
    let once = request.to_string();
    listings.carry(provider, &mut request);
    assert_eq!(request.to_string(), once);

    // Kept with a pending turn: serializable, the blocks as they came.
    let stored = serde_json::to_string(&listings).unwrap();
    assert_eq!(stored, format!("[{listing}]"));
    let restored: McpToolListings = serde_json::from_str(&stored).unwrap();
    assert_eq!(restored, listings);

    // A later listing of the server replaces it; another provider's
    // response holds none.
    let later =
        json!({"content": [{"type": "mcp_tool_listing", "mcp_server_name": "crm", "tools": []}]});
    listings.update(provider, &later);
    assert_eq!(listings.tools("crm"), Some(&[][..]));
    let mut other = McpToolListings::new();
    other.update(Provider::OpenAiResponses { strict: true }, &response);
    assert!(other.is_empty());
}
