//! The local code mode (feature `code-mode`): a script's tool calls pass
//! the lifecycle and the approval hook, its limits end it with clear
//! errors and leave the box usable, and it has no ambient I/O.
#![cfg(feature = "code-mode")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use toolbox::code::{CodeMode, Limits, CODE_MODE_RUNTIME, RUN_CODE};
use toolbox::program::Caller;
use toolbox::turn::Decision;
use toolbox::{tool_fn, Context, FnToolBox, ToolBox, ToolBoxExt, ToolHandler, ToolResponse};

#[derive(Deserialize, schemars::JsonSchema)]
struct Account {
    /// The account's id, `acc_` and digits.
    account: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Transfer {
    from: String,
    to: String,
    /// Cents, positive.
    cents: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn bank(ran: &Arc<Mutex<Vec<String>>>) -> FnToolBox {
    let log = |ran: &Arc<Mutex<Vec<String>>>| {
        let ran = ran.clone();
        move |what: String| ran.lock().unwrap().push(what)
    };
    let (a, b, c, d) = (log(ran), log(ran), log(ran), log(ran));
    FnToolBox::new([
        tool_fn(
            "balance",
            "An account's balance in cents.",
            move |p: Account| {
                a(format!("balance {}", p.account));
                async move { json!({"account": p.account, "cents": 12_500}) }
            },
        )
        .read_only(),
        tool_fn(
            "transfer",
            "Moves money between accounts.",
            move |p: Transfer| {
                b(format!("transfer {}", p.cents));
                async move { format!("moved {} from {} to {}", p.cents, p.from, p.to) }
            },
        )
        .destructive(),
        tool_fn(
            "close_account",
            "Closes an account for good.",
            move |p: Account| {
                c(format!("close {}", p.account));
                async move { "closed" }
            },
        )
        .destructive(),
        tool_fn("ping", "Answers pong.", move |_: Nothing| {
            d("ping".to_owned());
            async move { "pong" }
        })
        .read_only(),
        tool_fn("boom", "Always panics.", |_: Nothing| async move {
            if true {
                panic!("the tool broke");
            }
            "never"
        }),
    ])
    .unwrap()
}

struct Seen {
    starts: AtomicUsize,
    ends: AtomicUsize,
    callers: Mutex<Vec<Option<Caller>>>,
}

fn observed() -> (Arc<Seen>, ToolHandler) {
    let seen = Arc::new(Seen {
        starts: AtomicUsize::new(0),
        ends: AtomicUsize::new(0),
        callers: Mutex::new(Vec::new()),
    });
    let (s, o, e) = (seen.clone(), seen.clone(), seen.clone());
    let handler = ToolHandler::empty()
        .on_start(move |event| {
            s.starts.fetch_add(1, Ordering::SeqCst);
            s.callers.lock().unwrap().push(event.caller.cloned());
        })
        .on_success(move |_| {
            o.ends.fetch_add(1, Ordering::SeqCst);
        })
        .on_error(move |_| {
            e.ends.fetch_add(1, Ordering::SeqCst);
        });
    (seen, handler)
}

async fn run(code: &CodeMode<FnToolBox>, script: &str) -> ToolResponse {
    let arguments = json!({ "code": script });
    code.call(
        RUN_CODE,
        &arguments,
        &Context::new().with_call_id("call_run"),
        &ToolHandler::empty(),
    )
    .await
}

#[tokio::test]
async fn a_scripts_calls_keep_the_lifecycle_and_the_approval_hook() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let (seen, handler) = observed();
    let hook_log = asked.clone();
    let code = CodeMode::new(bank(&ran))
        .handler(handler)
        .approval(move |request| {
            let hook_log = hook_log.clone();
            async move {
                hook_log.lock().unwrap().push(request.call.name.clone());
                if request.call.name == "close_account" {
                    Decision::Reject {
                        reason: "closing accounts needs a human".into(),
                    }
                } else {
                    Decision::Approve
                }
            }
        });
    let answer = run(
        &code,
        r#"
        const notes = [];
        try {
            await tools.transfer({ from: "acc_1", to: "acc_2", cents: "a lot" });
        } catch (e) { notes.push("bad: " + e.message); }
        notes.push(await tools.transfer({ from: "acc_1", to: "acc_2", cents: 500 }));
        try {
            await tools.close_account({ account: "acc_1" });
        } catch (e) { notes.push("refused: " + e.message); }
        try { await tools.boom({}); } catch (e) { notes.push("panic: " + e.message); }
        const b = await tools.balance({ account: "acc_2" });
        notes.push(b.cents);
        return notes;
    "#,
    )
    .await;
    assert!(!answer.is_error, "{}", answer.content);
    let notes: Vec<serde_json::Value> = serde_json::from_str(&answer.content).unwrap();
    assert!(
        notes[0].as_str().unwrap().starts_with("bad: ")
            && notes[0].as_str().unwrap().contains("cents"),
        "{notes:?}"
    );
    assert_eq!(notes[1], "moved 500 from acc_1 to acc_2");
    assert!(
        notes[2]
            .as_str()
            .unwrap()
            .contains("closing accounts needs a human"),
        "{notes:?}"
    );
    assert!(
        notes[3].as_str().unwrap().starts_with("panic: "),
        "{notes:?}"
    );
    assert_eq!(notes[4], 12_500);
    // The tools that ran: the approved transfer and the balance; neither
    // the bad call, the refused close nor anything twice.
    assert_eq!(
        *ran.lock().unwrap(),
        ["transfer 500", "balance acc_2"].map(String::from)
    );
    // The hook: once per call it gates (a call whose arguments fail is
    // not asked about).
    assert_eq!(
        *asked.lock().unwrap(),
        ["transfer", "close_account", "boom", "balance"].map(String::from)
    );
    // One end per start, each start with the code caller.
    let starts = seen.starts.load(Ordering::SeqCst);
    assert_eq!(starts, seen.ends.load(Ordering::SeqCst));
    assert!(starts >= 4, "{starts}");
    for caller in seen.callers.lock().unwrap().iter() {
        assert_eq!(
            caller.as_ref(),
            Some(&Caller::Code {
                runtime: CODE_MODE_RUNTIME.into(),
                id: "call_run".into()
            })
        );
    }
}

#[tokio::test]
async fn a_deferred_approval_stops_the_run_before_anything_after_it() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran)).approval(|request| async move {
        if request.destructive() {
            Decision::Defer
        } else {
            Decision::Approve
        }
    });
    let answer = run(
        &code,
        r#"
        await tools.ping({});
        try { await tools.transfer({ from: "a", to: "b", cents: 1 }); } catch (e) {}
        await tools.ping({});
        return "done";
    "#,
    )
    .await;
    assert!(answer.is_error);
    assert!(
        answer.content.contains("`transfer`") && answer.content.contains("approval"),
        "{}",
        answer.content
    );
    assert_eq!(*ran.lock().unwrap(), ["ping"].map(String::from));
}

#[tokio::test]
async fn each_limit_ends_the_run_with_its_own_error_and_the_box_stays_usable() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran)).limits(Limits {
        time: Duration::from_millis(2_000),
        memory: 16 << 20,
        output: 1_000,
        ..Limits::default()
    });
    let cases = [
        ("while (true) {}", "time limit of 2000 ms"),
        (
            "const a = []; while (true) a.push(new Array(100000).fill(1));",
            "memory limit",
        ),
        ("const f = (n) => f(n + 1) + 1; return f(0);", "stack limit"),
        (
            "for (let i = 0; i < 10000; i++) { try { await tools.ping({}); } catch (e) {} } return 1;",
            "more than 100 tool calls",
        ),
        ("return 'x'.repeat(5000);", "over its limit of 1000"),
        ("throw new Error('my own failure');", "my own failure"),
    ];
    for (script, expected) in cases {
        let answer = run(&code, script).await;
        assert!(answer.is_error, "{script}: {}", answer.content);
        assert!(
            answer.content.contains(expected),
            "{script}: {}",
            answer.content
        );
        // Usable after each.
        let again = run(&code, "return (await tools.ping({})) + '!';").await;
        assert_eq!(again.content, "pong!", "after {script}");
    }
    // The 10,000-call loop ran exactly the limit's worth of calls.
    let pings = ran.lock().unwrap().iter().filter(|r| *r == "ping").count();
    assert_eq!(pings, 100 + cases.len());
}

#[tokio::test]
async fn a_script_reaches_no_file_socket_environment_or_clock() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let answer = run(
        &code,
        r#"
        const tries = {
            require: () => require("fs").readFileSync("/etc/passwd"),
            fetch: () => fetch("http://127.0.0.1:1/"),
            socket: () => new WebSocket("ws://127.0.0.1:1/"),
            xhr: () => new XMLHttpRequest(),
            std: () => std.loadFile("/etc/passwd"),
            os: () => os.getenv("HOME"),
            process: () => process.env.HOME,
            now: () => Date.now(),
            date: () => new Date(),
            date_call: () => Date(),
        };
        const out = {};
        for (const [name, attempt] of Object.entries(tries)) {
            try { attempt(); out[name] = "allowed"; } catch (e) { out[name] = String(e.message || e); }
        }
        try { await import("fs"); out.import = "allowed"; } catch (e) { out.import = String(e.message || e); }
        out.fixed_date = new Date(0).toISOString();
        return out;
    "#,
    )
    .await;
    assert!(!answer.is_error, "{}", answer.content);
    let out: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&answer.content).unwrap();
    for (name, result) in &out {
        if name == "fixed_date" {
            continue;
        }
        assert_ne!(result, "allowed", "{name} was reachable: {out:?}");
    }
    assert!(out["now"].as_str().unwrap().contains("no clock"), "{out:?}");
    assert!(
        out["date"].as_str().unwrap().contains("no clock"),
        "{out:?}"
    );
    // A date the script is given still works.
    assert_eq!(out["fixed_date"], "1970-01-01T00:00:00.000Z");
}

#[tokio::test]
async fn run_code_declares_every_tool_in_typescript_and_logs_come_back() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let specs = code.specifications(&Context::new());
    assert_eq!(specs.len(), 1);
    let description = &specs[0].description;
    for expected in [
        "declare const tools: {",
        "/** An account's balance in cents. */",
        "balance(input: { /** The account's id, `acc_` and digits. */ account: string; }): unknown;",
        "transfer(input: { from: string; to: string; /** Cents, positive. */ cents: number; }): unknown;",
        "ping(input?: {}): unknown;",
    ] {
        assert!(description.contains(expected), "{expected}\n{description}");
    }
    let answer = run(
        &code,
        "console.log('checking', 2); return await tools.ping();",
    )
    .await;
    assert_eq!(answer.content, "checking 2\npong");
    // A name the box does not have fails as a direct call would, and
    // the bad input to run_code itself is an argument error.
    let answer = run(&code, "return await tools.nope({});").await;
    assert!(
        answer.is_error && answer.content.contains("unknown tool `nope`"),
        "{}",
        answer.content
    );
    let bad = code
        .call(
            RUN_CODE,
            &json!({"script": "1"}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert!(
        bad.is_error && bad.content.contains("code"),
        "{}",
        bad.content
    );
}

#[tokio::test]
async fn deferred_tools_are_found_with_search_inside_the_sandbox_and_called() {
    let tools = FnToolBox::new([
        tool_fn("ping", "Answers pong.", |_: Nothing| async move { "pong" }).read_only(),
        tool_fn(
            "refund_order",
            "Refunds a customer's order in full, back to the card it was paid with.",
            |a: Account| async move { format!("refunded {}", a.account) },
        )
        .defer(),
    ])
    .unwrap();
    let code = CodeMode::new(tools);
    let description = code.specifications(&Context::new()).remove(0).description;
    assert!(
        !description.contains("refund_order("),
        "a deferred tool is not declared up front: {description}"
    );
    assert!(
        description.contains("declare function search(query: string)"),
        "{description}"
    );
    let answer = run_on(
        &code,
        r#"
        const hits = search("refund a customer's order");
        const hit = hits.find((h) => h.name === "refund_order");
        if (!hit) return "not found: " + JSON.stringify(hits);
        const said = await tools[hit.name]({ account: "ord_7" });
        return [hit.declaration, said];
    "#,
    )
    .await;
    let out: Vec<String> = serde_json::from_str(&answer.content).expect(&answer.content);
    assert!(
        out[0].contains("refund_order(input: {") && out[0].contains("Refunds a customer's order"),
        "{out:?}"
    );
    assert_eq!(out[1], "refunded ord_7");
}

#[tokio::test]
async fn running_out_of_memory_reads_as_the_memory_limit_whatever_quickjs_throws() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran)).limits(Limits {
        time: Duration::from_secs(30),
        memory: 4 << 20,
        ..Limits::default()
    });
    let limit = "the run used more than its memory limit of 4194304 bytes: keep less in memory";
    // Out of memory as it makes its error, QuickJS throws `null`: it read
    // "the script threw: null".
    for script in [
        "const a = []; for (;;) a.push({ x: [1, 2, 3] });",
        "const a = []; for (;;) a.push(new Array(1000).fill(1));",
    ] {
        let answer = run(&code, script).await;
        assert!(answer.is_error, "{script}");
        assert_eq!(answer.content, limit, "{script}");
    }
    // A script that writes `null` may have thrown it: both are said.
    let answer = run(
        &code,
        "const a = [null]; for (;;) a.push({ x: [1, 2, 3] });",
    )
    .await;
    assert!(
        answer.content == limit
            || answer.content
                == "the script threw: null (unless the script threw it, the run used more than its memory limit of 4194304 bytes: keep less in memory)",
        "{}",
        answer.content
    );
}

#[tokio::test]
async fn search_takes_a_query_and_says_so_otherwise() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let cases = [
        ("search()", "got undefined"),
        ("search(42)", "got number"),
        ("search(null)", "got null"),
        ("search({ query: 'send email' })", "got object"),
        ("search(['send email'])", "got an array"),
        (
            "search('')",
            "the query is empty: say what the tool should do in a few words",
        ),
        (
            "search('   ')",
            "the query is empty: say what the tool should do in a few words",
        ),
    ];
    for (call, expected) in cases {
        let script = format!("try {{ {call}; return 'ran'; }} catch (e) {{ return e.message; }}");
        let answer = run(&code, &script).await;
        assert!(
            answer.content.contains(expected),
            "{call}: {}",
            answer.content
        );
    }
    let answer = run(&code, "try { search(42); } catch (e) { return e.message; }").await;
    assert_eq!(
        answer.content,
        "search(query) takes a string, what the tool should do in a few words (search(\"refund an order\")); got number"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_catalogue_s_search_index_is_built_within_the_time_limit_and_kept() {
    // 400 deferred tools of 3,000 words each: building their index takes
    // longer than the run's limit, and blocked the run past it.
    let tools = FnToolBox::new((0..400).map(|i| {
        let mut words: Vec<String> = (0..3_000)
            .map(|j| format!("w{}", (i * 7 + j * 13) % 3_000))
            .collect();
        words.push(format!("marker{i}"));
        tool_fn(
            format!("tool_{i}"),
            words.join(" "),
            |_: Nothing| async move { "done" },
        )
        .defer()
    }))
    .unwrap();
    let limit = Duration::from_millis(300);
    let code = CodeMode::new(tools).limits(Limits {
        time: limit,
        ..Limits::default()
    });
    let started = std::time::Instant::now();
    let answer = run_on(&code, "return search('marker7').map((h) => h.name);").await;
    let took = started.elapsed();
    // The limit, its grace (half of it), and a loaded machine's slack.
    assert!(took < limit * 2 + Duration::from_millis(300), "{took:?}");
    if answer.is_error {
        assert_eq!(
            answer.content,
            "the run took longer than its time limit of 300 ms: search() waited for its index of the box's 400 tools, which is still being built; run it again shortly"
        );
    }
    // The index, once built, is kept: later runs over the same tools
    // find at once.
    let mut found = None;
    for _ in 0..300 {
        let answer = run_on(&code, "return search('marker7').map((h) => h.name);").await;
        if !answer.is_error {
            found = Some(answer.content);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let found = found.expect("the index was built");
    assert!(found.starts_with(r#"["tool_7""#), "{found}");
}

async fn run_on<B: ToolBox>(code: &CodeMode<B>, script: &str) -> ToolResponse {
    let arguments = json!({ "code": script });
    code.call(RUN_CODE, &arguments, &Context::new(), &ToolHandler::empty())
        .await
}

/// The sandbox threads alive in this process (Linux names them in
/// `/proc`; elsewhere this reads none).
fn sandbox_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("toolbox-code"))
        .count()
}

/// The sandbox threads still alive once they had 5 s to end.
async fn sandbox_threads_after_a_while() -> usize {
    let mut left = sandbox_threads();
    for _ in 0..50 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = sandbox_threads();
    }
    left
}

#[tokio::test]
async fn a_builtin_that_never_polls_cannot_outlive_the_time_limit() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let limit = Duration::from_millis(1_000);
    let code = CodeMode::new(bank(&ran)).limits(Limits {
        time: limit,
        ..Limits::default()
    });
    for script in [
        "return Array.prototype.join.call({ length: 2 ** 53 - 1 }, '');",
        "return Array.prototype.reverse.call({ length: 2 ** 53 - 1 });",
        "return Array.prototype.join.call({ length: 3e8 }, '');",
        "return [].concat({ length: 2 ** 32 - 2, [Symbol.isConcatSpreadable]: true }).length;",
        "return new Array(2 ** 32 - 1).join(',').length;",
        "return Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1);",
        "return Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1);",
        "return new Set(new Array(2 ** 32 - 1)).size;",
        "return /(a+)+$/.test('a'.repeat(40) + 'b');",
        "while (true) { try { for (;;) {} } catch (e) {} }",
        "return Array.prototype.values.call({ length: 2 ** 53 - 1 }).drop(2 ** 53 - 2).next();",
        "return new Set([undefined]).isSupersetOf({ size: 0, has() { return true; }, keys() { return Array.prototype.values.call({ length: 2 ** 53 - 1 }); } });",
        // A job queue that refills itself: each job too short to be
        // interrupted.
        "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});",
        "const f = () => { Promise.resolve().then(f); let s = 0; for (let i = 0; i < 1000; i++) s += i; return s; }; f(); await new Promise(() => {});",
    ] {
        let started = std::time::Instant::now();
        let answer = run(&code, script).await;
        let took = started.elapsed();
        assert!(answer.is_error, "{script}: {}", answer.content);
        assert!(took < limit * 2, "{script} answered after {took:?}");
        assert!(
            answer.content.contains("time limit of 1000 ms")
                || answer.content.contains("elements a run may walk"),
            "{script}: {}",
            answer.content
        );
    }
    // No sandbox thread is left spinning.
    assert_eq!(
        sandbox_threads_after_a_while().await,
        0,
        "sandbox threads still alive"
    );
    // The box is still usable.
    assert_eq!(run(&code, "return 1 + 1;").await.content, "2");
}

#[tokio::test]
async fn a_length_that_changes_between_reads_cannot_outlive_the_time_limit() {
    // Each builtin's guard read a length, then the builtin read it again:
    // a getter (or a valueOf) answering 0, then 2^53 - 1, kept a thread
    // walking holes in C long after the run's answer.
    let ran = Arc::new(Mutex::new(Vec::new()));
    let limit = Duration::from_millis(1_000);
    let code = CodeMode::new(bank(&ran)).limits(Limits {
        time: limit,
        ..Limits::default()
    });
    let cases = [
        (
            "let n = 0; return Array.prototype.join.call({ get length() { return n++ ? 2 ** 53 - 1 : 0; } }, '');",
            "",
        ),
        (
            "let n = 0; return Array.prototype.reverse.call({ length: { valueOf() { return n++ ? 2 ** 53 - 1 : 0; } } }).length;",
            "{}",
        ),
        (
            "let n = 0; const o = { get length() { return n++ ? 2 ** 53 - 1 : 2; }, 0: 'a', 1: 'b' }; return Array.prototype.sort.call(o)[1];",
            "b",
        ),
        (
            "let n = 0; const o = { length: 2 ** 53 - 2, get [Symbol.isConcatSpreadable]() { return n++ > 0; } }; return [].concat(o).length;",
            "1",
        ),
        (
            "let n = 0; return Array.prototype.values.call({ length: 2 ** 53 - 1 }).drop({ valueOf() { return n++ ? 2 ** 53 - 2 : 0; } }).next().done;",
            "false",
        ),
        (
            "const inner = []; inner.length = 2 ** 32 - 1; return [Array(64).fill(inner)].flat(2).length;",
            "the script threw: RangeError: Array.prototype.flat: a length of 4294967295 is past the 4194304 elements a run may walk",
        ),
        (
            "const inner = []; inner.length = 2 ** 32 - 1; return [1].flatMap(() => inner).length;",
            "the script threw: RangeError: Array.prototype.flat: a length of 4294967295 is past the 4194304 elements a run may walk",
        ),
        ("return typeof Proxy;", "undefined"),
        // An array's own flag still says whether it spreads.
        (
            "const a = [1, 2]; a[Symbol.isConcatSpreadable] = false; return [0].concat(a).length;",
            "2",
        ),
        (
            "try { Object.defineProperty(Array.prototype, Symbol.isConcatSpreadable, { get() { return true; } }); } catch (e) { return e.name; }",
            "TypeError",
        ),
        (
            "const b = [1], a = [0]; a.constructor = { [Symbol.species]: function () { b.length = 2 ** 32 - 1; return {}; } }; return a.concat(b).length;",
            "2",
        ),
        (
            "const b = [1], c = [2]; Object.defineProperty(b, Symbol.isConcatSpreadable, { get() { c.length = 2 ** 32 - 1; return true; } }); return [0].concat(b, c).length;",
            "the script threw: RangeError: Array.prototype.concat: a length of 4294967297 is past the 4194304 elements a run may walk",
        ),
        // The usual still holds.
        ("return [[1, [2]], [3]].flat(2).concat([4], 5, [[6]]);", "[1,2,3,4,5,[6]]"),
        ("return [1, 2].flatMap((x) => [x, x * 10]);", "[1,10,2,20]"),
        (
            "const o = { length: 3, 0: 'c', 1: 'a', 2: 'b' }; Array.prototype.sort.call(o); return [o[0], o[1], o[2], Array.prototype.join.call(o, '-')];",
            "[\"a\",\"b\",\"c\",\"a-b-c\"]",
        ),
    ];
    for (script, expected) in cases {
        let started = std::time::Instant::now();
        let answer = run(&code, script).await;
        let took = started.elapsed();
        assert!(took < limit * 2, "{script} answered after {took:?}");
        assert_eq!(
            answer.content.lines().next().unwrap_or_default(),
            expected,
            "{script}"
        );
    }
    assert_eq!(
        sandbox_threads_after_a_while().await,
        0,
        "sandbox threads still alive"
    );
}

#[tokio::test]
async fn what_the_prelude_reads_again_cannot_be_replaced_by_the_script() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let cases = [
        (
            r"delete String.prototype.toWellFormed; return 'x\uD800y';",
            "x\u{fffd}y",
        ),
        (
            r"String.prototype.toWellFormed = function () { return String(this); }; throw 'x\uD800y';",
            "the script threw: x\u{fffd}y",
        ),
        (
            r"Object.keys = () => []; return { ['k\uD800']: 1 };",
            "{\"k\u{fffd}\":1}",
        ),
        (
            // A successful call is not read as a refusal.
            "Object.prototype.error = 'not approved: fake'; return await tools.ping({});",
            "pong",
        ),
        (
            "Array.prototype[Symbol.iterator] = function* () { yield 'close_account'; yield '{}'; }; return await tools.ping({});",
            "pong",
        ),
    ];
    for (script, expected) in cases {
        let answer = run(&code, script).await;
        assert_eq!(answer.content, expected, "{script}");
    }
    assert!(
        !ran.lock().unwrap().iter().any(|r| r.starts_with("close")),
        "{:?}",
        ran.lock().unwrap()
    );
}

#[tokio::test]
async fn a_walk_past_the_heap_is_refused_with_its_own_text() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let answer = run(
        &code,
        "return Array.prototype.join.call({ length: 2 ** 53 - 1 }, '');",
    )
    .await;
    assert_eq!(
        answer.content.lines().next().unwrap(),
        "the script threw: RangeError: Array.prototype.join: a length of 9007199254740991 is past the 4194304 elements a run may walk"
    );
    // Real arrays are walked as before.
    let answer = run(&code, "return [3, 1, 2].sort().reverse().join('-');").await;
    assert_eq!(answer.content, "3-2-1");
}

#[tokio::test]
async fn what_a_failed_script_says_is_javascript_bounded_and_its_own() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran)).limits(Limits {
        output: 1_000,
        ..Limits::default()
    });
    let exact = [
        ("throw {code: 42};", r#"the script threw: {"code":42}"#),
        ("throw 42;", "the script threw: 42"),
        (
            "throw null;",
            "the script threw: null (unless the script threw it, the run used more than its memory limit of 67108864 bytes: keep less in memory)",
        ),
        ("throw undefined;", "the script threw: undefined"),
        ("throw false;", "the script threw: false"),
        ("throw 'plain words';", "the script threw: plain words"),
        ("throw 12n;", "the script threw: 12n"),
        (
            "return () => 1;",
            "the script returned a function, which has no JSON form: return data (an object, an array, a string, a number)",
        ),
        (
            "await new Promise(() => {});",
            "the script's promise never settled: it awaited something that nothing resolves; await tool calls and promises the script itself resolves",
        ),
    ];
    for (script, expected) in exact {
        let answer = run(&code, script).await;
        assert!(answer.is_error, "{script}");
        assert_eq!(answer.content, expected, "{script}");
    }
    for script in [
        "throw new Error('x'.repeat(5e6));",
        "throw 'x'.repeat(5e6);",
        "return Promise.reject(new Error('y'.repeat(5e6)));",
        "throw {big: 'z'.repeat(5e6)};",
    ] {
        let answer = run(&code, script).await;
        assert!(answer.is_error, "{script}");
        assert!(
            answer.content.len() <= 1_000,
            "{script}: {} bytes",
            answer.content.len()
        );
        assert!(
            answer.content.contains("more bytes)"),
            "{script}: {}",
            answer.content
        );
    }
    // No Rust forms, addresses or binding texts anywhere.
    for script in [
        "throw {code: 42};",
        "throw Symbol('s');",
        "return () => 1;",
        "throw function named() {};",
    ] {
        let answer = run(&code, script).await;
        for leak in [
            "Object(0x",
            "Int(",
            "Null\"",
            "Undefined\"",
            "Bool(",
            "Error converting",
            "dead lock",
        ] {
            assert!(
                !answer.content.contains(leak),
                "{script}: {}",
                answer.content
            );
        }
    }
}

#[tokio::test]
async fn a_scripts_errors_carry_its_own_line_numbers_only() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let answer = run(&code, "const a = 1;\nconst b = 2;\nnull.boom;\n").await;
    assert!(
        answer.content.starts_with("the script threw: TypeError"),
        "{}",
        answer.content
    );
    assert!(answer.content.contains("script:3:"), "{}", answer.content);
    assert!(!answer.content.contains("script:4:"), "{}", answer.content);
    // A tool's failure points at the script's line, not the sandbox's own code.
    let answer = run(&code, "\n\nawait tools.balance({});").await;
    assert!(answer.content.contains("script:3:"), "{}", answer.content);
    assert!(!answer.content.contains("toolbox:"), "{}", answer.content);
    // Columns of the first line are the script's own.
    let answer = run(&code, "null.boom;").await;
    assert!(answer.content.contains("script:1:"), "{}", answer.content);
    let answer = run(&code, "const x = (;").await;
    assert!(
        answer.content.starts_with("the script threw: SyntaxError"),
        "{}",
        answer.content
    );
    assert!(answer.content.contains("script:1:"), "{}", answer.content);
}

#[tokio::test]
async fn a_misspelled_tool_is_answered_with_the_closest_names() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let answer = run(&code, "return await tools.balanse({ account: 'acc_1' });").await;
    assert!(answer.is_error);
    assert!(answer.content.contains("balanse"), "{}", answer.content);
    assert!(answer.content.contains("`balance`"), "{}", answer.content);
    // Caught like any failed call, and not counted as a call.
    let answer = run(
        &code,
        "try { await tools.pnig({}); } catch (e) { return [e.message.includes('ping'), 'then' in tools, typeof tools.then]; }",
    )
    .await;
    assert_eq!(answer.content, r#"[true,false,"undefined"]"#);
    assert!(ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn no_clock_is_reachable_from_a_script() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    for script in [
        "return performance.now();",
        "return globalThis.performance.timeOrigin;",
        "return new Date(0).constructor.now();",
        "return Object.getPrototypeOf(new Date(0)).constructor.now();",
        "return new (new Date(0).constructor)().getTime();",
        "class D extends Date {}; return new D().getTime();",
        "return Reflect.construct(Date, []).getTime();",
        "return Date();",
    ] {
        let answer = run(&code, script).await;
        assert!(answer.is_error, "{script} gave {}", answer.content);
    }
    let answer = run(
        &code,
        "class D extends Date {}; return new D(0).toISOString();",
    )
    .await;
    assert_eq!(answer.content, "1970-01-01T00:00:00.000Z");
}

#[tokio::test]
async fn arguments_from_a_script_are_read_as_a_direct_calls_are() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let deep = "let pad = {}; for (let i = 0; i < 200; i++) pad = { pad };";
    let answer = run(
        &code,
        &format!("{deep} return await tools.balance({{ account: 'acc_1', pad }});"),
    )
    .await;
    assert!(answer.is_error, "{}", answer.content);
    assert!(
        answer
            .content
            .contains("invalid arguments: the arguments nest deeper than 128 levels"),
        "{}",
        answer.content
    );
    // The direct call says the same.
    let mut pad = json!({});
    for _ in 0..200 {
        pad = json!({ "pad": pad });
    }
    let direct = bank(&ran)
        .call(
            "balance",
            &json!({"account": "acc_1", "pad": pad}),
            &Context::new(),
            &ToolHandler::empty(),
        )
        .await;
    assert!(direct
        .content
        .contains("the arguments nest deeper than 128 levels"));
    assert!(ran.lock().unwrap().is_empty(), "the tool never ran");
    // Data a tool cannot take is refused in the script.
    let answer = run(&code, "return await tools.ping(() => 1);").await;
    assert!(
        answer
            .content
            .contains("the input of tools.ping must be JSON data"),
        "{}",
        answer.content
    );
}

#[tokio::test]
async fn search_in_a_script_is_bounded() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    let answer = run(&code, "return search('x'.repeat(4e5));").await;
    assert!(
        answer
            .content
            .contains("the query is 400000 bytes; a search reads at most 1024"),
        "{}",
        answer.content
    );
    let answer = run(&code, "return search('ab '.repeat(1e6));").await;
    assert!(
        answer.content.contains("a search reads at most"),
        "{}",
        answer.content
    );
    let answer = run(
        &code,
        "return search('balance of an account').map((h) => h.name);",
    )
    .await;
    assert!(answer.content.contains("balance"), "{}", answer.content);
}

#[tokio::test]
async fn a_deferred_run_is_resumed_once_approved_without_running_anything_twice() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let (seen, handler) = observed();
    let code = CodeMode::new(bank(&ran))
        .handler(handler)
        .approval(|request| async move {
            if request.destructive() {
                Decision::Defer
            } else {
                Decision::Approve
            }
        });
    let script = r#"
        const before = await tools.balance({ account: "acc_1" });
        const moved = await tools.transfer({ from: "acc_1", to: "acc_2", cents: before.cents });
        const after = await tools.balance({ account: "acc_2" });
        return { moved, after: after.cents };
    "#;
    let answer = run(&code, script).await;
    assert!(
        answer
            .content
            .contains("waits for the application's approval"),
        "{}",
        answer.content
    );
    assert_eq!(*ran.lock().unwrap(), ["balance acc_1"].map(String::from));

    // Still waiting: nothing runs.
    let waiting = code
        .resume("call_run", Decision::Defer, &Context::new())
        .await;
    assert_eq!(
        waiting.unwrap_err().model_message(),
        "the run still waits for the application's approval of `transfer`"
    );
    // Approved: the first balance is answered from the record, the
    // transfer runs once, the rest as usual.
    let resumed = code
        .resume("call_run", Decision::Approve, &Context::new())
        .await
        .unwrap();
    assert_eq!(
        resumed.content,
        r#"{"moved":"moved 12500 from acc_1 to acc_2","after":12500}"#
    );
    assert_eq!(
        *ran.lock().unwrap(),
        ["balance acc_1", "transfer 12500", "balance acc_2"].map(String::from)
    );
    assert_eq!(
        seen.starts.load(Ordering::SeqCst),
        seen.ends.load(Ordering::SeqCst)
    );
    // Once resumed, the run is gone.
    let again = code
        .resume("call_run", Decision::Approve, &Context::new())
        .await;
    assert_eq!(
        again.unwrap_err().model_message(),
        "no run `call_run` waits for approval"
    );

    // Rejected: the script reads the refusal as it would the hook's.
    let answer = run(
        &code,
        "try { await tools.close_account({ account: 'acc_9' }); } catch (e) { return 'refused: ' + e.message; }",
    )
    .await;
    assert!(answer.is_error);
    let resumed = code
        .resume(
            "call_run",
            Decision::Reject {
                reason: "accounts are closed by a person".into(),
            },
            &Context::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        resumed.content,
        "refused: the call was not approved: accounts are closed by a person"
    );
    assert!(!ran.lock().unwrap().iter().any(|r| r.starts_with("close")));
}

#[tokio::test]
async fn a_resumed_script_that_takes_another_path_is_stopped() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran)).approval(|request| async move {
        if request.destructive() {
            Decision::Defer
        } else {
            Decision::Approve
        }
    });
    // The account depends on a random draw: the resumed run asks another.
    let script = r#"
        const account = Math.random() < 2 ? "acc_" + Math.floor(Math.random() * 1e9) : "x";
        await tools.balance({ account });
        await tools.transfer({ from: account, to: "b", cents: 1 });
        return "done";
    "#;
    let answer = run(&code, script).await;
    assert!(answer.is_error);
    let resumed = code
        .resume("call_run", Decision::Approve, &Context::new())
        .await
        .unwrap_err()
        .model_message();
    assert!(
        resumed.starts_with(
            "the script took another path when it was resumed: its call 1 was `balance`"
        ),
        "{resumed}"
    );
    assert!(!ran
        .lock()
        .unwrap()
        .iter()
        .any(|r| r.starts_with("transfer")));
}

#[tokio::test]
async fn math_random_tells_no_time_and_lone_surrogates_read_as_words() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    // QuickJS seeds Math.random from the time of day: one draw, inverted
    // (xorshift64*), gave the wall clock to the millisecond.
    let recover = r#"
        const M = 0x2545F4914F6CDD1Dn, MASK = (1n << 64n) - 1n;
        let inv = M; for (let i = 0; i < 6; i++) inv = (inv * (2n - M * inv)) & MASK;
        const unR = (x, k) => { let y = x; for (let i = 0; i < 6; i++) y = x ^ (y >> k); return y; };
        const unL = (x, k) => { let y = x; for (let i = 0; i < 6; i++) y = (x ^ (y << k)) & MASK; return y; };
        const unxs = (x) => unR(unL(unR(x, 27n), 25n), 12n);
        const top = BigInt(Math.floor(Math.random() * 2 ** 52)); const found = [];
        for (let lo = 0n; lo < 4096n; lo++) {
          const s0 = unxs(unxs((((top << 12n) | lo) * inv) & MASK));
          if (s0 > 1600000000000000n && s0 < 2100000000000000n) found.push(Number(s0 / 1000n));
        }
        return found;
    "#;
    let answer = run(&code, recover).await;
    let found: Vec<f64> = serde_json::from_str(&answer.content).expect(&answer.content);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64;
    assert!(
        found.iter().all(|ms| (ms - now).abs() > 86_400_000.0),
        "the clock leaked: {found:?} against {now}"
    );
    let answer = run(
        &code,
        "const a = Math.random(), b = Math.random(); return a !== b && a >= 0 && a < 1;",
    )
    .await;
    assert_eq!(answer.content, "true");

    let words = "tool names, arguments and queries must be well-formed Unicode text";
    let answer = run(
        &code,
        r"try { tools['\uD800']({}); } catch (e) { return e.message; }",
    )
    .await;
    assert!(answer.content.starts_with(words), "{}", answer.content);
    let answer = run(
        &code,
        r"try { search('\uD800'); } catch (e) { return e.message; }",
    )
    .await;
    assert!(answer.content.starts_with(words), "{}", answer.content);
    // Arguments the script gives are read as a direct call's text would be.
    let answer = run(
        &code,
        r"try { await tools.ping({ a: '\uD800' }); return 'ran'; } catch (e) { return e.message; }",
    )
    .await;
    assert!(
        !answer.content.contains("nest deeper"),
        "{}",
        answer.content
    );
    // ... and a lone surrogate in them is named where it is.
    let answer = run(
        &code,
        r"try { await tools.balance({ account: '\uD800' }); return 'ran'; } catch (e) { return e.message; }",
    )
    .await;
    assert!(
        answer.content.contains("invalid arguments at `account`")
            && answer.content.contains("must be well-formed Unicode text"),
        "{}",
        answer.content
    );
    // A returned or thrown lone surrogate still reads as text.
    let answer = run(&code, r"return 'x\uD800y';").await;
    assert!(!answer.is_error, "{}", answer.content);
    assert_eq!(answer.content, "x\u{fffd}y");
    let answer = run(&code, r"throw 'x\uD800y';").await;
    assert_eq!(answer.content, "the script threw: x\u{fffd}y");
    // In an object's values and keys too, and in what it logs.
    let answer = run(
        &code,
        r"console.log({ ['k\uD83D']: 1 }); return { k: '\uD83D', list: ['a\uDC00'] };",
    )
    .await;
    assert!(!answer.is_error, "{}", answer.content);
    assert_eq!(
        answer.content,
        "{\"k\u{fffd}\":1}\n{\"k\":\"\u{fffd}\",\"list\":[\"a\u{fffd}\"]}"
    );
}

#[tokio::test]
async fn arguments_at_the_depth_limit_read_as_a_direct_calls_do() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let code = CodeMode::new(bank(&ran));
    for depth in [126usize, 127, 128, 129, 130] {
        let script = format!(
            "let a = {{}}; for (let i = 1; i < {depth}; i++) a = {{ a }}; try {{ return await tools.ping(a); }} catch (e) {{ return e.message; }}"
        );
        let via_script = run(&code, &script).await.content;
        let mut nested = json!({});
        for _ in 1..depth {
            nested = json!({ "a": nested });
        }
        let direct = bank(&ran)
            .call("ping", &nested, &Context::new(), &ToolHandler::empty())
            .await
            .content;
        assert_eq!(via_script, direct, "depth {depth}");
    }
}
