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
    fn search(&self, #[inject] #[args] query: Query) -> String {
        query.text
    }
}

fn main() {}
