//! The capability boxes an assistant product needs, as small real boxes
//! composed in a `MultiToolBox` with conditions:
//!
//! - `knowledge`: search over a bundled document set, ranked;
//! - `memory`: the user's memory, keyed by a user id injected from the
//!   `Context` and persisted to a file, offered only when there is a user;
//! - `display`: a chart whose data goes to the client in the response's
//!   element, while the model reads one line;
//! - `handover`: a call that hands the conversation to another agent, whose
//!   own box the application then runs;
//! - `navigate`: in-app navigation, also through the element;
//! - `web`: web search behind a trait the application implements (here over
//!   a local fixture), offered only on the pro plan.
//!
//! Run it with `cargo run --example capabilities`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;
use toolbox::prelude::*;
use toolbox::NamedToolBox;

// ---- knowledge retrieval ----

/// Bundled help articles.
struct Knowledge {
    documents: Vec<(&'static str, &'static str)>,
}

/// Help articles.
#[tool_box(register = false, name = "knowledge")]
impl Knowledge {
    /// Searches the help articles; the best matches first.
    #[tool(read_only)]
    fn search(
        &self,
        /// Words to look for.
        query: String,
        /// How many results, 3 when absent.
        #[arg(default = 3)]
        limit: usize,
    ) -> Vec<serde_json::Value> {
        let words: Vec<String> = query
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut scored: Vec<(usize, &str, &str)> = self
            .documents
            .iter()
            .map(|(title, text)| {
                let haystack = format!("{title} {text}").to_lowercase();
                let score = words
                    .iter()
                    .map(|w| haystack.matches(w.as_str()).count())
                    .sum();
                (score, *title, *text)
            })
            .filter(|(score, _, _)| *score > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(score, title, text)| json!({"title": title, "score": score, "text": text}))
            .collect()
    }
}

// ---- the user's memory ----

/// The signed-in user, put into the `Context` by the application.
#[derive(Clone, Debug)]
struct UserId(String);

impl FromContext for UserId {
    fn from_context(ctx: &Context) -> Result<Self, ToolError> {
        ctx.extension::<UserId>()
            .cloned()
            .ok_or_else(|| ToolError::failed("there is no signed-in user to remember things for"))
    }
}

/// Facts per user, persisted to a JSON file after every change.
struct Memory {
    path: PathBuf,
    facts: Mutex<BTreeMap<String, Vec<String>>>,
}

impl Memory {
    fn open(path: PathBuf) -> Self {
        let facts = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        Memory {
            path,
            facts: Mutex::new(facts),
        }
    }
}

/// What the assistant remembers about the user.
#[tool_box(register = false, name = "memory")]
impl Memory {
    /// Remembers a fact about the user for later conversations.
    #[tool]
    fn remember(
        &self,
        #[inject] user: UserId,
        /// The fact, in one sentence.
        fact: String,
    ) -> Result<String, String> {
        let mut facts = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        facts.entry(user.0.clone()).or_default().push(fact.clone());
        let text = serde_json::to_string_pretty(&*facts).map_err(|e| e.to_string())?;
        std::fs::write(&self.path, text)
            .map_err(|e| format!("the memory could not be saved: {e}"))?;
        Ok(format!("remembered for {}: {fact}", user.0))
    }

    /// Recalls what is known about the user.
    #[tool(read_only)]
    fn recall(&self, #[inject] user: UserId) -> Vec<String> {
        let facts = self.facts.lock().unwrap_or_else(|p| p.into_inner());
        facts.get(&user.0).cloned().unwrap_or_default()
    }
}

// ---- display, handover, navigation: results for the client ----

/// What the client renders or does.
struct Client;

/// Things the client shows or does.
#[tool_box(register = false, name = "ui")]
impl Client {
    /// Shows a bar chart to the user.
    #[tool(read_only)]
    fn show_chart(
        &self,
        /// The chart's title.
        title: String,
        /// The bars, label and value.
        bars: Vec<(String, f64)>,
    ) -> ToolResponse {
        // The model reads one line; the client gets the data to draw.
        ToolResponse::text(format!(
            "the chart `{title}` with {} bars is on screen",
            bars.len()
        ))
        .with_element(json!({"type": "bar_chart", "title": title, "bars": bars}))
    }

    /// Opens a screen of the app.
    #[tool(read_only)]
    fn navigate(
        &self,
        /// The screen's path, e.g. "/orders/98765".
        path: String,
    ) -> Result<ToolResponse, String> {
        if !path.starts_with('/') {
            return Err(format!("`{path}` is not an app path; paths start with `/`"));
        }
        Ok(ToolResponse::text(format!("opened {path}")).with_element(json!({"navigate": path})))
    }

    /// Hands the conversation to a specialist agent.
    #[tool]
    fn handover(
        &self,
        /// The agent: "billing" or "shipping".
        agent: String,
        /// What the specialist needs to know.
        summary: String,
    ) -> Result<ToolResponse, String> {
        match agent.as_str() {
            "billing" | "shipping" => Ok(ToolResponse::text(format!("handed over to {agent}"))
                .with_element(json!({"handover": agent, "summary": summary}))),
            other => Err(format!(
                "no agent `{other}`; the agents are billing and shipping"
            )),
        }
    }
}

/// The billing agent's own tools, run after a handover.
struct Billing;

/// Invoices.
#[tool_box(register = false, name = "billing")]
impl Billing {
    /// Lists the user's open invoices.
    #[tool(read_only)]
    fn open_invoices(&self, #[inject] user: UserId) -> Vec<String> {
        vec![format!(
            "INV-2026-117 for {}: 49.90 EUR, due 2026-12-15",
            user.0
        )]
    }
}

// ---- web search behind the application's trait ----

/// One search result.
#[derive(serde::Serialize)]
struct Hit {
    title: String,
    url: String,
}

/// What the application plugs in for web search (a search API in
/// production; a local fixture here).
trait WebSearch: Send + Sync {
    fn search(&self, query: &str) -> Vec<Hit>;
}

/// A local fixture standing in for a search API.
struct Fixture;

impl WebSearch for Fixture {
    fn search(&self, query: &str) -> Vec<Hit> {
        [
            ("Rust 1.95 released", "https://blog.example/rust-1-95"),
            ("Parcel tracking explained", "https://help.example/tracking"),
        ]
        .into_iter()
        .filter(|(title, _)| {
            query
                .split_whitespace()
                .any(|w| title.to_lowercase().contains(&w.to_lowercase()))
        })
        .map(|(title, url)| Hit {
            title: title.to_owned(),
            url: url.to_owned(),
        })
        .collect()
    }
}

/// Web search through the application's provider.
struct Web<S> {
    engine: S,
}

/// Web search.
#[tool_box(name = "web")]
impl<S: WebSearch + 'static> Web<S> {
    /// Searches the web.
    #[tool(read_only, open_world)]
    fn search(
        &self,
        /// The query.
        query: String,
    ) -> Vec<Hit> {
        self.engine.search(&query)
    }
}

/// The plan the user is on, from the application.
#[derive(Clone, Copy, PartialEq)]
enum Plan {
    Free,
    Pro,
}

fn print_call(name: &str, response: &ToolResponse) {
    let marker = if response.is_error { "error" } else { "ok" };
    println!("{name} -> [{marker}] {}", response.content);
    if let Some(element) = &response.element {
        println!("  element for the client: {element}");
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let memory_file =
        std::env::temp_dir().join(format!("capabilities-memory-{}.json", std::process::id()));
    let knowledge = Knowledge {
        documents: vec![
            (
                "Lost parcels",
                "A parcel without a delivery scan for 7 days is lost: refund it.",
            ),
            ("Returns", "Returns are free within 30 days."),
            (
                "Parcel tracking",
                "Tracking updates every 4 hours; a parcel scan shows where it is.",
            ),
        ],
    };
    let assistant = MultiToolBox::builder()
        .add("knowledge", knowledge)
        // Memory needs a user: without one its tools are neither offered nor callable.
        .add(
            "memory",
            Memory::open(memory_file.clone()).filter(|_, ctx| ctx.extension::<UserId>().is_some()),
        )
        .add("ui", Client)
        // Web search is a pro feature.
        .add(
            "web",
            Web { engine: Fixture }.filter(|_, ctx| ctx.extension::<Plan>() == Some(&Plan::Pro)),
        )
        .build()?;
    let handler = ToolHandler::empty();

    let anonymous = Context::new().with_extension(Plan::Free);
    let ada = Context::new()
        .with_extension(Plan::Pro)
        .with_extension(UserId("ada".into()));
    let names = |ctx: &Context| {
        assistant
            .specifications(ctx)
            .into_iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "offered to a visitor on the free plan: {}",
        names(&anonymous)
    );
    println!("offered to ada on the pro plan: {}", names(&ada));

    println!("\n-- knowledge, ranked");
    let r = assistant
        .call(
            "knowledge_search",
            &json!({"query": "parcel scan", "limit": 2}),
            &ada,
            &handler,
        )
        .await;
    print_call("knowledge_search", &r);

    println!("\n-- memory, per user, on disk");
    let r = assistant
        .call(
            "memory_remember",
            &json!({"fact": "prefers email over phone"}),
            &ada,
            &handler,
        )
        .await;
    print_call("memory_remember", &r);
    let r = assistant
        .call("memory_recall", &json!({}), &ada, &handler)
        .await;
    print_call("memory_recall", &r);
    let r = assistant
        .call("memory_recall", &json!({}), &anonymous, &handler)
        .await;
    print_call("memory_recall (visitor)", &r);
    let reopened = Memory::open(memory_file.clone());
    let r = reopened.call("recall", &json!({}), &ada, &handler).await;
    print_call("recall after reopening the file", &r);

    println!("\n-- display and navigation: elements for the client");
    let r = assistant
        .call(
            "ui_show_chart",
            &json!({"title": "Orders per month", "bars": [["Oct", 12.0], ["Nov", 17.0]]}),
            &ada,
            &handler,
        )
        .await;
    print_call("ui_show_chart", &r);
    let r = assistant
        .call(
            "ui_navigate",
            &json!({"path": "/orders/98765"}),
            &ada,
            &handler,
        )
        .await;
    print_call("ui_navigate", &r);

    println!("\n-- web search through the application's trait");
    let r = assistant
        .call(
            "web_search",
            &json!({"query": "parcel tracking"}),
            &ada,
            &handler,
        )
        .await;
    print_call("web_search", &r);
    let r = assistant
        .call(
            "web_search",
            &json!({"query": "parcel tracking"}),
            &anonymous,
            &handler,
        )
        .await;
    print_call("web_search (free plan)", &r);

    println!("\n-- handover: the application switches agents");
    let r = assistant
        .call(
            "ui_handover",
            &json!({"agent": "billing", "summary": "asks about an open invoice"}),
            &ada,
            &handler,
        )
        .await;
    print_call("ui_handover", &r);
    let next = r
        .element
        .as_ref()
        .and_then(|e| e["handover"].as_str())
        .unwrap_or_default();
    if next == "billing" {
        let billing = Billing;
        println!(
            "now running the `{}` agent: {}",
            billing.box_name(),
            billing
                .specifications(&ada)
                .into_iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let r = billing
            .call("open_invoices", &json!({}), &ada, &handler)
            .await;
        print_call("open_invoices", &r);
    }

    let _ = std::fs::remove_file(&memory_file);
    Ok(())
}
