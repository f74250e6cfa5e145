//! Every example runs and says what it should: each is started as the
//! binary `cargo test` built, and its output is checked line by line where
//! it matters, so none can rot.

use std::process::Command;

mod common;
use common::example;

/// Runs an example to completion; its stdout.
fn run(name: &str) -> String {
    let output = Command::new(example(name))
        // model_loop talks to the in-process model unless told otherwise.
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap_or_else(|e| panic!("cannot start example `{name}`: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "example `{name}` failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn has(output: &str, line: &str) {
    assert!(
        output.lines().any(|l| l.trim() == line),
        "missing line `{line}` in:\n{output}"
    );
}

#[test]
fn record_replay_replays_without_running_and_reports_drift() {
    let out = run("record_replay");
    // Recorded: both tools ran once each, one tape line per call.
    has(
        &out,
        "get_order -> order 98765: shipped 2026-11-20, not delivered",
    );
    assert!(out.contains("tape: 2 entries in "), "{out}");
    // Replayed: the same answers, nothing ran.
    has(
        &out,
        "get_order -> order 98765: shipped 2026-11-20, not delivered (same as recorded: true)",
    );
    has(
        &out,
        "track -> parcel of 98765: lost in transit since 2026-11-22 (same as recorded: true)",
    );
    has(&out, "tools run: 0, calls replayed: 2");
    // Drifted: the first difference, named.
    has(&out, "get_order -> [error] replay drift at call 1 (`get_order`): the arguments differ at `number`: the tape has 98765, the call has 12345");
    has(&out, "tools run: 0");
}

#[test]
fn profile_editor_rejects_then_completes_the_working_copy() {
    let out = run("profile_editor");
    has(
        &out,
        "set_name -> [rejected] `Ada` is not a full name; give a first and a last name",
    );
    has(
        &out,
        "set_languages -> [rejected] `Rust` has level 7; levels go from 1 (beginner) to 5 (expert)",
    );
    has(
        &out,
        r#"finish -> [ok] {"complete":false,"outstanding":["summary: missing"]}"#,
    );
    has(&out, r#"finish -> [ok] {"complete":true,"outstanding":[]}"#);
    has(
        &out,
        r#"the working copy: {"name":"Ada Lovelace","languages":[{"name":"Rust","level":5},{"name":"Python","level":4}],"experience_years":12,"summary":"Writes analytical engines in Rust."}"#,
    );
}

#[test]
fn support_agent_holds_the_refund_until_the_operator_approves() {
    let out = run("support_agent");
    assert!(
        out.contains("connected to `knowledge-base` over Streamable HTTP, protocol 2025-11-25"),
        "{out}"
    );
    has(
        &out,
        "registered: get_customer@crm, get_order@orders, now@core, refund_order@orders, search@kb",
    );
    has(
        &out,
        "the agent's tools: get_customer, get_order, refund_order, search",
    );
    has(
        &out,
        r#"get_customer -> {"id":12345,"name":"Grace Hopper","tier":"gold"}"#,
    );
    has(
        &out,
        r#"search -> ["Lost parcels: refund in full after 7 days without a delivery scan."]"#,
    );
    // Held: no start event for the refund before the approval.
    has(&out, "refund_order -> this call is waiting for approval; its result will follow in a later message");
    has(&out, "held for approval: 1");
    let approved = out.find("-- the operator approves").unwrap();
    let started = out.find("start   refund_order").unwrap();
    assert!(
        started > approved,
        "the refund ran before the approval:\n{out}"
    );
    has(
        &out,
        "refund_order -> order 98765 refunded in full (parcel lost in transit)",
    );
    has(
        &out,
        r#"result message: {"role":"tool","tool_call_id":"call_4","content":"order 98765 refunded in full (parcel lost in transit)"}"#,
    );
    // Every call's events, with a timing.
    for name in ["get_customer", "get_order", "search", "refund_order"] {
        assert!(
            out.contains(&format!("success {name} in ")),
            "{name}: {out}"
        );
    }
}

#[test]
fn model_loop_runs_parallel_calls_recovers_from_an_error_and_answers() {
    let out = run("model_loop");
    assert!(
        out.starts_with("model `recorded` at http://127.0.0.1:"),
        "{out}"
    );
    // Step 1: two calls in one turn, one of them failing with a reason.
    has(&out, "step 1: 2 tool call(s): get_weather, get_weather");
    has(
        &out,
        r#"get_weather {"city":"Prag"} -> [error] no city `Prag`; known cities are Prague and Brno"#,
    );
    has(
        &out,
        r#"get_weather {"city":"Brno"} -> [ok] {"city":"Brno","celsius":6,"sky":"clear"}"#,
    );
    // Step 2: the model read the error and corrected itself.
    has(&out, "step 2: 1 tool call(s): get_weather");
    has(
        &out,
        r#"get_weather {"city":"Prague"} -> [ok] {"city":"Prague","celsius":4,"sky":"overcast"}"#,
    );
    // Step 3: the answer, from both results.
    has(&out, "step 3: the model answers");
    has(
        &out,
        "assistant: Brno is 6 °C and clear; Prague is 4 °C and overcast.",
    );
}

#[test]
fn otel_exports_the_gen_ai_spans() {
    let out = run("otel");
    has(&out, "span `execute_tool add` (Internal, status Unset): gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_1 gen_ai.tool.name=add gen_ai.tool.type=function");
    has(
        &out,
        r#"span `execute_tool divide` (Internal, status Error { description: "" }): error.type=tool_failed gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_2 gen_ai.tool.name=divide gen_ai.tool.type=function"#,
    );
}

#[test]
fn capabilities_compose_with_conditions_and_elements() {
    let out = run("capabilities");
    has(&out, "offered to a visitor on the free plan: knowledge_search, ui_show_chart, ui_navigate, ui_handover");
    has(&out, "offered to ada on the pro plan: knowledge_search, memory_remember, memory_recall, ui_show_chart, ui_navigate, ui_handover, web_search");
    // Ranked retrieval: the best two of three, by score.
    assert!(
        out.contains(r#"knowledge_search -> [ok] [{"title":"Lost parcels","score":3"#),
        "{out}"
    );
    // Memory per injected user, persisted: it survives reopening the file.
    has(
        &out,
        "memory_remember -> [ok] remembered for ada: prefers email over phone",
    );
    has(
        &out,
        r#"recall after reopening the file -> [ok] ["prefers email over phone"]"#,
    );
    has(
        &out,
        "memory_recall (visitor) -> [error] tool `memory_recall` is not available in this context",
    );
    // Elements go to the client; the model reads one line.
    has(
        &out,
        "ui_show_chart -> [ok] the chart `Orders per month` with 2 bars is on screen",
    );
    has(
        &out,
        r#"element for the client: {"type":"bar_chart","title":"Orders per month","bars":[["Oct",12.0],["Nov",17.0]]}"#,
    );
    has(
        &out,
        r#"element for the client: {"navigate":"/orders/98765"}"#,
    );
    // Web search through the application's trait, on the pro plan only.
    has(
        &out,
        r#"web_search -> [ok] [{"title":"Parcel tracking explained","url":"https://help.example/tracking"}]"#,
    );
    has(
        &out,
        "web_search (free plan) -> [error] tool `web_search` is not available in this context",
    );
    // Handover: the other agent's box runs next.
    has(&out, "now running the `billing` agent: open_invoices");
    has(
        &out,
        r#"open_invoices -> [ok] ["INV-2026-117 for ada: 49.90 EUR, due 2026-12-15"]"#,
    );
}

#[test]
fn quickstart_tells_the_whole_story() {
    let out = run("quickstart");
    has(&out, "math_add -> [ok] 42");
    has(&out, "math_add -> [ok] 3");
    has(
        &out,
        "math_divide -> [error] cannot divide by zero; pass a non-zero b",
    );
    has(
        &out,
        r#"math_add -> [error] invalid arguments at `a`: got the string "forty", expected an integer"#,
    );
    has(
        &out,
        "math_ad -> [error] unknown tool `math_ad`; did you mean `math_add`?",
    );
    has(
        &out,
        "registered: get_customer@crm, get_order@orders, now@core",
    );
    has(
        &out,
        r#"get_customer -> [ok] {"id":42,"name":"Ada Lovelace","tier":"gold"}"#,
    );
    has(
        &out,
        "get_customer -> [error] no customer 7; customer ids are 42 in this demo",
    );
    has(
        &out,
        "-- the turn: 3 calls, run concurrently (all read-only)",
    );
}

#[test]
fn large_catalog_searches_reveals_and_calls_for_three_providers() {
    let out = run("large_catalog");
    assert!(
        out.starts_with("516 tools in 54 namespaces, all deferred"),
        "{out}"
    );
    for provider in [
        "OpenAiResponses { strict: false }",
        "Anthropic { strict: false }",
        "Gemini",
    ] {
        assert!(out.contains(&format!("== {provider}")), "{out}");
    }
    // The first request is a few kilobytes against the eager quarter megabyte.
    has(&out, "request (search): 5927 bytes of tool definitions");
    assert!(out.contains("\"type\":\"tool_search_output\""), "{out}");
    assert!(
        out.contains("{\"type\":\"tool_reference\",\"tool_name\":\"acme_github_create_issue\"}"),
        "{out}"
    );
    // Each refusal names the search the provider's model knows.
    let refused = |search: &str| {
        let line = format!("refused: the tool `acme_github_merge_pull_request` is not loaded yet, so it did not run: find it with `{search}` first, then call it");
        out.lines().filter(|l| l.trim() == line).count()
    };
    assert_eq!(refused("tool_search"), 1, "{out}");
    assert_eq!(refused("search_tools"), 2, "{out}");
}

#[cfg(feature = "async-openai")]
#[test]
fn bridge_async_openai_runs_a_typed_response_through_the_turn() {
    let out = run("bridge_async_openai");
    has(&out, "tool: get_weather (strict: true)");
    has(&out, "tool: add (strict: true)");
    has(&out, "calls: 2");
    has(&out, "call_abc -> Paris, France: 15 C, light rain");
    has(&out, "call_def -> 42");
}

#[cfg(feature = "code-mode")]
#[test]
fn code_mode_solves_the_ten_step_task_in_one_run_with_less_input() {
    let out = run("code_mode");
    assert!(
        out.contains("direct: 5 model turns, 10 tool calls, "),
        "{out}"
    );
    assert!(
        out.contains("code mode: 2 model turns, 1 run_code call, "),
        "{out}"
    );
    has(
        &out,
        r#"run_code -> {"short":[{"warehouse":"wh_north","units":280},{"warehouse":"wh_east","units":220}],"orders":["po_wh_north_280","po_wh_east_220"]}"#,
    );
    has(&out, "approvals asked: 4 (two reorders, each way)");
    let share = figure(&out, "code mode input:");
    assert!(share < 50.0, "code mode used {share}% of the direct input");
}

#[cfg(feature = "genai")]
#[test]
fn bridge_genai_runs_the_calls_genai_read() {
    let out = run("bridge_genai");
    has(&out, "tools: 2");
    has(&out, "call_abc -> Paris, France: 15 C, light rain");
    has(&out, "call_def -> 42");
}

#[cfg(feature = "rig")]
#[test]
fn bridge_rig_calls_through_the_lifecycle_and_maps_failures() {
    let out = run("bridge_rig");
    assert!(out.contains("rig tool: get_order {"), "{out}");
    assert!(out.contains("\"additionalProperties\":false"), "{out}");
    has(&out, "ok: order 98765: shipped 2026-11-20");
    has(
        &out,
        "refused (other): no order 1; check the number with the customer",
    );
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("start") || l.starts_with("success") || l.starts_with("error"))
        .collect();
    assert_eq!(
        lines,
        [
            "start get_order",
            "success get_order",
            "start get_order",
            "error get_order (tool_failed)",
            "start get_order",
            "error get_order (invalid_arguments)",
        ],
        "{out}"
    );
    assert!(
        out.contains("refused (invalid_args): invalid arguments at `number`"),
        "{out}"
    );
}

/// The number after `name` in one of search_quality's report lines.
fn figure(line: &str, name: &str) -> f64 {
    line.split(name)
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {line}"))
}

/// The search benchmark's held-back part: what `ToolIndex` finds for tasks
/// phrased as people state them (BENCHMARKS.md has the figures).
#[test]
fn search_quality_on_the_held_back_tasks() {
    let out = run("search_quality");
    assert!(
        out.contains("350 tools of 25 servers; 532 tasks (234 hard)"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("report lexical"))
        .unwrap_or_else(|| panic!("{out}"));
    // 0.849 (214 of 252; issue 56's goal 0.85, not met since the lexicon
    // lost the entries that cost on ToolRet): the lexical ranking has no
    // model and reads the same everywhere.
    assert!(figure(line, "recall@5 ") >= 0.849, "{line}");
    // 0.659 (166 of 252) since a tool's score weighs how much of the
    // request it holds, 0.635 (160) without; a margin of four tasks.
    assert!(figure(line, "recall@1 ") >= 0.643, "{line}");
    assert!(figure(line, "MRR ") >= 0.70, "{line}");
    // Built with `semantic` (CI: `--features semantic`, candle optimized by the profile override), the
    // model alone and the hybrid ranking are judged too.
    if let Some(line) = out.lines().find(|l| l.starts_with("report semantic")) {
        // Each tool's first sentence as a request beside its description
        // (0.782 with the description alone), a short query framed as a
        // request (0.841; 0.821 read as typed).
        assert!(figure(line, "recall@5 ") >= 0.825, "{line}");
        // 0.615 (155 of 252) since a short query is framed as a request,
        // 0.603 (152) before, 0.587 (148) before the model read a query's
        // identifiers as what they are; a margin of three tasks.
        assert!(figure(line, "recall@1 ") >= 0.603, "{line}");
    }
    if let Some(line) = out.lines().find(|l| l.starts_with("report hybrid")) {
        // 0.909 and 0.706 on the machines this was measured on; a margin
        // of two tasks for another CPU's rounding.
        assert!(figure(line, "recall@5 ") >= 0.89, "{line}");
        assert!(figure(line, "recall@1 ") >= 0.698, "{line}");
    } else if cfg!(feature = "semantic") {
        panic!("no hybrid line: {out}");
    }
}
