// Discovery builds a `#[tool_box]` with `Default`: a box that is not
// `Default` and says nothing about discovery is one error on its type,
// naming the two ways out, never a box that is silently not discovered.
use toolbox::prelude::*;

struct Session {
    user: String,
}

/// One user's session.
#[tool_box]
impl Session {
    /// Who is signed in.
    #[tool]
    fn whoami(&self) -> String {
        self.user.clone()
    }
}

fn main() {}
