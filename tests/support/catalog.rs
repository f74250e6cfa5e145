//! A large tool catalogue from real MCP tool schemas (tests/fixtures/schemas,
//! 86 tools of 9 servers) with the descriptions of
//! tests/fixtures/catalog/descriptions.json: each server is a namespace.
//! Shared by tests/catalog.rs, benches/catalog.rs and
//! examples/large_catalog.rs (`#[path]`-included).

#![allow(dead_code)]

use serde_json::Value;
use toolbox::{Namespace, ToolSpecification};

const LISTINGS: [&str; 9] = [
    include_str!("../fixtures/schemas/mcp-server-fetch.json"),
    include_str!("../fixtures/schemas/mcp-server-git.json"),
    include_str!("../fixtures/schemas/mcp-server-time.json"),
    include_str!("../fixtures/schemas/pydantic-mcpserver.json"),
    include_str!("../fixtures/schemas/server-everything.json"),
    include_str!("../fixtures/schemas/server-filesystem.json"),
    include_str!("../fixtures/schemas/server-github.json"),
    include_str!("../fixtures/schemas/server-memory.json"),
    include_str!("../fixtures/schemas/server-sequential-thinking.json"),
];

const DESCRIPTIONS: &str = include_str!("../fixtures/catalog/descriptions.json");

/// The organisations the catalogue repeats the servers under: each
/// (organisation, server) pair is a module of its own.
pub(crate) const ORGANISATIONS: [(&str, &str); 6] = [
    ("acme", "Acme Corp"),
    ("globex", "Globex"),
    ("initech", "Initech"),
    ("umbrella", "Umbrella"),
    ("hooli", "Hooli"),
    ("stark", "Stark Industries"),
];

/// One server's tools: (module, module description, tools).
fn servers() -> Vec<(String, String, Vec<ToolSpecification>)> {
    let descriptions: Value =
        serde_json::from_str(DESCRIPTIONS).expect("descriptions.json is JSON");
    let descriptions = descriptions.as_object().expect("an object");
    LISTINGS
        .iter()
        .map(|listing| {
            let listing: Value = serde_json::from_str(listing).expect("a listing is JSON");
            let server = listing["server"].as_str().expect("a server name");
            let (_, described) = descriptions
                .iter()
                .find(|(key, _)| *key != "_comment" && server.starts_with(key.as_str()))
                .expect("every server is described");
            let module = described["module"].as_str().expect("a module").to_owned();
            let about = described["description"]
                .as_str()
                .expect("a description")
                .to_owned();
            let tools = listing["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|tool| {
                    let name = tool["name"].as_str().expect("a tool name");
                    let description = described["tools"][name]
                        .as_str()
                        .expect("every tool is described");
                    ToolSpecification::new(name, description)
                        .with_parameters(tool["inputSchema"].clone())
                })
                .collect();
            (module, about, tools)
        })
        .collect()
}

/// The 86 tools under their own names, each server a namespace, none
/// deferred.
pub(crate) fn base() -> Vec<ToolSpecification> {
    servers()
        .into_iter()
        .flat_map(|(module, about, tools)| {
            let namespace = Namespace::new(module, about);
            tools
                .into_iter()
                .map(move |t| t.with_namespace(namespace.clone()))
        })
        .collect()
}

/// The tools repeated for `copies` organisations (the six named ones, then
/// `org7`, `org8`, …): 86 tools and 9 modules per copy, every tool
/// deferred, named `{organisation}_{module}_{tool}`.
pub(crate) fn large(copies: usize) -> Vec<ToolSpecification> {
    let servers = servers();
    let mut out = Vec::with_capacity(copies * 86);
    for copy in 0..copies {
        let (org, label) = match ORGANISATIONS.get(copy) {
            Some((org, label)) => (org.to_string(), label.to_string()),
            None => (
                format!("org{}", copy + 1),
                format!("Organisation {}", copy + 1),
            ),
        };
        for (module, about, tools) in &servers {
            let namespace = Namespace::new(format!("{org}_{module}"), format!("{about} ({label})"));
            for tool in tools {
                let mut tool = tool.clone();
                tool.name = format!("{org}_{module}_{}", tool.name);
                out.push(tool.with_namespace(namespace.clone()).with_deferred(true));
            }
        }
    }
    out
}

/// Queries a user might send, each with the tool that answers it, over
/// [`base`].
pub(crate) const LABELLED: &[(&str, &str)] = &[
    ("download a web page as markdown", "fetch"),
    (
        "what have I changed but not staged yet",
        "git_diff_unstaged",
    ),
    ("commit my staged changes with a message", "git_commit"),
    ("show the history of commits in the local repo", "git_log"),
    ("switch to another git branch", "git_checkout"),
    ("what time is it in Tokyo right now", "get_current_time"),
    ("convert 3pm New York time to Berlin time", "convert_time"),
    ("ship an order to a customer's address", "ship"),
    ("where is this item stored in the warehouse", "locate"),
    ("plant tomato seeds in the garden", "plant"),
    ("add two numbers together", "get-sum"),
    ("compress a file with gzip", "gzip-file-as-resource"),
    ("read the last 10 lines of a log file", "read_text_file"),
    ("write content to a new file", "write_file"),
    ("rename a file", "move_file"),
    ("make a new folder", "create_directory"),
    ("list what is in a directory", "list_directory"),
    ("find files whose name matches a pattern", "search_files"),
    ("open a new issue on github", "create_issue"),
    ("comment on an issue", "add_issue_comment"),
    ("merge a pull request", "merge_pull_request"),
    ("fork someone's repository", "fork_repository"),
    ("search source code on github", "search_code"),
    (
        "which files did a pull request change",
        "get_pull_request_files",
    ),
    (
        "are the status checks passing on my pull request",
        "get_pull_request_status",
    ),
    (
        "remember a new person in the knowledge graph",
        "create_entities",
    ),
    ("add facts about an existing entity", "add_observations"),
    ("forget an entity and its relations", "delete_entities"),
    (
        "think through a hard problem step by step",
        "sequentialthinking",
    ),
    ("open a pull request for my branch", "create_pull_request"),
    ("list the issues of a repository", "list_issues"),
    ("file size and permissions", "get_file_info"),
    ("stage files for the next commit", "git_add"),
    (
        "create a new branch in my local git repository",
        "git_create_branch",
    ),
    ("set the priority of a task", "set_priority"),
    ("schedule a meeting next tuesday at 10", "schedule"),
    ("echo a message back", "echo"),
    ("read an image file", "read_media_file"),
    ("replace some lines in a text file", "edit_file"),
    ("search github users", "search_users"),
    ("review a pull request", "create_pull_request_review"),
    ("what environment variables does the server have", "get-env"),
];
