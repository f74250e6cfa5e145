use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Who is calling.
    #[tool]
    fn whoami(&self, #[arg(description = "the caller")] #[inject] id: CallId) -> String {
        id.0.unwrap_or_default()
    }
}

fn main() {}
