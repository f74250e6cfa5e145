//! `check(gemini)` on a box with a tool only code may call: the generated
//! check fails, as Gemini's request would refuse the tool (Gemini runs no
//! code the model writes).
use toolbox::prelude::*;
use toolbox::provider::Provider;

#[derive(Default)]
struct Stock;

/// Stock levels.
#[tool_box(check(gemini))]
impl Stock {
    /// Units in stock, for code the model writes.
    #[tool(callers(code))]
    fn inventory(&self) -> u32 {
        42
    }
}

fn main() {
    let specs = Stock.specifications(&toolbox::Context::new());
    assert!(Provider::Gemini.definitions(&specs).is_err());
    let panic = std::panic::catch_unwind(__toolbox_check_stock).unwrap_err();
    let report = panic.downcast_ref::<String>().unwrap();
    assert!(
        report.contains("tool `inventory`: may be called only from code, and Gemini runs no code the model writes"),
        "{report}"
    );
}
