//! A whole provider turn from bytes to bytes: a response of three parallel
//! tool calls as the HTTP body → `Provider::parse_calls` → `TurnRunner` →
//! `Provider::result_messages` → the request body's messages as bytes,
//! against a hand-written floor for each provider (typed serde structs for
//! the response, each call's arguments read once straight into the tool's
//! type — an argument string with `from_str`, an argument object from its
//! raw text (`&RawValue`) with `from_str` — the functions, `to_string`, the
//! messages built by hand), in one run. The tools never wait, so each turn is driven by one poll.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::borrow::Cow;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolbox::prelude::*;
use toolbox::{provider::Provider, turn::TurnRunner};

/// Counts allocations, to report how many one turn makes.
struct Counting;

static ALLOCATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// A benchmark's allocator, as `tests/allocations.rs` has one.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: as `alloc` and `dealloc`.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations (and reallocations) one run of `f` makes.
fn allocations(f: impl FnOnce() -> Vec<u8>) -> usize {
    let before = ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed);
    let out = f();
    let after = ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed);
    drop(out);
    after - before
}

mod tools;
use tools::{add, add_arguments, ready, search, search_arguments, AddArgs, MacroTools, SearchArgs};

/// The three calls of the turn: `add`, `search`, `add`.
fn calls() -> [(&'static str, &'static str, Value); 3] {
    [
        ("call_1", "add", add_arguments()),
        ("call_2", "search", search_arguments()),
        ("call_3", "add", json!({"a": 1, "b": 2})),
    ]
}

fn openai_response() -> Vec<u8> {
    let tool_calls: Vec<Value> = calls()
        .into_iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    serde_json::to_vec(&json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_764_000_000, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140}
    }))
    .unwrap()
}

fn anthropic_response() -> Vec<u8> {
    let mut content = vec![json!({"type": "text", "text": "I'll look these up."})];
    content.extend(calls().into_iter().map(
        |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
    ));
    serde_json::to_vec(&json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 40}
    }))
    .unwrap()
}

fn gemini_response() -> Vec<u8> {
    let parts: Vec<Value> = calls()
        .into_iter()
        .map(|(id, name, args)| json!({"functionCall": {"id": id, "name": name, "args": args}}))
        .collect();
    serde_json::to_vec(&json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 40, "totalTokenCount": 140},
        "modelVersion": "gemini-2.5-flash"
    }))
    .unwrap()
}

/// The tool's result text, as the floor computes it.
fn run_tool<'a, D>(name: &str, arguments: D) -> String
where
    D: FnOnce(&str) -> Option<String> + 'a,
{
    arguments(name).unwrap_or_else(|| format!("unknown tool {name}"))
}

fn from_text(name: &str, text: &str) -> Option<String> {
    match name {
        "add" => {
            let x: AddArgs = serde_json::from_str(text).ok()?;
            serde_json::to_string(&add(x.a, x.b)).ok()
        }
        "search" => {
            let x: SearchArgs = serde_json::from_str(text).ok()?;
            serde_json::to_string(&search(x.query, x.limit, x.filters)).ok()
        }
        _ => None,
    }
}

mod floor {
    use super::*;

    #[derive(Deserialize)]
    pub(crate) struct ChatResponse<'a> {
        #[serde(borrow)]
        pub(crate) choices: Vec<Choice<'a>>,
    }
    #[derive(Deserialize)]
    pub(crate) struct Choice<'a> {
        #[serde(borrow)]
        pub(crate) message: Message<'a>,
    }
    #[derive(Deserialize)]
    pub(crate) struct Message<'a> {
        #[serde(borrow, default)]
        pub(crate) tool_calls: Vec<ChatCall<'a>>,
    }
    #[derive(Deserialize)]
    pub(crate) struct ChatCall<'a> {
        #[serde(borrow)]
        pub(crate) id: Cow<'a, str>,
        #[serde(borrow)]
        pub(crate) function: Function<'a>,
    }
    #[derive(Deserialize)]
    pub(crate) struct Function<'a> {
        #[serde(borrow)]
        pub(crate) name: Cow<'a, str>,
        #[serde(borrow)]
        pub(crate) arguments: Cow<'a, str>,
    }
    #[derive(Serialize)]
    pub(crate) struct ToolMessage<'a> {
        pub(crate) role: &'static str,
        pub(crate) tool_call_id: &'a str,
        pub(crate) content: String,
    }

    #[derive(Deserialize)]
    pub(crate) struct AnthropicResponse<'a> {
        #[serde(borrow)]
        pub(crate) content: Vec<Block<'a>>,
    }
    /// A content block (an internally tagged enum would buffer it, and a
    /// `&RawValue` cannot come out of a buffer).
    #[derive(Deserialize)]
    pub(crate) struct Block<'a> {
        #[serde(rename = "type", borrow)]
        pub(crate) kind: Cow<'a, str>,
        #[serde(borrow, default)]
        pub(crate) id: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        pub(crate) name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        pub(crate) input: Option<&'a serde_json::value::RawValue>,
    }
    #[derive(Serialize)]
    pub(crate) struct UserTurn<T> {
        pub(crate) role: &'static str,
        pub(crate) content: Vec<T>,
    }
    #[derive(Serialize)]
    pub(crate) struct ToolResult<'a> {
        #[serde(rename = "type")]
        pub(crate) kind: &'static str,
        pub(crate) tool_use_id: &'a str,
        pub(crate) content: String,
    }

    #[derive(Deserialize)]
    pub(crate) struct GeminiResponse<'a> {
        #[serde(borrow)]
        pub(crate) candidates: Vec<Candidate<'a>>,
    }
    #[derive(Deserialize)]
    pub(crate) struct Candidate<'a> {
        #[serde(borrow)]
        pub(crate) content: Content<'a>,
    }
    #[derive(Deserialize)]
    pub(crate) struct Content<'a> {
        #[serde(borrow)]
        pub(crate) parts: Vec<Part<'a>>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct Part<'a> {
        #[serde(borrow)]
        pub(crate) function_call: Option<FunctionCall<'a>>,
    }
    #[derive(Deserialize)]
    pub(crate) struct FunctionCall<'a> {
        #[serde(borrow)]
        pub(crate) id: Option<Cow<'a, str>>,
        #[serde(borrow)]
        pub(crate) name: Cow<'a, str>,
        #[serde(borrow)]
        pub(crate) args: &'a serde_json::value::RawValue,
    }
    #[derive(Serialize)]
    pub(crate) struct GeminiTurn<'a> {
        pub(crate) role: &'static str,
        pub(crate) parts: Vec<ResponsePart<'a>>,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct ResponsePart<'a> {
        pub(crate) function_response: FunctionResponse<'a>,
    }
    #[derive(Serialize)]
    pub(crate) struct FunctionResponse<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub(crate) id: Option<&'a str>,
        pub(crate) name: &'a str,
        pub(crate) response: Output,
    }
    #[derive(Serialize)]
    pub(crate) struct Output {
        pub(crate) output: Value,
    }
}

fn openai_floor(body: &[u8]) -> Vec<u8> {
    let response: floor::ChatResponse<'_> = serde_json::from_slice(body).unwrap();
    let calls = &response.choices[0].message.tool_calls;
    let messages: Vec<floor::ToolMessage<'_>> = calls
        .iter()
        .map(|call| floor::ToolMessage {
            role: "tool",
            tool_call_id: &call.id,
            content: run_tool(&call.function.name, |name| {
                from_text(name, &call.function.arguments)
            }),
        })
        .collect();
    serde_json::to_vec(&messages).unwrap()
}

fn anthropic_floor(body: &[u8]) -> Vec<u8> {
    let response: floor::AnthropicResponse<'_> = serde_json::from_slice(body).unwrap();
    let content: Vec<floor::ToolResult<'_>> = response
        .content
        .iter()
        .filter(|block| block.kind == "tool_use")
        .map(|block| {
            let (id, name, input) = (
                block.id.as_deref().unwrap(),
                block.name.as_deref().unwrap(),
                block.input.unwrap(),
            );
            floor::ToolResult {
                kind: "tool_result",
                tool_use_id: id,
                content: run_tool(name, |name| from_text(name, input.get())),
            }
        })
        .collect();
    serde_json::to_vec(&[floor::UserTurn {
        role: "user",
        content,
    }])
    .unwrap()
}

fn gemini_floor(body: &[u8]) -> Vec<u8> {
    let response: floor::GeminiResponse<'_> = serde_json::from_slice(body).unwrap();
    let parts: Vec<floor::ResponsePart<'_>> = response.candidates[0]
        .content
        .parts
        .iter()
        .filter_map(|part| part.function_call.as_ref())
        .map(|call| {
            let text = run_tool(&call.name, |name| from_text(name, call.args.get()));
            floor::ResponsePart {
                function_response: floor::FunctionResponse {
                    id: call.id.as_deref(),
                    name: &call.name,
                    response: floor::Output {
                        output: serde_json::from_str(&text).unwrap_or(Value::String(text)),
                    },
                },
            }
        })
        .collect();
    serde_json::to_vec(&[floor::GeminiTurn {
        role: "user",
        parts,
    }])
    .unwrap()
}

/// toolbox's route: the calls read from the body, run by a `TurnRunner`,
/// the result messages serialized.
fn toolbox_turn(
    provider: Provider,
    runner: &TurnRunner<'_, MacroTools>,
    ctx: &Context,
    body: &[u8],
) -> Vec<u8> {
    let calls = provider.parse_response(body).unwrap();
    let outcomes = ready(runner.run(calls, ctx));
    provider.result_messages_json(&outcomes).into_bytes()
}

/// A hand-written turn: the response body in, the messages out.
type Floor = fn(&[u8]) -> Vec<u8>;

fn bench_turns(c: &mut Criterion) {
    let ctx = Context::new();
    let runner = TurnRunner::new(&MacroTools);
    let cases: [(&str, Provider, Vec<u8>, Floor); 3] = [
        (
            "openai_chat",
            Provider::OpenAiChat { strict: true },
            openai_response(),
            openai_floor,
        ),
        (
            "anthropic",
            Provider::Anthropic { strict: true },
            anthropic_response(),
            anthropic_floor,
        ),
        ("gemini", Provider::Gemini, gemini_response(), gemini_floor),
    ];
    for (label, provider, body, floor) in cases {
        // Both routes answer the same: the same messages.
        let ours: Value =
            serde_json::from_slice(&toolbox_turn(provider, &runner, &ctx, &body)).unwrap();
        let theirs: Value = serde_json::from_slice(&floor(&body)).unwrap();
        assert_eq!(ours, theirs, "{label}: toolbox and the floor disagree");
        println!(
            "turn_{label}: allocations per turn: floor {}, toolbox {}",
            allocations(|| floor(&body)),
            allocations(|| toolbox_turn(provider, &runner, &ctx, &body)),
        );
        let mut group = c.benchmark_group(format!("turn_{label}"));
        group.bench_function("floor", |b| b.iter(|| floor(black_box(&body))));
        group.bench_function("toolbox_calls_without_turn_runner", |b| {
            b.iter(|| {
                let calls = provider.parse_response(black_box(&body)).unwrap();
                let handler = ToolHandler::empty();
                let results: Vec<(ToolCall, ToolResponse)> = calls
                    .into_iter()
                    .map(|call| {
                        let ctx = ctx.clone().with_call_id(call.id.as_deref().unwrap_or(""));
                        let response = ready(MacroTools.call(
                            &call.name,
                            call.arguments.as_arguments(),
                            &ctx,
                            &handler,
                        ));
                        (call, response)
                    })
                    .collect();
                provider.result_messages_json(&results).into_bytes()
            })
        });
        group.bench_function("toolbox_parse_response_only", |b| {
            b.iter(|| provider.parse_response(black_box(&body)).unwrap())
        });
        group.bench_function("toolbox", |b| {
            b.iter(|| toolbox_turn(provider, &runner, &ctx, black_box(&body)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_turns);
criterion_main!(benches);
