use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    fn helper(&self) {}
}

fn main() {
    W.helper();
}
