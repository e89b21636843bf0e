//! `baton mcp` driven by real MCP clients over stdio: rmcp's own client (the initialize
//! handshake, and a client that probes the stateless 2026-07-28 era first and falls back),
//! raw JSON-RPC lines for the protocol's edges, and the official Python SDK through
//! tests/mcp_python.

mod diff;
mod edit;
mod labels;
mod life;
mod raw;
mod reserve;
mod worktree;

use std::path::Path;
use std::process::{Command, Stdio};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::Value;

use crate::common::TestEnv;

/// Every tool the server must offer, and nothing else (no wake registration).
const TOOLS: [&str; 22] = [
    "agents",
    "answer",
    "approve",
    "ask",
    "board",
    "cancel",
    "claim",
    "diff",
    "done",
    "edit",
    "fail",
    "inbox",
    "message",
    "reassign",
    "release",
    "request_changes",
    "reservations",
    "reserve",
    "review",
    "send",
    "show",
    "unreserve",
];

/// A `baton mcp` process and the rmcp client session talking to it.
struct Server {
    client: RunningService<RoleClient, ()>,
}

/// `baton [--as AGENT] mcp EXTRA…` in `cwd`, with the test's private home.
fn mcp_command(env: &TestEnv, cwd: &Path, agent: &str, extra: &[&str]) -> Command {
    let mut command = env.command(cwd);
    if !agent.is_empty() {
        command.args(["--as", agent]);
    }
    command.arg("mcp").args(extra);
    command
}

impl Server {
    /// Starts a server and opens a session with the `initialize` handshake.
    async fn start(env: &TestEnv, cwd: &Path, agent: &str) -> Server {
        Server::start_with(
            mcp_command(env, cwd, agent, &[]),
            ClientLifecycleMode::Initialize,
        )
        .await
    }

    async fn start_with(command: Command, lifecycle: ClientLifecycleMode) -> Server {
        Server::start_quiet(command, lifecycle, Stdio::inherit()).await
    }

    async fn start_quiet(
        command: Command,
        lifecycle: ClientLifecycleMode,
        stderr: impl Into<Stdio>,
    ) -> Server {
        let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(command))
            .stderr(stderr)
            .spawn()
            .expect("baton mcp starts");
        let client =
            ().serve_with_lifecycle(transport, lifecycle)
                .await
                .expect("the MCP session opens");
        Server { client }
    }

    fn protocol_version(&self) -> String {
        self.client
            .peer_info()
            .expect("server info")
            .protocol_version
            .to_string()
    }

    async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        self.client
            .call_tool(params(name, arguments))
            .await
            .unwrap_or_else(|error| panic!("{name}: protocol error {error:?}"))
    }

    /// Calls a tool that must succeed; see [`succeeded`].
    async fn ok(&self, name: &str, arguments: Value) -> Value {
        succeeded(name, &self.call(name, arguments).await)
    }

    /// Calls a tool that must be refused and returns its message.
    async fn refused(&self, name: &str, arguments: Value) -> String {
        was_refused(name, &self.call(name, arguments).await)
    }

    async fn stop(self) {
        self.client.cancel().await.expect("the session closes");
    }
}

/// A tool call's request; its arguments must be an object.
pub fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("tool arguments are an object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(arguments)
}

/// The result of a call that must have succeeded: its text is the CLI's JSON and its
/// structured content the same data, which is returned.
#[track_caller]
pub fn succeeded(name: &str, result: &CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(false),
        "{name} was refused: {}",
        text_of(result)
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structured content");
    let text: Value = serde_json::from_str(text_of(result)).expect("the text is JSON");
    match &text {
        // Structured content is an object, so a list travels under one key.
        Value::Array(_) => {
            let object = structured.as_object().expect("an object");
            assert_eq!(object.len(), 1, "{structured}");
            assert_eq!(object.values().next(), Some(&text));
        }
        _ => assert_eq!(text, structured),
    }
    structured
}

/// The message of a call that must have been refused.
#[track_caller]
pub fn was_refused(name: &str, result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "{name} should be refused: {}",
        text_of(result)
    );
    assert!(result.structured_content.is_none());
    text_of(result).to_string()
}

pub fn text_of(result: &CallToolResult) -> &str {
    &result
        .content
        .first()
        .and_then(|content| content.as_text())
        .expect("a text content block")
        .text
}

fn task_numbers(list: &Value) -> Vec<u64> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|task| task["id"].as_u64().expect("a task id"))
        .collect()
}
