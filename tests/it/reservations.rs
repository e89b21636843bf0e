//! Scopes and reservations (SPEC sections 18.1 and 18.2) through the real binary: a claim
//! reserves what its task touches, overlapping work waits out of every inbox and comes back
//! with a wake, reservations by hand, and what a hostile pattern gets.

use std::time::Duration;

use serde_json::Value;

use crate::common::remote::Hub;
use crate::common::{TestEnv, eventually_within, recording_wake_command, task_in};

fn view(env: &TestEnv, id: u64) -> Value {
    env.run("claude", &["--json", "show", &id.to_string()])
        .json()
}

#[test]
fn overlapping_work_waits_out_of_every_inbox_and_comes_back_with_a_wake_when_the_holder_is_done() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let script = recording_wake_command(env.root.path());
    env.run(
        "",
        &["agent", "add", "gemini", "--wake", "--", "/bin/sh", &script],
    )
    .ok();
    let date = env.send(
        "claude",
        "codex",
        "Fix the date parser",
        &["--touches", "src/date/**", "--no-wake"],
    );
    let docs = env.send(
        "claude",
        "gemini",
        "Document the parser",
        &["--touches", "src/date/parse.rs,docs/", "--no-wake"],
    );
    let free = env.send(
        "claude",
        "gemini",
        "Tidy the README",
        &["--touches", "README.md", "--no-wake"],
    );
    assert_eq!(
        view(&env, docs)["touches"],
        serde_json::json!(["src/date/parse.rs", "docs/"])
    );
    assert_eq!(env.inbox_ids("gemini"), vec![docs, free]);

    env.run("codex", &["claim", &date.to_string()]).ok();
    // Held: in nobody's inbox, shown as held by whom.
    assert_eq!(env.inbox_ids("gemini"), vec![free]);
    assert_eq!(env.inbox_ids("claude"), Vec::<u64>::new());
    let held = view(&env, docs);
    assert_eq!(held["turn"], Value::Null);
    assert_eq!(held["held_by"]["agent"], "codex");
    assert_eq!(held["held_by"]["pattern"], "src/date/**");
    assert_eq!(held["held_by"]["task"], date);
    let board = env.run("claude", &["board"]).ok().to_string();
    assert!(
        board.contains("held: src/date/** by codex (T-1)"),
        "{board}"
    );
    let claimed = view(&env, date);
    assert_eq!(claimed["reservations"][0]["pattern"], "src/date/**");
    assert_eq!(claimed["reservations"][0]["exclusive"], true);
    // Its claim before then is refused, naming the holder and the task.
    let refused = env
        .run("gemini", &["claim", &docs.to_string()])
        .fails(1)
        .to_string();
    assert!(
        refused
            .contains("T-2 is pending, assigned to gemini: it is held: src/date/** by codex (T-1)"),
        "{refused}"
    );
    assert_eq!(view(&env, docs)["status"], "pending");

    // Asking keeps the reservation: the work is not landed yet.
    env.run(
        "codex",
        &["ask", &date.to_string(), "--body", "UTC or local?"],
    )
    .ok();
    assert_eq!(env.inbox_ids("gemini"), vec![free]);
    env.run("claude", &["answer", &date.to_string(), "--body", "UTC"])
        .ok();
    assert!(
        !env.root.path().join("woken").exists(),
        "nobody woke gemini yet"
    );

    // Done: the reservation ends, and the held task is handed over with a wake.
    env.run("codex", &["done", &date.to_string(), "--result", "fixed"])
        .ok();
    assert_eq!(env.inbox_ids("gemini"), vec![docs, free]);
    assert_eq!(view(&env, date)["reservations"], Value::Null);
    let woken = env.root.path().join("woken");
    eventually_within(
        Duration::from_secs(60),
        "a run of gemini's wake command",
        || woken.exists().then_some(()),
    );
    let record = std::fs::read_to_string(&woken).unwrap_or_default();
    assert_eq!(record.lines().next(), Some("gemini"), "{record:?}");
    let delivery = &view(&env, docs)["delivery"];
    assert_eq!(delivery["to"], "gemini", "{delivery}");
    env.run("gemini", &["claim", &docs.to_string()]).ok();
}

#[test]
fn a_release_or_a_reassignment_frees_what_the_claim_reserved() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let first = env.send(
        "claude",
        "codex",
        "One",
        &["--touches", "src/", "--no-wake"],
    );
    let second = env.send(
        "claude",
        "gemini",
        "Two",
        &["--touches", "src/a.rs", "--no-wake"],
    );
    env.run("codex", &["claim", &first.to_string()]).ok();
    assert_eq!(env.inbox_ids("gemini"), Vec::<u64>::new());
    env.run("codex", &["release", &first.to_string()]).ok();
    assert_eq!(env.inbox_ids("gemini"), vec![second]);
    env.run("codex", &["claim", &first.to_string()]).ok();
    assert_eq!(env.inbox_ids("gemini"), Vec::<u64>::new());
    env.run(
        "claude",
        &[
            "reassign",
            &first.to_string(),
            "--to",
            "claude",
            "--no-wake",
        ],
    )
    .ok();
    assert_eq!(env.inbox_ids("gemini"), vec![second]);
    let reservations = env.run("claude", &["--json", "reservations"]).json();
    assert_eq!(reservations, serde_json::json!([]));
}

#[test]
fn reservations_by_hand_are_all_or_nothing_and_name_every_holder() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let taken = env
        .run(
            "codex",
            &[
                "--json",
                "reserve",
                "src/date/**,port:3000",
                "--for",
                "1h",
                "--reason",
                "rewrite",
            ],
        )
        .json();
    assert_eq!(taken["reservations"].as_array().unwrap().len(), 2);
    assert_eq!(taken["reservations"][0]["reason"], "rewrite");
    let refused = env
        .run("gemini", &["reserve", "docs/,src/date/x.rs,port:3000"])
        .fails(1)
        .to_string();
    assert!(
        refused.contains("src/date/x.rs is held: src/date/** by codex")
            && refused.contains("port:3000 is held: port:3000 by codex"),
        "{refused}"
    );
    // Nothing was taken: docs/ stays free.
    let all = env.run("claude", &["--json", "reservations"]).json();
    assert_eq!(all.as_array().unwrap().len(), 2, "{all}");
    // `reserved` exits 1 naming holder; 0 for a free path and for the holder itself.
    let run = env.run("gemini", &["reserved", "src/date/parse.rs", "docs/a.md"]);
    run.fails(1);
    let held = run.stdout;
    assert!(
        held.contains("src/date/parse.rs is reserved by codex"),
        "{held}"
    );
    assert!(!held.contains("docs/a.md"), "{held}");
    env.run("gemini", &["reserved", "docs/a.md"]).ok();
    env.run("codex", &["reserved", "src/date/parse.rs"]).ok();
    // Asking again for one's own pattern extends it; a second reservation is not made.
    env.run("codex", &["reserve", "src/date/**", "--for", "2h"])
        .ok();
    let mine = env
        .run("codex", &["--json", "reservations", "--mine"])
        .json();
    assert_eq!(mine.as_array().unwrap().len(), 2, "{mine}");
    // Unreserve by pattern, then all.
    env.run("codex", &["unreserve", "port:3000"]).ok();
    env.run("gemini", &["reserve", "port:3000", "--shared"])
        .ok();
    env.run("codex", &["unreserve", "--all"]).ok();
    let left = env.run("claude", &["--json", "reservations"]).json();
    assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
    assert_eq!(left[0]["agent"], "gemini");
    assert_eq!(left[0]["exclusive"], false);
    // Each change is one line of the log.
    let log = env
        .run("claude", &["--json", "log", "-n", "20"])
        .ok()
        .to_string();
    let actions: Vec<String> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|record| record["action"].as_str().unwrap_or("").to_string())
        .filter(|action| action.contains("reserve"))
        .collect();
    assert_eq!(
        actions,
        ["reserve", "reserve", "unreserve", "reserve", "unreserve"]
    );
}

#[test]
fn the_coordinator_may_end_another_agents_reservations_and_the_holder_is_told() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    // claude sends first, and so coordinates the project.
    let task = env.send(
        "claude",
        "gemini",
        "Docs",
        &["--touches", "docs/", "--no-wake"],
    );
    env.run("codex", &["reserve", "docs/**", "--for", "7d"])
        .ok();
    assert_eq!(env.inbox_ids("gemini"), Vec::<u64>::new());
    let refused = env
        .run("gemini", &["unreserve", "--all", "--agent", "codex"])
        .fails(1)
        .to_string();
    assert!(
        refused.contains("only the coordinator or a human"),
        "{refused}"
    );
    let ended = env
        .run(
            "claude",
            &[
                "--json",
                "unreserve",
                "--all",
                "--agent",
                "codex",
                "--no-wake",
            ],
        )
        .json();
    assert_eq!(ended["reservations"][0]["pattern"], "docs/**");
    assert_eq!(ended["handovers"][0]["agent"], "gemini");
    assert_eq!(ended["handovers"][0]["task"], task);
    assert_eq!(env.inbox_ids("gemini"), vec![task]);
    let mail = env.run("codex", &["--json", "messages"]).json();
    let told = mail["messages"][0]["body"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        told.contains("claude ended your reservations of docs/**"),
        "{mail}"
    );
}

#[test]
fn a_reservation_by_hand_expires_and_its_agents_own_acts_renew_it() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let task = env.send(
        "claude",
        "gemini",
        "Docs",
        &["--touches", "docs/", "--no-wake"],
    );
    env.run("codex", &["reserve", "docs/", "--for", "2m"]).ok();
    assert_eq!(env.inbox_ids("gemini"), Vec::<u64>::new());
    let later = |minutes: i64| crate::remote::seconds_from_now(minutes * 60);
    // Three minutes on, it has expired: the task is gemini's again, with no write.
    let inbox = env
        .run_env(
            "gemini",
            &["--json", "inbox", "--peek"],
            &[("BATON_NOW", &later(3))],
        )
        .json();
    assert_eq!(task_in(&inbox["tasks"], task)["id"], task);
    // One minute on (less than half of it left), codex's own command renews it.
    env.run_env("codex", &["status"], &[("BATON_NOW", &later(1))])
        .ok();
    let inbox = env
        .run_env(
            "gemini",
            &["--json", "inbox", "--peek"],
            &[("BATON_NOW", &later(2))],
        )
        .json();
    assert_eq!(inbox["tasks"], serde_json::json!([]), "{inbox}");
}

#[test]
fn hostile_patterns_get_one_clear_line_and_change_nothing() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    // As long as one argument of a command line may be (Linux allows 128 KiB).
    let huge = "a".repeat(100_000);
    let many: Vec<String> = (0..10_000).map(|n| format!("f{n}")).collect();
    let many = many.join(",");
    let slow = format!("{}b", "*a".repeat(400));
    let cases: Vec<(&str, &str)> = vec![
        ("../etc/passwd", "climbs out of the workspace"),
        ("/etc/passwd", "is absolute"),
        ("src/\u{1b}[31mred", "must be one line"),
        ("src/a\nb", "must be one line"),
        (&huge, "the pattern is 100,000 bytes long"),
        (&many, "at most 64 patterns"),
    ];
    for (pattern, said) in &cases {
        let refused = env
            .run(
                "claude",
                &["send", "--to", "codex", "-s", "x", "--touches", pattern],
            )
            .fails(1)
            .to_string();
        assert_eq!(
            refused.lines().next().map(|line| line.contains(said)),
            Some(true),
            "{refused:.300}"
        );
        assert!(refused.len() < 400, "one short line: {refused:.300}");
        let refused = env.run("codex", &["reserve", pattern]).fails(1).to_string();
        assert!(refused.contains(said), "{refused:.300}");
    }
    assert_eq!(
        env.run("claude", &["--json", "board", "--all"]).json(),
        serde_json::json!([])
    );
    assert_eq!(
        env.run("claude", &["--json", "reservations"]).json(),
        serde_json::json!([])
    );
    // A glob built to be slow to compare is answered, and soon.
    env.run("codex", &["reserve", &slow]).ok();
    let started = std::time::Instant::now();
    env.run("claude", &["reserved", &format!("{}c", "a*".repeat(400))])
        .ok();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn reservations_act_the_same_against_a_hub_elsewhere() {
    let hub = Hub::start();
    hub.env.register(&["gemini"]);
    let task = hub.env.send(
        "alice",
        "gemini",
        "Docs",
        &["--touches", "docs/", "--no-wake"],
    );
    let codex = hub.agent();
    let taken = codex
        .run(&["--json", "reserve", "docs/**", "--reason", "from afar"])
        .json();
    assert_eq!(taken["reservations"][0]["agent"], "codex");
    assert_eq!(hub.env.inbox_ids("gemini"), Vec::<u64>::new());
    let run = hub.env.run("gemini", &["reserved", "docs/x.md"]);
    run.fails(1);
    let held = run.stdout;
    assert!(
        held.contains("docs/x.md is reserved by codex (from afar)"),
        "{held}"
    );
    let listed = codex.run(&["--json", "reservations", "--mine"]).json();
    assert_eq!(listed[0]["pattern"], "docs/**");
    codex.run(&["reserved", "docs/x.md"]).ok();
    // A pattern of 1 MB through the API (no command line takes one): one clear refusal.
    let huge = "a".repeat(1024 * 1024);
    let refused = hub.served.post(
        "/api/v1/projects/default/reservations",
        &hub.token,
        &serde_json::json!({"patterns": [huge]}),
    );
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.json()["error"]
            .as_str()
            .is_some_and(|error| error.contains("the pattern is 1,048,576 bytes long")),
        "{}",
        refused.body
    );
    let ended = codex
        .run(&["--json", "unreserve", "docs/**", "--no-wake"])
        .json();
    assert_eq!(ended["handovers"][0]["task"], task);
    assert_eq!(hub.env.inbox_ids("gemini"), vec![task]);
}
