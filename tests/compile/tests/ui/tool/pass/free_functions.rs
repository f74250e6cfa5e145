use toolbox::prelude::*;
use toolbox::NamedToolBox;

/// Returns the time.
#[tool]
pub fn now() -> String {
    "noon".to_owned()
}

/// Adds.
#[tool(name = "add", read_only)]
async fn add_numbers(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    assert_eq!(now(), "noon");
    assert_eq!(NowTool.box_name(), "now");
    assert_eq!(AddNumbersTool.specifications(&Context::new())[0].name, "add");
    let _ = add_numbers(1, 2);
}
