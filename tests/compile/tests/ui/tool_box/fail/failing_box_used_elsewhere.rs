// A box whose macro reports an error still has a (stand-in) `ToolBox`
// impl: its uses compile, and the only error is the real one.
use toolbox::prelude::*;
use toolbox::NamedToolBox;

struct W;

#[tool_box]
impl W {
    /// Gets the weather.
    #[tool]
    fn get(&mut self, city: String) -> String {
        city
    }
}

fn serve(_: impl ToolBox) {}

fn main() {
    serve(W);
    let _ = W.box_name();
    let _ = W.specifications(&Context::new());
}
