//! How the faces show the delivery record of SPEC section 11: `show`'s one line, the
//! `unseen` mark in `board`, `watch` and `agents`, `doctor`'s list, and the notice to a
//! sender whose hand-over nothing will deliver before the agent's next prompt.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Run, TestEnv, files_only};

/// When the work was handed over.
const SENT: &str = "2026-11-29T12:00:00.000Z";
/// Three minutes before `NOW`: when a wake run started.
const WOKEN: &str = "2026-11-29T12:09:00.000Z";
/// Two minutes before `NOW`: when the agent was shown the task.
const SHOWN: &str = "2026-11-29T12:10:00.000Z";
/// Four minutes after `SENT`: not yet unseen for more than five minutes.
const SOON: &str = "2026-11-29T12:04:00.000Z";
/// Twelve minutes after `SENT`.
const NOW: &str = "2026-11-29T12:12:00.000Z";

fn at(env: &TestEnv, when: &str, agent: &str, args: &[&str]) -> Run {
    let mut all = vec!["--no-wake"];
    all.extend_from_slice(args);
    env.run_env(agent, &all, &[("BATON_NOW", when)])
}

/// A hub with lead and codex, and T-1 handed to codex at `SENT`.
fn handed_over() -> TestEnv {
    let env = TestEnv::new();
    for agent in ["lead", "codex"] {
        at(&env, SENT, agent, &["whoami"]).ok();
    }
    at(
        &env,
        SENT,
        "lead",
        &["send", "--to", "codex", "--subject", "Fix the parser"],
    )
    .ok();
    env
}

/// Rewrites T-1's delivery record on disk (what the wake supervisor and the inbox record
/// are not this test's subject): `None` removes it.
fn set_delivery(env: &TestEnv, change: impl FnOnce(&mut Value)) {
    let path = "projects/default/board.json";
    let mut board: Value = serde_json::from_str(&env.hub_text(path).unwrap()).unwrap();
    change(&mut board["tasks"][0]["delivery"]);
    if board["tasks"][0]["delivery"].is_null() {
        board["tasks"][0]
            .as_object_mut()
            .unwrap()
            .remove("delivery");
    }
    env.write_hub_text(path, &serde_json::to_string_pretty(&board).unwrap());
}

fn delivery_line(env: &TestEnv) -> Option<String> {
    at(env, NOW, "lead", &["show", "1"])
        .ok()
        .lines()
        .find(|line| line.trim_start().starts_with("delivery:"))
        .map(|line| line.trim().to_string())
}

#[test]
fn show_prints_how_far_the_hand_over_got_in_one_line() {
    let env = handed_over();
    assert_eq!(
        delivery_line(&env).as_deref(),
        Some("delivery: to codex, queued 12m ago")
    );

    set_delivery(&env, |delivery| {
        delivery["state"] = "woken".into();
        delivery["woken_at"] = WOKEN.into();
    });
    assert_eq!(
        delivery_line(&env).as_deref(),
        Some("delivery: to codex, woken 3m ago (queued 12m ago)")
    );

    set_delivery(&env, |delivery| {
        delivery["state"] = "seen".into();
        delivery["seen_at"] = SHOWN.into();
    });
    assert_eq!(
        delivery_line(&env).as_deref(),
        Some("delivery: to codex, seen 2m ago")
    );

    at(&env, NOW, "codex", &["claim", "1"]).ok();
    assert_eq!(
        delivery_line(&env).as_deref(),
        Some("delivery: to codex, acted")
    );

    set_delivery(&env, |delivery| *delivery = Value::Null);
    assert_eq!(delivery_line(&env), None);
}

#[test]
fn json_of_show_board_and_inbox_carries_the_record() {
    let env = handed_over();
    let show = at(&env, NOW, "lead", &["--json", "show", "1"]).json();
    let board = at(&env, NOW, "lead", &["--json", "board"]).json();
    let inbox = at(&env, NOW, "codex", &["--json", "inbox", "--peek"]).json();
    // The sender's looks leave it queued; codex's own inbox is the look that sees it, and
    // its answer says so.
    for (record, state) in [
        (&show["delivery"], "queued"),
        (&board[0]["delivery"], "queued"),
        (&inbox["tasks"][0]["delivery"], "seen"),
    ] {
        assert_eq!(record["to"], "codex", "{show}\n{board}\n{inbox}");
        assert_eq!(record["state"], state);
        assert_eq!(record["since"], SENT);
    }
}

/// T-1's row in `board` at `when`.
fn board_row(env: &TestEnv, when: &str) -> String {
    let board = at(env, when, "lead", &["board"]);
    board
        .ok()
        .lines()
        .find(|line| line.starts_with("T-1 "))
        .expect("T-1 is on the board")
        .to_string()
}

/// codex's UNSEEN column in `agents` at `when`.
fn unseen_column(env: &TestEnv, when: &str) -> String {
    let agents = at(env, when, "lead", &["agents"]);
    let text = agents.ok();
    let mut lines = text.lines().skip(1);
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let column = header.iter().position(|name| *name == "UNSEEN").unwrap();
    let row = lines.find(|line| line.starts_with("codex ")).unwrap();
    row.split_whitespace().nth(column).unwrap().to_string()
}

#[test]
fn board_and_agents_mark_work_unseen_for_more_than_five_minutes() {
    let env = handed_over();
    assert!(
        !board_row(&env, SOON).contains("unseen"),
        "{}",
        board_row(&env, SOON)
    );
    assert_eq!(unseen_column(&env, SOON), "0");
    assert!(
        board_row(&env, NOW).ends_with("[unseen 12m]"),
        "{}",
        board_row(&env, NOW)
    );
    assert_eq!(unseen_column(&env, NOW), "1");
    let agents = at(&env, NOW, "lead", &["--json", "agents"]).json();
    let codex = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == "codex")
        .unwrap();
    assert_eq!(codex["unseen"], 1);

    // Woken is still unseen; seen is not.
    set_delivery(&env, |delivery| {
        delivery["state"] = "woken".into();
        delivery["woken_at"] = WOKEN.into();
    });
    assert!(board_row(&env, NOW).contains("unseen 12m"));
    set_delivery(&env, |delivery| {
        delivery["state"] = "seen".into();
        delivery["seen_at"] = SHOWN.into();
    });
    assert!(
        !board_row(&env, NOW).contains("unseen"),
        "{}",
        board_row(&env, NOW)
    );
    assert_eq!(unseen_column(&env, NOW), "0");
}

#[test]
fn watch_marks_unseen_work_too() {
    let env = handed_over();
    let mut child = env
        .command(&env.work())
        .args(["--as", "lead", "watch"])
        .env("BATON_NOW", NOW)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let arrived = crate::common::stdout_lines(&mut child);
    let row = loop {
        match arrived.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.starts_with("T-1 ") => break Some(line),
            Ok(_) => continue,
            Err(_) => break None,
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let row = row.expect("watch draws the board within 20 seconds");
    assert!(row.ends_with("[unseen 12m]"), "{row}");
}

#[test]
fn doctor_warns_of_each_task_unseen_and_still_exits_as_for_warnings() {
    let env = handed_over();
    let soon = at(&env, SOON, "lead", &["doctor"]);
    assert!(!soon.stdout.contains("not seen yet"), "{}", soon.stdout);
    let run = at(&env, NOW, "lead", &["doctor"]);
    assert_eq!(run.code, 0, "a warning, not a failure: {}", run.stdout);
    let line = run
        .stdout
        .lines()
        .find(|line| line.contains("not seen yet"))
        .unwrap_or_else(|| panic!("no unseen finding in {}", run.stdout));
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>().join(" "),
        "warn delivery T-1 handed to codex 12m ago, not seen yet (queued)"
    );
    let json = at(&env, NOW, "lead", &["--json", "doctor"]).json();
    assert!(
        json.to_string().contains("T-1 handed to codex 12m ago"),
        "{json}"
    );

    set_delivery(&env, |delivery| {
        delivery["state"] = "seen".into();
        delivery["seen_at"] = SHOWN.into();
    });
    let seen = at(&env, NOW, "lead", &["doctor"]);
    assert!(!seen.stdout.contains("not seen yet"), "{}", seen.stdout);
}

const NOTICE: &str = "codex has no wake command and no live session: it will see T-1 at its \
                      next prompt";

/// Lead hands T-1 to codex; what lead's terminal shows.
fn send_to_codex(env: &TestEnv) -> Run {
    at(
        env,
        SENT,
        "lead",
        &["send", "--to", "codex", "--subject", "Fix the parser"],
    )
}

#[test]
fn a_hand_over_nothing_will_deliver_says_so_to_the_sender() {
    let env = TestEnv::new();
    env.register(&["lead", "codex"]);
    let run = send_to_codex(&env);
    assert!(run.ok().contains(NOTICE), "{}", run.stdout);
    // Not in --json: its shape stays as it was.
    let json = at(
        &env,
        SENT,
        "lead",
        &["--json", "send", "--to", "codex", "--subject", "Again"],
    )
    .json();
    assert!(!json.to_string().contains("no live session"), "{json}");
    // Work sent to oneself is no hand-over: nothing to say.
    let own = at(
        &env,
        SENT,
        "lead",
        &["send", "--to", "lead", "--subject", "Mine"],
    );
    assert!(!own.ok().contains("no wake command"), "{}", own.stdout);
}

#[test]
fn no_notice_when_the_agent_has_a_wake_command() {
    let env = TestEnv::new();
    env.register(&["lead"]);
    env.run("", &["agent", "add", "codex", "--wake", "--", "true"])
        .ok();
    let run = send_to_codex(&env);
    assert!(!run.ok().contains("no wake command"), "{}", run.stdout);
}

#[test]
fn no_notice_when_the_agent_has_a_live_session() {
    if !files_only("calls the file store itself") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "codex"]);
    let home = baton::home::Home::new(env.home());
    let presence = baton::store::files::presence::announce(&home, "default", "codex", "opencode")
        .expect("a live session is announced");
    let run = send_to_codex(&env);
    assert!(!run.ok().contains("no wake command"), "{}", run.stdout);
    // Once the session is gone, the next hand-over says so again.
    drop(presence);
    let run = at(
        &env,
        SENT,
        "lead",
        &["send", "--to", "codex", "--subject", "Fix the lexer"],
    );
    assert!(
        run.ok()
            .contains("codex has no wake command and no live session: it will see T-2"),
        "{}",
        run.stdout
    );
}

#[test]
fn no_notice_for_a_human_of_the_project() {
    let env = TestEnv::new();
    env.register(&["lead", "codex"]);
    env.run("lead", &["coordinator", "--human", "lead"]).ok();
    // codex asks: the task goes back to lead, a human, who reads their own inbox.
    let id = env.send("lead", "codex", "Fix the parser", &[]).to_string();
    let asked = env.run("codex", &["ask", &id, "--body", "Which parser?"]);
    assert!(!asked.ok().contains("no wake command"), "{}", asked.stdout);
    // An agent handing work to an agent still hears of it.
    let sent = env.run("codex", &["send", "--to", "lead", "--subject", "x"]);
    assert!(!sent.ok().contains("no wake command"), "{}", sent.stdout);
    let sent = env.run("lead", &["send", "--to", "codex", "--subject", "y"]);
    assert!(
        sent.ok().contains("codex has no wake command"),
        "{}",
        sent.stdout
    );
}
