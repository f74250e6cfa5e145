//! A document-editing box, which needs no `Context`: an assistant fills in a
//! user's development profile. The box holds an in-memory working copy;
//! each call sets one section and answers with the section as it now stands
//! or the reason it was rejected; `finish` lists what is still missing or
//! invalid. The caller reads the working copy when the loop ends.
//!
//! Run it with `cargo run --example profile_editor`.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolbox::prelude::*;
use toolbox::{provider::Provider, turn::TurnRunner};

/// The profile being edited.
#[derive(Clone, Debug, Default, Serialize)]
struct Profile {
    name: Option<String>,
    languages: Vec<Language>,
    experience_years: Option<u8>,
    summary: Option<String>,
}

/// One language and how well the user knows it.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Language {
    /// The language, e.g. "Rust".
    name: String,
    /// From 1 (beginner) to 5 (expert).
    level: u8,
}

/// The editor: a working copy behind a lock (calls may run concurrently).
#[derive(Default)]
struct ProfileEditor {
    profile: Mutex<Profile>,
}

impl ProfileEditor {
    fn edit<T>(&self, f: impl FnOnce(&mut Profile) -> T) -> T {
        f(&mut self.profile.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The working copy, when the loop is over.
    fn into_profile(self) -> Profile {
        self.profile.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

/// Edits the user's development profile, one section per call.
#[tool_box(name = "profile")]
impl ProfileEditor {
    /// Sets the user's full name.
    #[tool(idempotent)]
    fn set_name(
        &self,
        /// The full name, e.g. "Ada Lovelace".
        name: String,
    ) -> Result<String, String> {
        let name = name.trim().to_owned();
        if name.split_whitespace().count() < 2 {
            return Err(format!(
                "`{name}` is not a full name; give a first and a last name"
            ));
        }
        self.edit(|p| p.name = Some(name.clone()));
        Ok(format!("name: {name}"))
    }

    /// Sets the languages the user knows, replacing the list.
    #[tool(idempotent)]
    fn set_languages(
        &self,
        /// Every language with its level.
        languages: Vec<Language>,
    ) -> Result<serde_json::Value, String> {
        if let Some(bad) = languages.iter().find(|l| !(1..=5).contains(&l.level)) {
            return Err(format!(
                "`{}` has level {}; levels go from 1 (beginner) to 5 (expert)",
                bad.name, bad.level
            ));
        }
        self.edit(|p| p.languages = languages.clone());
        Ok(json!({"languages": languages}))
    }

    /// Sets the years of professional experience.
    #[tool(idempotent)]
    fn set_experience(
        &self,
        /// Whole years, 0 to 60.
        years: u8,
    ) -> Result<String, String> {
        if years > 60 {
            return Err(format!("{years} years is more than a career; give 0 to 60"));
        }
        self.edit(|p| p.experience_years = Some(years));
        Ok(format!("experience: {years} years"))
    }

    /// Sets the one-paragraph summary.
    #[tool(idempotent)]
    fn set_summary(
        &self,
        /// At most 280 characters.
        summary: String,
    ) -> Result<String, String> {
        let length = summary.chars().count();
        if length > 280 {
            return Err(format!(
                "the summary has {length} characters; shorten it to 280"
            ));
        }
        self.edit(|p| p.summary = Some(summary.clone()));
        Ok(format!("summary: {summary}"))
    }

    /// Finishes editing: lists what is still missing, or says it is complete.
    #[tool(read_only)]
    fn finish(&self) -> serde_json::Value {
        let problems = self.edit(|p| {
            let mut problems = Vec::new();
            if p.name.is_none() {
                problems.push("name: missing");
            }
            if p.languages.is_empty() {
                problems.push("languages: at least one");
            }
            if p.experience_years.is_none() {
                problems.push("experience: missing");
            }
            if p.summary.is_none() {
                problems.push("summary: missing");
            }
            problems
        });
        json!({"complete": problems.is_empty(), "outstanding": problems})
    }
}

fn call(name: &str, arguments: serde_json::Value) -> serde_json::Value {
    json!({"type": "function", "id": format!("call_{name}"),
           "function": {"name": name, "arguments": arguments.to_string()}})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let editor = ProfileEditor::default();
    let openai = Provider::OpenAiChat { strict: true };
    let ctx = Context::new();
    println!(
        "tools: {}",
        editor
            .specifications(&ctx)
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );

    // The model's turns, as it would send them; the second corrects the first.
    let turns = [
        vec![
            call("set_name", json!({"name": "Ada"})),
            call(
                "set_languages",
                json!({"languages": [{"name": "Rust", "level": 7}]}),
            ),
            call("set_experience", json!({"years": 12})),
        ],
        vec![
            call("set_name", json!({"name": "Ada Lovelace"})),
            call(
                "set_languages",
                json!({"languages": [{"name": "Rust", "level": 5}, {"name": "Python", "level": 4}]}),
            ),
            call("finish", json!({})),
        ],
        vec![
            call(
                "set_summary",
                json!({"summary": "Writes analytical engines in Rust."}),
            ),
            call("finish", json!({})),
        ],
    ];
    for (i, calls) in turns.into_iter().enumerate() {
        println!("\n-- turn {}", i + 1);
        let response =
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]});
        for outcome in TurnRunner::new(&editor)
            .run(openai.parse_calls(&response)?, &ctx)
            .await
        {
            let marker = if outcome.response.is_error {
                "rejected"
            } else {
                "ok"
            };
            println!(
                "{} -> [{marker}] {}",
                outcome.call.name, outcome.response.content
            );
        }
    }

    let profile = editor.into_profile();
    println!("\nthe working copy: {}", serde_json::to_string(&profile)?);
    Ok(())
}
