//! How the faces show the delivery record of SPEC section 11: `show`'s one line, the
//! `unseen` mark in `board`, `watch` and `agents`, `doctor`'s list, and the notice to a
//! sender whose hand-over nothing will deliver before the agent's next prompt.

use serde_json::Value;

use crate::common::{Run, TestEnv};

/// When the work was handed over.
const SENT: &str = "2026-11-29T12:00:00.000Z";
/// Three minutes before `NOW`: when a wake run started.
const WOKEN: &str = "2026-11-29T12:09:00.000Z";
/// Two minutes before `NOW`: when the agent was shown the task.
const SHOWN: &str = "2026-11-29T12:10:00.000Z";
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
    let path = env.board_path("default");
    let mut board: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut board["tasks"][0]["delivery"]);
    if board["tasks"][0]["delivery"].is_null() {
        board["tasks"][0]
            .as_object_mut()
            .unwrap()
            .remove("delivery");
    }
    std::fs::write(&path, serde_json::to_string_pretty(&board).unwrap()).unwrap();
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
    for record in [
        &show["delivery"],
        &board[0]["delivery"],
        &inbox["tasks"][0]["delivery"],
    ] {
        assert_eq!(record["to"], "codex", "{show}\n{board}\n{inbox}");
        assert_eq!(record["state"], "queued");
        assert_eq!(record["since"], SENT);
    }
}
