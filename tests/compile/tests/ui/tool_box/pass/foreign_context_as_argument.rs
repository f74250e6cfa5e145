// A path through another crate to a type named `Context` is an argument.
use toolbox::prelude::*;

mod tera {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Context {
        pub title: String,
    }
}

struct Pages;

#[tool_box(register = false)]
impl Pages {
    /// Renders a page.
    #[tool]
    fn render(&self, ctx: &toolbox::Context, page: tera::Context) -> String {
        let _ = ctx;
        page.title
    }
}

fn main() {
    let spec = Pages.specification("render", &Context::new()).unwrap();
    // `page` (another crate's `Context`) is an argument; `ctx` is injected.
    assert_eq!(spec.parameters["required"], serde_json::json!(["page"]));
}
