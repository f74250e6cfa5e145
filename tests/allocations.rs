//! How many allocations a quiet call makes against the hand-written floor
//! for the same input form: the lifecycle and the argument intake may add at
//! most one to what `from_str` / `T::deserialize` → fn → `to_string` does.
//! Counts, not timings: the same tools and calls as `benches/dispatch.rs`
//! (`benches/tools`), whose timings BENCHMARKS.md reports.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use serde::Deserialize;
use toolbox::prelude::*;
use toolbox::Arguments;

#[path = "../benches/tools/mod.rs"]
mod tools;
use tools::{add, add_arguments, ready, search, search_arguments, AddArgs, MacroTools, SearchArgs};

/// The system allocator, counting each thread's allocations (tests run on
/// several threads; each counts only its own).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to `System` unchanged; the counter is a
// const-initialised thread local, which never allocates. The project's only
// unsafe code is in counting allocators (this one and benches/turn.rs's).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is `System::alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System::dealloc`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is `System::realloc`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations (and reallocations) `f` makes on this thread, after one
/// warm-up run (lazy statics and thread locals are not the call's).
fn allocations<R>(mut f: impl FnMut() -> R) -> usize {
    drop(f());
    let before = ALLOCATIONS.with(Cell::get);
    drop(f());
    ALLOCATIONS.with(Cell::get) - before
}

fn quiet_call(name: &str, arguments: Arguments<'_>) -> usize {
    let ctx = Context::new();
    let handler = ToolHandler::empty();
    allocations(|| {
        let response = ready(MacroTools.call(name, arguments, &ctx, &handler));
        assert!(!response.is_error, "{name}: {}", response.content);
        response.content
    })
}

#[test]
fn text_arguments_allocate_at_most_one_more_than_from_str() {
    let text = add_arguments().to_string();
    let floor = allocations(|| {
        let args: AddArgs = serde_json::from_str(&text).unwrap();
        serde_json::to_string(&add(args.a, args.b)).unwrap()
    });
    let ours = quiet_call("add", Arguments::from(text.as_str()));
    assert!(
        ours <= floor + 1,
        "add, text: {ours} allocations, floor {floor}"
    );

    let text = search_arguments().to_string();
    let floor = allocations(|| {
        let args: SearchArgs = serde_json::from_str(&text).unwrap();
        serde_json::to_string(&search(args.query, args.limit, args.filters)).unwrap()
    });
    let ours = quiet_call("search", Arguments::from(text.as_str()));
    assert!(
        ours <= floor + 1,
        "search, text: {ours} allocations, floor {floor}"
    );
}

#[test]
fn borrowed_arguments_allocate_at_most_one_more_than_deserialize() {
    let value = add_arguments();
    let floor = allocations(|| {
        let args = AddArgs::deserialize(&value).unwrap();
        serde_json::to_string(&add(args.a, args.b)).unwrap()
    });
    let ours = quiet_call("add", Arguments::from(&value));
    assert!(
        ours <= floor + 1,
        "add, borrowed: {ours} allocations, floor {floor}"
    );

    let value = search_arguments();
    let floor = allocations(|| {
        let args = SearchArgs::deserialize(&value).unwrap();
        serde_json::to_string(&search(args.query, args.limit, args.filters)).unwrap()
    });
    let ours = quiet_call("search", Arguments::from(&value));
    assert!(
        ours <= floor + 1,
        "search, borrowed: {ours} allocations, floor {floor}"
    );
}

#[test]
fn the_counter_sees_allocations() {
    // Guards the two tests above against a counter that never counts.
    assert_eq!(allocations(|| vec![1u8; 16]), 1);
    assert_eq!(allocations(|| ()), 0);
}

/// Reading an OpenAI response's calls allocates the body's two vectors and
/// the calls' one, then per call its id, its name and its argument text,
/// once each: the argument strings, escaped in the body, are unescaped
/// straight into their own text rather than through a scratch buffer grown
/// piece by piece (five allocations more for these three).
#[test]
fn an_openai_response_reads_each_argument_string_in_one_allocation() {
    let body = br#"{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 40, \"b\": 2}"}},
        {"id": "call_2", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"rust tool calling\", \"limit\": 5, \"filters\": {\"tags\": [\"mcp\", \"agents\"], \"since\": \"2025-01-01\"}}"}},
        {"id": "call_3", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}
    ]}}]}"#;
    let provider = toolbox::provider::Provider::OpenAiChat { strict: true };
    let calls = provider.parse_response(body).expect("three calls");
    assert_eq!(calls[1].arguments["filters"]["tags"][1], "agents");
    let count = allocations(|| provider.parse_response(body).expect("three calls"));
    assert_eq!(count, 3 + 3 * 3, "allocations reading three calls");
}
