use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    #[tool]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {
    // The user's item is still emitted: its methods stay callable.
    let _ = W.get(String::new());
}
