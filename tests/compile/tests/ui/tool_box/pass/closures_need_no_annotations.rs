//! Conditions and approval hooks are closures whose parameter types need
//! no annotation.
use toolbox::prelude::*;
use toolbox::turn::{Decision, TurnRunner};

struct Slow;

/// Slow tools.
#[tool_box(register = false)]
impl Slow {
    /// Answers at once.
    #[tool]
    fn quick(&self) -> String {
        "done".into()
    }
}

fn main() {
    let _filtered = Slow.filter(|spec, ctx| spec.name != "nap" || ctx.call_id().is_some());
    let _runner = TurnRunner::new(&Slow).approval(|request| async move {
        if request.destructive() {
            Decision::Defer
        } else {
            Decision::Approve
        }
    });
}
