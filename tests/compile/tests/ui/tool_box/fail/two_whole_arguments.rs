use toolbox::prelude::*;

struct W;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    text: String,
}

#[tool_box]
impl W {
    /// Searches.
    #[tool]
    fn search(&self, #[args] first: Query, #[args] second: Query) -> String {
        first.text + &second.text
    }
}

fn main() {}
