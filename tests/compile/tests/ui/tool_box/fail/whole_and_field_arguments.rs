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
    fn search(&self, query: Args<Query>, limit: u32) -> String {
        format!("{} {limit}", query.text)
    }
}

fn main() {}
