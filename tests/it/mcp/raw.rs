//! The protocol's edges, spoken line by line: no identity, every handshake version, probes
//! and stray messages before `initialize`, the size of `tools/list`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};

use super::{TOOLS, mcp_command};
use crate::common::TestEnv;

/// What the issue allows the whole `tools/list` answer to weigh.
const TOOLS_LIST_LIMIT: usize = 12 * 1024;

#[test]
fn without_an_identity_the_server_refuses_to_start() {
    let env = TestEnv::new();
    let output = mcp_command(&env, &env.work(), "", &[])
        .output()
        .expect("baton runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        output.stdout.is_empty(),
        "stdout is for protocol frames only"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some("error: no identity: pass --as NAME or set BATON_AGENT"),
        "{stderr}"
    );

    let output = mcp_command(&env, &env.work(), "Not A Name", &[])
        .output()
        .expect("baton runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: invalid agent name `Not A Name`"),
        "{stderr}"
    );
}

/// A server spoken to line by line, for what a client library smooths over.
struct RawServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl RawServer {
    fn start(env: &TestEnv, agent: &str) -> RawServer {
        let mut child = mcp_command(env, &env.work(), agent, &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("baton mcp starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        RawServer {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("the server reads stdin");
        stdin.flush().unwrap();
    }

    /// The next line the server writes, which must be JSON-RPC. The wait is only a guard
    /// against hanging the test; the protocol checks below do not depend on it.
    fn receive_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers")
    }

    fn receive(&self) -> Value {
        let line = self.receive_line();
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout carries only JSON-RPC ({error}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    fn initialize(&mut self, version: &str) -> Value {
        self.send(json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        }));
        let answer = self.receive();
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes stdin and waits for the server to end.
    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let status = self.child.wait().expect("the server ends");
        assert!(
            self.lines.recv_timeout(Duration::from_secs(10)).is_err(),
            "nothing more on stdout"
        );
        status.code().unwrap_or(-1)
    }
}

#[test]
fn every_handshake_version_is_served() {
    let env = TestEnv::new();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut server = RawServer::start(&env, "codex");
        let answer = server.initialize(version);
        assert_eq!(answer["id"], "init");
        assert_eq!(answer["result"]["protocolVersion"], version);
        assert!(
            answer["result"]["capabilities"]["experimental"]["claude/channel"].is_object(),
            "{answer}"
        );
        assert_eq!(answer["result"]["serverInfo"]["name"], "baton");
        assert!(answer["result"]["capabilities"]["tools"].is_object());
        server.send(json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "inbox", "arguments": {}},
        }));
        let answer = server.receive();
        assert_eq!(answer["id"], 2);
        assert_eq!(answer["result"]["structuredContent"]["agent"], "codex");
        assert_eq!(server.finish(), 0, "exits 0 on stdin EOF ({version})");
    }
    // A client asking for the stateless era by `initialize` gets the newest handshake.
    let mut server = RawServer::start(&env, "claude");
    let answer = server.initialize("2026-07-28");
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    assert_eq!(server.finish(), 0);
}

#[test]
fn probes_and_stray_messages_before_initialize_are_survived() {
    let env = TestEnv::new();
    let mut server = RawServer::start(&env, "claude");
    // A notification before initialize (a client that gave up on a probe) is dropped
    // rather than ending the connection.
    server.send(json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 0, "reason": "timeout"},
    }));
    // A `server/discover`, bare or with the stateless era's whole `_meta` (as a probing
    // client sends it), gets -32601 at once, so the client falls back to `initialize`.
    server.send(json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover"}));
    let answer = server.receive();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    server.send(json!({
        "jsonrpc": "2.0", "id": "probe", "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2"},
        }},
    }));
    let answer = server.receive();
    assert_eq!(answer["id"], "probe");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    // A request of the stateless era is refused too: the server stays on initialize.
    server.send(json!({
        "jsonrpc": "2.0", "id": "stateless", "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    }));
    let answer = server.receive();
    assert_eq!(answer["id"], "stateless");
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(
        server.receive(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );

    let answer = server.initialize("2025-06-18");
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        answer["result"]["capabilities"]["experimental"]["claude/channel"],
        json!({})
    );
    let instructions = answer["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("`claude`"), "{instructions}");

    // Unknown methods are answered at once with -32601.
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}));
    let answer = server.receive();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["error"]["code"], -32601);
    server.send(json!({"jsonrpc": "2.0", "id": 4, "method": "baton/wake"}));
    assert_eq!(server.receive()["error"]["code"], -32601);
    assert_eq!(server.finish(), 0);
}

#[test]
fn the_tools_list_answer_stays_under_12_kb() {
    let env = TestEnv::new();
    let mut server = RawServer::start(&env, "claude");
    server.initialize("2025-11-25");
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    // Measured as it travels: the whole JSON-RPC line.
    let line = server.receive_line();
    println!(
        "tools/list answer: {} bytes (limit {TOOLS_LIST_LIMIT})",
        line.len()
    );
    assert!(
        line.len() < TOOLS_LIST_LIMIT,
        "tools/list is {} bytes",
        line.len()
    );
    let answer: Value = serde_json::from_str(&line).unwrap();
    let tools = answer["result"]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, TOOLS);
    for tool in tools {
        let description = tool["description"].as_str().expect("a description");
        assert!(
            !description.is_empty() && description.len() <= 80,
            "{description}"
        );
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object");
        // Every tool can name its project.
        assert_eq!(schema["properties"]["project"]["type"], "string");
        // No integer `format` (clients warn about uint64) and no contradictory null default.
        let text = schema.to_string();
        assert!(!text.contains("\"format\""), "{text}");
        assert!(!text.contains("null"), "{text}");
    }
    assert_eq!(server.finish(), 0);
}
