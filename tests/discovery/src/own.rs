//! The binary's own tools.

use toolbox::prelude::*;

/// Says which build is running.
#[tool(read_only)]
fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
