use toolbox::prelude::*;
use toolbox::Extension;

#[derive(Clone)]
struct Tenant(String);

impl FromContext for Tenant {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<Tenant>().cloned().ok_or_else(|| ToolError::failed("no tenant"))
    }
}

struct Billing;

#[tool_box(register = false)]
impl Billing {
    /// Invoices for the tenant.
    ///
    /// # Arguments
    ///
    /// * `month` - The month, 1 to 12.
    #[tool]
    fn invoices(&self, #[inject] tenant: Tenant, #[inject] maybe: Option<Extension<u8>>, month: u8) -> String {
        let _ = maybe;
        format!("{} {month}", tenant.0)
    }
}

fn main() {
    let spec = Billing.specification("invoices", &Context::new()).unwrap();
    assert_eq!(spec.parameters["properties"]["month"]["description"], "The month, 1 to 12.");
    assert_eq!(spec.parameters["required"], serde_json::json!(["month"]));
}
