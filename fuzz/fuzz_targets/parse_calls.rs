//! Each provider's `parse_calls` on any JSON: an answer or an error, never
//! a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolbox::provider::Provider;

const PROVIDERS: [Provider; 5] = [
    Provider::OpenAiChat { strict: false },
    Provider::OpenAiResponses { strict: false },
    Provider::Anthropic { strict: false },
    Provider::Gemini,
    Provider::Mcp,
];

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for provider in PROVIDERS {
        if let Ok(calls) = provider.parse_calls(&value) {
            let pairs: Vec<_> = calls
                .into_iter()
                .map(|call| (call, toolbox::ToolResponse::text("ok")))
                .collect();
            let _ = provider.result_messages(&pairs);
        }
    }
});
