// The same for a free `#[tool]`: its `{Name}Tool` type exists.
use toolbox::prelude::*;

#[tool(readonly)]
/// Adds.
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn serve(_: impl ToolBox) {}

fn main() {
    serve(AddTool);
}
