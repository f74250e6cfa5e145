//! The code mode with any script: every run answers within its time limit
//! plus the grace and a margin, every tool call it starts ends exactly
//! once, and the box stays usable.
#![no_main]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolbox::code::{CodeMode, Limits, RUN_CODE};
use toolbox::{tool_fn, Context, FnToolBox, ToolBoxExt, ToolHandler};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Key {
    key: String,
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    code: CodeMode<FnToolBox>,
    starts: Arc<AtomicUsize>,
    ends: Arc<AtomicUsize>,
    handler: ToolHandler,
}

fn harness() -> Harness {
    let tools = FnToolBox::new([
        tool_fn("lookup", "Looks a key up.", |k: Key| async move {
            json!({"key": k.key, "value": 7})
        }),
        tool_fn("fail", "Always fails.", |_: Key| async move {
            Err::<String, _>("it failed".to_owned())
        }),
    ])
    .unwrap();
    let (starts, ends) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, o, e) = (starts.clone(), ends.clone(), ends.clone());
    let handler = ToolHandler::empty()
        .on_start(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .on_success(move |_| {
            o.fetch_add(1, Ordering::SeqCst);
        })
        .on_error(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        });
    let code = CodeMode::new(tools)
        .handler(handler.clone())
        .limits(Limits {
            time: Duration::from_millis(200),
            memory: 16 << 20,
            output: 4 << 10,
            ..Limits::default()
        });
    Harness {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap(),
        code,
        starts,
        ends,
        handler: ToolHandler::empty(),
    }
}

fuzz_target!(|data: &[u8]| {
    let script = String::from_utf8_lossy(data);
    thread_local! {
        static HARNESS: Harness = harness();
    }
    HARNESS.with(|h| {
        let started = Instant::now();
        let answer = h.runtime.block_on(h.code.call(
            RUN_CODE,
            &json!({ "code": script }),
            &Context::new(),
            &h.handler,
        ));
        let took = started.elapsed();
        // 200 ms, the grace (100 ms), and room for a sanitized build on a
        // loaded machine (a run there once took 2.15 s with every core busy;
        // alone the same input ran in 80 ms).
        assert!(
            took < Duration::from_secs(5),
            "the run answered after {took:?}"
        );
        assert!(
            answer.content.len() <= 8 << 10,
            "{} bytes",
            answer.content.len()
        );
        assert!(!answer.content.contains("(0x"), "{}", answer.content);
        assert_eq!(
            h.starts.load(Ordering::SeqCst),
            h.ends.load(Ordering::SeqCst)
        );
    });
});
