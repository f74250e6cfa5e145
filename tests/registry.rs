//! The registry through the facade: keys, two-step lookup, scanning, lazy
//! resolution, listeners, core tools, concurrency.

use crate::common;

use std::sync::Arc;

use common::Counts;
use serde_json::json;
use toolbox::prelude::*;
use toolbox::registry::{RegistryError, ToolKey};

struct Crm;

/// Customer records.
#[tool_box(register = false)]
impl Crm {
    /// Gets a customer by id.
    #[tool(read_only)]
    fn get_customer(&self, id: u32) -> String {
        format!("customer {id}")
    }

    /// Looks something up.
    #[tool]
    fn lookup(&self, q: String) -> String {
        format!("crm:{q}")
    }
}

/// Orders.
#[tool_box]
mod orders {
    /// Gets an order by id.
    #[tool(read_only)]
    pub(crate) fn get_order(id: u32) -> String {
        format!("order {id}")
    }

    /// Looks something up.
    #[tool]
    pub(crate) fn lookup(q: String) -> String {
        format!("orders:{q}")
    }
}

fn registry() -> Registry {
    let registry = Registry::new();
    registry.scan(Crm).unwrap();
    registry.scan(orders::Tools).unwrap();
    registry
}

fn keys(registry: &Registry) -> Vec<String> {
    registry.keys().iter().map(ToString::to_string).collect()
}

#[test]
fn scanning_registers_each_tool_under_its_module() {
    let registry = registry();
    assert_eq!(
        keys(&registry),
        [
            "get_customer@crm",
            "get_order@orders",
            "lookup@crm",
            "lookup@orders",
            "now@core"
        ]
    );
    assert_eq!(registry.len(), 5);
    assert_eq!(ToolKey::parse("a@b"), ToolKey::new("a", Some("b")));
}

#[test]
fn lookup_is_exact_then_by_bare_name() {
    let registry = registry();
    assert_eq!(
        registry.get("get_customer@crm").unwrap().key().to_string(),
        "get_customer@crm"
    );
    assert_eq!(
        registry.get("get_customer").unwrap().key().to_string(),
        "get_customer@crm"
    );
    assert_eq!(registry.get("now").unwrap().key().to_string(), "now@core");
    let spec = registry
        .get("get_order")
        .unwrap()
        .specification(&Context::new())
        .unwrap();
    assert_eq!(spec.name, "get_order");
    assert!(spec.is_read_only());
}

#[test]
fn a_bare_name_in_two_modules_is_ambiguous_naming_both() {
    let error = registry().get("lookup").unwrap_err();
    assert_eq!(
        error,
        RegistryError::Ambiguous {
            name: "lookup".into(),
            keys: vec!["lookup@crm".into(), "lookup@orders".into()]
        }
    );
    assert_eq!(
        error.to_string(),
        "`lookup` is ambiguous: it is registered as `lookup@crm` and `lookup@orders`; ask for one of them"
    );
}

#[test]
fn an_explicit_module_never_resolves_to_another() {
    let registry = registry();
    let error = registry.get("get_customer@orders").unwrap_err();
    assert_eq!(
        error.to_string(),
        "no tool is registered as `get_customer@orders`; did you mean `get_customer@crm`?"
    );
    assert!(registry.resolve(["get_customer@orders"]).is_err());
    assert_eq!(
        registry.get("get_custmer").unwrap_err().to_string(),
        "no tool is registered as `get_custmer`; did you mean `get_customer@crm`?"
    );
}

#[test]
fn registering_a_key_twice_is_refused_and_changes_nothing() {
    let registry = registry();
    let error = registry.scan(Crm).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`get_customer@crm` is already registered; unregister it first"
    );
    assert_eq!(registry.len(), 5);
    // A bare registration and a module one do not collide.
    registry.register(orders::Tools).unwrap();
    assert_eq!(
        registry.get("get_order").unwrap().key().to_string(),
        "get_order",
        "the exact bare key"
    );
    assert_eq!(
        registry.get("get_order@orders").unwrap().key().to_string(),
        "get_order@orders"
    );
}

#[test]
fn an_exact_bare_key_wins_over_the_name_index() {
    let registry = registry();
    registry.register(orders::Tools).unwrap();
    // "lookup" is now an exact key (registered bare) as well as two module keys.
    assert_eq!(registry.get("lookup").unwrap().key().to_string(), "lookup");
}

#[test]
fn unregistering_by_key_and_by_module() {
    let registry = registry();
    assert_eq!(
        registry.unregister("lookup@crm").unwrap().to_string(),
        "lookup@crm"
    );
    assert_eq!(
        registry.get("lookup").unwrap().key().to_string(),
        "lookup@orders",
        "no longer ambiguous"
    );
    assert!(registry.unregister("lookup@crm").is_err());
    assert_eq!(registry.unregister_module("orders"), 2);
    assert_eq!(keys(&registry), ["get_customer@crm", "now@core"]);
    assert!(registry.get("get_order").is_err());
    assert_eq!(
        registry.unregister_module("crm"),
        1,
        "lookup@crm was already gone"
    );
    assert_eq!(registry.unregister_module("nowhere"), 0);
    assert_eq!(keys(&registry), ["now@core"]);
}

#[test]
fn illegal_module_names_are_refused() {
    let registry = Registry::empty();
    assert!(registry.is_empty());
    assert_eq!(
        registry
            .register_box(Crm, "my crm")
            .unwrap_err()
            .to_string(),
        "module name `my crm` is not allowed: use 1 to 64 of a-z, A-Z, 0-9, `_` and `-`"
    );
}

#[tokio::test]
async fn resolution_exposes_provider_safe_names_and_routes_back() {
    let registry = registry();
    let tools = registry
        .resolve([
            "get_customer@crm",
            "lookup@crm",
            "lookup@orders",
            "now",
            "get_order",
        ])
        .unwrap();
    let routes: Vec<(String, String)> = tools.routes().map(|(a, b)| (a.to_owned(), b)).collect();
    assert_eq!(
        routes,
        [
            ("get_customer".into(), "get_customer@crm".into()),
            ("crm_lookup".into(), "lookup@crm".into()),
            ("orders_lookup".into(), "lookup@orders".into()),
            ("now".into(), "now@core".into()),
            ("get_order".into(), "get_order@orders".into()),
        ]
    );
    let specs = tools.specifications(&Context::new());
    assert!(specs.iter().all(|s| !s.name.contains('@')));
    let counts = Counts::default();
    let handler = counts.handler();
    let ctx = Context::new();
    assert_eq!(
        tools
            .call("crm_lookup", &json!({"q": "x"}), &ctx, &handler)
            .await
            .content,
        "crm:x"
    );
    assert_eq!(
        tools
            .call("orders_lookup", &json!({"q": "x"}), &ctx, &handler)
            .await
            .content,
        "orders:x"
    );
    assert_eq!(
        tools
            .call("get_order", &json!({"id": 4}), &ctx, &handler)
            .await
            .content,
        "order 4"
    );
    let now = tools.call("now", &json!({}), &ctx, &handler).await.content;
    assert!(now.ends_with('Z') && now.len() == 20, "{now}");
    let response = tools
        .call("lookup", &json!({"q": "x"}), &ctx, &handler)
        .await;
    assert_eq!(
        response.content,
        "unknown tool `lookup`; did you mean one of `crm_lookup`, `orders_lookup`?"
    );
    assert_eq!(counts.get(), (5, 4, 1), "one lifecycle per call");
}

#[test]
fn an_alias_that_collides_is_an_error_at_resolution() {
    let registry = registry();
    // A bare tool literally named `crm_lookup` collides with the alias of lookup@crm.
    let clash = FnToolBox::new([tool_fn("crm_lookup", "Clashes", |_: ()| async {})]).unwrap();
    registry.register(clash).unwrap();
    let error = registry
        .resolve(["lookup@crm", "lookup@orders", "crm_lookup"])
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`lookup@crm` and `crm_lookup` would both be exposed as `crm_lookup`"
    );
}

#[tokio::test]
async fn resolution_is_lazy() {
    let registry = registry();
    let before = registry.resolve(["now"]).unwrap();
    let late =
        FnToolBox::new([tool_fn("late", "Registered late", |_: ()| async { "here" })]).unwrap();
    registry.register_box(late, "extra").unwrap();
    assert!(
        before.specification("late", &Context::new()).is_none(),
        "not in a box resolved before"
    );
    let response = before
        .call("late", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert!(response.is_error);
    let after = registry.resolve(["now", "late"]).unwrap();
    let response = after
        .call("late", &json!({}), &Context::new(), &ToolHandler::empty())
        .await;
    assert_eq!(response.content, "here");
}

#[tokio::test]
async fn registry_listeners_see_every_call_of_its_boxes() {
    let registry = registry();
    let early = registry.resolve(["get_customer"]).unwrap();
    let global = Counts::default();
    registry.add_listener(global.handler());
    let late = registry.resolve(["get_order"]).unwrap();
    let per_call = Counts::default();
    let handler = per_call.handler();
    let ctx = Context::new();
    early
        .call("get_customer", &json!({"id": 1}), &ctx, &handler)
        .await;
    late.call("get_order", &json!({"id": "x"}), &ctx, &handler)
        .await;
    assert_eq!(
        global.get(),
        (2, 1, 1),
        "listeners added after a resolution still see it"
    );
    assert_eq!(per_call.get(), (2, 1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_register_resolve_and_call_lose_nothing() {
    let registry = Arc::new(registry());
    let counts = Counts::default();
    let handler = counts.handler();
    let mut tasks = Vec::new();
    // 8 tasks register, resolve and unregister their own modules...
    for t in 0..8 {
        let registry = registry.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..50 {
                let module = format!("m{t}_{round}");
                let tool =
                    FnToolBox::new([tool_fn("echo", "Echoes", move |_: ()| async move { t })])
                        .unwrap();
                registry.register_box(tool, &module).unwrap();
                let key = format!("echo@{module}");
                let resolved = registry.resolve([key.as_str(), "now"]).unwrap();
                assert!(resolved.contains("echo", &Context::new()));
                assert_eq!(registry.unregister_module(&module), 1);
                tokio::task::yield_now().await;
            }
            0usize
        }));
    }
    // ...while 8 others call through fresh resolutions.
    for _ in 0..8 {
        let (registry, handler) = (registry.clone(), handler.clone());
        tasks.push(tokio::spawn(async move {
            let mut calls = 0;
            for i in 0..200u32 {
                let tools = registry.resolve(["get_customer@crm", "get_order"]).unwrap();
                let response = tools
                    .call("get_customer", &json!({"id": i}), &Context::new(), &handler)
                    .await;
                assert_eq!(response.content, format!("customer {i}"));
                calls += 1;
            }
            calls
        }));
    }
    let mut calls = 0;
    for task in tasks {
        calls += task.await.unwrap();
    }
    assert_eq!(calls, 1_600);
    assert_eq!(counts.get(), (1_600, 1_600, 0), "no call lost");
    assert_eq!(registry.len(), 5, "every temporary module was removed");
}

#[test]
fn every_tool_of_this_file_fits_every_provider() {
    let registry = registry();
    let everything = registry
        .resolve([
            "get_customer",
            "lookup@crm",
            "lookup@orders",
            "get_order",
            "now",
        ])
        .unwrap();
    common::assert_fits_every_provider(&everything);
}

#[tokio::test]
async fn a_live_resolution_follows_the_registry_and_changes_are_announced() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use toolbox::prelude::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let tools = |name: &'static str| {
        FnToolBox::new([tool_fn(
            name,
            "A tool",
            move |_: Nothing| async move { name },
        )])
        .unwrap()
    };
    let registry = Arc::new(Registry::empty());
    let changes = Arc::new(AtomicUsize::new(0));
    let seen = changes.clone();
    registry.on_change(move || {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    registry.register_box(tools("a"), "m").unwrap();
    registry.register_box(tools("b"), "n").unwrap();
    assert_eq!(changes.load(Ordering::SeqCst), 2);
    // A refused registration changes nothing and announces nothing.
    assert!(registry.register_box(tools("a"), "m").is_err());
    assert_eq!(changes.load(Ordering::SeqCst), 2);

    let live = registry.resolve_live(["a@m", "b@n"]).unwrap();
    let fixed = registry.resolve(["a@m", "b@n"]).unwrap();
    let ctx = Context::new();
    let names = |b: &dyn ToolBox| {
        b.specifications(&ctx)
            .into_iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&live), ["a", "b"]);

    registry.unregister("b@n").unwrap();
    assert_eq!(changes.load(Ordering::SeqCst), 3);
    assert_eq!(names(&live), ["a"], "the live box follows");
    assert_eq!(
        names(&fixed),
        ["a", "b"],
        "a plain resolution is a snapshot"
    );
    let gone = live
        .call("b", &serde_json::json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert!(gone.is_error);

    registry.register_box(tools("b"), "n").unwrap();
    assert_eq!(names(&live), ["a", "b"]);
    let back = live
        .call("b", &serde_json::json!({}), &ctx, &ToolHandler::empty())
        .await;
    assert_eq!(back.content, "b");
    assert_eq!(registry.unregister_module("nothing-here"), 0);
    assert_eq!(
        changes.load(Ordering::SeqCst),
        4,
        "removing nothing announces nothing"
    );

    // A name that does not resolve now is an error, as for `resolve`.
    assert!(registry.resolve_live(["c@m"]).is_err());
}
