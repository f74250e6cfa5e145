//! MultiToolBox: `{box}_{tool}` names, routing, collisions, close.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::Counts;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::EmptyToolBox;
use toolbox::ToolSpecification;
use toolbox::{Arguments, BoxFuture, DispatchFuture};

#[derive(Deserialize, JsonSchema)]
struct Id {
    id: u32,
}

fn getter(what: &'static str) -> FnToolBox {
    FnToolBox::new([
        tool_fn("get", format!("Gets a {what}"), move |x: Id| async move {
            format!("{what} {}", x.id)
        }),
        tool_fn("list", format!("Lists {what}s"), move |_: ()| async move {
            vec![what]
        }),
    ])
    .unwrap()
}

fn names(toolbox: &impl ToolBox) -> Vec<String> {
    toolbox
        .specifications(&Context::new())
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[tokio::test]
async fn two_boxes_may_both_have_get() {
    let merged = MultiToolBox::builder()
        .add("crm", getter("customer"))
        .add("orders", getter("order"))
        .build()
        .unwrap();
    assert_eq!(
        names(&merged),
        ["crm_get", "crm_list", "orders_get", "orders_list"]
    );
    let handler = ToolHandler::empty();
    let ctx = Context::new();
    assert_eq!(
        merged
            .call("crm_get", &json!({"id": 7}), &ctx, &handler)
            .await
            .content,
        "customer 7"
    );
    assert_eq!(
        merged
            .call("orders_get", &json!({"id": 9}), &ctx, &handler)
            .await
            .content,
        "order 9"
    );
    assert_eq!(
        merged
            .call("orders_list", &json!({}), &ctx, &handler)
            .await
            .content,
        "[\"order\"]"
    );
    let spec = merged.specification("orders_get", &ctx).unwrap();
    assert_eq!(spec.name, "orders_get");
    assert_eq!(spec.description, "Gets a order");
}

#[tokio::test]
async fn the_lifecycle_runs_once_per_call_through_nested_boxes() {
    let inner = MultiToolBox::builder()
        .add("crm", getter("customer"))
        .build()
        .unwrap();
    let outer = MultiToolBox::builder()
        .add("support", inner)
        .build()
        .unwrap()
        .filter_by(toolbox::boxes::AlwaysTrue)
        .with_timeout(std::time::Duration::from_secs(5));
    assert_eq!(names(&outer), ["support_crm_get", "support_crm_list"]);
    let counts = Counts::default();
    let response = outer
        .call(
            "support_crm_get",
            &json!({"id": 1}),
            &Context::new(),
            &counts.handler(),
        )
        .await;
    assert_eq!(response.content, "customer 1");
    assert_eq!(
        counts.get(),
        (1, 1, 0),
        "one start and one success, not one per layer"
    );
}

#[tokio::test]
async fn unknown_names_are_answered_with_exposed_names() {
    let merged = MultiToolBox::builder()
        .add("crm", getter("customer"))
        .add("orders", getter("order"))
        .build()
        .unwrap();
    let handler = ToolHandler::empty();
    let ctx = Context::new();
    let response = merged.call("crm_gte", &json!({}), &ctx, &handler).await;
    assert_eq!(
        response.content,
        "unknown tool `crm_gte`; did you mean `crm_get`?"
    );
    let response = merged.call("billing_get", &json!({}), &ctx, &handler).await;
    assert!(response.is_error);
    assert!(
        response.content.starts_with("unknown tool `billing_get`"),
        "{}",
        response.content
    );
    let response = merged.call("get", &json!({}), &ctx, &handler).await;
    assert!(
        response.content.contains("`crm_get`"),
        "{}",
        response.content
    );
}

#[test]
fn colliding_exposed_names_are_refused_at_construction() {
    let a = FnToolBox::new([tool_fn("b_c", "x", |_: ()| async {})]).unwrap();
    let a_b = FnToolBox::new([tool_fn("c", "x", |_: ()| async {})]).unwrap();
    let error = MultiToolBox::builder()
        .add("a_b", a_b)
        .add("a", a)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "exposed name `a_b_c` collides: tool `c` of box `a_b` and tool `b_c` of box `a`"
    );
}

#[test]
fn illegal_and_duplicate_names_are_refused_with_every_problem() {
    let long = "x".repeat(60);
    let error = MultiToolBox::builder()
        .add("crm", getter("customer"))
        .add("crm", getter("customer"))
        .add("bad.box", EmptyToolBox)
        .add(long.clone(), getter("thing"))
        .build()
        .unwrap_err();
    let problems = error.problems();
    assert!(
        problems.contains(&"two boxes are named `crm`".to_owned()),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("`bad.box` contains `.`")),
        "{problems:?}"
    );
    assert!(
        problems.contains(&format!(
            "tool `list` of box `{long}` is exposed as `{long}_list`, which is illegal: tool name `{long}_list` is 65 characters long; providers accept at most 64"
        )),
        "{problems:?}"
    );
    assert!(problems
        .iter()
        .any(|p| p.starts_with("exposed name `crm_get` collides")));
}

#[tokio::test]
async fn overlapping_box_prefixes_route_to_the_box_that_has_the_tool() {
    let a = FnToolBox::new([tool_fn("x", "x of a", |_: ()| async { "a.x" })]).unwrap();
    let a_b = FnToolBox::new([tool_fn("y", "y of a_b", |_: ()| async { "a_b.y" })]).unwrap();
    let merged = MultiToolBox::builder()
        .add("a", a)
        .add("a_b", a_b)
        .build()
        .unwrap();
    let handler = ToolHandler::empty();
    let ctx = Context::new();
    assert_eq!(
        merged.call("a_x", &json!({}), &ctx, &handler).await.content,
        "a.x"
    );
    assert_eq!(
        merged
            .call("a_b_y", &json!({}), &ctx, &handler)
            .await
            .content,
        "a_b.y"
    );
}

/// Counts close() calls; its close can fail.
struct Closable {
    closed: Arc<AtomicUsize>,
    fail: bool,
}

impl ToolBox for Closable {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        Vec::new()
    }
    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::ready(Err(ToolError::unknown_tool(name, [])))
    }
    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.closed.fetch_add(1, Ordering::SeqCst);
        let fail = self.fail;
        Box::pin(async move {
            if fail {
                Err(ToolError::Transport {
                    message: "session already gone".into(),
                    source: None,
                })
            } else {
                Ok(())
            }
        })
    }
}

#[tokio::test]
async fn close_closes_every_child_even_after_a_failure() {
    let closed = Arc::new(AtomicUsize::new(0));
    let child = |fail| Closable {
        closed: closed.clone(),
        fail,
    };
    let merged = MultiToolBox::builder()
        .add("one", child(false))
        .add("two", child(true))
        .add("three", child(false))
        .build()
        .unwrap();
    let error = merged.close().await.unwrap_err();
    assert_eq!(error.to_string(), "transport error: session already gone");
    assert_eq!(closed.load(Ordering::SeqCst), 3);

    let nested = MultiToolBox::builder()
        .add(
            "inner",
            MultiToolBox::builder()
                .add("leaf", child(false))
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
        .with_timeout(std::time::Duration::from_secs(1));
    nested.close().await.unwrap();
    assert_eq!(closed.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn the_empty_box_has_nothing_and_refuses_everything() {
    let counts = Counts::default();
    assert!(EmptyToolBox.specifications(&Context::new()).is_empty());
    let response = EmptyToolBox
        .call("anything", &json!({}), &Context::new(), &counts.handler())
        .await;
    assert_eq!(response, ToolResponse::error("unknown tool `anything`"));
    assert_eq!(counts.get(), (1, 0, 1));
    EmptyToolBox.close().await.unwrap();
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    let merged = MultiToolBox::builder()
        .add("crm", getter("customer"))
        .add("orders", getter("order"))
        .build()
        .unwrap();
    common::assert_fits_every_provider(&merged);
}

#[tokio::test]
async fn a_childs_refusal_names_the_tool_as_the_caller_called_it() {
    use toolbox::prelude::*;
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let hidden = FnToolBox::new([tool_fn("recall", "Recalls", |_: Nothing| async { "x" })])
        .unwrap()
        .filter(|_, ctx| ctx.call_id() == Some("admin"));
    let merged = MultiToolBox::builder()
        .add("memory", hidden)
        .build()
        .unwrap();
    let handler = ToolHandler::empty();
    let refused = merged
        .call(
            "memory_recall",
            &serde_json::json!({}),
            &Context::new(),
            &handler,
        )
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.content,
        "tool `memory_recall` is not available in this context"
    );
    let misspelled = merged
        .call(
            "memory_recal",
            &serde_json::json!({}),
            &Context::new().with_call_id("admin"),
            &handler,
        )
        .await;
    assert!(
        misspelled
            .content
            .starts_with("unknown tool `memory_recal`")
            && misspelled.content.contains("memory_recall"),
        "{}",
        misspelled.content
    );
    assert!(
        !misspelled.content.contains("`recall`"),
        "{}",
        misspelled.content
    );
}
