//! The `execute_tool` span: one tracing callsite per tool, made once.
//!
//! The span is named `execute_tool {tool}` (the OpenTelemetry GenAI name
//! of the operation) in its callsite's metadata, so the name is neither
//! formatted per call nor carried as an `otel.name` field, and the tool's
//! name is escaped for logs once. A call records only what changes per
//! call: the tool's name as a `&'static str` the callsite keeps, the two
//! constant attributes as `&'static str`s, and the call id.
//!
//! The callsites are leaked, one per distinct tool name (as `tracing`'s own
//! callsites are statics), up to [`MAX_SITES`] names of at most
//! [`MAX_NAME`] bytes; any other name (a proxy's endless stream of remote
//! tools, say) gets the one shared callsite, named `execute_tool` with the
//! name in `otel.name`, which OpenTelemetry exporters read as the span's
//! name.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{OnceLock, RwLock};

use rustc_hash::FxHashMap;
use tracing::callsite::{Callsite, Identifier};
use tracing::field::{display, Field, FieldSet, Value};
use tracing::metadata::Kind;
use tracing::subscriber::Interest;
use tracing::{Level, Metadata, Span};

use crate::echo::echo;

/// How many tool names get a callsite of their own.
pub(crate) const MAX_SITES: usize = 4_096;

/// The longest tool name that gets a callsite of its own.
pub(crate) const MAX_NAME: usize = 128;

/// The span's target: the lifecycle's, as it always was.
const TARGET: &str = "toolbox_core::lifecycle";

/// The span's fields: those set when it opens, then those recorded on
/// failure.
const FIELDS: &[&str] = &[
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.type",
    "gen_ai.tool.call.id",
    "error.type",
    "otel.status_code",
];

const NEVER: u8 = 0;
const SOMETIMES: u8 = 1;
const ALWAYS: u8 = 2;

/// A tool's callsite: its metadata, its fields and the subscribers'
/// interest in it.
struct ToolSite {
    meta: OnceLock<Metadata<'static>>,
    fields: OnceLock<[Field; 4]>,
    interest: AtomicU8,
    /// The tool's name as logs show it.
    shown: &'static str,
    /// The tool's name.
    name: &'static str,
}

impl Callsite for ToolSite {
    fn set_interest(&self, interest: Interest) {
        let interest = if interest.is_never() {
            NEVER
        } else if interest.is_always() {
            ALWAYS
        } else {
            SOMETIMES
        };
        self.interest.store(interest, Ordering::Relaxed);
    }

    fn metadata(&self) -> &Metadata<'_> {
        // Set before the callsite is registered or shared.
        self.meta.get().expect("a tool's callsite has its metadata")
    }
}

impl ToolSite {
    /// Makes, registers and leaks the callsite of the tool `name`.
    #[cold]
    fn new(name: &str) -> &'static ToolSite {
        let shown: &'static str = Box::leak(echo(name).into_owned().into_boxed_str());
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let span_name: &'static str = Box::leak(format!("execute_tool {shown}").into_boxed_str());
        let site: &'static ToolSite = Box::leak(Box::new(ToolSite {
            meta: OnceLock::new(),
            fields: OnceLock::new(),
            interest: AtomicU8::new(SOMETIMES),
            shown,
            name,
        }));
        let meta = site.meta.get_or_init(|| {
            Metadata::new(
                span_name,
                TARGET,
                Level::INFO,
                Some(file!()),
                Some(line!()),
                Some(module_path!()),
                FieldSet::new(FIELDS, Identifier(site)),
                Kind::SPAN,
            )
        });
        let mut fields = meta.fields().iter();
        let mut next = || fields.next().expect("the span has its fields");
        site.fields.get_or_init(|| [next(), next(), next(), next()]);
        tracing::callsite::register(site);
        site
    }

    /// Opens the span of one call, if a subscriber wants it.
    #[inline]
    fn span(&'static self, call_id: Option<&str>) -> Span {
        let meta = self.metadata();
        let enabled = match self.interest.load(Ordering::Relaxed) {
            NEVER => false,
            ALWAYS => true,
            _ => tracing::dispatcher::get_default(|dispatch| dispatch.enabled(meta)),
        };
        let Some([operation, tool, kind, id]) = self.fields.get().filter(|_| enabled) else {
            return Span::none();
        };
        // Values are displayed: a log line writes them as they are, with
        // no escaping (the name was escaped once, when the callsite was
        // made), and an exporter takes them as strings.
        let set = meta.fields();
        let operation_name = display("execute_tool");
        let tool_name = display(self.shown);
        let tool_type = display("function");
        match call_id {
            Some(call_id) => Span::new(
                meta,
                &set.value_set(&[
                    (operation, Some(&operation_name as &dyn Value)),
                    (tool, Some(&tool_name as &dyn Value)),
                    (kind, Some(&tool_type as &dyn Value)),
                    (id, Some(&display(call_id) as &dyn Value)),
                ]),
            ),
            None => Span::new(
                meta,
                &set.value_set(&[
                    (operation, Some(&operation_name as &dyn Value)),
                    (tool, Some(&tool_name as &dyn Value)),
                    (kind, Some(&tool_type as &dyn Value)),
                ]),
            ),
        }
    }
}

type Sites = RwLock<FxHashMap<Box<str>, &'static ToolSite>>;

fn sites() -> &'static Sites {
    static SITES: OnceLock<Sites> = OnceLock::new();
    SITES.get_or_init(Sites::default)
}

/// How many callsites a thread keeps at hand (the tools it calls most
/// recently), in front of the shared map.
const RECENT: usize = 8;

thread_local! {
    /// The callsites this thread used last, so a call usually finds its
    /// tool's without the shared map's lock.
    static RECENT_SITES: std::cell::Cell<[Option<&'static ToolSite>; RECENT]> =
        const { std::cell::Cell::new([None; RECENT]) };
}

/// The callsite of the tool `name`, made on its first call; `None` past
/// the limits.
#[inline]
fn site(name: &str) -> Option<&'static ToolSite> {
    let recent = RECENT_SITES.with(std::cell::Cell::get);
    if let Some(site) = recent.iter().flatten().find(|site| site.name == name) {
        return Some(site);
    }
    shared_site(name)
}

/// The callsite of `name` from the shared map (made if new), remembered
/// by this thread.
#[cold]
#[inline(never)]
fn shared_site(name: &str) -> Option<&'static ToolSite> {
    let found = sites().read().ok()?.get(name).copied();
    let site = match found {
        Some(site) => site,
        None => new_site(name)?,
    };
    RECENT_SITES.with(|recent| {
        let mut sites = recent.get();
        sites.rotate_right(1);
        sites[0] = Some(site);
        recent.set(sites);
    });
    Some(site)
}

#[cold]
#[inline(never)]
fn new_site(name: &str) -> Option<&'static ToolSite> {
    if name.len() > MAX_NAME {
        return None;
    }
    let mut sites = sites().write().ok()?;
    if let Some(site) = sites.get(name) {
        return Some(site);
    }
    if sites.len() >= MAX_SITES {
        return None;
    }
    let site = ToolSite::new(name);
    sites.insert(name.into(), site);
    Some(site)
}

/// The `execute_tool` span of a call to the tool `name` (which the caller
/// has checked a subscriber may want at `INFO`).
pub(crate) fn execute_tool(name: &str, call_id: Option<&str>) -> Span {
    match site(name) {
        Some(site) => site.span(call_id),
        None => shared(name, call_id),
    }
}

/// The span on the shared callsite, for names past the limits.
#[cold]
#[inline(never)]
fn shared(name: &str, call_id: Option<&str>) -> Span {
    let shown = echo(name);
    tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = %format_args!("execute_tool {shown}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = &*shown,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.id = call_id,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}
