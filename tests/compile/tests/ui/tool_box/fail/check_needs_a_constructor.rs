use toolbox::prelude::*;

struct Session {
    user: String,
}

/// One user's session.
#[tool_box(register = false, check(openai_strict))]
impl Session {
    /// Who is signed in.
    #[tool]
    fn whoami(&self) -> String {
        self.user.clone()
    }
}

fn main() {}
