//! `baton hook pre-edit --client C` through the binary (SPEC 18.3): each client's tool call
//! in, a reserved path denied in the client's own format with the reason the model reads,
//! everything else let through without a word; a hub out of reach lets the edit through
//! and says so once; input built to hurt is let through without a crash.

use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::remote::Hub;
use crate::common::{Run, TestEnv};

const REASON: &str = "src/date.rs is reserved by codex for T-1 \"Fix the date parser\"; message \
                      codex, or wait: it will be in your inbox when T-1 is done";

/// A project bound to the workspace where codex has claimed T-1, which touches
/// `src/date.rs`.
fn held_by_codex() -> TestEnv {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.work().join("src")).unwrap();
    env.init_project("lead", "app", &env.work());
    env.register(&["codex", "claude", "gemini"]);
    env.run(
        "lead",
        &[
            "send",
            "--to",
            "codex",
            "--subject",
            "Fix the date parser",
            "--touches",
            "src/date.rs",
            "--no-wake",
        ],
    )
    .ok();
    env.run("codex", &["claim", "1"]).ok();
    env
}

fn hook_command(env: &TestEnv, agent: &str, client: &str) -> Command {
    let mut command = env.command(&env.work());
    command.args(["--as", agent, "hook", "pre-edit", "--client", client]);
    command
}

fn pre_edit(env: &TestEnv, agent: &str, client: &str, stdin: &str) -> Run {
    let run = env.run_piped(hook_command(env, agent, client), stdin);
    assert_eq!(run.code, 0, "a hook exits 0\nstderr: {}", run.stderr);
    run
}

/// What `client` sends before its tool writes `path` (relative to the workspace, or
/// absolute).
fn writing(env: &TestEnv, client: &str, path: &str) -> String {
    let cwd = env.work().display().to_string();
    let absolute = match path.starts_with('/') {
        true => path.to_string(),
        false => format!("{cwd}/{path}"),
    };
    let (tool, input) = match client {
        "claude" => ("Write", json!({"file_path": absolute, "content": "x"})),
        "codex" => (
            "apply_patch",
            json!({"command": format!("*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n")}),
        ),
        "gemini" => (
            "replace",
            json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        ),
        _ => (
            "edit",
            json!({"filePath": absolute, "oldString": "a", "newString": "b"}),
        ),
    };
    json!({
        "session_id": "s-1",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
    })
    .to_string()
}

#[test]
fn each_client_is_denied_a_reserved_path_in_its_own_format_and_allowed_a_free_one() {
    let env = held_by_codex();
    let expected = [
        (
            "claude",
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": REASON}}),
        ),
        (
            "codex",
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": REASON}}),
        ),
        ("gemini", json!({"decision": "deny", "reason": REASON})),
        ("opencode", json!({"deny": REASON})),
    ];
    for (client, answer) in expected {
        let denied = pre_edit(
            &env,
            "claude",
            client,
            &writing(&env, client, "src/date.rs"),
        );
        assert_eq!(denied.stdout, format!("{answer}\n"), "{client}");
        assert_eq!(denied.stderr, "", "{client}");
        // A free path, the holder's own, and one outside the workspace: not a word.
        let silence = if client == "gemini" { "{}\n" } else { "" };
        for (agent, path) in [
            ("claude", "src/lib.rs"),
            ("codex", "src/date.rs"),
            ("claude", "/etc/elsewhere/date.rs"),
        ] {
            let allowed = pre_edit(&env, agent, client, &writing(&env, client, path));
            assert_eq!(
                (allowed.stdout.as_str(), allowed.stderr.as_str()),
                (silence, ""),
                "{client}: {agent} writing {path}"
            );
        }
    }
    // Another tool (a shell command) is none of the guard's business.
    let bash = json!({"cwd": env.work(), "tool_name": "Bash",
        "tool_input": {"command": "sed -i s/a/b/ src/date.rs"}});
    let run = pre_edit(&env, "claude", "claude", &bash.to_string());
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
}

#[test]
fn a_patch_is_judged_by_every_file_it_names_and_a_rename_by_both_names() {
    let env = held_by_codex();
    env.run("gemini", &["reserve", "docs/", "--for", "1h"]).ok();
    let patch = |body: &str| {
        json!({"cwd": env.work().join("src"), "session_id": "p",
            "tool_name": "apply_patch", "tool_input": {"command": body}})
        .to_string()
    };
    let reason = |run: &Run| -> String {
        let answer: Value = serde_json::from_str(&run.stdout).unwrap();
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Relative to the hook's cwd (src/): a rename out of the reserved file, and a new file
    // under a directory reserved by hand.
    let run = pre_edit(
        &env,
        "claude",
        "codex",
        &patch(
            "*** Begin Patch\n*** Add File: ../docs/new.md\n+hi\n*** Update File: date.rs\n\
             *** Move to: when.rs\n@@\n-a\n+b\n*** Delete File: free.rs\n*** End Patch\n",
        ),
    );
    let words = reason(&run);
    let lines: Vec<&str> = words.lines().collect();
    assert_eq!(lines.len(), 2, "{words}");
    assert!(
        lines[0].starts_with(
            "docs/new.md is reserved by gemini (as docs/); message gemini, or wait: the \
             reservation ends at "
        ) && lines[0].ends_with(" UTC"),
        "{words}"
    );
    assert_eq!(lines[1], REASON);
    // The same rename the other way round, into the reserved file.
    let run = pre_edit(
        &env,
        "claude",
        "codex",
        &patch("*** Begin Patch\n*** Update File: when.rs\n*** Move to: date.rs\n*** End Patch\n"),
    );
    assert_eq!(reason(&run), REASON);
    // Nothing reserved among them: silence.
    let run = pre_edit(
        &env,
        "claude",
        "codex",
        &patch(
            "*** Begin Patch\n*** Add File: free.rs\n+x\n*** Delete File: other.rs\n*** End Patch\n",
        ),
    );
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
}

#[test]
fn input_built_to_hurt_lets_the_edit_through_or_is_judged_and_never_crashes() {
    let env = held_by_codex();
    env.run("gemini", &["reserve", "notes/**", "--for", "1h"])
        .ok();
    // 10 MB of content before the path: read whole, and judged.
    let big = json!({"cwd": env.work(), "tool_name": "Write",
        "tool_input": {"content": "x".repeat(10 * 1024 * 1024),
            "file_path": env.work().join("src/date.rs")}});
    let run = pre_edit(&env, "claude", "claude", &big.to_string());
    assert!(
        run.stdout.contains("\"permissionDecision\":\"deny\""),
        "{}",
        run.stdout
    );
    // Garbled and endless input: let through, one line on stderr.
    for garbled in [
        "not json {".to_string(),
        format!(
            "{{\"tool_name\": \"Write\", \"tool_input\": {{\"content\": \"{}",
            "y".repeat(40 * 1024 * 1024)
        ),
    ] {
        let run = pre_edit(&env, "claude", "claude", &garbled);
        assert_eq!(run.stdout, "");
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("the edit goes ahead"), "{}", run.stderr);
    }
    // Control characters in a path: judged by what it matches, and never shown raw.
    let odd = json!({"cwd": env.work(), "tool_name": "Write",
        "tool_input": {"file_path": "notes/a\u{1b}[31mb\nc.md", "content": "x"}});
    let run = pre_edit(&env, "claude", "claude", &odd.to_string());
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    let words = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(words.starts_with("notes/a"), "{words}");
    assert!(
        words.contains("is reserved by gemini (as notes/**)"),
        "{words}"
    );
    assert!(
        !words.contains('\u{1b}') && !words.contains('\n'),
        "shown raw: {words:?}"
    );
    // An unknown client says so and does nothing.
    let run = pre_edit(
        &env,
        "claude",
        "cursor",
        &writing(&env, "claude", "src/date.rs"),
    );
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("needs --client"), "{}", run.stderr);
}

#[test]
fn a_hub_out_of_reach_lets_the_edit_through_and_says_so_once_a_session() {
    let env = held_by_codex();
    let away = |url: &str, session: &str| {
        let mut command = hook_command(&env, "claude", "claude");
        command.env("BATON_URL", url).env("BATON_TOKEN", "tok");
        let input = json!({"cwd": env.work(), "session_id": session, "tool_name": "Edit",
            "tool_input": {"file_path": env.work().join("src/date.rs")}});
        let started = Instant::now();
        let run = env.run_piped(command, &input.to_string());
        assert_eq!(run.code, 0, "{}", run.stderr);
        (run, started.elapsed())
    };
    let (first, _) = away("http://127.0.0.1:1", "s-away");
    let note: Value = serde_json::from_str(&first.stdout).unwrap();
    let note = note["systemMessage"].as_str().unwrap();
    assert!(
        note.starts_with("baton: ") && note.contains("edits are let through"),
        "{note}"
    );
    assert!(
        first.stderr.contains("baton hook pre-edit: "),
        "{}",
        first.stderr
    );
    let (second, _) = away("http://127.0.0.1:1", "s-away");
    assert_eq!(second.stdout, "", "said once a session");
    assert!(!second.stderr.is_empty());
    let (other, _) = away("http://127.0.0.1:1", "s-other");
    assert!(other.stdout.contains("systemMessage"), "{}", other.stdout);
    // A hub that takes the connection and never answers: the hook answers all the same,
    // in time for its client (a bound, not a figure: the client's timeout is 10 s).
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let (run, took) = away(&url, "s-silent");
    assert!(run.stdout.contains("systemMessage"), "{}", run.stdout);
    assert!(took < Duration::from_secs(6), "{took:?}");
}

#[test]
fn against_a_hub_elsewhere_the_agent_s_own_mapped_directory_is_guarded() {
    let hub = Hub::start();
    hub.env.run("", &["agent", "add", "gemini"]).ok();
    let hub_api = hub.env.work().join("api");
    std::fs::create_dir_all(&hub_api).unwrap();
    hub.env.init_project("alice", "api", &hub_api);
    hub.env
        .run_in(
            &hub_api,
            "alice",
            &[
                "send",
                "--to",
                "gemini",
                "--subject",
                "Fix the date parser",
                "--touches",
                "src/date.rs",
                "--no-wake",
            ],
        )
        .ok();
    hub.env.run_in(&hub_api, "gemini", &["claim", "1"]).ok();
    // codex's machine has the project's clone in a directory of its own.
    let agent = hub.agent();
    let mine = agent.env.work().join("api");
    std::fs::create_dir_all(mine.join("src")).unwrap();
    agent
        .run(&["project", "map", "api", mine.to_str().unwrap()])
        .ok();
    let edit = |path: &str| {
        let mut command = agent.command(&mine.join("src"));
        command.args(["hook", "pre-edit", "--client", "claude"]);
        let input = json!({"cwd": mine.join("src"), "session_id": "r", "tool_name": "Edit",
            "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}});
        let run = agent.env.run_piped(command, &input.to_string());
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    };
    let denied = edit(mine.join("src/date.rs").to_str().unwrap());
    let answer: Value = serde_json::from_str(&denied.stdout)
        .unwrap_or_else(|_| panic!("{}\n{}", denied.stdout, denied.stderr));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "src/date.rs is reserved by gemini for T-1 \"Fix the date parser\"; message gemini, \
         or wait: it will be in your inbox when T-1 is done"
    );
    for path in ["lib.rs", hub_api.join("src/date.rs").to_str().unwrap()] {
        let allowed = edit(path);
        assert_eq!(
            (allowed.stdout.as_str(), allowed.stderr.as_str()),
            ("", ""),
            "{path}"
        );
    }
}
