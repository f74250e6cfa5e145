//! The facade's integration tests as one test binary: each file of
//! `tests/` is a module here, so `cargo test` links one binary against the
//! dependencies instead of one per file (issue 55: the cold test build's
//! time and disk). Run one file's tests with `cargo test --test integration
//! lifecycle::`. The other files are targets of their own in `Cargo.toml`:
//! those of a feature (built only with it, so the default run skips them),
//! those that need a process of their own (a global allocator, a global
//! tracing subscriber, trybuild, the ignored load and scale-out runs), and
//! the examples' test (run with each feature's examples).
//! `floor_plan::every_test_file_is_built` checks that none is left out.

#![allow(unreachable_pub)] // test items are no API

/// The shared helpers, also at the root for the files that name them as
/// `crate::common`.
mod common;

#[path = "background_calls.rs"]
mod background_calls;
#[path = "callbacks.rs"]
mod callbacks;
#[path = "catalog.rs"]
mod catalog;
#[path = "catalog_limits.rs"]
mod catalog_limits;
#[path = "closure_tools.rs"]
mod closure_tools;
#[path = "concurrency.rs"]
mod concurrency;
#[path = "cross_layer.rs"]
mod cross_layer;
#[path = "decorators.rs"]
mod decorators;
#[path = "error_texts.rs"]
mod error_texts;
#[path = "first_hour.rs"]
mod first_hour;
#[path = "floor_plan.rs"]
mod floor_plan;
#[path = "lifecycle.rs"]
mod lifecycle;
#[path = "macros.rs"]
mod macros;
#[path = "multi.rs"]
mod multi;
#[path = "otel.rs"]
mod otel;
#[path = "panics.rs"]
mod panics;
#[path = "programmatic.rs"]
mod programmatic;
#[path = "properties.rs"]
mod properties;
#[path = "providers.rs"]
mod providers;
#[path = "public_paths.rs"]
mod public_paths;
#[path = "registry.rs"]
mod registry;
#[path = "soundness.rs"]
mod soundness;
#[path = "surface.rs"]
mod surface;
#[path = "surface_lock.rs"]
mod surface_lock;
#[path = "tool_changes.rs"]
mod tool_changes;
#[path = "tracing_span.rs"]
mod tracing_span;
#[path = "turn.rs"]
mod turn;
