//! A first program, written the way a new user writes it: one
//! `use toolbox::prelude::*;`, closures without type annotations.

use std::time::Duration;

use serde_json::json;
use toolbox::prelude::*;
use toolbox::turn::{Decision, TurnRunner};

struct Notes;

/// Notes.
#[tool_box(register = false)]
impl Notes {
    /// Reads a note.
    #[tool(read_only)]
    fn read(&self, id: u32, #[inject] call: CallId) -> String {
        format!("note {id} (call {})", call.0.as_deref().unwrap_or("-"))
    }

    /// Deletes a note.
    #[tool(destructive)]
    fn delete(&self, id: u32) -> Result<String, ToolError> {
        Err(ToolError::retryable(format!("note {id} is locked")))
    }
}

#[tokio::test]
async fn a_first_program_needs_only_the_prelude() -> Result<(), Box<dyn std::error::Error>> {
    // Conditions and approval hooks are closures without annotations.
    let tools = Notes.filter(|spec, ctx| spec.name != "delete" || ctx.call_id().is_some());
    let runner = TurnRunner::new(&tools).approval(|request| async move {
        if request.destructive() {
            Decision::Reject {
                reason: "deleting needs a person".into(),
            }
        } else {
            Decision::Approve
        }
    });
    let outcomes = runner
        .run(
            vec![
                ToolCall::new("read", json!({"id": 1})).with_id("c1"),
                ToolCall::new("delete", json!({"id": 1})).with_id("c2"),
            ],
            &Context::new(),
        )
        .await;
    assert_eq!(outcomes[0].response.content, "note 1 (call c1)");
    assert_eq!(
        outcomes[1].response.content,
        "the call was not approved: deleting needs a person"
    );

    // The timeout box, error kinds, the registry and its error, definition errors.
    let limited: TimeoutToolBox<Notes> = Notes.with_timeout(Duration::from_secs(1));
    let kinds = std::sync::Arc::new(std::sync::Mutex::new(Vec::<ToolErrorKind>::new()));
    let seen = kinds.clone();
    let handler = ToolHandler::empty().on_error(move |e| seen.lock().unwrap().push(e.error.kind()));
    limited
        .call("delete", &json!({"id": 2}), &Context::new(), &handler)
        .await;
    assert_eq!(*kinds.lock().unwrap(), [ToolErrorKind::Failed]);
    let registry = Registry::new();
    let missing: RegistryError = registry.get("nope").unwrap_err();
    assert!(missing.to_string().contains("nope"));
    let duplicate: DefinitionError = FnToolBox::new([
        tool_fn("a", "A", |_: ()| async {}),
        tool_fn("a", "A", |_: ()| async {}),
    ])
    .unwrap_err();
    assert_eq!(duplicate.to_string(), "two tools are named `a`");
    Ok(())
}
