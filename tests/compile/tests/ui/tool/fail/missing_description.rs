use toolbox::prelude::*;

#[tool]
fn now() -> String {
    String::new()
}

fn main() {
    // The function is still emitted and callable.
    let _ = now();
}
