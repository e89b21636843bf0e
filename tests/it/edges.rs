//! The process edges: what `baton mcp` answers to lines that are not one JSON-RPC message,
//! a hook that must answer in time whatever its stdin and its locks do, and a setup
//! uninstall that gives a file back byte for byte.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;

use serde_json::{Value, json};

use crate::common::machine::Machine;
use crate::common::{HeldLock, TestEnv, WATCHDOG, exit_within, files_only};

/// A finished process, stdout and stderr in full.
struct Finished {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Waits for `child` to exit, killing it and failing the test if it runs past the watchdog.
/// `stdin` stays open (when given) until the child has exited: the client kept it open.
#[track_caller]
fn finish(mut child: Child, stdin: Option<ChildStdin>) -> Finished {
    let status = exit_within(&mut child, WATCHDOG, "the process", String::new);
    drop(stdin);
    let mut stdout = String::new();
    let mut stderr = String::new();
    // Either may have been taken already, by a reader of the answers as they come.
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_string(&mut stdout).unwrap();
    }
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).unwrap();
    }
    Finished {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr,
    }
}

// ---------------------------------------------------------------------------------------
// baton mcp

/// `baton --as codex mcp` spoken to in raw lines, as a client library would not.
struct RawMcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl RawMcp {
    fn start(env: &TestEnv) -> RawMcp {
        let mut child = env
            .command(&env.work())
            .args(["--as", "codex", "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("baton mcp starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        RawMcp {
            child,
            stdin,
            lines,
        }
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("the server reads stdin");
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_bytes(format!("{message}\n").as_bytes());
    }

    /// The next line from the server, as JSON. A server that stays silent fails the test
    /// at the watchdog: its client would hang.
    #[track_caller]
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(WATCHDOG)
            .expect("an answer: silence leaves the client hanging");
        serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout carries only JSON-RPC ({error}): {line}"))
    }

    /// A `ping` is answered: the server still serves.
    #[track_caller]
    fn still_serves(&mut self, id: u64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        assert_eq!(
            self.receive(),
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        );
    }

    /// Closes stdin; the server must end, with exit 0.
    #[track_caller]
    fn finish(mut self) {
        drop(self.stdin.take());
        let run = finish(self.child, None);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
}

/// An error answer with `code` and an `id` that is present and null.
#[track_caller]
fn assert_error_with_null_id(answer: &Value, code: i64) {
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    assert_eq!(answer.get("id"), Some(&Value::Null), "{answer}");
}

#[test]
fn mcp_answers_a_line_that_is_not_json_with_a_parse_error() {
    let env = TestEnv::new();
    let mut server = RawMcp::start(&env);
    server.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "edges", "version": "1"},
        },
    }));
    assert_eq!(server.receive()["id"], 1);
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    for garbage in [
        &b"{not json\n"[..],
        b"{\"jsonrpc\": \"2.0\", \"id\": 2,\n",
        b"\xff\xfe\n",
    ] {
        server.send_bytes(garbage);
        let answer = server.receive();
        assert_error_with_null_id(&answer, -32700);
    }
    server.still_serves(3);
    // JSON that is not a message keeps the id it gave, so its requester hears back.
    server.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": 5}));
    let answer = server.receive();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], 4, "{answer}");
    server.still_serves(5);
    server.finish();
}

#[test]
fn mcp_answers_a_batch_with_an_error_for_each_request() {
    let env = TestEnv::new();
    let mut server = RawMcp::start(&env);
    server.send(json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/list"},
    ]));
    let answer = server.receive();
    let answers = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
    let ids: Vec<&Value> = answers.iter().map(|answer| &answer["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!("two")], "{answer}");
    for answer in answers {
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("batches are not supported"), "{message}");
    }
    // A batch with no request in it is not passed over in silence either.
    server.send(json!([]));
    assert_error_with_null_id(&server.receive(), -32600);
    server.still_serves(3);
    server.finish();
}

#[test]
fn mcp_answers_an_over_long_line_and_serves_the_next() {
    let env = TestEnv::new();
    let mut server = RawMcp::start(&env);
    server.still_serves(1);
    // A `send` whose body alone passes 4 MiB, in one line.
    let body = "x".repeat(5 * 1024 * 1024);
    server.send(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "send", "arguments": {"to": "codex", "subject": "big", "body": body}},
    }));
    let answer = server.receive();
    assert_error_with_null_id(&answer, -32600);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("longer than 4 MiB"), "{message}");
    server.still_serves(3);
    // The same again without its newline, then the end of input: the server still ends.
    server.send_bytes(&vec![b' '; 5 * 1024 * 1024]);
    assert_error_with_null_id(&server.receive(), -32600);
    server.finish();
    let inbox = env.run("codex", &["--json", "inbox", "--peek"]).json();
    assert_eq!(
        inbox["tasks"],
        json!([]),
        "the over-long send was not carried out"
    );
}

#[test]
fn mcp_with_a_project_that_does_not_exist_refuses_to_start() {
    let env = TestEnv::new();
    let run = env.run("codex", &["--project", "nope", "mcp"]);
    let stderr = run.fails(1);
    assert!(run.stdout.is_empty(), "stdout is for protocol frames only");
    assert!(
        stderr.starts_with("error: project nope does not exist"),
        "{stderr}"
    );
    // `default` comes into being on first use, as everywhere: the server starts (and ends
    // at once, its stdin being empty).
    env.run("codex", &["--project", "default", "mcp"]).ok();
}

// ---------------------------------------------------------------------------------------
// Hooks

const NOW: &str = "2026-11-29T12:00:00.000Z";

/// A hub where codex has T-1 from claude to act on and one unread message from claude.
fn codex_has_work() -> TestEnv {
    let env = TestEnv::new();
    for agent in ["claude", "codex"] {
        env.run_env(agent, &["whoami"], &[("BATON_NOW", NOW)]).ok();
    }
    env.run_env(
        "claude",
        &["send", "--to", "codex", "--subject", "Fix the lexer"],
        &[("BATON_NOW", NOW)],
    )
    .ok();
    env.run_env(
        "claude",
        &["msg", "--to", "codex", "the benchmarks are in bench/"],
        &[("BATON_NOW", NOW)],
    )
    .ok();
    env
}

/// `baton hook ARGS…` as codex's client starts it: stdin a pipe the test controls.
fn start_hook(env: &TestEnv, args: &[&str], now: &str) -> (Child, ChildStdin) {
    let mut child = env
        .command(env.root.path())
        .env("BATON_AGENT", "codex")
        .env("BATON_NOW", now)
        // As long as a user may set it: the hook must not wait this long for any lock.
        .env("BATON_LOCK_TIMEOUT", "60")
        .arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the hook runs");
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// Runs a hook whose client writes `input` and then keeps stdin open until the hook exits.
fn hook_with_open_stdin(env: &TestEnv, args: &[&str], input: &str, now: &str) -> Finished {
    let (child, mut stdin) = start_hook(env, args, now);
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    finish(child, Some(stdin))
}

/// Runs a hook whose client writes `input` and closes stdin.
fn hook_with_input(env: &TestEnv, args: &[&str], input: &str, now: &str) -> Finished {
    let (child, mut stdin) = start_hook(env, args, now);
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    finish(child, None)
}

fn client_input(env: &TestEnv) -> String {
    json!({
        "session_id": "s-1",
        "cwd": env.work(),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "carry on",
    })
    .to_string()
}

/// The context a prompt hook added, from Claude Code's answer shape.
#[track_caller]
fn added_context(run: &Finished) -> String {
    assert_eq!(run.code, 0, "a hook exits 0\nstderr: {}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}): {:?}", run.stdout));
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no context in {answer}"))
        .to_string()
}

/// Asserts that a hook's context shows what [`codex_has_work`] left for codex: its task and
/// its message.
#[track_caller]
fn assert_shows_codex_work(context: &str) {
    assert!(context.contains("T-1"), "{context}");
    assert!(context.contains("Fix the lexer"), "{context}");
    assert!(
        context.contains("the benchmarks are in bench/"),
        "{context}"
    );
}

fn unread_messages(env: &TestEnv) -> Vec<String> {
    let inbox = env.run("codex", &["--json", "inbox", "--peek"]).json();
    inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["body"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_hook_with_an_unknown_event_or_client_exits_0_without_reading_stdin() {
    let env = codex_has_work();
    for args in [
        &["bogus", "--client", "claude"][..],
        &["prompt", "--client", "vim"],
        &["prompt"],
    ] {
        // Nothing is ever written and stdin never closes: a hook that reads it hangs.
        let (child, stdin) = start_hook(&env, args, NOW);
        let run = finish(child, Some(stdin));
        assert_eq!(
            run.code, 0,
            "{args:?}: a hook always exits 0: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "", "{args:?}: nothing for the client to parse");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    }
    let (child, stdin) = start_hook(&env, &["Stop", "--client", "VIM"], NOW);
    let run = finish(child, Some(stdin));
    assert!(
        run.stderr.contains("unknown hook client \"VIM\""),
        "{}",
        run.stderr
    );
    let (child, stdin) = start_hook(&env, &["bogus", "--client", "claude"], NOW);
    let run = finish(child, Some(stdin));
    assert!(
        run.stderr.contains("unknown hook event \"bogus\""),
        "{}",
        run.stderr
    );
}

#[test]
fn a_hook_answers_when_the_client_keeps_stdin_open() {
    let env = codex_has_work();
    // The client's whole JSON, then nothing more and no end of input.
    let run = hook_with_open_stdin(
        &env,
        &["prompt", "--client", "claude"],
        &client_input(&env),
        NOW,
    );
    let context = added_context(&run);
    assert!(context.contains("T-1"), "{context}");
    assert!(context.contains("Fix the lexer"), "{context}");

    // Half a JSON object and no end: the hook answers from its own directory after a moment.
    let run = hook_with_open_stdin(&env, &["stop", "--client", "claude"], "{\"cwd\": ", NOW);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
}

#[test]
fn a_prompt_hook_with_the_mail_lock_held_shows_the_inbox_and_leaves_the_mail_unread() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = codex_has_work();
    let _held = HeldLock::on(&env.project_dir("default").join("mail.lock"));
    let run = hook_with_input(
        &env,
        &["prompt", "--client", "claude"],
        &client_input(&env),
        NOW,
    );
    let context = added_context(&run);
    assert_shows_codex_work(&context);
    assert_eq!(
        unread_messages(&env),
        ["the benchmarks are in bench/"],
        "not marked read: the hook could not take the mail lock"
    );
}

#[test]
fn hooks_with_the_board_lock_held_show_the_inbox_and_renew_no_lease() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = codex_has_work();
    env.run_env(
        "claude",
        &["send", "--to", "codex", "--subject", "Port the parser"],
        &[("BATON_NOW", NOW)],
    )
    .ok();
    env.run_env("codex", &["claim", "2"], &[("BATON_NOW", NOW)])
        .ok();
    let lease = env.board("default")["tasks"][1]["lease_expires_at"].clone();
    assert!(lease.is_string(), "claimed: {lease}");
    // Twenty minutes on, less than half of the 30-minute lease is left: due for renewal,
    // which is a write under the board lock.
    let later = "2026-11-29T12:20:00.000Z";
    let _held = HeldLock::on(&env.project_dir("default").join("board.lock"));

    let run = hook_with_input(
        &env,
        &["prompt", "--client", "claude"],
        &client_input(&env),
        later,
    );
    let context = added_context(&run);
    assert_shows_codex_work(&context);

    let run = hook_with_input(
        &env,
        &["stop", "--client", "claude"],
        &client_input(&env),
        later,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    assert!(
        answer["reason"].as_str().unwrap().contains("T-1"),
        "{answer}"
    );

    assert_eq!(
        env.board("default")["tasks"][1]["lease_expires_at"],
        lease,
        "the lease was not renewed: the board lock was busy"
    );
}

#[test]
fn a_hook_with_the_registry_lock_held_shows_the_inbox() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = codex_has_work();
    let seen = env.run("", &["--json", "agent", "show", "codex"]).json()["last_seen"].clone();
    // An hour on, codex's heartbeat is due, which is a write under its registry lock.
    let later = "2026-11-29T13:00:00.000Z";
    let _held = HeldLock::on(&env.home().join("agents").join("codex.lock"));
    let run = hook_with_input(
        &env,
        &["prompt", "--client", "claude"],
        &client_input(&env),
        later,
    );
    let context = added_context(&run);
    assert!(context.contains("T-1"), "{context}");
    assert!(context.contains("Fix the lexer"), "{context}");
    let after = env.run("", &["--json", "agent", "show", "codex"]).json()["last_seen"].clone();
    assert_eq!(after, seen, "no heartbeat: the registry lock was busy");
}

// ---------------------------------------------------------------------------------------
// setup --uninstall

/// Compact, hand-made files of each format setup edits, none ending the way setup would.
fn compact_user_files(machine: &Machine) -> Vec<(std::path::PathBuf, &'static str)> {
    vec![
        (machine.user().join(".gemini/settings.json"), "{\"a\":1}"),
        (machine.user().join(".claude/settings.json"), "{\"a\":1}\n"),
        (
            machine.user().join(".claude.json"),
            "{\"numStartups\":3,\"mcpServers\":{\"other\":{\"command\":\"x\"}}}",
        ),
        (
            machine.xdg_config().join("opencode/opencode.json"),
            "// mine\n{\"x\":[1,2],/* keep */\"z\":true,}",
        ),
        (
            machine.codex_home().join("config.toml"),
            "model = \"o3\"\n[x]\na=1",
        ),
        (machine.codex_home().join("hooks.json"), "{\"hooks\":{}}"),
    ]
}

#[test]
fn setup_then_uninstall_gives_compact_files_back_byte_for_byte() {
    let machine = Machine::new();
    for (path, text) in compact_user_files(&machine) {
        machine.write(&path, text);
    }
    let original = machine.files();
    machine
        .setup(&["--client", "claude,codex,gemini,opencode"])
        .ok();
    let gemini = machine.user().join(".gemini/settings.json");
    assert_ne!(fs::read_to_string(&gemini).unwrap(), "{\"a\":1}");
    // Setup creates files of its own too (the skill, GEMINI.md, AGENTS.md…): all go.
    assert!(machine.files().len() > original.len());

    machine.setup(&["--uninstall"]).ok();
    assert_eq!(fs::read_to_string(&gemini).unwrap(), "{\"a\":1}");
    assert_eq!(
        machine.files_without_backups(),
        original,
        "uninstall left something different"
    );
}

#[test]
fn uninstall_keeps_what_the_user_changed_after_setup() {
    let machine = Machine::new();
    let gemini = machine.user().join(".gemini/settings.json");
    machine.write(&gemini, "{\"a\":1}");
    machine.setup(&["--client", "gemini"]).ok();
    let wired = fs::read_to_string(&gemini).unwrap();
    let edited = wired.replacen("\"a\":1", "\"a\":2", 1);
    assert_ne!(edited, wired);
    fs::write(&gemini, &edited).unwrap();

    machine.setup(&["--uninstall"]).ok();
    let after = fs::read_to_string(&gemini).unwrap();
    let value: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(value, json!({"a": 2}), "the user's change stays: {after}");
}
