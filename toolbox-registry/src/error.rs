//! What can go wrong with a registry.

/// Why a registry operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Nothing is registered under the key.
    #[error("no tool is registered as `{key}`{}", suggest(suggestions))]
    NotFound {
        /// The key asked for.
        key: String,
        /// Registered keys close to it.
        suggestions: Vec<String>,
    },
    /// A bare name is registered in several modules.
    #[error(
        "`{name}` is ambiguous: it is registered as {}; ask for one of them",
        quoted(keys)
    )]
    Ambiguous {
        /// The bare name asked for.
        name: String,
        /// Every key it matches, sorted.
        keys: Vec<String>,
    },
    /// The key is already taken.
    #[error("`{key}` is already registered; unregister it first")]
    Duplicate {
        /// The key.
        key: String,
    },
    /// Two discovered items give the same key.
    #[error("`{key}` is given by two items: {first} and {second}; rename one (`#[tool(name = ..)]`, `#[tool(module = ..)]`, `#[tool_box(name = ..)]`) or opt one out (`register = false`)")]
    DiscoveredTwice {
        /// The key.
        key: String,
        /// The first item: its module path and source location.
        first: String,
        /// The second.
        second: String,
    },
    /// A name or module breaks the naming rules.
    #[error("{0}")]
    InvalidName(String),
    /// Crates discovery was asked about contributed no tool: most often a
    /// crate the program never names, which the linker leaves out.
    #[error(
        "no tool was discovered in {}: a crate whose items the program never names is not linked, and its tools with it; add `use {} as _;` to the binary (or call any of its functions), and check that its `#[tool]` items are not `register = false`",
        quoted(crates),
        crates.first().map(String::as_str).unwrap_or("my_tools")
    )]
    NothingDiscovered {
        /// The crates (as their library names) that contributed nothing.
        crates: Vec<String>,
    },
    /// Two tools of one resolution would go on the wire under the same name.
    #[error("`{first}` and `{second}` would both be exposed as `{exposed}`")]
    ExposedNameCollision {
        /// The exposed name.
        exposed: String,
        /// One key.
        first: String,
        /// The other key.
        second: String,
    },
}

fn quoted(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn suggest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(
            "; did you mean {}?",
            quoted(suggestions).replace(" and ", " or ")
        )
    }
}
