//! Discovery across files and crates: the library's tools from its own
//! integration test, the binary's and the library's from the binary,
//! `scan_module` by path segments, opt-outs, the listing and the checks.

use toolbox::provider::Provider;
use toolbox::testing::{check_discovered, ToolHarness};
use toolbox::Registry;

fn keys(registry: &Registry) -> Vec<String> {
    let mut keys: Vec<String> = registry.keys().iter().map(ToString::to_string).collect();
    keys.sort();
    keys
}

#[test]
fn one_discover_call_finds_every_file_modules_tools() {
    toolbox_discovery_tests::linked();
    let registry = Registry::empty();
    registry.discover().unwrap();
    assert_eq!(
        keys(&registry),
        [
            "add_note@notes",
            "balance@billing",
            "convert@money",
            "forecast@weather",
            "get_weather@weather",
            "list_notes@notes",
            "lookup@crm",
        ],
        "the late file's tool is found, opted-out and unbuildable ones are not"
    );
    // Registered, they resolve and run like any tool.
    let tools = registry.resolve(["get_weather", "lookup@crm"]).unwrap();
    let outcome =
        ToolHarness::new(tools).call_blocking("get_weather", serde_json::json!({"city": "Oslo"}));
    assert_eq!(outcome.response.content, "sunny in Oslo");
}

#[test]
fn scan_module_takes_a_path_segment_wise() {
    toolbox_discovery_tests::linked();
    let crm = Registry::empty();
    crm.scan_module("toolbox_discovery_tests::tools::crm")
        .unwrap();
    assert_eq!(keys(&crm), ["balance@billing", "lookup@crm"]);
    let tools = Registry::empty();
    tools.scan_module("toolbox_discovery_tests::tools").unwrap();
    assert_eq!(keys(&tools).len(), 7);
    let none = Registry::empty();
    assert!(none
        .scan_module("toolbox_discovery_tests::tool")
        .unwrap()
        .is_empty());
    assert!(none.is_empty());
}

#[test]
fn a_second_discover_names_both_items_and_registers_none() {
    let registry = Registry::empty();
    registry.discover().unwrap();
    let before = registry.len();
    let error = registry.discover().unwrap_err().to_string();
    assert!(
        error.contains(
            "is given by two items: an earlier registration and `toolbox_discovery_tests::tools::"
        ),
        "{error}"
    );
    assert!(error.contains(".rs:"), "{error}");
    assert_eq!(registry.len(), before);
}

#[test]
fn the_listing_names_each_tool_its_module_path_and_file() {
    let listed = Registry::discovered();
    let weather = listed
        .iter()
        .find(|t| t.key.to_string() == "get_weather@weather")
        .unwrap();
    assert_eq!(
        weather.module_path,
        "toolbox_discovery_tests::tools::weather"
    );
    assert!(
        weather
            .location
            .starts_with("tests/discovery/src/tools/weather.rs:")
            || weather.location.starts_with("src/tools/weather.rs:"),
        "{}",
        weather.location
    );
    let keys: Vec<String> = listed.iter().map(|t| t.key.to_string()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "the listing is in key order");
}

#[test]
fn every_discovered_tool_fits_every_provider() {
    let report = check_discovered(&[
        Provider::OpenAiChat { strict: true },
        Provider::Anthropic { strict: true },
        Provider::GeminiLegacy,
        Provider::Mcp,
    ]);
    report.assert_clean();
    assert_eq!(
        report.boxes(),
        6,
        "two weather functions, crm, billing, notes, convert"
    );
}

#[test]
fn the_binary_finds_its_own_tools_and_the_librarys() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_discovery-app"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("version@own discovery_app::own src/own.rs:")
            || text.contains("version@own discovery_app::own tests/discovery/src/own.rs:"),
        "{text}"
    );
    assert!(
        text.contains("get_weather@weather toolbox_discovery_tests::tools::weather"),
        "{text}"
    );
    assert!(
        text.contains("convert@money toolbox_discovery_tests::tools::late_addition"),
        "{text}"
    );
    assert!(
        text.ends_with("discovered 8 tools; scan_module(tools::crm) took 2\n"),
        "{text}"
    );
}

#[test]
fn discover_crates_names_a_crate_that_contributed_nothing() {
    toolbox_discovery_tests::linked();
    let registry = Registry::empty();
    let error = registry
        .discover_crates(["toolbox-discovery-tests", "weather_tools"])
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "no tool was discovered in `weather_tools`: a crate whose items the program never names is not linked, and its tools with it; add `use weather_tools as _;` to the binary (or call any of its functions), and check that its `#[tool]` items are not `register = false`"
    );
    assert!(registry.is_empty(), "nothing is registered");
    // The crate that is linked is found, by its package or library name.
    let keys = registry
        .discover_crates(["toolbox-discovery-tests"])
        .unwrap();
    assert_eq!(keys.len(), 7);
}
