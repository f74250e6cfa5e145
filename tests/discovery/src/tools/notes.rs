//! Notes: a `#[tool_box]` module.

/// Note taking.
#[toolbox::tool_box(name = "notes")]
pub mod notebook {
    /// Adds a note.
    #[tool]
    pub fn add_note(
        /// The note's text.
        text: String,
    ) -> String {
        format!("noted: {text}")
    }

    /// Lists the notes.
    #[tool(read_only)]
    pub fn list_notes() -> Vec<String> {
        Vec::new()
    }
}
