use toolbox::prelude::*;

struct W;

struct Database;

#[tool_box(register = false)]
impl W {
    /// Gets the weather.
    #[tool]
    fn get(&self, #[inject] db: Database, city: String) -> String {
        let _ = db;
        city
    }
}

fn main() {}
