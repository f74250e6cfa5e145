//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolbox::{ToolErrorKind, ToolHandler};

/// Counts lifecycle events and remembers the failures' kinds.
#[derive(Clone, Default)]
pub(crate) struct Counts {
    pub starts: Arc<AtomicUsize>,
    pub successes: Arc<AtomicUsize>,
    pub errors: Arc<AtomicUsize>,
    pub error_kinds: Arc<Mutex<Vec<ToolErrorKind>>>,
    pub elapsed: Arc<Mutex<Vec<Duration>>>,
}

impl Counts {
    pub(crate) fn handler(&self) -> ToolHandler {
        let (starts, successes, errors) = (
            self.starts.clone(),
            self.successes.clone(),
            self.errors.clone(),
        );
        let (kinds, elapsed, elapsed2) = (
            self.error_kinds.clone(),
            self.elapsed.clone(),
            self.elapsed.clone(),
        );
        ToolHandler::empty()
            .on_start(move |_| {
                starts.fetch_add(1, Ordering::SeqCst);
            })
            .on_success(move |e| {
                successes.fetch_add(1, Ordering::SeqCst);
                elapsed.lock().unwrap().push(e.elapsed);
            })
            .on_error(move |e| {
                errors.fetch_add(1, Ordering::SeqCst);
                kinds.lock().unwrap().push(e.error.kind());
                elapsed2.lock().unwrap().push(e.elapsed);
            })
    }

    /// (starts, successes, errors)
    pub(crate) fn get(&self) -> (usize, usize, usize) {
        (
            self.starts.load(Ordering::SeqCst),
            self.successes.load(Ordering::SeqCst),
            self.errors.load(Ordering::SeqCst),
        )
    }

    pub(crate) fn kinds(&self) -> Vec<ToolErrorKind> {
        self.error_kinds.lock().unwrap().clone()
    }
}

/// Every provider toolbox speaks.
pub(crate) const PROVIDERS: [toolbox::provider::Provider; 9] = [
    toolbox::provider::Provider::OpenAiChat { strict: true },
    toolbox::provider::Provider::OpenAiChat { strict: false },
    toolbox::provider::Provider::OpenAiResponses { strict: true },
    toolbox::provider::Provider::OpenAiResponses { strict: false },
    toolbox::provider::Provider::Anthropic { strict: true },
    toolbox::provider::Provider::Anthropic { strict: false },
    toolbox::provider::Provider::Gemini,
    toolbox::provider::Provider::GeminiLegacy,
    toolbox::provider::Provider::Mcp,
];

/// Asserts that every schema `toolbox` emits is inside every provider's
/// dialect once lowered (the validators of `toolbox::provider`).
pub(crate) fn assert_fits_every_provider<B: toolbox::ToolBox + ?Sized>(toolbox: &B) {
    for provider in PROVIDERS {
        toolbox::testing::check_surface(toolbox, provider).assert_clean();
    }
}

/// The example binary `cargo test` built next to the running test.
pub(crate) fn example(name: &str) -> std::path::PathBuf {
    let mut path = std::env::current_exe().unwrap();
    path.pop();
    if path.ends_with("deps") {
        path.pop();
    }
    path.join("examples").join(name)
}

/// A file path in a scratch directory of its own under the temp dir
/// (unique to this process and the file's name), removed with the directory
/// when dropped, so tests leave nothing behind.
pub(crate) struct ScratchFile {
    dir: std::path::PathBuf,
    file: std::path::PathBuf,
}

impl ScratchFile {
    /// A fresh, empty directory `toolbox-{group}-{pid}-{name}` holding the
    /// (not yet created) file `name`.
    pub(crate) fn new(group: &str, name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("toolbox-{group}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name);
        ScratchFile { dir, file }
    }
}

impl std::ops::Deref for ScratchFile {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.file
    }
}

impl AsRef<std::path::Path> for ScratchFile {
    fn as_ref(&self) -> &std::path::Path {
        &self.file
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
