//! The sandbox a [`CodeMode`](super::CodeMode) run's script lives in: its
//! own thread with a QuickJS runtime under the run's [`Limits`], the
//! prelude that gives the script `tools`, `search` and `console` and takes
//! away the clock, the requests the script sends the run, and the words a
//! failed script ends with.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc as sync_mpsc, Arc};
use std::time::{Duration, Instant};

use rquickjs::Function;
use serde_json::json;
use tokio::sync::mpsc;

use toolbox_catalog::internal::clip;

/// What one run may use. Each limit, once reached, ends the run with an
/// error naming it; the box stays usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall time of the whole run, tool calls included (default 10 s).
    pub time: Duration,
    /// Bytes the script's heap may hold (default 64 MiB).
    pub memory: usize,
    /// Bytes of the interpreter's stack (default 512 KiB): deep recursion
    /// ends as a stack overflow, not a crash.
    pub stack: usize,
    /// Tool calls per run (default 100).
    pub calls: usize,
    /// Bytes of the run's answer: its returned value and its printed
    /// lines (default 64 KiB).
    pub output: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: Duration::from_secs(10),
            memory: 64 << 20,
            stack: 512 << 10,
            calls: 100,
            output: 64 << 10,
        }
    }
}

/// What the model reads when a run passes its time limit.
pub(super) fn time_limit(limits: Limits) -> String {
    format!(
        "the run took longer than its time limit of {} ms: do less in one run",
        limits.time.as_millis()
    )
}

/// `text` cut to at most `max` bytes (at a character boundary), saying how
/// much was left out.
pub(super) fn clip_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    // Room for the note, whose count has at most as many digits as the length.
    let note = format!(" … ({} more bytes)", text.len());
    let kept = clip(text, max.saturating_sub(note.len() + 8));
    format!("{kept} … ({} more bytes)", text.len() - kept.len())
}

/// What the script's thread asks of the run.
pub(super) enum Request {
    Call {
        name: String,
        arguments: String,
        reply: sync_mpsc::SyncSender<Result<String, String>>,
    },
    Search {
        query: String,
        reply: sync_mpsc::SyncSender<Result<String, String>>,
    },
    Done(Result<String, String>),
}

/// One script, run on its own thread.
pub(super) struct Script {
    pub(super) code: String,
    pub(super) names: Vec<String>,
    pub(super) limits: Limits,
    pub(super) deadline: Instant,
    pub(super) requests: mpsc::UnboundedSender<Request>,
    pub(super) stop: Arc<AtomicBool>,
}

/// The file name the script's own frames carry in a stack.
const SCRIPT_FILE: &str = "script";

/// What comes before the script on its first line: its line numbers are
/// its own, and its first line's columns are shifted back by this much.
const WRAP_OPEN: &str = "(async () => {";

/// Set up before the model's code runs: the `tools` object (a misspelled
/// tool answers with the closest names), `search`, `console`, no clock,
/// builtins that walk an array-like's length bounded by the memory limit
/// (QuickJS does not interrupt them), and `__describe`, which shows a
/// thrown value as JavaScript would.
const PRELUDE: &str = r#"
"use strict";
(() => {
  const call = globalThis.__call, find = globalThis.__search, names = JSON.parse(globalThis.__names);
  const maxWalk = globalThis.__walk, wrapOpen = globalThis.__wrap, seed = JSON.parse(globalThis.__seed);
  delete globalThis.__call; delete globalThis.__search; delete globalThis.__names;
  delete globalThis.__walk; delete globalThis.__wrap; delete globalThis.__seed;
  const parse = JSON.parse, stringify = JSON.stringify, apply = Reflect.apply, get = Reflect.get;
  const define = Object.defineProperty, isArray = Array.isArray, spreadable = Symbol.isConcatSpreadable;
  // What the prelude calls again after the script has run, kept before it
  // can replace them.
  const keysOf = Object.keys, hasOwn = Object.hasOwn, toWellFormed = String.prototype.toWellFormed;
  const unicode = () => new TypeError("tool names, arguments and queries must be well-formed Unicode text: a lone surrogate such as \\uD800 is not");
  // The host's answer; a text it cannot take (a lone surrogate) is refused
  // here, in words, not with the binding's.
  const ask = (host) => { try { return host(); } catch (_) { throw unicode(); } };
  const wellFormed = (text) => (typeof toWellFormed === "function" ? apply(toWellFormed, text, []) : text);
  // JSON whose strings and keys are well-formed: JSON.stringify writes a
  // lone surrogate as a `\uD83D` escape, which the host cannot read.
  const clean = (_, v) => {
    if (typeof v === "string") return wellFormed(v);
    if (v !== null && typeof v === "object" && !isArray(v)) {
      const keys = keysOf(v);
      for (let i = 0; i < keys.length; i++) {
        if (wellFormed(keys[i]) === keys[i]) continue;
        const copy = {};
        for (let j = 0; j < keys.length; j++) copy[wellFormed(keys[j])] = v[keys[j]];
        return copy;
      }
    }
    return v;
  };
  const toJson = (v) => stringify(v, clean);
  const invoke = (name, input) => {
    const text = stringify(input === undefined ? {} : input);
    if (typeof text !== "string") throw new TypeError(`the input of tools.${name} must be JSON data: an object of arguments`);
    const answer = parse(ask(() => call(name, text)));
    if (hasOwn(answer, "error")) throw new Error(answer.error);
    return answer.ok;
  };
  const table = {};
  for (const name of names) table[name] = (input) => invoke(name, input);
  Object.freeze(table);
  globalThis.tools = new Proxy(table, {
    get(target, key, receiver) {
      if (typeof key !== "string" || key in target || key === "then" || key === "toJSON") return get(target, key, receiver);
      return (input) => invoke(key, input);
    },
  });
  globalThis.search = (query) => {
    if (typeof query !== "string") {
      const got = query === null ? "null" : isArray(query) ? "an array" : typeof query;
      throw new TypeError(`search(query) takes a string, what the tool should do in a few words (search("refund an order")); got ${got}`);
    }
    const answer = parse(ask(() => find(query)));
    if (hasOwn(answer, "error")) throw new Error(answer.error);
    return answer.ok;
  };
  const lines = [];
  const show = (v) => (typeof v === "string" ? v : toJson(v));
  const log = (...values) => { lines.push(values.map(show).join(" ")); };
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
  const noClock = () => { throw new Error("the sandbox has no clock: pass the time in as an argument, or ask a tool"); };
  const RealDate = Date;
  const NoClockDate = new Proxy(RealDate, {
    construct(target, args, newTarget) { if (args.length === 0) noClock(); return Reflect.construct(target, args, newTarget === NoClockDate ? target : newTarget); },
    apply() { noClock(); },
  });
  define(RealDate, "now", { value: noClock, writable: false, configurable: false });
  define(RealDate.prototype, "constructor", { value: NoClockDate, writable: true, configurable: true });
  globalThis.Date = NoClockDate;
  delete globalThis.performance;
  // Arrays are made by `Array` alone: a species a script sets could run
  // in the middle of a builtin.
  define(Array, Symbol.species, { get: function () { return this; }, configurable: false });
  // Nor does an array say whether it spreads through a getter on its
  // prototype (a value there runs nothing; the guard decides for an
  // array's own flag).
  define(Array.prototype, spreadable, { value: undefined, writable: true, configurable: false });
  // No proxies for scripts: a proxy of an array passes for one
  // (`Array.isArray`) and could tell a guard one length and a builtin
  // another. The prelude's own (`tools`, `Date`) are made above.
  delete globalThis.Proxy;
  const lengthOf = (o) => {
    if (o === null || o === undefined) return 0;
    const n = Math.floor(Number(Object(o).length));
    return n > 0 ? Math.min(n, 2 ** 53 - 1) : 0;
  };
  const walk = (what, length) => {
    if (length > maxWalk) throw new RangeError(`${what}: a length of ${length} is past the ${maxWalk} elements a run may walk`);
  };
  // A real array's length is its own number, read by the builtin as the
  // guard read it. An array-like's length (a getter, an object's valueOf)
  // could say one thing to the guard and another to the builtin: its
  // elements are copied in script code (where the interrupt reaches),
  // its length read once, and the builtin runs on the copy, written back
  // for those that change it.
  const changes = new Set(["reverse", "fill", "copyWithin", "sort", "shift", "unshift", "splice"]);
  const resizes = new Set(["shift", "unshift", "splice"]);
  const copyOf = (what, o) => {
    const length = lengthOf(o);
    walk(what, length);
    const copy = [];
    for (let i = 0; i < length; i++) if (i in o) copy[i] = o[i];
    copy.length = length;
    return copy;
  };
  // A concat argument as the builtin will read it, decided once: a real
  // array stays; a spreadable array-like becomes its copy; anything else
  // goes in as one element of an array.
  const concatPart = (what, a) => {
    if (isArray(a) && !hasOwn(a, spreadable)) return a;
    if (a !== null && typeof a === "object") {
      const flag = a[spreadable];
      if (flag || (flag === undefined && isArray(a))) return copyOf(what, a);
    }
    return [a];
  };
  for (const name of ["join", "toString", "toLocaleString", "reverse", "fill", "copyWithin", "slice", "splice",
    "sort", "toSorted", "toReversed", "toSpliced", "with", "shift", "unshift", "concat"]) {
    const original = Array.prototype[name];
    if (typeof original !== "function") continue;
    const what = `Array.prototype.${name}`;
    const guarded = { [name](...args) {
      if (name === "concat") {
        const parts = [];
        let length = isArray(this) ? lengthOf(this) : 0;
        for (let i = 0; i < args.length; i++) {
          parts[i] = concatPart(what, args[i]);
          length += lengthOf(parts[i]);
        }
        walk(what, length);
        // Onto a fresh array: the builtin asks its receiver's species for
        // the result before it reads the lengths, and a script's species
        // could grow an array the guard has measured.
        const all = [concatPart(what, this)];
        for (let i = 0; i < parts.length; i++) all[i + 1] = parts[i];
        return apply(original, [], all);
      }
      if (isArray(this)) {
        walk(what, lengthOf(this));
        return apply(original, this, args);
      }
      const o = Object(this);
      const copy = copyOf(what, o);
      const before = copy.length;
      const result = apply(original, copy, args);
      if (!changes.has(name)) return result;
      for (let i = 0; i < copy.length; i++) { if (i in copy) o[i] = copy[i]; else delete o[i]; }
      if (resizes.has(name)) {
        for (let i = copy.length; i < before; i++) delete o[i];
        o.length = copy.length;
      }
      return result === copy ? o : result;
    } }[name];
    define(Array.prototype, name, { value: guarded, writable: true, configurable: true, enumerable: false });
  }
  // `flat` and `flatMap` walk the arrays they find in C: here in script
  // code, each array's length bounded as above.
  const flatten = (out, source, depth) => {
    const length = lengthOf(source);
    walk("Array.prototype.flat", length);
    for (let i = 0; i < length; i++) {
      if (!(i in source)) continue;
      const item = source[i];
      if (depth > 0 && isArray(item)) flatten(out, item, depth - 1);
      else out[out.length] = item;
    }
    return out;
  };
  define(Array.prototype, "flat", { value: function flat(depth) {
    const d = depth === undefined ? 1 : Math.trunc(Number(depth)) || 0;
    return flatten([], Object(this), d);
  }, writable: true, configurable: true, enumerable: false });
  define(Array.prototype, "flatMap", { value: function flatMap(fn, thisArg) {
    if (typeof fn !== "function") throw new TypeError("Array.prototype.flatMap: the mapper is not a function");
    const o = Object(this), length = lengthOf(o), out = [];
    walk("Array.prototype.flatMap", length);
    for (let i = 0; i < length; i++) {
      if (!(i in o)) continue;
      const mapped = apply(fn, thisArg, [o[i], i, o]);
      if (isArray(mapped)) flatten(out, mapped, 0);
      else out[out.length] = mapped;
    }
    return out;
  }, writable: true, configurable: true, enumerable: false });
  // Math.random from a seed the host draws: QuickJS seeds its own from the
  // time of day, which one draw gives away.
  let [x, y, z, w] = seed;
  const next = () => { const t = x ^ (x << 11); x = y; y = z; z = w; w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) | 0; return w >>> 0; };
  define(Math, "random", { value: function random() { return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992; }, writable: true, configurable: true });
  // Builtins that walk an iterator in C without polling the interrupt.
  if (typeof Iterator === "function" && typeof Iterator.prototype.drop === "function") {
    const drop = Iterator.prototype.drop;
    define(Iterator.prototype, "drop", { value: function drop2(limit) {
      // The count as a number, read once: the builtin reads what the guard did.
      const count = Number(limit);
      walk("Iterator.prototype.drop", count);
      return apply(drop, this, [count]);
    }, writable: true, configurable: true });
  }
  for (const name of ["union", "intersection", "difference", "symmetricDifference", "isSubsetOf", "isSupersetOf", "isDisjointFrom"]) {
    const original = Set.prototype[name];
    if (typeof original !== "function") continue;
    // The other set's keys read in script code (which the interrupt
    // reaches), then handed over as a real set.
    const guarded = { [name](other) {
      const keys = other.keys();
      const copy = new Set();
      for (let step = keys.next(); !step.done; step = keys.next()) copy.add(step.value);
      return apply(original, this, [copy]);
    } }[name];
    define(Set.prototype, name, { value: guarded, writable: true, configurable: true });
  }
  const frames = (stack) => stack.split("\n")
    .filter((line) => line.includes("script:") && !line.includes("at <eval>"))
    .map((line) => line.replace(/script:1:(\d+)/, (_, column) => `script:1:${Math.max(1, column - wrapOpen)}`));
  const describe = (e) => {
    try {
      if (e instanceof Error) {
        const head = `${e.name}: ${e.message}`;
        const stack = typeof e.stack === "string" ? frames(e.stack) : [];
        return wellFormed([head, ...stack].join("\n"));
      }
      switch (typeof e) {
        case "string": return wellFormed(e);
        case "bigint": return `${e}n`;
        case "function": return `function ${e.name || "(anonymous)"}`;
        case "symbol": case "undefined": return String(e);
      }
      const json = toJson(e);
      return wellFormed(typeof json === "string" ? json : String(e));
    } catch (_) {
      return "a value that cannot be shown";
    }
  };
  define(globalThis, "__describe", { value: describe });
  define(globalThis, "__finish", { value: (value) => {
    let out = lines.join("\n");
    if (value !== undefined) {
      const text = typeof value === "string" ? value : toJson(value);
      if (typeof text !== "string") return { noJson: typeof value };
      out = out ? out + "\n" + text : text;
    }
    return wellFormed(out);
  } });
})();
"#;

impl Script {
    /// Runs the script to its end and sends the run what it came to.
    pub(super) fn run(self) {
        let requests = self.requests.clone();
        let result = self.evaluate();
        let _ = requests.send(Request::Done(result));
    }

    fn evaluate(self) -> Result<String, String> {
        let started = |error: rquickjs::Error| format!("the sandbox could not start: {error}");
        let runtime = rquickjs::Runtime::new().map_err(started)?;
        runtime.set_memory_limit(self.limits.memory);
        runtime.set_max_stack_size(self.limits.stack);
        let stop = self.stop.clone();
        let deadline = self.deadline;
        runtime.set_interrupt_handler(Some(Box::new(move || {
            stop.load(Ordering::Relaxed) || Instant::now() >= deadline
        })));
        let context = rquickjs::Context::full(&runtime).map_err(started)?;
        let limits = self.limits;
        let answer = context.with(|ctx| -> Result<String, String> {
            let globals = ctx.globals();
            let calls = self.requests.clone();
            let call = Function::new(ctx.clone(), move |name: String, arguments: String| {
                let (reply, answer) = sync_mpsc::sync_channel(1);
                let sent = calls.send(Request::Call {
                    name,
                    arguments,
                    reply,
                });
                envelope(sent.ok().and_then(|()| answer.recv().ok()))
            });
            let searches = self.requests.clone();
            let search = Function::new(ctx.clone(), move |query: String| {
                let (reply, answer) = sync_mpsc::sync_channel(1);
                let sent = searches.send(Request::Search { query, reply });
                envelope(sent.ok().and_then(|()| answer.recv().ok()))
            });
            let names = serde_json::to_string(&self.names).unwrap_or_else(|_| "[]".into());
            // A dense array of this length would fill the heap (a value
            // is 16 bytes), so no real array is refused.
            let walk = (limits.memory / 16).max(1 << 16) as f64;
            let set_up = (|| {
                globals.set("__call", call?)?;
                globals.set("__search", search?)?;
                globals.set("__names", names)?;
                globals.set("__walk", walk)?;
                globals.set("__wrap", WRAP_OPEN.len() as f64)?;
                globals.set("__seed", seed())?;
                ctx.eval_with_options::<(), _>(PRELUDE, options("toolbox"))
            })();
            set_up.map_err(started)?;
            let finish: Function<'_> = globals.get("__finish").map_err(started)?;
            let describe: Function<'_> = globals.get("__describe").map_err(started)?;
            let ended = Ended {
                ctx: &ctx,
                describe: &describe,
                limits,
                stop: &self.stop,
                deadline,
                // QuickJS throws `null` when it runs out of memory while
                // making the error it would throw.
                may_throw_null: self.code.contains("null"),
            };
            // The script's first line is the wrapper's, so its line numbers are its own.
            let wrapped = format!("{WRAP_OPEN}{}\n}})()", self.code);
            let promise: rquickjs::Promise<'_> = ctx
                .eval_with_options(wrapped, options(SCRIPT_FILE))
                .map_err(|error| ended.explain(error))?;
            let value: rquickjs::Value<'_> =
                settle(&ctx, &promise, &self.stop, deadline).map_err(|error| ended.explain(error))?;
            let out: rquickjs::Value<'_> = finish
                .call((value,))
                .map_err(|error| ended.explain(error))?;
            if let Some(text) = out.as_string() {
                return text.to_string().map_err(|error| ended.explain(error));
            }
            let kind: String = out
                .as_object()
                .and_then(|o| o.get("noJson").ok())
                .unwrap_or_else(|| "value".to_owned());
            Err(format!(
                "the script returned a {kind}, which has no JSON form: return data (an object, an array, a string, a number)"
            ))
        });
        drop(context);
        answer
    }
}

/// Runs the interpreter's job queue until `promise` settles, and stops
/// at the run's end (`stop`, `deadline`). The interrupt handler does not
/// stop a queue that refills itself (`const f = () =>
/// Promise.resolve().then(f)`): each job is too short for QuickJS to poll
/// it, and an interrupted job only fails itself, so rquickjs's
/// `Promise::finish` would run such a queue forever.
fn settle<'js>(
    ctx: &rquickjs::Ctx<'js>,
    promise: &rquickjs::Promise<'js>,
    stop: &AtomicBool,
    deadline: Instant,
) -> rquickjs::Result<rquickjs::Value<'js>> {
    loop {
        if let Some(settled) = promise.result() {
            return settled;
        }
        if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            // `explain` reads which of the two ended it.
            return Err(rquickjs::Error::Exception);
        }
        if !ctx.execute_pending_job() {
            return Err(rquickjs::Error::WouldBlock);
        }
    }
}

/// Four nonzero 32-bit words for the script's `Math.random`, as JSON,
/// from std's per-process random hash keys (not the clock).
fn seed() -> String {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    let words: Vec<u32> = (0u64..2)
        .flat_map(|i| {
            let mut hasher = state.build_hasher();
            hasher.write_u64(i);
            let word = hasher.finish();
            [(word >> 32) as u32 | 1, word as u32 | 1]
        })
        .collect();
    serde_json::to_string(&words).unwrap_or_else(|_| "[1,2,3,4]".to_owned())
}

/// The options a piece of code is evaluated with: global, strict, named.
fn options(filename: &str) -> rquickjs::context::EvalOptions {
    let mut options = rquickjs::context::EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some(filename.to_owned());
    options
}

/// A reply to the script: `{"ok": <JSON>}` or `{"error": <text>}`.
fn envelope(answer: Option<Result<String, String>>) -> String {
    match answer {
        Some(Ok(value)) => format!("{{\"ok\":{value}}}"),
        Some(Err(error)) => json!({ "error": error }).to_string(),
        None => json!({"error": "the run was stopped"}).to_string(),
    }
}

/// What is needed to say why a script ended.
struct Ended<'a, 'js> {
    ctx: &'a rquickjs::Ctx<'js>,
    describe: &'a Function<'js>,
    limits: Limits,
    stop: &'a AtomicBool,
    deadline: Instant,
    /// Whether the script's text holds `null`: a `null` thrown by a script
    /// that never wrote it is QuickJS out of memory.
    may_throw_null: bool,
}

impl Ended<'_, '_> {
    /// What ended the script, in words the model can act on: a limit, or
    /// the thrown value as JavaScript shows it. Never a binding's text.
    fn explain(&self, error: rquickjs::Error) -> String {
        let limits = self.limits;
        if Instant::now() >= self.deadline {
            return time_limit(limits);
        }
        if self.stop.load(Ordering::Relaxed) {
            return "the run was stopped".to_owned();
        }
        let memory = || {
            format!(
                "the run used more than its memory limit of {} bytes: keep less in memory",
                limits.memory
            )
        };
        match error {
            rquickjs::Error::Exception => {}
            rquickjs::Error::Allocation => return memory(),
            rquickjs::Error::WouldBlock => {
                return "the script's promise never settled: it awaited something that nothing resolves; await tool calls and promises the script itself resolves".to_owned()
            }
            other => {
                tracing::warn!(target: "toolbox::code", error = %other, "the code mode's interpreter failed");
                return "the script could not be run by the sandbox".to_owned();
            }
        }
        let thrown = self.ctx.catch();
        let thrown_null = thrown.is_null();
        // The interpreter's own errors, read without running script code.
        let message = thrown
            .as_object()
            .filter(|_| thrown.as_exception().is_some())
            .and_then(|o| o.get::<_, rquickjs::Value<'_>>("message").ok())
            .and_then(|m| m.as_string().and_then(|s| s.to_string().ok()))
            .unwrap_or_default();
        if message == "out of memory" || thrown_null && !self.may_throw_null {
            return memory();
        }
        if thrown_null {
            return format!(
                "the script threw: null (unless the script threw it, the run used more than its memory limit of {} bytes: keep less in memory)",
                limits.memory
            );
        }
        if message.contains("stack overflow") || message.contains("call stack size") {
            return format!(
                "the run overflowed its stack limit of {} bytes: recurse less deeply",
                limits.stack
            );
        }
        let text = self
            .describe
            .call::<_, String>((thrown,))
            .unwrap_or_else(|_| {
                if Instant::now() >= self.deadline {
                    time_limit(limits)
                } else {
                    "a value that cannot be shown".to_owned()
                }
            });
        format!("the script threw: {}", clip_text(&text, limits.output))
    }
}
