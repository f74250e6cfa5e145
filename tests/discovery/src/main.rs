//! A binary with tools of its own, in a file module, and the library's:
//! one `discover()` finds both; `scan_module` one module's.

mod own;

use toolbox::Registry;

fn main() {
    // Using the tool library links it, and with it every tool in it.
    toolbox_discovery_tests::linked();
    let registry = Registry::empty();
    let keys = match registry.discover() {
        Ok(keys) => keys,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    for tool in Registry::discovered() {
        println!("{} {} {}", tool.key, tool.module_path, tool.location);
    }
    let crm = Registry::empty();
    let scanned = crm
        .scan_module("toolbox_discovery_tests::tools::crm")
        .unwrap_or_default();
    println!(
        "discovered {} tools; scan_module(tools::crm) took {}",
        keys.len(),
        scanned.len()
    );
}
