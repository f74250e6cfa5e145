use toolbox::prelude::*;

mod other {
    pub struct Args<T>(pub T);
}

mod scope {
    use super::other::Args;
    use toolbox::prelude::tool_box;

    pub struct W;

    #[tool_box(register = false)]
    impl W {
        /// Echoes.
        #[tool]
        fn echo(&self, text: Args<String>) -> String {
            text.0
        }
    }
}

fn main() {
    let _ = scope::W.specifications(&Context::new());
}
