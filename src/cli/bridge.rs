//! `baton mcp` on an agent's machine whose hub is elsewhere (BATON_URL): a stdio MCP server
//! that hands every message to the hub's `/mcp` and writes back what the hub answers, so the
//! agent's client gets the hub's very tools, acting as the token's agent.
//!
//! A tool call that names no project is given the one this machine's directory is mapped to
//! (`baton project map`), or the one `--project` names: over HTTP the hub has no working
//! directory to take it from. stdout carries only protocol frames.

use std::io::{BufRead, Read, Write};

use serde_json::{Value, json};

use baton::error::Error;
use baton::remote::{Hub, McpAnswer};

use super::Context;

/// The most of one line from the client that is passed on, as the local server allows.
const LINE_LIMIT: usize = 4 * 1024 * 1024;

pub fn run(context: &Context, hub: &Hub) -> Result<i32, Error> {
    let project = context.remote_project(None)?;
    // The hub is asked once before serving, so a wrong URL or token is said at start, in
    // the client's log, rather than as every call failing.
    baton::remote::listen::agent_of(hub)?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut session = Session::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input)
            .take(LINE_LIMIT as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|error| Error::invalid(format!("cannot read stdin: {error}")))?;
        if read == 0 {
            break;
        }
        if line.len() > LINE_LIMIT {
            // The rest of an overlong line is skipped, as the local server does.
            let mut rest = Vec::new();
            let _ = input.read_until(b'\n', &mut rest);
            answer(&error_reply(
                &Value::Null,
                -32600,
                "the message is over 4 MiB",
            ));
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let Ok(mut message) = serde_json::from_str::<Value>(&text) else {
            answer(&error_reply(&Value::Null, -32700, "the line is not JSON"));
            continue;
        };
        with_project(&mut message, &project);
        let id = message.get("id").cloned();
        let body = serde_json::to_vec(&message).unwrap_or_default();
        session.note(&message, &body);
        match session.pass(hub, &body) {
            Ok(reply) => {
                for frame in &reply.messages {
                    answer(frame);
                }
                if let (Some(id), true, Some(refusal)) =
                    (&id, reply.messages.is_empty(), reply.refusal)
                {
                    answer(&error_reply(id, -32603, &refusal.to_string()));
                }
            }
            Err(error) => {
                eprintln!("baton mcp: {}", baton::text::inline(&error.to_string()));
                if let Some(id) = &id {
                    answer(&error_reply(id, -32603, &error.to_string()));
                }
            }
        }
    }
    if let Some(id) = &session.id {
        hub.end_mcp(id);
    }
    Ok(0)
}

/// The MCP session the bridge holds on the hubs for its client. A session is kept by the
/// hub that opened it: when `BATON_URL` names several and the bridge moves to another, that
/// one does not know it (404), and the bridge opens it there again with the client's own
/// `initialize` and `notifications/initialized`, then passes the message on, so the client
/// carries on as if nothing happened.
#[derive(Default)]
struct Session {
    id: Option<String>,
    /// The client's `initialize` and `notifications/initialized`, as it sent them.
    initialize: Option<Vec<u8>>,
    initialized: Option<Vec<u8>>,
}

impl Session {
    /// Keeps the messages that open a session, to open it again elsewhere.
    fn note(&mut self, message: &Value, body: &[u8]) {
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                self.initialize = Some(body.to_vec());
                self.initialized = None;
                // A new `initialize` opens a new session.
                self.id = None;
            }
            Some("notifications/initialized") => self.initialized = Some(body.to_vec()),
            _ => {}
        }
    }

    /// Passes `body` to the hub in use, opening the session again there first when the hub
    /// does not know it.
    fn pass(&mut self, hub: &Hub, body: &[u8]) -> Result<McpAnswer, Error> {
        let reply = self.send(hub, body)?;
        let is_unknown = reply.status == 404 && self.id.is_some();
        let Some(initialize) = self.initialize.clone().filter(|_| is_unknown) else {
            return Ok(reply);
        };
        eprintln!(
            "baton mcp: the hub at {} does not know this session; opening it there again",
            reply.hub
        );
        self.id = None;
        let opened = self.send(hub, &initialize)?;
        if self.id.is_none() || !(200..300).contains(&opened.status) {
            return Ok(reply);
        }
        if let Some(initialized) = self.initialized.clone() {
            self.send(hub, &initialized)?;
        }
        self.send(hub, body)
    }

    fn send(&mut self, hub: &Hub, body: &[u8]) -> Result<McpAnswer, Error> {
        let reply = hub.mcp(body, self.id.as_deref())?;
        if reply.session.is_some() {
            self.id.clone_from(&reply.session);
        }
        Ok(reply)
    }
}

/// Gives a tool call without a `project` argument the project of this directory.
fn with_project(message: &mut Value, project: &str) {
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return;
    }
    if let Some(arguments) = message
        .get_mut("params")
        .and_then(|params| {
            if params.get("arguments").is_none_or(Value::is_null) {
                params["arguments"] = json!({});
            }
            params.get_mut("arguments")
        })
        .and_then(Value::as_object_mut)
        && !arguments.contains_key("project")
    {
        arguments.insert("project".into(), Value::String(project.to_string()));
    }
}

fn error_reply(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Writes one frame to stdout; a client that stopped reading ends the bridge.
fn answer(frame: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(frame.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}
