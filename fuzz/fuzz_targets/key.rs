//! `name@module` parsing and the two-step lookup, with any text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolbox::registry::{Registry, ToolKey};
use toolbox::{tool_fn, FnToolBox};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let key = ToolKey::parse(text);
    let _ = key.to_string();
    thread_local! {
        static REGISTRY: Registry = {
            let registry = Registry::new();
            let tools = || FnToolBox::new([tool_fn("get", "Gets", |_: ()| async { 1 })]).unwrap();
            registry.register_box(tools(), "crm").unwrap();
            registry.register_box(tools(), "orders").unwrap();
            registry
        };
    }
    REGISTRY.with(|registry| {
        let _ = registry.get(text);
        let _ = registry.resolve([text]);
        if text.is_char_boundary(text.len() / 2) {
            let (first, second) = text.split_at(text.len() / 2);
            let _ = registry.resolve([first, second]);
        }
    });
});
