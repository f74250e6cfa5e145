//! Lowering any JSON Schema to every dialect, and checking the result: an
//! answer or an error, never an abort, a hang or an explosion.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolbox::provider::Provider;
use toolbox::ToolSpecification;

const PROVIDERS: [Provider; 6] = [
    Provider::OpenAiChat { strict: true },
    Provider::OpenAiChat { strict: false },
    Provider::Anthropic { strict: true },
    Provider::Gemini,
    Provider::GeminiLegacy,
    Provider::Mcp,
];

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let spec = ToolSpecification::new("t", "A tool").with_parameters(schema);
    for provider in PROVIDERS {
        if let Ok(definition) = provider.definition(&spec) {
            assert!(definition.to_string().len() < 64 * 1024 * 1024);
        }
    }
});
