//! toolbox-mcp's integration tests as one test binary: each file of `tests/` is
//! a module here (one link against rmcp and the HTTP stack, not ten). Run
//! one file's tests with `cargo test -p toolbox-mcp --test integration tasks::`.

#![allow(unreachable_pub)] // test items are no API

#[path = "apps.rs"]
mod apps;
#[path = "apps_interop.rs"]
mod apps_interop;
#[path = "client_requests.rs"]
mod client_requests;
#[path = "http_guard.rs"]
mod http_guard;
#[path = "https.rs"]
mod https;
#[path = "roundtrip.rs"]
mod roundtrip;
#[path = "seams.rs"]
mod seams;
#[path = "service.rs"]
mod service;
#[path = "task_resume.rs"]
mod task_resume;
#[path = "task_store.rs"]
mod task_store;
#[path = "task_stores_shared.rs"]
mod task_stores_shared;
#[path = "tasks.rs"]
mod tasks;
#[path = "trust.rs"]
mod trust;
