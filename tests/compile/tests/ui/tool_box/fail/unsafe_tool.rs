use toolbox::prelude::*;

struct W;

#[tool_box]
impl W {
    /// Reads raw memory.
    #[tool]
    unsafe fn peek(&self, address: usize) -> u8 {
        let _ = address;
        0
    }
}

fn main() {}
