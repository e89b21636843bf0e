//! Real clients, scripted models: the guard before an edit (SPEC 18.3). Each pinned client
//! is wired by `baton setup` in a throwaway home and run headless in the project's
//! workspace, where another agent holds `src/date.rs` for its task. Its scripted model
//! (`tests/clients/model_server.py --edit …`) writes that file and then a free one with the
//! client's own tool for writing a file: the first is refused by baton's hook, with the
//! reason in what the client sends the model next, and the second is written.
//!
//! Like `clients_woken.rs`, they need `BATON_TEST_CLIENTS` (see `common/clients.rs`), and
//! python3.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::clients::{Dialect, WiredClient, clients_bin};
use crate::common::machine::Machine;
use crate::common::{Run, finish_within, spawn};

/// Longest one headless run of a client may take before the test gives up on it.
const RUN_TIMEOUT: Duration = Duration::from_secs(240);

const RESERVED: &str = "src/date.rs";
const FREE: &str = "src/free.rs";

/// How to run each client headless with one prompt, in its own words.
fn client_command(wired: &WiredClient, dialect: &Dialect) -> Command {
    let program = wired.bin.join(dialect.client);
    let mut command = Command::new(program);
    let prompt = "Write the two files you were asked to.";
    match dialect.client {
        "claude" => command.args(["-p", prompt, "--permission-mode", "acceptEdits"]),
        // `apply_patch` is offered only for a model Codex knows; the hook is new, so it
        // is not trusted yet (setup says the user trusts it in /hooks): the test bypasses
        // trust as a run of its own may.
        "codex" => command.args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "--dangerously-bypass-hook-trust",
            "-m",
            "gpt-5.5",
            "--",
            prompt,
        ]),
        "gemini" => command.args(["--skip-trust", "--approval-mode", "auto_edit", "-p", prompt]),
        _ => command.args(["run", "--", prompt]),
    };
    let machine = &wired.machine;
    machine
        .client_env(&mut command, &wired.bin)
        .current_dir(machine.env.work())
        // opencode takes its directory from `PWD` when it is set, as a shell sets it.
        .env("PWD", machine.env.work())
        .envs((dialect.env)(&wired.server))
        .env("BATON_HOME", machine.env.home())
        .env_remove("BATON_URL")
        .env_remove("BATON_TOKEN")
        .env_remove("BATON_AGENT")
        // This suite may itself run inside an agent's session.
        .env_remove("CLAUDECODE")
        .env_remove("CLAUDE_CODE_ENTRYPOINT")
        .stdin(Stdio::null());
    match &machine.env.store_url {
        Some(url) => command.env("BATON_STORE", url),
        None => command.env_remove("BATON_STORE"),
    };
    command
}

fn prove(dialect: Dialect) {
    let Some(bin) = clients_bin() else {
        return;
    };
    let machine = Machine::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let workspace: PathBuf = fs::canonicalize(machine.env.work()).unwrap();
    let root = workspace.display().to_string();
    let wired = WiredClient::new(
        machine,
        bin,
        &dialect,
        &["--edit", RESERVED, "--edit", FREE, "--edit-root", &root],
    );
    fs::create_dir_all(workspace.join("src")).unwrap();
    let env = &wired.machine.env;
    env.register(&["holder"]);
    wired
        .lead(
            &[
                "send",
                "--to",
                "holder",
                "--subject",
                "Fix the date parser",
                "--touches",
                RESERVED,
                "--no-wake",
            ],
            &[],
        )
        .ok();
    env.run("holder", &["claim", "1"]).ok();

    let run: Run = finish_within(
        spawn(client_command(&wired, &dialect)),
        RUN_TIMEOUT,
        dialect.client,
    );
    let server = &wired.server;
    let seen = format!(
        "{} exited {}\nstdout: {}\nstderr: {}\nmodel answers:\n{}",
        dialect.client,
        run.code,
        run.stdout,
        run.stderr,
        server.answers(0)
    );
    let writes: Vec<_> = server
        .calls(0)
        .into_iter()
        .filter(|(name, _)| {
            ["Write", "write_file", "write", "apply_patch"].contains(&name.as_str())
        })
        .collect();
    assert_eq!(writes.len(), 2, "the model tried both edits: {seen}");
    assert!(
        !workspace.join(RESERVED).exists(),
        "the reserved file was written: {seen}"
    );
    assert_eq!(
        fs::read_to_string(workspace.join(FREE)).ok().as_deref(),
        Some("EDITED\n"),
        "the free file: {seen}"
    );
    // What the client sent the model after the refused write: the reason, whole.
    let sent = server.sent_text(0);
    for words in [
        "src/date.rs is reserved by holder for T-1",
        "Fix the date parser",
        "message holder, or wait: it will be in your inbox when T-1 is done",
    ] {
        assert!(
            sent.contains(words),
            "{words:?} never reached the model: {seen}"
        );
    }
}

#[test]
fn claude_code_is_refused_an_edit_of_a_reserved_file_and_makes_a_free_one() {
    prove(Dialect::claude());
}

#[test]
fn codex_is_refused_a_patch_of_a_reserved_file_and_makes_a_free_one() {
    prove(Dialect::codex("mcp__baton__claim"));
}

#[test]
fn gemini_cli_is_refused_a_write_of_a_reserved_file_and_makes_a_free_one() {
    prove(Dialect::gemini());
}

#[test]
fn opencode_is_refused_a_write_of_a_reserved_file_and_makes_a_free_one() {
    prove(Dialect::opencode());
}
