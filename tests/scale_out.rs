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
