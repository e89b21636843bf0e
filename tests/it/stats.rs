//! `stats` (SPEC section 19) on a board made through the real commands at pinned times
//! (`BATON_NOW`), its figures worked out by hand below; on either store, and through a hub
//! at `BATON_URL`.

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::http::{Served, add_token};
use crate::common::remote::Agent;

/// When `stats` looks: noon of the day the work happened.
const NOON: &str = "2026-11-29T12:00:00.000Z";

/// `agent` runs `args` at `time` (`HH:MM` on 2026-11-29, or a whole timestamp).
fn at(env: &TestEnv, time: &str, agent: &str, args: &[&str]) -> String {
    let now = match time.len() {
        5 => format!("2026-11-29T{time}:00.000Z"),
        _ => time.to_string(),
    };
    env.run_env(agent, args, &[("BATON_NOW", &now)])
        .ok()
        .to_string()
}

/// The board of the figures below. lead coordinates and sends, ada and bob work, ann is the
/// project's human.
///
/// | task | sent                | what happened                                              |
/// |------|---------------------|------------------------------------------------------------|
/// | T-1  | lead→ada, 11-20     | claimed 09:01, done 09:26: 25m, nine days ago              |
/// | T-2  | ann→bob, 09:03      | claimed 09:05, asked ann 09:10, answered 10:15 (65m        |
/// |      |                     | waited on a human), claimed 10:18, done 10:35: 1h 30m      |
/// | T-3  | lead→ada, 09:08     | claimed 09:10, done 09:20: 10m                             |
/// | T-4  | lead→ada, 09:28     | claimed 09:30, done 09:50: 20m                             |
/// | T-5  | lead→ada, review    | claimed 10:00, review 10:10, changes requested 10:14,      |
/// |      | 09:58               | claimed 10:20, review 10:30, approved 10:40 (ten minutes   |
/// |      |                     | after it reached lead: unseen past 5m): 40m, one rework    |
/// | T-6  | lead→bob, 10:58     | asked lead 11:00 (no human), answered 11:30, done 11:33,   |
/// |      |                     | never claimed: finished, no claim→finish                   |
/// | T-7  | lead→bob, 11:00     | first shown by `inbox` at 11:08: unseen past 5m            |
/// | T-8  | lead→ada, 11:50     | never shown: unseen for 10m at noon                        |
///
/// Every other hand-over was acted on within five minutes, or handed on again (only a
/// task's last hand-over is kept).
fn team_board(env: &TestEnv) {
    env.register(&["lead", "ada", "bob", "ann"]);
    let old = |time: &str| format!("2026-11-20T{time}:00.000Z");
    at(
        env,
        &old("09:00"),
        "lead",
        &["send", "--to", "ada", "-s", "Old work"],
    );
    at(env, &old("09:01"), "ada", &["claim", "1"]);
    at(env, &old("09:26"), "ada", &["done", "1", "--result", "ok"]);
    at(env, "09:00", "lead", &["coordinator", "--human", "ann"]);
    at(
        env,
        "09:03",
        "ann",
        &["send", "--to", "bob", "-s", "Ask me"],
    );
    at(env, "09:05", "bob", &["claim", "2"]);
    at(
        env,
        "09:08",
        "lead",
        &["send", "--to", "ada", "-s", "Quick"],
    );
    at(env, "09:10", "ada", &["claim", "3"]);
    at(env, "09:10", "bob", &["ask", "2", "--body", "which one?"]);
    at(env, "09:20", "ada", &["done", "3", "--result", "ok"]);
    at(
        env,
        "09:28",
        "lead",
        &["send", "--to", "ada", "-s", "Medium"],
    );
    at(env, "09:30", "ada", &["claim", "4"]);
    at(env, "09:50", "ada", &["done", "4", "--result", "ok"]);
    let review = ["send", "--to", "ada", "-s", "Reviewed", "--review"];
    at(env, "09:58", "lead", &review);
    at(env, "10:00", "ada", &["claim", "5"]);
    at(env, "10:10", "ada", &["review", "5", "--body", "done?"]);
    at(
        env,
        "10:14",
        "lead",
        &["request-changes", "5", "--body", "not yet"],
    );
    at(env, "10:15", "ann", &["answer", "2", "--body", "that one"]);
    at(env, "10:18", "bob", &["claim", "2"]);
    at(env, "10:20", "ada", &["claim", "5"]);
    at(env, "10:30", "ada", &["review", "5", "--body", "now"]);
    at(env, "10:35", "bob", &["done", "2", "--result", "ok"]);
    at(env, "10:40", "lead", &["approve", "5"]);
    at(
        env,
        "10:58",
        "lead",
        &["send", "--to", "bob", "-s", "Ask lead"],
    );
    at(env, "11:00", "bob", &["ask", "6", "--body", "really?"]);
    at(
        env,
        "11:00",
        "lead",
        &["send", "--to", "bob", "-s", "Seen late"],
    );
    at(env, "11:08", "bob", &["inbox"]);
    at(env, "11:30", "lead", &["answer", "6", "--body", "yes"]);
    at(env, "11:33", "bob", &["done", "6", "--result", "ok"]);
    at(
        env,
        "11:50",
        "lead",
        &["send", "--to", "ada", "-s", "Never seen"],
    );
}

fn stats_json(env: &TestEnv, since: &str) -> Value {
    let value = env
        .run_env(
            "lead",
            &["--json", "stats", "--since", since],
            &[("BATON_NOW", NOON)],
        )
        .json();
    assert_eq!(value["until"], NOON, "{value}");
    value
}

/// The figures of `agent` (`team` for everyone's), in the JSON's names.
fn figures(stats: &Value, agent: &str) -> Value {
    let mut found = match agent {
        "team" => stats["team"].clone(),
        _ => stats["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["agent"] == agent)
            .unwrap_or_else(|| panic!("{agent} in {stats:#}"))
            .clone(),
    };
    if let Some(row) = found.as_object_mut() {
        row.remove("agent");
        row.remove("human");
    }
    found
}

/// The figures as docs/stats.md names them, in one line.
fn expected(
    finished: u64,
    median: Option<u64>,
    waited: u64,
    changes: u64,
    rework: Option<f64>,
    unseen: u64,
) -> Value {
    json!({
        "finished": finished,
        "claim_to_finish_median_seconds": median,
        "waited_on_human_seconds": waited,
        "changes_requested": changes,
        "rework_per_task": rework,
        "unseen_handovers": unseen,
    })
}

const MINUTE: u64 = 60;

#[test]
fn stats_are_the_figures_worked_out_by_hand_on_either_store() {
    let env = TestEnv::new();
    team_board(&env);

    // The last seven days (the default): T-1 is older.
    let week = stats_json(&env, "7d");
    assert_eq!(week["window"], "7d");
    assert_eq!(week["since"], "2026-11-22T12:00:00.000Z");
    assert_eq!(week["humans"], json!(["ann"]));
    let names: Vec<&str> = week["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["agent"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ada", "ann", "bob", "lead"]);
    // ada: T-3, T-4, T-5 in 10, 20, 40 minutes → 20; T-5 sent back once in three; T-8.
    assert_eq!(
        figures(&week, "ada"),
        expected(3, Some(20 * MINUTE), 0, 1, Some(0.33), 1)
    );
    // bob: T-2 (from 09:05 to 10:35) and T-6 (never claimed); T-2's 65 minutes waiting on
    // ann; T-6's half hour waiting on lead is no human's; T-7 seen after 8 minutes.
    assert_eq!(
        figures(&week, "bob"),
        expected(2, Some(90 * MINUTE), 65 * MINUTE, 0, Some(0.0), 1)
    );
    // lead finished nothing; T-5's review waited ten minutes for it.
    assert_eq!(figures(&week, "lead"), expected(0, None, 0, 0, None, 1));
    // ann answered; the question handed to her was handed on again by her answer.
    assert_eq!(figures(&week, "ann"), expected(0, None, 0, 0, None, 0));
    let ann = week["agents"].as_array().unwrap()[1].clone();
    assert_eq!(ann["human"], true);
    // Everyone: 10, 20, 40, 90 → 30; one rework in five tasks.
    assert_eq!(
        figures(&week, "team"),
        expected(5, Some(30 * MINUTE), 65 * MINUTE, 1, Some(0.2), 3)
    );

    // Everything the log holds: T-1 too. ada: 25, 10, 20, 40 → 22m 30s.
    let all = stats_json(&env, "all");
    assert_eq!(
        (&all["window"], &all["since"]),
        (&json!("all"), &Value::Null)
    );
    assert_eq!(
        figures(&all, "ada"),
        expected(4, Some(22 * MINUTE + 30), 0, 1, Some(0.25), 1)
    );
    assert_eq!(
        figures(&all, "team"),
        expected(6, Some(25 * MINUTE), 65 * MINUTE, 1, Some(0.17), 3)
    );

    // The last two hours, from 10:00: T-5 (claimed at 10:00 sharp) for ada; 15 of bob's 65
    // minutes; the hand-overs made since 10:00 (T-5's review, T-7, T-8).
    let two_hours = stats_json(&env, "2h");
    assert_eq!(two_hours["since"], "2026-11-29T10:00:00.000Z");
    assert_eq!(
        figures(&two_hours, "ada"),
        expected(1, Some(40 * MINUTE), 0, 1, Some(1.0), 1)
    );
    assert_eq!(
        figures(&two_hours, "bob"),
        expected(2, Some(90 * MINUTE), 15 * MINUTE, 0, Some(0.0), 1)
    );
    assert_eq!(figures(&two_hours, "team")["unseen_handovers"], 3);

    // For people: a table, lengths as people read them, a dash where there is nothing.
    let text = at(&env, "12:00", "lead", &["stats"]);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    for row in [
        vec!["ada", "3", "20m", "00s", "0s", "0.33", "1"],
        vec!["ann", "(human)", "0", "—", "0s", "—", "0"],
        vec!["bob", "2", "1h", "30m", "1h", "05m", "0.00", "1"],
        vec!["lead", "0", "—", "0s", "—", "1"],
        vec!["all", "agents", "5", "30m", "00s", "1h", "05m", "0.20", "3"],
    ] {
        assert!(rows.contains(&row), "{row:?} in\n{text}");
    }
    assert!(
        text.starts_with("project default, the last 7d, since 2026-11-22 12:00 UTC\n"),
        "{text}"
    );
}

#[test]
fn stats_of_a_project_with_no_human_or_no_work_say_so() {
    let env = TestEnv::new();
    env.register(&["lead", "ada"]);
    let empty = at(&env, "12:00", "lead", &["stats"]);
    assert_eq!(
        empty.trim(),
        "project default, the last 7d, since 2026-11-22 12:00 UTC: no task was sent, worked \
         on or finished"
    );
    at(&env, "11:00", "lead", &["send", "--to", "ada", "-s", "One"]);
    at(&env, "11:01", "ada", &["claim", "1"]);
    at(&env, "11:02", "ada", &["ask", "1", "--body", "?"]);
    // Nobody is named a human: the wait on one cannot be told, rather than told as none.
    let stats = stats_json(&env, "7d");
    assert_eq!(stats["humans"], json!([]));
    assert_eq!(
        figures(&stats, "ada")["waited_on_human_seconds"],
        Value::Null
    );
    let text = at(&env, "12:00", "lead", &["stats"]);
    assert!(
        text.contains("this project names no human (`baton coordinator --human NAME`"),
        "{text}"
    );
    // A window that is no window is refused, saying what one is.
    for refused in ["0d", "week", "7"] {
        let said = env
            .run_env(
                "lead",
                &["stats", "--since", refused],
                &[("BATON_NOW", NOON)],
            )
            .fails(1)
            .to_string();
        assert!(said.contains("7d") && said.contains("all"), "{said}");
    }
    let help = env.run("", &["stats", "--help"]).ok().to_string();
    assert!(help.contains("baton stats --since 24h"), "{help}");
}

#[test]
fn stats_through_a_hub_elsewhere_are_the_hubs_own() {
    let env = TestEnv::new();
    team_board(&env);
    let token = add_token(&env, "bob");
    let served = Served::start_with_vars(&env, "ann", &[], &[("BATON_NOW", NOON)]);
    let here = stats_json(&env, "all");

    // `baton stats` on another machine, through the desk of the hub at BATON_URL.
    let agent = Agent::new(format!("http://{}", served.address), token.clone());
    let there = agent
        .run(&["--json", "stats", "--since", "all", "--project", "default"])
        .json();
    assert_eq!(there, here);
    let text = agent
        .run(&["stats", "--project", "default"])
        .ok()
        .to_string();
    assert!(text.contains("all agents"), "{text}");

    // The route itself, as the web board reads it: the default window is seven days.
    let week = served.get("/api/v1/projects/default/stats", &token).ok();
    assert_eq!(week, stats_json(&env, "7d"));
    let refused = served.get("/api/v1/projects/default/stats?since=soon", &token);
    assert_eq!(refused.status, 400, "{refused:?}");
    assert!(refused.json()["error"].as_str().unwrap().contains("all"));
}
