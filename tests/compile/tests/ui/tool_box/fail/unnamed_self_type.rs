use toolbox::prelude::*;

#[tool_box]
impl (u8, u8) {
    /// Adds.
    #[tool]
    fn add(&self) -> u8 {
        self.0 + self.1
    }
}

fn main() {}
