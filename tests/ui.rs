//! Compile-time behaviour of `#[tool]` and `#[tool_box]`: what compiles, and
//! the exact error for every rule (`TRYBUILD=overwrite` regenerates the
//! `.stderr` files; review them before committing).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/tool_box/pass/*.rs");
    cases.pass("tests/ui/tool/pass/*.rs");
    cases.compile_fail("tests/ui/tool_box/fail/*.rs");
    cases.compile_fail("tests/ui/tool/fail/*.rs");
}
