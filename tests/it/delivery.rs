//! The delivery record of SPEC section 11: each hand-over starts `queued`, whatever shows the
//! agent its task records `seen` once, and the agent's own change records `acted`. (The wake
//! run's `woken` is in tests/it/wake.rs, beside the fake agent.)

use std::process::{Child, Stdio};

use baton::file::platform::file_id;
use serde_json::Value;

use crate::common::{TestEnv, files_only};

/// A hub where `lead` hands tasks to `dev`.
fn team() -> TestEnv {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env
}

fn delivery(env: &TestEnv, id: u64) -> Value {
    env.run("lead", &["--json", "show", &id.to_string()]).json()["delivery"].clone()
}

/// The board file's inode (on Windows its file index): every write renames a new file over it, so a look that wrote
/// nothing leaves it as it was.
fn board_inode(env: &TestEnv) -> u64 {
    let path = env.board_path("default");
    file_id(&path, &std::fs::metadata(&path).unwrap())
}

const PROMPT: &str = r#"{"hook_event_name":"UserPromptSubmit","prompt":"go on"}"#;

#[test]
fn a_hand_over_is_queued_then_seen_by_its_agents_inbox_then_acted_by_its_claim() {
    let env = team();
    let id = env.send("lead", "dev", "Fix the lexer", &[]);
    let queued = delivery(&env, id);
    assert_eq!(queued["to"], "dev");
    assert_eq!(queued["state"], "queued");
    assert!(queued["since"].is_string(), "{queued}");
    assert!(
        queued["seen_at"].is_null() && queued["woken_at"].is_null(),
        "{queued}"
    );

    // Others looking do not count: the sender's board and show, another agent's inbox.
    env.run("lead", &["board"]).ok();
    env.run("lead", &["inbox"]).ok();
    env.run("lead", &["status"]).ok();
    assert_eq!(delivery(&env, id)["state"], "queued");

    // The inbox's answer already says what it recorded.
    let inbox = env.run("dev", &["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["tasks"][0]["delivery"]["state"], "seen", "{inbox}");
    let seen = delivery(&env, id);
    assert_eq!(seen["state"], "seen");
    assert!(seen["seen_at"].is_string(), "{seen}");
    assert_eq!(seen["since"], queued["since"], "the same hand-over");

    env.run("dev", &["claim", &id.to_string()]).ok();
    let acted = delivery(&env, id);
    assert_eq!(acted["state"], "acted", "{acted}");
    assert_eq!(acted["seen_at"], seen["seen_at"], "the first sight is kept");

    // A question is a hand-over back to the sender: a new record, queued for lead.
    env.run("dev", &["ask", &id.to_string(), "--body", "Which file?"])
        .ok();
    let back = delivery(&env, id);
    assert_eq!(back["to"], "lead");
    assert_eq!(back["state"], "queued");
    env.run("lead", &["status"]).ok();
    assert_eq!(delivery(&env, id)["state"], "seen", "status shows it");
}

#[test]
fn the_prompt_hook_records_seen_once_and_writes_nothing_on_the_next_prompt() {
    if !files_only("reads board.json") {
        return;
    }
    let env = team();
    let id = env.send("lead", "dev", "Fix the lexer", &[]);
    let log_lines = env.activity("default").len();

    let before = board_inode(&env);
    let answer = env.run_stdin("dev", &["hook", "prompt", "--client", "claude"], PROMPT);
    assert!(answer.ok().contains("Fix the lexer"), "{}", answer.ok());
    assert_eq!(delivery(&env, id)["state"], "seen");
    let after_first = board_inode(&env);
    assert_ne!(
        before, after_first,
        "the first prompt that shows it writes the record"
    );

    let board = std::fs::read(env.board_path("default")).unwrap();
    for _ in 0..3 {
        let answer = env.run_stdin("dev", &["hook", "prompt", "--client", "claude"], PROMPT);
        assert!(answer.ok().contains("Fix the lexer"));
    }
    assert_eq!(
        board_inode(&env),
        after_first,
        "no write on a prompt with nothing new"
    );
    assert_eq!(std::fs::read(env.board_path("default")).unwrap(), board);
    assert_eq!(
        env.activity("default").len(),
        log_lines,
        "a delivery mark is no participant's change: no activity line"
    );
}

#[test]
fn a_board_from_before_delivery_records_reads_and_shows_as_before() {
    if !files_only("reads board.json") {
        return;
    }
    let env = team();
    let id = env.send("lead", "dev", "Old task", &[]);
    // As a board written before issue 16 would hold it: no delivery field at all.
    let path = env.board_path("default");
    let mut board = env.board("default");
    board["tasks"][0]
        .as_object_mut()
        .unwrap()
        .remove("delivery");
    std::fs::write(&path, serde_json::to_string_pretty(&board).unwrap()).unwrap();
    let inode = board_inode(&env);

    let inbox = env.run("dev", &["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["tasks"][0]["id"], id);
    assert!(delivery(&env, id).is_null());
    assert_eq!(
        board_inode(&env),
        inode,
        "nothing to record, nothing written"
    );
}

/// Spawns `baton --as AGENT ARGS…` without waiting for it.
fn spawn(env: &TestEnv, agent: &str, args: &[&str]) -> Child {
    let mut command = env.command(&env.work());
    command
        .args(["--as", agent])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command.spawn().expect("the baton binary runs")
}

#[test]
fn agents_recording_seen_at_once_while_tasks_are_sent_lose_no_change() {
    let env = TestEnv::new();
    let agents: Vec<String> = (1..=6).map(|n| format!("a{n}")).collect();
    let names: Vec<&str> = agents.iter().map(String::as_str).collect();
    env.register(&names);
    env.register(&["lead"]);
    let mut first = Vec::new();
    for agent in &names {
        for n in 0..3 {
            first.push(env.send("lead", agent, &format!("task {n} for {agent}"), &[]));
        }
    }

    let mut children = Vec::new();
    for agent in &names {
        children.push(spawn(&env, agent, &["inbox"]));
        children.push(spawn(&env, agent, &["hook", "prompt", "--client", "codex"]));
        children.push(spawn(
            &env,
            "lead",
            &["send", "--to", agent, "--subject", "sent during the looks"],
        ));
    }
    crate::common::all_succeed(children);

    let board = env.board("default");
    let tasks = board["tasks"].as_array().unwrap();
    assert_eq!(
        tasks.len(),
        first.len() + names.len(),
        "every send is on the board"
    );
    for task in tasks {
        let state = &task["delivery"]["state"];
        if first.contains(&task["id"].as_u64().unwrap()) {
            assert_eq!(state, "seen", "{task}");
        } else {
            // Sent while its agent looked: seen if the look came after it, else queued.
            assert!(state == "seen" || state == "queued", "{task}");
        }
    }
    // The log agrees with the board: one send line per task, nothing lost or doubled.
    let sends = env
        .activity("default")
        .iter()
        .filter(|line| line["action"] == "send")
        .count();
    assert_eq!(sends, tasks.len());
    env.run("lead", &["doctor"]).ok();
}
