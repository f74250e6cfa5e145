use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Who is calling.
    #[tool]
    fn whoami(&self, #[arg(description = "the context")] ctx: &Context) -> String {
        ctx.call_id().unwrap_or_default().to_owned()
    }
}

fn main() {}
