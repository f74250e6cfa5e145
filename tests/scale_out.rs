//! Scale-out behind a real load balancer: two `mcp_server --http` processes
//! behind nginx (Debian's package, on 127.0.0.1), driven by the official
//! Python SDK.
//!
//! - The stateless `2026-07-28` era: 2,000 calls balanced round-robin, every
//!   answer checked, both processes serving (by nginx's own log of the
//!   upstream and by each server's log of its calls); the same 2,000 through
//!   one process for the rate beside it.
//! - The `2025-11-25` session era: a session lives in one process, so the
//!   balancer must be sticky (`hash $remote_addr consistent`); every call of
//!   a session reaches the process that holds it.
//! - Behind a balancer that forwards each client's address
//!   (`X-Forwarded-For`) to a server that trusts it, each real client has
//!   its own share of the sessions.
//!
//! Ignored by default: it needs nginx and the Python SDK, which
//! `scripts/scale_out` installs before running it (`.ci/run` does).
//! `TOOLBOX_NGINX` and `TOOLBOX_PYTHON` override where they are looked for.
#![cfg(feature = "mcp")]

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::example;

/// Child processes killed when the test ends, however it ends.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn tool(variable: &str, candidates: &[PathBuf], install: &str) -> PathBuf {
    if let Ok(path) = std::env::var(variable) {
        return PathBuf::from(path);
    }
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| panic!("not found: {candidates:?}; {install} (or set {variable})"))
}

/// What the Python driver reported: the calls/s, and whether every call
/// was answered correctly (with its failure lines if not).
fn drive(python: &Path, url: &str, calls: u32, clients: u32, mode: &str) -> f64 {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/scale_out_client.py");
    let output = Command::new(python)
        .arg(script)
        .args([url, &calls.to_string(), &clients.to_string(), mode])
        .output()
        .expect("the Python driver runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains(&format!("PASS {mode} {calls} calls answered correctly")),
        "through {url} in {mode}:\n{stdout}\n{}",
        &stderr[stderr.len().saturating_sub(2000)..]
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("RATE "))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|r| r.parse().ok())
        .expect("a RATE line")
}

/// How many calls of `math_add` a server's log says it answered.
fn served(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("ok    math_add"))
        .count()
}

/// How many requests nginx's access log says each upstream answered on
/// `port`'s server block.
fn upstreams(log: &Path, port: u16) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let mut fields = line.split_whitespace();
        if fields.next() == Some(&port.to_string()) {
            if let Some(upstream) = fields.next() {
                *counts.entry(upstream.to_owned()).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// `mcp_server --http` on `port`, logging to `log`; on SIGTERM it says
/// "not ready" for 300 ms, then refuses connections and lets its calls finish.
fn start_server(port: u16, log: &Path) -> Child {
    Command::new(example("mcp_server"))
        .args(["--http", &format!("127.0.0.1:{port}"), "--drain", "300"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("the mcp_server example is built (cargo test --features mcp)")
}

/// The readiness route's status on `port`, or 0 when nothing answers.
fn readiness(port: u16) -> u16 {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return 0;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// `curl` from the loopback address `source` (each a client of its own
/// to nginx): an MCP request to `url`, on session `session` when given;
/// the status and the session id answered.
fn curl(source: &str, url: &str, session: Option<&str>) -> (u16, Option<String>) {
    let body = match session {
        None => {
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}"#
        }
        Some(_) => r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    };
    let mut command = Command::new("curl");
    command.args([
        "-s",
        "-o",
        "/dev/null",
        "-D",
        "-",
        "-w",
        "STATUS %{http_code}",
        "--max-time",
        "10",
        "--interface",
        source,
        "-H",
        "Content-Type: application/json",
        "-H",
        "Accept: application/json, text/event-stream",
        "-d",
        body,
    ]);
    if let Some(id) = session {
        command.args(["-H", &format!("Mcp-Session-Id: {id}")]);
        command.args(["-H", "Mcp-Protocol-Version: 2025-11-25"]);
    }
    let output = command.arg(url).output().expect("curl runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let status = text
        .rsplit_once("STATUS ")
        .and_then(|(_, s)| s.trim().parse().ok())
        .unwrap_or(0);
    let id = text.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    (status, id)
}

#[test]
#[ignore = "needs nginx and the Python SDK: run scripts/scale_out (.ci/run does)"]
fn two_processes_behind_nginx_serve_stateless_calls_and_sticky_sessions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nginx = tool(
        "TOOLBOX_NGINX",
        &["/usr/sbin/nginx".into(), "/usr/bin/nginx".into()],
        "install Debian's nginx-light",
    );
    let python = tool(
        "TOOLBOX_PYTHON",
        &[root.join(".interop/venv/bin/python")],
        "run scripts/interop to install the Python SDK",
    );
    let dir = std::env::temp_dir().join(format!("toolbox-scale-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut children = Children(Vec::new());

    // Two server processes, each logging the calls it answers.
    let servers: Vec<(u16, PathBuf)> = (0..2)
        .map(|i| {
            let port = free_port();
            let log = dir.join(format!("server-{i}.log"));
            children.0.push(start_server(port, &log));
            (port, log)
        })
        .collect();
    // A third, behind its own balancer that forwards each client's
    // address, which this server trusts: two sessions per client.
    let shared_port = free_port();
    children.0.push(
        Command::new(example("mcp_server"))
            .args(["--http", &format!("127.0.0.1:{shared_port}")])
            .args(["--trusted-proxy", "127.0.0.1", "--sessions-per-client", "2"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("shared.log")).unwrap())
            .spawn()
            .expect("the mcp_server example is built (cargo test --features mcp)"),
    );
    for (port, _) in &servers {
        wait_for(*port, "mcp_server");
    }
    wait_for(shared_port, "mcp_server");

    // nginx: a round-robin balancer over both, one over the first alone, and
    // a sticky one for the session era. `Host` is passed through (the
    // servers admit loopback hosts only); responses are streamed (SSE).
    let (both, one, sticky, proxied) = (free_port(), free_port(), free_port(), free_port());
    let upstream = |name: &str, ports: &[u16], policy: &str| {
        let servers: String = ports
            .iter()
            .map(|p| format!("    server 127.0.0.1:{p} max_fails=0;\n"))
            .collect();
        format!("  upstream {name} {{\n{policy}{servers}    keepalive 32;\n  }}\n")
    };
    // A request refused by a process that is going away (connection
    // refused or reset, 502, or its 503 "shutting down") was not run: nginx
    // sends it to the other upstream, POSTs included.
    let location = |port: u16, name: &str| {
        format!(
            "  server {{\n    listen 127.0.0.1:{port};\n    location /mcp {{\n      proxy_pass http://{name};\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      proxy_buffering off;\n      proxy_next_upstream error timeout http_502 http_503 non_idempotent;\n    }}\n  }}\n"
        )
    };
    // The balancer in front of the trusting server says who each client is.
    let forwarding = format!(
        "  server {{\n    listen 127.0.0.1:{proxied};\n    location /mcp {{\n      proxy_pass http://shared;\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n      proxy_buffering off;\n    }}\n  }}\n"
    );
    let d = dir.display();
    let config = format!(
        "master_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nevents {{ worker_connections 1024; }}\nhttp {{\n  log_format upstream '$server_port $upstream_addr $status';\n  access_log {d}/access.log upstream;\n  error_log {d}/error.log;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n{}{}{}{}{}{}{}{forwarding}}}\n",
        upstream("both", &[servers[0].0, servers[1].0], ""),
        upstream("one", &[servers[0].0], ""),
        upstream(
            "sticky",
            &[servers[0].0, servers[1].0],
            "    hash $remote_addr consistent;\n"
        ),
        location(both, "both"),
        location(one, "one"),
        location(sticky, "sticky"),
        upstream("shared", &[shared_port], ""),
    );
    std::fs::write(dir.join("nginx.conf"), config).unwrap();
    let child = Command::new(&nginx)
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .args(["-g", "daemon off;"])
        .stderr(std::fs::File::create(dir.join("nginx.out")).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", nginx.display()));
    children.0.push(child);
    for port in [both, one, sticky, proxied] {
        wait_for(port, "nginx");
    }
    let access = dir.join("access.log");

    // The stateless era, balanced over both processes.
    let url = |port: u16| format!("http://127.0.0.1:{port}/mcp");
    let two = drive(&python, &url(both), 2_000, 8, "2026-07-28");
    let counts: Vec<usize> = servers.iter().map(|(_, log)| served(log)).collect();
    assert_eq!(
        counts.iter().sum::<usize>(),
        2_000,
        "calls per server: {counts:?}"
    );
    assert!(
        counts.iter().all(|&n| n > 0),
        "both processes serve: {counts:?}"
    );
    let balanced = upstreams(&access, both);
    assert_eq!(balanced.len(), 2, "nginx used both upstreams: {balanced:?}");
    assert!(
        balanced.values().all(|&n| n >= 500),
        "round-robin spreads the calls: {balanced:?}"
    );

    // The same calls through one process.
    let single = drive(&python, &url(one), 2_000, 8, "2026-07-28");
    assert_eq!(upstreams(&access, one).len(), 1);

    // The session era: each client's session stays in one process.
    let before: Vec<usize> = servers.iter().map(|(_, log)| served(log)).collect();
    drive(&python, &url(sticky), 200, 4, "legacy");
    let after: Vec<usize> = servers.iter().map(|(_, log)| served(log)).collect();
    let added: Vec<usize> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(added.iter().sum::<usize>(), 200, "{added:?}");
    assert!(
        added.contains(&0),
        "one client address, one process: {added:?}"
    );

    // Behind the forwarding balancer each real client has its own share:
    // two clients (127.0.0.2 and .3, both reaching the server from nginx's
    // 127.0.0.1) hold two sessions each; a third session of the first
    // ends its own oldest, never the other's.
    let shared = url(proxied);
    let mut sessions = Vec::new();
    for source in ["127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"] {
        let (status, id) = curl(source, &shared, None);
        assert_eq!(status, 200, "initialize from {source}");
        sessions.push((source, id.expect("a session id")));
    }
    for (source, id) in &sessions {
        assert_eq!(
            curl(source, &shared, Some(id)).0,
            200,
            "{source}'s session {id} lives"
        );
    }
    assert_eq!(curl("127.0.0.2", &shared, None).0, 200);
    let alive: Vec<u16> = sessions
        .iter()
        .map(|(source, id)| curl(source, &shared, Some(id)).0)
        .collect();
    assert_eq!(alive, [404, 200, 200, 200], "only 127.0.0.2's oldest ended");

    // A rolling restart of the first process during 2,000 stateless calls:
    // SIGTERM (readiness turns "not ready", new requests answered 503, then
    // connections refused; calls in flight finish), a new process on the
    // same port, ready again. Every call is answered, by one process or
    // the other.
    let (port, old_log) = servers[0].clone();
    let before = served(&old_log) + served(&servers[1].1);
    let driver = {
        let (python, url) = (python.clone(), url(both));
        std::thread::spawn(move || drive(&python, &url, 2_000, 8, "2026-07-28"))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while served(&old_log) + served(&servers[1].1) < before + 200 {
        assert!(Instant::now() < deadline, "the calls never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = children.0[0].id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let mut saw_not_ready = false;
    while children.0[0].try_wait().unwrap().is_none() {
        saw_not_ready |= readiness(port) == 503;
        assert!(Instant::now() < deadline, "the old process never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    let new_log = dir.join("server-0-restarted.log");
    children.0[0] = start_server(port, &new_log);
    while readiness(port) != 200 {
        assert!(Instant::now() < deadline, "the new process never got ready");
        std::thread::sleep(Duration::from_millis(10));
    }
    driver
        .join()
        .expect("every call of the rolling restart was answered");
    assert!(
        saw_not_ready,
        "readiness said \"not ready\" while it drained"
    );
    let after = served(&old_log) + served(&servers[1].1) + served(&new_log);
    assert_eq!(after - before, 2_000, "each call answered once");

    println!(
        "stateless through nginx: two processes {two:.0} calls/s, one process {single:.0} calls/s ({:.2}×); a rolling restart lost no call",
        two / single
    );
    drop(children);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tasks across replicas: three `tasks_replica` processes on one shared
/// store (Redis, then PostgreSQL) behind nginx round-robin. 300 tasks are
/// created through the balancer, polled and a third of them cancelled
/// through it; one replica is killed mid-run. Every task ends (its result,
/// cancelled, or failed naming the stopped replica; the idempotent tool's
/// tasks of the stopped replica run again elsewhere and succeed), none
/// stays `working`, none is lost, and each task's follow-ups reached a
/// replica other than its creator (by the upstream nginx names in a
/// response header).
///
/// Ignored by default: `scripts/task_stores` starts Redis and PostgreSQL,
/// builds `tasks_replica` and runs these (`.ci/run` does).
#[cfg(all(feature = "mcp-task-redis", feature = "mcp-task-postgres"))]
mod tasks_across_replicas {
    use super::*;
    use std::collections::{BTreeMap, HashMap};
    use std::sync::Arc;

    use serde_json::{json, Value};
    use toolbox::mcp::server::{PostgresTaskStore, RedisTaskStore, TaskState, TaskStore};

    const TASKS: usize = 300;
    /// How long a task's lease lasts unrenewed on the replicas.
    const LEASE_MS: u64 = 1_500;
    /// How long the jobs that are not cancelled run.
    const JOB_MS: u64 = 2_500;
    /// How often a task is polled.
    const POLL: Duration = Duration::from_millis(400);

    /// A raw `2026-07-28` client: each request on its own, no session, the
    /// Tasks extension declared, `Mcp-Method` and `Mcp-Name` set.
    struct Client {
        http: reqwest::Client,
        url: String,
        next: std::sync::atomic::AtomicU64,
        /// Requests sent again after a replica died under them.
        retried: std::sync::atomic::AtomicU64,
    }

    /// One answer: the JSON-RPC result (or error), the upstream that
    /// answered it, and how long it took.
    struct Answer {
        outcome: Result<Value, Value>,
        upstream: String,
        took: Duration,
    }

    impl Client {
        /// One request; `Err` when no JSON-RPC answer came back (the
        /// replica died under it: a connection reset, nginx's 502).
        async fn attempt(
            &self,
            method: &str,
            name: &str,
            params: &Value,
        ) -> Result<Answer, String> {
            let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut params = params.clone();
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "scale-out", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": {"io.modelcontextprotocol/tasks": {}}
                }
            });
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let started = Instant::now();
            let response = self
                .http
                .post(&self.url)
                .header("Accept", "application/json, text/event-stream")
                .header("Mcp-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", method)
                .header("Mcp-Name", name)
                .json(&body)
                .send()
                .await
                .map_err(|e| format!("{method} {name}: {e}"))?;
            // The last upstream nginx tried (`a, b` after a retry).
            let upstream = response
                .headers()
                .get("x-upstream")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(", ").next())
                .unwrap_or_default()
                .to_owned();
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            let took = started.elapsed();
            let message = parse(&text).ok_or_else(|| {
                format!("{method} {name}: HTTP {status} with no JSON-RPC answer: {text}")
            })?;
            let outcome = match message.get("result") {
                Some(result) => Ok(result.clone()),
                None => Err(message["error"].clone()),
            };
            Ok(Answer {
                outcome,
                upstream,
                took,
            })
        }

        /// A request that does nothing twice (`tasks/get`, `tasks/cancel`)
        /// sent again, as a client would, when the replica that had it died
        /// before answering (at most three times).
        async fn request(&self, method: &str, name: &str, params: Value) -> Answer {
            let mut failures = Vec::new();
            while failures.len() < 3 {
                match self.attempt(method, name, &params).await {
                    Ok(answer) => return answer,
                    Err(failure) => {
                        self.retried
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        failures.push(failure);
                    }
                }
            }
            panic!("no answer in three attempts: {failures:?}")
        }
    }

    /// The JSON-RPC message of a response body, plain JSON or an SSE stream.
    fn parse(body: &str) -> Option<Value> {
        if body.trim_start().starts_with('{') {
            return serde_json::from_str(body).ok();
        }
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
    }

    /// What one task went through, as the client saw it.
    struct Followed {
        index: usize,
        id: String,
        creator: String,
        upstreams: Vec<String>,
        polls: Vec<Duration>,
        end: Value,
    }

    /// The kind of task `index` is: the idempotent `fetch`, a `work`, or a
    /// long `work` the client cancels.
    fn kind(index: usize) -> (&'static str, u64, bool) {
        match index % 3 {
            0 => ("jobs_fetch", JOB_MS, false),
            1 => ("jobs_work", JOB_MS, false),
            _ => ("jobs_work", 60_000, true),
        }
    }

    async fn follow(client: Arc<Client>, index: usize) -> Followed {
        let (tool, ms, cancel) = kind(index);
        // Not sent again: a second `tools/call` would be a second task.
        let created = client
            .attempt(
                "tools/call",
                tool,
                &json!({"name": tool, "arguments": {"label": format!("t{index}"), "ms": ms}}),
            )
            .await
            .unwrap_or_else(|failure| panic!("task {index}: {failure}"));
        let task = created
            .outcome
            .unwrap_or_else(|e| panic!("task {index}: tools/call failed: {e}"));
        assert_eq!(task["resultType"], "task", "task {index}: {task}");
        let id = task["taskId"].as_str().expect("a taskId").to_owned();
        let mut followed = Followed {
            index,
            id: id.clone(),
            creator: created.upstream,
            upstreams: Vec::new(),
            polls: Vec::new(),
            end: Value::Null,
        };
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut cancelled = false;
        loop {
            assert!(Instant::now() < deadline, "task {index} ({id}) never ended");
            // Clients poll out of step: 300 in lockstep would meet the
            // round-robin in the same order each round.
            let jitter = (index * 7_919 + followed.polls.len() * 104_729) % 200;
            tokio::time::sleep(POLL + Duration::from_millis(jitter as u64)).await;
            if cancel && !cancelled && followed.polls.len() >= 2 {
                let answer = client
                    .request("tasks/cancel", &id, json!({"taskId": id}))
                    .await;
                answer
                    .outcome
                    .unwrap_or_else(|e| panic!("task {index}: tasks/cancel refused: {e}"));
                followed.upstreams.push(answer.upstream);
                cancelled = true;
            }
            let answer = client
                .request("tasks/get", &id, json!({"taskId": id}))
                .await;
            followed.polls.push(answer.took);
            followed.upstreams.push(answer.upstream);
            let polled = answer
                .outcome
                .unwrap_or_else(|e| panic!("task {index} ({id}) lost: tasks/get answered {e}"));
            if !matches!(
                polled["status"].as_str(),
                Some("working" | "input_required")
            ) {
                // Read once more by a replica other than the creator, if
                // none has answered for it yet: the ended task reads the
                // same from any replica.
                for _ in 0..20 {
                    if followed.upstreams.iter().any(|u| *u != followed.creator) {
                        break;
                    }
                    let again = client
                        .request("tasks/get", &id, json!({"taskId": id}))
                        .await;
                    followed.upstreams.push(again.upstream);
                    let again = again.outcome.unwrap_or_else(|e| {
                        panic!("task {index} ({id}) lost once ended: tasks/get answered {e}")
                    });
                    assert_eq!(
                        again["status"], polled["status"],
                        "task {index} reads one end"
                    );
                }
                followed.end = polled;
                return followed;
            }
        }
    }

    fn percentile(sorted: &[Duration], p: f64) -> Duration {
        let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted[at]
    }

    /// The three replicas' run on the store at `url`, in `namespace` (a
    /// fresh one per run: Redis keys under `namespace:`, a PostgreSQL
    /// table), read directly through `store`.
    async fn across_replicas(
        kind_name: &str,
        url: &str,
        namespace: &str,
        store: Arc<dyn TaskStore>,
    ) {
        let nginx = tool(
            "TOOLBOX_NGINX",
            &["/usr/sbin/nginx".into(), "/usr/bin/nginx".into()],
            "install Debian's nginx-light",
        );
        let dir =
            std::env::temp_dir().join(format!("toolbox-tasks-{kind_name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut children = Children(Vec::new());
        let run = format!("{:x}", std::process::id());
        let replicas: Vec<(u16, String, PathBuf)> = (0..3)
            .map(|i| {
                let port = free_port();
                let id = format!("{kind_name}-r{i}-{run}");
                let log = dir.join(format!("replica-{i}.log"));
                children.0.push(
                    Command::new(example("tasks_replica"))
                        .args(["--http", &format!("127.0.0.1:{port}")])
                        .args(["--store", url, "--namespace", namespace, "--replica", &id])
                        .args(["--lease", &LEASE_MS.to_string()])
                        .stdout(Stdio::null())
                        .stderr(std::fs::File::create(&log).unwrap())
                        .spawn()
                        .expect(
                            "the tasks_replica example is built (scripts/task_stores builds it)",
                        ),
                );
                (port, id, log)
            })
            .collect();
        for (port, _, _) in &replicas {
            wait_for(*port, "tasks_replica");
        }
        let balancer = free_port();
        let servers: String = replicas
            .iter()
            .map(|(p, _, _)| format!("    server 127.0.0.1:{p} max_fails=1 fail_timeout=60s;\n"))
            .collect();
        let d = dir.display();
        // Round-robin; a request a dead replica cannot take goes to the
        // next; each response names the upstream that answered it.
        let config = format!(
            "master_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nevents {{ worker_connections 2048; }}\nhttp {{\n  log_format upstream '$upstream_addr $status $http_mcp_method $http_mcp_name';\n  access_log {d}/access.log upstream;\n  error_log {d}/error.log;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  upstream replicas {{\n{servers}    keepalive 64;\n  }}\n  server {{\n    listen 127.0.0.1:{balancer};\n    location /mcp {{\n      proxy_pass http://replicas;\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      proxy_buffering off;\n      proxy_next_upstream error timeout http_502 non_idempotent;\n      add_header X-Upstream $upstream_addr always;\n    }}\n  }}\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), config).unwrap();
        children.0.push(
            Command::new(&nginx)
                .arg("-p")
                .arg(&dir)
                .arg("-c")
                .arg(dir.join("nginx.conf"))
                .arg("-e")
                .arg(dir.join("error.log"))
                .args(["-g", "daemon off;"])
                .stderr(std::fs::File::create(dir.join("nginx.out")).unwrap())
                .spawn()
                .unwrap_or_else(|e| panic!("{} does not start: {e}", nginx.display())),
        );
        wait_for(balancer, "nginx");

        let client = Arc::new(Client {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(64)
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            url: format!("http://127.0.0.1:{balancer}/mcp"),
            next: std::sync::atomic::AtomicU64::new(1),
            retried: std::sync::atomic::AtomicU64::new(0),
        });
        let started = Instant::now();
        let followers: Vec<_> = (0..TASKS)
            .map(|index| tokio::spawn(follow(client.clone(), index)))
            .collect();
        // Mid-run: once every task is created and polled (the jobs run
        // 2.5 s), the first replica is killed.
        let access = dir.join("access.log");
        let polled = || {
            std::fs::read_to_string(&access)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains(" tasks/get "))
                .count()
        };
        while polled() < TASKS {
            if started.elapsed() > Duration::from_secs(60) {
                // A follower that gave up says why.
                for follower in followers.into_iter().filter(|f| f.is_finished()) {
                    follower.await.expect("a task's follower");
                }
                panic!("the tasks were never polled");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let killed_at = started.elapsed();
        children.0[0].kill().unwrap();
        children.0[0].wait().unwrap();
        let (killed_port, killed_id, _) = &replicas[0];
        let killed_upstream = format!("127.0.0.1:{killed_port}");
        let mut ended = Vec::new();
        for follower in followers {
            ended.push(follower.await.expect("a task's follower panicked"));
        }
        let wall = started.elapsed();

        // Every task ended, none lost; each as its kind says.
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let (mut reruns, mut crossed) = (0, 0);
        for task in &ended {
            let (tool, _, cancel) = kind(task.index);
            let status = task.end["status"].as_str().unwrap_or_default();
            let label = format!("t{}", task.index);
            let on_killed = task.creator == killed_upstream;
            let record = store
                .get_any(&task.id)
                .await
                .expect("the task is in the store");
            assert!(
                record.status.is_terminal(),
                "{label}: {:?} in the store",
                record.status
            );
            *counts
                .entry(match status {
                    "completed" => "completed",
                    "cancelled" => "cancelled",
                    "failed" => "failed",
                    other => panic!("{label} ({}) ended {other}: {}", task.id, task.end),
                })
                .or_default() += 1;
            match (status, tool, cancel) {
                ("completed", _, false) => {
                    let text = task.end["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default();
                    let verb = if tool == "jobs_fetch" {
                        "fetched"
                    } else {
                        "worked"
                    };
                    assert_eq!(text, format!("{verb} {label}"), "{label}: {}", task.end);
                    if record.attempts > 1 {
                        assert!(on_killed, "{label} ran again though its replica lived");
                        assert_eq!(
                            tool, "jobs_fetch",
                            "{label}: only the idempotent tool runs again"
                        );
                        reruns += 1;
                    }
                }
                ("cancelled", _, true) => assert_eq!(record.status, TaskState::Cancelled),
                ("failed", "jobs_work", _) => {
                    let message = task.end["error"]["message"].as_str().unwrap_or_default();
                    assert!(on_killed, "{label} failed on a live replica: {message}");
                    assert!(
                        message.contains(killed_id.as_str()),
                        "{label}: the failure names the stopped replica {killed_id}: {message}"
                    );
                }
                _ => panic!(
                    "{label} ({tool}, cancelled by the client: {cancel}) ended {}",
                    task.end
                ),
            }
            assert!(
                task.upstreams
                    .iter()
                    .any(|u| !u.is_empty() && *u != task.creator),
                "{label}: every follow-up reached its creator {}: {:?}",
                task.creator,
                task.upstreams
            );
            crossed += task
                .upstreams
                .iter()
                .filter(|u| **u != task.creator)
                .count();
        }
        let on_killed = ended
            .iter()
            .filter(|t| t.creator == killed_upstream)
            .count();
        assert!(on_killed > 0, "the killed replica had created tasks");
        assert!(
            reruns > 0,
            "some idempotent task of the killed replica ran again: {counts:?}"
        );
        assert!(
            counts.get("failed").copied().unwrap_or(0) > 0,
            "some task failed with its replica: {counts:?}"
        );
        let per_replica: HashMap<&str, usize> = ended.iter().fold(HashMap::new(), |mut m, t| {
            *m.entry(t.creator.as_str()).or_default() += 1;
            m
        });
        assert_eq!(
            per_replica.len(),
            3,
            "round-robin created tasks on all three: {per_replica:?}"
        );

        let mut polls: Vec<Duration> = ended.iter().flat_map(|t| t.polls.iter().copied()).collect();
        polls.sort();
        println!(
            "tasks across 3 replicas on {kind_name}: {TASKS} tasks ended in {:.1} s (replica killed at {:.1} s, {on_killed} of its tasks: {reruns} idempotent ones run again); {counts:?}; {} polls, {crossed} follow-ups to a replica other than the creator, {} requests sent again after the kill; tasks/get through nginx p50 {:.1} ms, p99 {:.1} ms",
            wall.as_secs_f64(),
            killed_at.as_secs_f64(),
            polls.len(),
            client.retried.load(std::sync::atomic::Ordering::Relaxed),
            percentile(&polls, 0.5).as_secs_f64() * 1e3,
            percentile(&polls, 0.99).as_secs_f64() * 1e3,
        );
        drop(children);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn required(variable: &str) -> String {
        std::env::var(variable)
            .unwrap_or_else(|_| panic!("{variable} is not set: run scripts/task_stores"))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs nginx, Redis and the tasks_replica example: run scripts/task_stores (.ci/run does)"]
    async fn three_replicas_behind_nginx_share_tasks_in_redis() {
        let url = required("TOOLBOX_REDIS_URL");
        let namespace = format!("scale_out_{}", std::process::id());
        let prefix = format!("{namespace}:");
        let store = Arc::new(
            RedisTaskStore::connect_prefixed(&url, &prefix)
                .await
                .unwrap(),
        );
        across_replicas("redis", &url, &namespace, store).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs nginx, PostgreSQL and the tasks_replica example: run scripts/task_stores (.ci/run does)"]
    async fn three_replicas_behind_nginx_share_tasks_in_postgres() {
        let url = required("TOOLBOX_POSTGRES_URL");
        let namespace = format!("scale_out_{}", std::process::id());
        let store = Arc::new(
            PostgresTaskStore::connect_table(&url, &namespace)
                .await
                .unwrap(),
        );
        across_replicas("postgres", &url, &namespace, store).await;
        // The run's table goes (Redis drops the run's keys past their ttl).
        let _ = Command::new("psql")
            .args([url.as_str(), "-qc", &format!("DROP TABLE {namespace}")])
            .status();
    }
}
