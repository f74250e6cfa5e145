//! toolbox's compile-time tests: `tests/ui.rs` runs trybuild over
//! `tests/ui/`, the cases that must compile and the ones that must fail
//! with their exact errors. This library is empty; the package exists so
//! that trybuild's nested build compiles only the facade and what the
//! cases use.
