//! A `#[tool_box]` tool's own code may panic anywhere: in an argument's
//! `Deserialize`, an injected parameter's `FromContext`, its body, its
//! result's `Serialize` or `Drop`, its error's `Display`. Generated dispatch
//! catches each of them itself (`ToolBox::catches_panics`), so a quiet call
//! (no observer, no subscriber: the lifecycle adds no guard of its own) and
//! an observed one end the same way: `Panicked`, reported once, the box
//! still usable. Its own process, so no test installs a subscriber here.

use crate::common;

use std::fmt;

use common::Counts;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;
use toolbox::prelude::*;
use toolbox::ToolErrorKind;

const PANICKED: &str = "the tool failed with an internal error; do not retry this call";

/// An argument whose deserializer panics on "boom".
#[derive(JsonSchema)]
struct Touchy(#[allow(dead_code)] String);

impl<'de> Deserialize<'de> for Touchy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        assert_ne!(text, "boom", "the argument's deserializer panicked");
        Ok(Touchy(text))
    }
}

/// Injected; its extraction panics.
struct Session;

impl FromContext for Session {
    fn from_context(_: &Context) -> Result<Self, ToolError> {
        panic!("from_context panicked")
    }
}

/// A result whose `Serialize` panics.
struct Unserializable;

impl Serialize for Unserializable {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        panic!("serialize panicked")
    }
}

/// Spelled like std's `String`, whose conversion needs no guard; this one's
/// does.
mod lookalike {
    pub(crate) struct String;

    impl serde::Serialize for String {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            panic!("a look-alike's serialize panicked")
        }
    }
}

/// A result whose `Drop` panics (after it was serialized).
#[derive(Serialize)]
struct DropBomb(u8);

impl Drop for DropBomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("drop panicked")
        }
    }
}

/// An error whose `Display` panics.
#[derive(Debug)]
struct Unprintable;

impl fmt::Display for Unprintable {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("display panicked")
    }
}

struct Fragile;

#[tool_box(register = false)]
impl Fragile {
    /// Takes an argument whose deserializer may panic.
    #[tool]
    fn touchy(&self, value: Touchy) -> u8 {
        let _ = value;
        1
    }

    /// Needs a session.
    #[tool]
    fn session(&self, #[inject] session: Session) -> u8 {
        let _ = session;
        2
    }

    /// Panics in its body.
    #[tool]
    fn body(&self) -> i64 {
        panic!("the body panicked")
    }

    /// Panics in its body, with a structured result.
    #[tool]
    fn body_struct(&self) -> Vec<u8> {
        panic!("the body panicked")
    }

    /// Its result cannot be serialized.
    #[tool]
    fn unserializable(&self) -> Unserializable {
        Unserializable
    }

    /// Its result is spelled `String` but is not std's.
    #[tool]
    fn lookalike(&self) -> lookalike::String {
        lookalike::String
    }

    /// Its opaque result cannot be serialized.
    #[tool]
    fn opaque(&self) -> impl Serialize {
        Unserializable
    }

    /// Its result panics when dropped.
    #[tool]
    fn drop_bomb(&self) -> DropBomb {
        DropBomb(3)
    }

    /// Fails with an error that cannot be displayed.
    #[tool]
    fn unprintable(&self) -> Result<u8, Unprintable> {
        Err(Unprintable)
    }

    /// Panics after a wait.
    #[tool]
    async fn later(&self) -> u8 {
        tokio::task::yield_now().await;
        panic!("the async body panicked")
    }

    /// Works.
    #[tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

const CASES: &[(&str, &str)] = &[
    ("touchy", r#"{"value": "boom"}"#),
    ("session", "{}"),
    ("body", "{}"),
    ("body_struct", "{}"),
    ("unserializable", "{}"),
    ("lookalike", "{}"),
    ("opaque", "{}"),
    ("drop_bomb", "{}"),
    ("unprintable", "{}"),
    ("later", "{}"),
];

#[test]
fn generated_boxes_catch_their_own_panics() {
    assert!(Fragile.catches_panics());
    assert!(!FnToolBox::new([]).unwrap().catches_panics());
    // Pointers to a box keep its answer, so a shared box keeps the fast path.
    assert!(std::sync::Arc::new(Fragile).catches_panics());
    assert!(Box::new(Fragile).catches_panics());
    assert!(<&Fragile as ToolBox>::catches_panics(&&Fragile));
    let erased: std::sync::Arc<dyn ToolBox> = std::sync::Arc::new(Fragile);
    assert!(erased.catches_panics());
}

#[tokio::test]
async fn every_panic_of_a_quiet_call_is_caught() {
    let ctx = Context::new();
    let quiet = ToolHandler::empty();
    for (name, arguments) in CASES {
        let response = Fragile.call(name, *arguments, &ctx, &quiet).await;
        assert_eq!(
            response,
            ToolResponse::error(PANICKED),
            "{name}: a quiet call's panic ends as `Panicked`"
        );
        let again = Fragile
            .call("add", r#"{"a": 2, "b": 3}"#, &ctx, &quiet)
            .await;
        assert_eq!(again.content, "5", "the box stays usable after {name}");
    }
}

#[tokio::test]
async fn every_panic_of_an_observed_call_is_reported_once() {
    let ctx = Context::new();
    for (name, arguments) in CASES {
        let counts = Counts::default();
        let response = Fragile
            .call(name, *arguments, &ctx, &counts.handler())
            .await;
        assert_eq!(response, ToolResponse::error(PANICKED), "{name}");
        assert_eq!(counts.get(), (1, 0, 1), "{name}: one start, one error");
        assert_eq!(counts.kinds(), [ToolErrorKind::Panicked], "{name}");
    }
}

#[tokio::test]
async fn a_well_behaved_argument_still_deserializes() {
    let response = Fragile
        .call(
            "touchy",
            &json!({"value": "fine"}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert_eq!(response, ToolResponse::text("1"));
}
