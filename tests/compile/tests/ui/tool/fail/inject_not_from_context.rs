use toolbox::prelude::*;

struct Clock;

/// Returns the time.
#[tool]
fn now(#[inject] clock: Clock) -> String {
    let _ = clock;
    String::new()
}

fn main() {}
