use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Deletes the weather.
    #[tool(read_only, destructive)]
    fn wipe(&self) {}
}

fn main() {}
