//! `baton hook`: what each client gets at session start, on a prompt and at stop, empty and
//! busy; the stop hook's block and release; errors that must not break the client's turn;
//! and the scripts in hooks/.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{TestEnv, baton_bin, files_only};

/// Every command in these tests runs at this moment, so answers are stable.
const NOW: &str = "2026-11-29T12:00:00.000Z";
const CLIENTS: [&str; 3] = ["claude", "codex", "gemini"];
const EVENTS: [&str; 3] = ["session-start", "prompt", "stop"];

/// A finished hook run.
struct HookRun {
    code: i32,
    stdout: String,
    stderr: String,
}

impl HookRun {
    /// Asserts what every hook run must be: exit 0, and for Gemini CLI JSON and nothing else.
    #[track_caller]
    fn checked(self, client: &str) -> HookRun {
        assert_eq!(self.code, 0, "a hook exits 0\nstderr: {}", self.stderr);
        if client == "gemini" || !self.stdout.is_empty() {
            let parsed: Result<Value, _> = serde_json::from_str(&self.stdout);
            assert!(
                parsed.is_ok(),
                "stdout is one JSON value: {:?}",
                self.stdout
            );
            assert!(self.stdout.ends_with('\n') && self.stdout.lines().count() == 1);
        }
        self
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap()
    }
}

fn run_command(mut command: Command, stdin: Option<&str>) -> HookRun {
    command.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("the hook runs");
    if let Some(text) = stdin {
        // A script that exits without reading (no baton on PATH) closes the pipe early.
        let _ = child.stdin.take().unwrap().write_all(text.as_bytes());
    }
    let output = child.wait_with_output().unwrap();
    HookRun {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// What a client sends on stdin for `event`.
fn client_input(env: &TestEnv, client: &str, event: &str, stop_hook_active: bool) -> String {
    let name = match (client, event) {
        (_, "session-start") => "SessionStart",
        ("gemini", "prompt") => "BeforeAgent",
        (_, "prompt") => "UserPromptSubmit",
        ("gemini", _) => "AfterAgent",
        _ => "Stop",
    };
    let mut input = json!({
        "session_id": "0b7e-session",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.work(),
        "hook_event_name": name,
    });
    match event {
        "session-start" => input["source"] = json!("startup"),
        "prompt" => input["prompt"] = json!("carry on"),
        _ => input["stop_hook_active"] = json!(stop_hook_active),
    }
    input.to_string()
}

/// `baton hook EVENT --client CLIENT` as the client runs it: identity from BATON_AGENT,
/// the hook JSON on stdin, from some other directory than the workspace.
fn hook(env: &TestEnv, agent: &str, client: &str, event: &str, stdin: Option<&str>) -> HookRun {
    let mut command = env.command(env.root.path());
    command
        .env("BATON_NOW", NOW)
        .env("BATON_AGENT", agent)
        .args(["hook", event, "--client", client]);
    run_command(command, stdin).checked(client)
}

fn client_hook(env: &TestEnv, agent: &str, client: &str, event: &str) -> HookRun {
    let input = client_input(env, client, event, false);
    hook(env, agent, client, event, Some(&input))
}

fn at_now(env: &TestEnv, agent: &str, args: &[&str]) -> String {
    env.run_env(agent, args, &[("BATON_NOW", NOW)])
        .ok()
        .to_string()
}

/// A hub where codex has two tasks to act on and two unread messages.
fn busy() -> TestEnv {
    let env = TestEnv::new();
    for agent in ["claude", "codex", "gemini"] {
        at_now(&env, agent, &["whoami"]);
    }
    at_now(
        &env,
        "claude",
        &[
            "send",
            "--to",
            "codex",
            "--subject",
            "Fix the lexer",
            "--body",
            "Tabs break the tokenizer.\nKeep the public API.",
            "--files",
            "src/lexer.rs,src/token.rs",
            "--priority",
            "high",
        ],
    );
    at_now(
        &env,
        "codex",
        &["send", "--to", "claude", "--subject", "Review the grammar"],
    );
    at_now(
        &env,
        "claude",
        &["ask", "2", "--body", "Which grammar file?"],
    );
    at_now(
        &env,
        "claude",
        &[
            "msg",
            "--to",
            "codex",
            "The",
            "benchmarks",
            "are",
            "in",
            "bench/",
        ],
    );
    at_now(
        &env,
        "gemini",
        &[
            "msg",
            "--to",
            "@all",
            "--type",
            "shutdown_request",
            "--summary",
            "Wrapping up at six",
            "Please push your work before six.",
        ],
    );
    env
}

/// A hub where codex has nothing to do.
fn idle() -> TestEnv {
    let env = TestEnv::new();
    for agent in ["claude", "codex"] {
        at_now(&env, agent, &["whoami"]);
    }
    env
}

#[test]
fn answers_for_each_client_and_event_when_nothing_waits() {
    let env = idle();
    for client in CLIENTS {
        for event in EVENTS {
            let run = client_hook(&env, "codex", client, event);
            insta::assert_snapshot!(format!("empty_{client}_{event}"), run.stdout);
        }
    }
}

#[test]
fn answers_for_each_client_and_event_when_work_waits() {
    for client in CLIENTS {
        for event in EVENTS {
            // A fresh hub each time: session-start and prompt mark the messages read.
            let env = busy();
            let run = client_hook(&env, "codex", client, event);
            insta::assert_snapshot!(format!("busy_{client}_{event}"), run.stdout);
        }
    }
}

#[test]
fn the_context_says_who_where_what_and_how_to_answer() {
    let env = busy();
    let run = client_hook(&env, "codex", "claude", "session-start");
    let context = run.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    insta::assert_snapshot!("context_text", context);
    for needed in [
        "you are codex in project default",
        "T-1 [high] to do: Fix the lexer",
        "| Tabs break the tokenizer.",
        "files: src/lexer.rs, src/token.rs",
        "T-2 [normal] question for you: Review the grammar",
        "last question by claude (0s ago): Which grammar file?",
        "The benchmarks are in bench/",
        "Wrapping up at six",
        "Please push your work before six.",
        "not seen by your teammates",
    ] {
        assert!(context.contains(needed), "missing {needed:?} in\n{context}");
    }
}

#[test]
fn messages_shown_by_a_hook_are_not_shown_again_but_tasks_are() {
    let env = busy();
    let first = client_hook(&env, "codex", "codex", "session-start").json();
    let first = first["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.contains("2 unread messages"), "{first}");
    let next = client_hook(&env, "codex", "codex", "prompt").json();
    let next = next["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!next.contains("unread message"), "{next}");
    assert!(
        next.contains("Fix the lexer"),
        "tasks stay until done: {next}"
    );
    let inbox = env.run("codex", &["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["messages"], json!([]), "the hook marked them read");

    // The stop hook only looks.
    let env = busy();
    client_hook(&env, "codex", "claude", "stop");
    let inbox = env.run("codex", &["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 2);
}

#[test]
fn the_stop_hook_blocks_while_work_waits_and_releases_when_already_active() {
    let env = busy();
    for client in CLIENTS {
        let run = client_hook(&env, "codex", client, "stop");
        let answer = run.json();
        let expected = if client == "gemini" { "deny" } else { "block" };
        assert_eq!(answer["decision"], expected, "{client}");
        let reason = answer["reason"].as_str().unwrap();
        assert!(reason.contains("T-1 to do: Fix the lexer"), "{reason}");
        assert!(
            reason.contains("T-2 question for you: Review the grammar"),
            "{reason}"
        );

        let again = client_input(&env, client, "stop", true);
        let run = hook(&env, "codex", client, "stop", Some(&again));
        let released = if client == "gemini" { "{}\n" } else { "" };
        assert_eq!(run.stdout, released, "{client} may stop now");
    }

    // Once the work is out of codex's hands, it may stop.
    at_now(&env, "codex", &["claim", "1"]);
    at_now(&env, "codex", &["answer", "2", "--body", "grammar.y"]);
    for client in CLIENTS {
        let run = client_hook(&env, "codex", client, "stop");
        let released = if client == "gemini" { "{}\n" } else { "" };
        assert_eq!(run.stdout, released, "{client}");
    }
    // claude now has T-2 back: its stop hook blocks.
    let run = client_hook(&env, "claude", "claude", "stop");
    assert_eq!(run.json()["decision"], "block");
}

#[test]
fn no_stdin_or_garbled_stdin_still_answers() {
    let env = busy();
    for client in CLIENTS {
        let none = hook(&env, "codex", client, "stop", None);
        let garbled = hook(&env, "codex", client, "stop", Some("{not json"));
        for run in [none, garbled] {
            assert!(run.json()["reason"].as_str().unwrap().contains("T-1"));
        }
    }
}

#[test]
fn errors_become_a_short_note_and_exit_zero() {
    if !files_only("reads board.json") {
        return;
    }
    let env = busy();
    std::fs::write(env.board_path("default"), "{ torn").unwrap();
    for client in CLIENTS {
        for event in EVENTS {
            let run = client_hook(&env, "codex", client, event);
            let note = run.json()["systemMessage"].as_str().unwrap().to_string();
            assert!(note.starts_with("baton hook: "), "{note}");
            assert!(note.contains("board.json is unreadable"), "{note}");
            assert_eq!(note.lines().count(), 1, "{note}");
        }
    }

    let env = idle();
    let mut command = env.command(env.root.path());
    command.args(["hook", "prompt", "--client", "gemini"]);
    let run = run_command(command, Some("{}")).checked("gemini");
    let note = run.json()["systemMessage"].as_str().unwrap().to_string();
    assert!(note.contains("no identity"), "{note}");
}

#[test]
fn clients_own_event_names_are_accepted_in_any_case() {
    let env = busy();
    let spellings = [
        ("SessionStart", "claude"),
        ("sessionstart", "codex"),
        ("UserPromptSubmit", "claude"),
        ("BeforeAgent", "gemini"),
        ("PROMPT", "Codex"),
        ("Stop", "codex"),
        ("AfterAgent", "GEMINI"),
    ];
    for (event, client) in spellings {
        let run = hook(&env, "codex", client, event, None);
        assert!(!run.stdout.is_empty(), "{event} --client {client}");
        assert_eq!(run.stderr, "", "{event} --client {client}");
    }
}

#[test]
fn an_unknown_event_or_client_says_so_on_stderr_and_exits_zero() {
    let env = busy();
    let refusals = [
        (
            vec!["PreToolUse", "--client", "claude"],
            "error: unknown hook event \"PreToolUse\": expected session-start, prompt, stop or \
             pre-edit; this hook does nothing\n",
        ),
        (
            vec!["stop"],
            "error: no client: pass --client claude, codex, gemini or opencode; this hook does \
             nothing\n",
        ),
        (
            vec!["stop", "--client", "cursor"],
            "error: unknown hook client \"cursor\": expected claude, codex, gemini or opencode; \
             this hook does nothing\n",
        ),
    ];
    for (args, stderr) in refusals {
        let mut command = env.command(env.root.path());
        command.env("BATON_AGENT", "codex").arg("hook").args(&args);
        let run = run_command(command, None);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{args:?}");
        assert_eq!(run.stderr, stderr, "{args:?}");
    }
}

#[test]
fn the_project_follows_the_cwd_the_client_reports() {
    let env = TestEnv::new();
    let api = env.root.path().join("api");
    std::fs::create_dir_all(&api).unwrap();
    env.run_in(
        &api,
        "claude",
        &["project", "init", "--goal", "Ship the API"],
    )
    .ok();
    env.run_in(&api, "codex", &["whoami"]).ok();
    env.run_in(
        &api,
        "claude",
        &["send", "--to", "codex", "--subject", "Add auth"],
    )
    .ok();

    let input = json!({"cwd": api, "hook_event_name": "UserPromptSubmit"}).to_string();
    let run = hook(&env, "codex", "claude", "prompt", Some(&input));
    let context = run.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    let workspace = std::fs::canonicalize(&api).unwrap();
    assert!(
        context.contains(&format!(
            "you are codex in project api (workspace {})",
            workspace.display()
        )),
        "{context}"
    );
    assert!(context.contains("Project goal: Ship the API"), "{context}");
    assert!(context.contains("Add auth"), "{context}");

    // From the default project's point of view, codex has nothing to do.
    let elsewhere = json!({"cwd": env.work()}).to_string();
    let run = hook(&env, "codex", "claude", "prompt", Some(&elsewhere));
    assert_eq!(run.stdout, "");
}

fn hooks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks")
}

/// Runs a script from hooks/ the way a client would, with baton on PATH.
fn script(
    env: &TestEnv,
    client: &str,
    event: &str,
    stdin: &str,
    extra: &[(&str, &str)],
) -> HookRun {
    let bin_dir = baton_bin().parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let mut command = Command::new(hooks_dir().join(client).join(format!("{event}.sh")));
    command
        .current_dir(env.root.path())
        .env_clear()
        .env("PATH", path)
        .env("BATON_HOME", env.home())
        .env("BATON_NOW", NOW)
        .env("BATON_NOTIFY", "0")
        .envs(env.store_env());
    for (key, value) in extra {
        command.env(key, value);
    }
    run_command(command, Some(stdin)).checked(client)
}

#[test]
fn the_scripts_call_baton_as_their_client_and_never_fail() {
    let env = busy();
    for client in CLIENTS {
        for event in EVENTS {
            let path = hooks_dir().join(client).join(format!("{event}.sh"));
            assert!(path.is_file(), "{} exists", path.display());
        }
        // Each script defaults the identity to its client's name; codex has the work here.
        let input = client_input(&env, client, "stop", false);
        let as_default = script(&env, client, "stop", &input, &[]);
        if client == "codex" {
            assert_eq!(as_default.json()["decision"], "block");
        } else {
            let released = if client == "gemini" { "{}\n" } else { "" };
            assert_eq!(as_default.stdout, released, "{client}");
        }
        let as_codex = script(&env, client, "stop", &input, &[("BATON_AGENT", "codex")]);
        assert!(as_codex.json()["reason"].as_str().unwrap().contains("T-1"));

        let missing = script(
            &env,
            client,
            "session-start",
            &client_input(&env, client, "session-start", false),
            &[("BATON_BIN", "/nonexistent/baton")],
        );
        let silent = if client == "gemini" { "{}\n" } else { "" };
        assert_eq!(missing.stdout, silent, "{client} without baton");
    }
    let input = client_input(&env, "gemini", "prompt", false);
    let run = script(
        &env,
        "gemini",
        "prompt",
        &input,
        &[("BATON_AGENT", "codex")],
    );
    assert_eq!(
        run.json()["hookSpecificOutput"]["hookEventName"],
        "BeforeAgent"
    );
}

/// A long inbox is shown in part: the first ten tasks in full and a count of the rest, in
/// the prompt context, the stop reason and `status`, so an agent's prompt stays readable
/// and the hook's cost does not grow with the inbox.
#[test]
fn a_long_inbox_shows_its_first_ten_tasks_and_counts_the_rest() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    for n in 1..=12 {
        env.send("lead", "dev", &format!("job {n}"), &[]);
    }
    let run = client_hook(&env, "dev", "claude", "prompt");
    let context = run.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(context.contains("12 tasks waiting for you"), "{context}");
    assert!(
        context.contains("T-10") && !context.contains("T-11"),
        "{context}"
    );
    assert!(
        context.contains("…and 2 more; `baton inbox` lists every one."),
        "{context}"
    );

    let run = client_hook(&env, "dev", "claude", "stop");
    let reason = run.json()["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("12 tasks are still waiting"), "{reason}");
    assert!(
        reason.contains("T-10 to do: job 10; and 2 more."),
        "{reason}"
    );

    let status = env.run("dev", &["status"]).ok().to_string();
    assert!(status.starts_with("baton: 12 tasks for dev"), "{status}");
    assert!(status.contains("+7 more"), "{status}");
    let full = env.run("dev", &["inbox", "--peek", "--json"]).json();
    assert_eq!(full["tasks"].as_array().unwrap().len(), 12);
}
