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
