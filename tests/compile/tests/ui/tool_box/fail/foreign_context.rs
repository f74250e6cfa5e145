// A parameter whose type is another crate's `Context`, imported under the
// bare name: one error, on the parameter, with the fix.
use toolbox::prelude::*;

mod tera {
    pub struct Context;
}

use tera::Context as Ctx;

mod scope {
    use super::tera::Context;
    use toolbox::prelude::tool_box;

    pub struct Pages;

    #[tool_box(register = false)]
    impl Pages {
        /// Renders a page.
        #[tool]
        fn render(&self, ctx: &Context, page: String) -> String {
            let _ = ctx;
            page
        }
    }
}

fn main() {
    let _ = Ctx;
    let _ = scope::Pages.specifications(&toolbox::Context::new());
}
