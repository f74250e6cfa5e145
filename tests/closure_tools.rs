//! Closure tools: schemas from `T: JsonSchema`, fluent descriptions,
//! context access, fallible closures, and the checks `FnToolBox` makes.

use crate::common;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::{try_tool_fn, CallId};

/// Search the catalogue.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Search {
    /// Free text.
    query: String,
    limit: Option<u32>,
}

#[test]
fn the_schema_comes_from_the_argument_type_and_descriptions_are_fluent() {
    let tool = tool_fn("search", "Searches", |s: Search| async move { s.query })
        .describe("Searches the catalogue by text")
        .describe_arg("limit", "At most this many results")
        .title("Catalogue search")
        .read_only()
        .idempotent();
    let spec = tool.specification();
    assert_eq!(spec.description, "Searches the catalogue by text");
    assert_eq!(spec.title.as_deref(), Some("Catalogue search"));
    assert_eq!(
        spec.parameters,
        json!({
            "description": "Search the catalogue.",
            "type": "object",
            "properties": {
                "query": {"description": "Free text.", "type": "string"},
                "limit": {
                    "description": "At most this many results",
                    "type": ["integer", "null"],
                    "format": "uint32",
                    "minimum": 0
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    );
    assert!(spec.is_read_only());
    assert!(!spec.is_destructive());
    assert_eq!(spec.annotations.as_ref().unwrap().idempotent, Some(true));
}

#[test]
fn definition_problems_are_reported_all_at_once() {
    let error = FnToolBox::new([
        tool_fn("search", "Searches", |s: Search| async move { s.query })
            .describe_arg("qurey", "typo"),
        tool_fn("search", "Again", |s: Search| async move { s.query }),
        tool_fn("bad name", "Spaces", |_: ()| async {}),
        tool_fn("quiet", "  ", |_: ()| async {}),
        tool_fn("text", "Takes a bare string", |s: String| async move { s }),
    ])
    .unwrap_err();
    assert_eq!(
        error.problems(),
        [
            "tool `search`: `describe_arg`: there is no argument `qurey`; the arguments are `query`, `limit`",
            "two tools are named `search`",
            "tool name `bad name` contains ` `; providers accept only a-z, A-Z, 0-9, `_` and `-`",
            "tool `quiet` has no description; the model needs one",
            "tool `text`: the arguments of a tool must be a struct (a JSON object); `string` is a JSON string",
        ]
    );
}

#[test]
fn namespaces_are_checked_where_the_box_is_built() {
    let error = FnToolBox::new([
        tool_fn("refund", "Refunds a payment", |_: ()| async {})
            .namespace("billing", "Payments and refunds."),
        tool_fn("invoice", "Sends an invoice", |_: ()| async {}).namespace("billing", "Invoices."),
        tool_fn("lookup", "Finds a customer", |_: ()| async {})
            .namespace("crm tools", "Customers."),
        tool_fn("note", "Adds a note", |_: ()| async {}).namespace("notes", " "),
    ])
    .unwrap_err();
    assert_eq!(
        error.problems(),
        [
            "namespace `billing` is described one way by tool `refund` and another by tool `invoice`; give it one description",
            "tool `lookup`: namespace `crm tools`: a namespace name takes 1 to 64 of a-z, A-Z, 0-9, `_` and `-`",
            "tool `note`: namespace `notes`: the description is empty; say what its tools are for",
        ]
    );
    // One description shared by its tools is fine.
    FnToolBox::new([
        tool_fn("refund", "Refunds a payment", |_: ()| async {})
            .namespace("billing", "Payments and refunds."),
        tool_fn("invoice", "Sends an invoice", |_: ()| async {})
            .namespace("billing", "Payments and refunds."),
    ])
    .unwrap();
}

#[derive(Clone)]
struct Tenant(&'static str);

#[tokio::test]
async fn a_closure_can_take_the_context() {
    let tools = FnToolBox::new([tool_fn(
        "whoami",
        "Who is calling",
        |_: (), ctx: Context| async move {
            let tenant = ctx.extension::<Tenant>().map_or("none", |t| t.0);
            let call = CallId::from_context(&ctx).unwrap();
            format!("{tenant} {}", call.0.unwrap_or_default())
        },
    )])
    .unwrap();
    let ctx = Context::new()
        .with_call_id("c9")
        .with_extension(Tenant("acme"));
    let response = tools
        .call("whoami", &json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "acme c9");
}

#[derive(Debug)]
struct Outer(std::io::Error);

impl std::fmt::Display for Outer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("could not read the ledger")
    }
}

impl std::error::Error for Outer {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

#[tokio::test]
async fn a_fallible_closure_gives_the_model_the_text_and_the_operator_the_chain() {
    let tools = FnToolBox::new([try_tool_fn("ledger", "Reads the ledger", |_: ()| async {
        if true {
            return Err(Outer(std::io::Error::other("disk /dev/sdb1 failed")));
        }
        Ok(1)
    })])
    .unwrap();
    let report = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = report.clone();
    let handler = ToolHandler::empty().on_error(move |e| *seen.lock().unwrap() = e.error.report());
    let response = tools
        .call("ledger", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(response, ToolResponse::error("could not read the ledger"));
    assert_eq!(
        *report.lock().unwrap(),
        "could not read the ledger: disk /dev/sdb1 failed"
    );
}

#[tokio::test]
async fn output_schemas_are_set_for_structured_results_only() {
    #[derive(serde::Serialize, JsonSchema)]
    struct Hit {
        id: u32,
    }
    let structured =
        tool_fn("hits", "Hits", |_: ()| async { vec![Hit { id: 1 }] }).output_schema::<Vec<Hit>>();
    assert_eq!(
        structured.specification().output_schema.as_ref().unwrap()["type"],
        "array"
    );
    let text = tool_fn("text", "Text", |_: ()| async { "x" }).output_schema::<String>();
    assert!(text.specification().output_schema.is_none());
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    let tools = FnToolBox::new([
        tool_fn("search", "Searches", |s: Search| async move { s.query })
            .describe_arg("limit", "At most"),
        tool_fn("whoami", "Who", |_: (), _ctx: Context| async {}),
    ])
    .unwrap();
    common::assert_fits_every_provider(&tools);
}

#[tokio::test]
async fn a_closure_may_return_a_whole_response_or_a_tool_error() {
    let tools = FnToolBox::new([
        tool_fn("picture", "A picture", |_: ()| async {
            ToolResponse::image(b"GIF89a", "image/gif")
        }),
        tool_fn("refuse", "Refuses", |_: ()| async {
            Err::<String, _>(ToolError::Failed {
                message: "no such city".into(),
                retryable: true,
                source: Some("upstream 503 from weather.internal:8443".into()),
            })
        }),
    ])
    .unwrap();
    let handler = ToolHandler::empty();
    let picture = tools
        .call("picture", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(picture.content, "[image/gif image]");
    assert_eq!(picture.parts()[0].bytes().unwrap(), b"GIF89a");
    // The model reads the error's message; the operator's detail stays out.
    let refused = tools
        .call("refuse", &json!({}), &Context::new(), &handler)
        .await;
    assert!(refused.is_error);
    assert_eq!(refused.content, "no such city");
}
