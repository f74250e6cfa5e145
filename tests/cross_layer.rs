//! Where the layers meet, tried as a hostile model and a careless operator
//! would: conditions the registry and merged boxes respect, one end event
//! per call, observers that cannot break calls, bounded costs (echoed text,
//! calls per turn), results that cannot be serialized, generated names that
//! could meet. Approval is tried in turn.rs, tapes in decorators.rs, hostile
//! provider payloads in providers.rs.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::Counts;
use serde::Serialize;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::turn::TurnRunner;
use toolbox::ToolSpecification;

#[derive(Clone)]
struct Admin;

fn admin_only(spec: &ToolSpecification, ctx: &Context) -> bool {
    spec.name != "secret" || ctx.extension::<Admin>().is_some()
}

fn secret_box() -> impl ToolBox {
    FnToolBox::new([
        tool_fn("secret", "Admins only", |_: ()| async { "the vault" }),
        tool_fn("public", "Everyone", |_: ()| async { "hello" }),
    ])
    .unwrap()
    .filter(admin_only)
}

#[tokio::test]
async fn hidden_tools_are_never_named_to_those_who_cannot_see_them() {
    let registry = Registry::empty();
    registry.register_box(secret_box(), "vault").unwrap();
    // Registered from the catalog, whatever the empty context sees.
    assert_eq!(
        registry
            .keys()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["public@vault", "secret@vault"]
    );
    let tools = registry.resolve(["secret@vault", "public@vault"]).unwrap();
    let handler = ToolHandler::empty();
    let guest = Context::new();
    for name in ["Secret", "secre", "vault_secret"] {
        let response = tools.call(name, &json!({}), &guest, &handler).await;
        assert_eq!(response.content, format!("unknown tool `{name}`"));
    }
    let response = tools.call("secret", &json!({}), &guest, &handler).await;
    assert_eq!(
        response.content,
        "tool `secret` is not available in this context"
    );
    let admin = Context::new().with_extension(Admin);
    let response = tools.call("secret", &json!({}), &admin, &handler).await;
    assert_eq!(response.content, "the vault");
    let response = tools.call("Secret", &json!({}), &admin, &handler).await;
    assert_eq!(
        response.content,
        "unknown tool `Secret`; did you mean `secret`?"
    );

    // The same through a merged box.
    let merged = MultiToolBox::builder()
        .add("v", secret_box())
        .build()
        .unwrap();
    let response = merged.call("v_secrt", &json!({}), &guest, &handler).await;
    assert_eq!(response.content, "unknown tool `v_secrt`");
}

#[test]
fn merges_collide_on_the_catalog_not_on_one_context() {
    let admin_tool = || {
        FnToolBox::new([tool_fn("b_c", "Admins only", |_: ()| async { "x" })])
            .unwrap()
            .filter(|_, ctx| ctx.extension::<Admin>().is_some())
    };
    let error = MultiToolBox::builder()
        .add("a", admin_tool())
        .add(
            "a_b",
            FnToolBox::new([tool_fn("c", "Everyone", |_: ()| async { "y" })]).unwrap(),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "exposed name `a_b_c` collides: tool `b_c` of box `a` and tool `c` of box `a_b`"
    );
}

struct Slow;

/// Slow tools.
#[tool_box(register = false)]
impl Slow {
    /// Sleeps.
    #[tool]
    async fn nap(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }

    /// Answers at once.
    #[tool]
    fn quick(&self) -> String {
        "done".into()
    }
}

#[tokio::test]
async fn a_dropped_call_ends_with_one_cancelled_event() {
    let counts = Counts::default();
    let handler = counts.handler();
    let ctx = Context::new();
    let long_nap = json!({"ms": 10_000});
    let call = Slow.call("nap", &long_nap, &ctx, &handler);
    assert!(tokio::time::timeout(Duration::from_millis(20), call)
        .await
        .is_err());
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(counts.kinds(), vec![ToolErrorKind::Cancelled]);

    // Registry listeners too.
    let registry = Registry::empty();
    registry.scan(Slow).unwrap();
    let listened = Counts::default();
    registry.add_listener(listened.handler());
    let tools = registry.resolve(["nap"]).unwrap();
    let empty = ToolHandler::empty();
    tokio::select! {
        _ = tools.call("nap", &long_nap, &ctx, &empty) => unreachable!(),
        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
    }
    assert_eq!(listened.get(), (1, 0, 1));
    assert_eq!(listened.kinds(), vec![ToolErrorKind::Cancelled]);
}

#[tokio::test]
async fn panicking_observers_never_change_the_outcome() {
    let seen = Arc::new(AtomicUsize::new(0));
    let after = seen.clone();
    let handler = ToolHandler::empty()
        .on_start(|_| panic!("start observer"))
        .on_success(|_| panic!("success observer"))
        .on_success(move |_| {
            after.fetch_add(1, Ordering::SeqCst);
        })
        .on_error(|_| panic!("error observer"));
    let response = Slow
        .call("quick", &json!({}), &Context::new(), &handler)
        .await;
    assert_eq!(response.content, "done");
    assert!(!response.is_error);
    assert_eq!(seen.load(Ordering::SeqCst), 1, "later observers still run");
    let response = Slow
        .call("nope", &json!({}), &Context::new(), &handler)
        .await;
    assert!(response.is_error);

    let registry = Registry::empty();
    registry.scan(Slow).unwrap();
    registry.add_listener(ToolHandler::empty().on_success(|_| panic!("listener")));
    let tools = registry.resolve(["quick"]).unwrap();
    let counts = Counts::default();
    let response = tools
        .call("quick", &json!({}), &Context::new(), &counts.handler())
        .await;
    assert_eq!(response.content, "done");
    assert_eq!(counts.get(), (1, 1, 0));
}

#[tokio::test]
async fn listeners_see_refused_calls_and_are_held_flat() {
    let registry = Registry::empty();
    registry.scan(Slow).unwrap();
    let listened = Counts::default();
    registry.add_listener(listened.handler());
    for _ in 0..60_000 {
        registry.add_listener(ToolHandler::empty().on_start(|_| {}));
    }
    let tools = registry.resolve(["nap"]).unwrap();
    let ctx = Context::new();
    let empty = ToolHandler::empty();
    let response = tools.call("nap", &json!("{not json"), &ctx, &empty).await;
    assert!(response.is_error);
    let response = tools.call("nap", &json!([1, 2]), &ctx, &empty).await;
    assert!(response.is_error);
    assert_eq!(listened.get(), (2, 0, 2));
    assert_eq!(
        listened.kinds(),
        vec![
            ToolErrorKind::InvalidArguments,
            ToolErrorKind::InvalidArguments
        ]
    );
}

#[tokio::test]
async fn echoed_input_is_cut_escaped_and_names_are_bounded() {
    let response = Slow
        .call(
            "nap",
            &json!({"ms": "x".repeat(10_000_000)}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert!(response.content.len() < 600, "{}", response.content.len());
    assert!(response.content.contains("(10000000 characters)"));

    let response = Slow
        .call(
            "na\u{0}p\n\u{1b}[31m",
            &json!({}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response.content, "unknown tool `na\\u0000p\\n\\u001b[31m`");

    // A name far longer than any tool's is not compared with every tool.
    let merged = MultiToolBox::builder().add("slow", Slow).build().unwrap();
    let long = "_".repeat(256 * 1024);
    let response = merged
        .call(&long, &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert!(response.content.starts_with("unknown tool `____"));
    assert!(response.content.len() < 600);
}

#[tokio::test]
async fn a_turn_runs_at_most_its_cap_and_answers_the_rest() {
    let counts = Counts::default();
    let calls: Vec<ToolCall> = (0..5)
        .map(|i| ToolCall::new("quick", json!({})).with_id(format!("c{i}")))
        .collect();
    let outcomes = TurnRunner::new(&Slow)
        .max_calls(3)
        .handler(counts.handler())
        .run(calls, &Context::new())
        .await;
    assert_eq!(outcomes.len(), 5);
    assert!(outcomes[..3].iter().all(|o| o.response.content == "done"));
    assert_eq!(
        outcomes[4].response.content,
        "too many tool calls in one turn (5); only the first 3 ran: send this call again in a later turn"
    );
    assert_eq!(counts.get(), (5, 3, 2));
}

#[tokio::test]
async fn non_finite_results_are_errors_naming_the_path() {
    #[derive(Serialize)]
    struct Reading {
        celsius: f64,
    }
    let tools = FnToolBox::new([
        tool_fn("nan", "NaN", |_: ()| async { f64::NAN }),
        tool_fn("reading", "A reading", |_: ()| async {
            Reading {
                celsius: f64::INFINITY,
            }
        }),
        tool_fn("fine", "A null that is a null", |_: ()| async {
            Option::<f64>::None
        }),
    ])
    .unwrap();
    let call = |name: &'static str| {
        let tools = &tools;
        async move {
            tools
                .call(name, &json!({}), &Context::new(), &ToolHandler::empty())
                .await
        }
    };
    let nan = call("nan").await;
    assert!(nan.is_error);
    assert_eq!(
        nan.content,
        "the tool's result is not valid JSON: the result is NaN, which JSON cannot carry"
    );
    let reading = call("reading").await;
    assert_eq!(
        reading.content,
        "the tool's result is not valid JSON: `celsius` is infinity, which JSON cannot carry"
    );
    let fine = call("fine").await;
    assert_eq!((fine.content.as_str(), fine.is_error), ("null", false));
}

/// Raw identifiers and default-function names that could meet.
mod naming {
    use super::*;

    pub(crate) struct Words;

    /// Word tools.
    #[tool_box(register = false)]
    impl Words {
        /// Says what type a word is.
        #[tool]
        fn r#type(&self, word: String) -> String {
            format!("{word}: noun")
        }

        /// First.
        #[tool]
        fn a_b(&self, #[arg(default = 1)] c: u8) -> u8 {
            c
        }

        /// Second.
        #[tool]
        fn a(&self, #[arg(default = 2)] b_c: u8) -> u8 {
            b_c
        }
    }

    #[tokio::test]
    async fn raw_identifiers_and_meeting_default_names_work() {
        let names: Vec<String> = Words
            .specifications(&Context::new())
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["type", "a_b", "a"]);
        let h = ToolHandler::empty();
        let ctx = Context::new();
        assert_eq!(
            Words
                .call("type", &json!({"word": "box"}), &ctx, &h)
                .await
                .content,
            "box: noun"
        );
        assert_eq!(Words.call("a_b", &json!({}), &ctx, &h).await.content, "1");
        assert_eq!(Words.call("a", &json!({}), &ctx, &h).await.content, "2");
    }
}
