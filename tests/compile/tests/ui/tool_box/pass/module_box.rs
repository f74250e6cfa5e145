use toolbox::prelude::*;
use toolbox::NamedToolBox;

/// Orders.
#[tool_box(name = "orders")]
mod shop {
    use toolbox::prelude::*;

    /// Gets an order.
    #[tool]
    pub fn get_order(id: u32) -> String {
        id.to_string()
    }

    /// Who asks.
    #[tool]
    async fn whoami(#[inject] call: toolbox::CallId, ctx: Context) -> String {
        let _ = ctx;
        call.0.unwrap_or_default()
    }
}

fn main() {
    assert_eq!(shop::get_order(1), "1");
    assert_eq!(shop::Tools.box_name(), "orders");
    assert_eq!(shop::Tools.specifications(&Context::new()).len(), 2);
}
