//! The core board through the real binary: the lifecycle, refusals, inboxes, the demo and
//! help; stored data and its errors in `stored`, concurrency and crashes in `races`.

mod races;
mod stored;

use serde_json::Value;

use crate::common::{TestEnv, files_only, thread_kinds};

fn status_of(env: &TestEnv, agent: &str, id: u64) -> String {
    let view = env.run(agent, &["--json", "show", &id.to_string()]).json();
    view["status"].as_str().unwrap().to_string()
}

#[test]
fn a_task_walks_its_whole_life_and_is_always_in_the_right_inbox() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let id = env.send(
        "claude",
        "codex",
        "Fix the parser",
        &[
            "--body",
            "It accepts 2026-02-30",
            "--files",
            "src/date.rs,tests/date.rs",
            "--review",
        ],
    );
    let both = |claude: Vec<u64>, codex: Vec<u64>| {
        assert_eq!(env.inbox_ids("claude"), claude, "claude's inbox");
        assert_eq!(env.inbox_ids("codex"), codex, "codex's inbox");
    };
    both(vec![], vec![id]);
    let inbox = env.run("codex", &["--json", "inbox"]).json();
    let entry = &inbox["tasks"][0];
    assert_eq!(entry["body"], "It accepts 2026-02-30");
    assert_eq!(
        entry["files"],
        serde_json::json!(["src/date.rs", "tests/date.rs"])
    );
    assert_eq!(entry["waiting"], "claude");

    let n = id.to_string();
    env.run("codex", &["claim", &n]).ok();
    both(vec![], vec![]);
    env.run("codex", &["ask", &n, "--body", "Refuse or clamp?"])
        .ok();
    both(vec![id], vec![]);
    let inbox = env.run("claude", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["reason"], "question");
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Refuse or clamp?");
    env.run(
        "claude",
        &["answer", &format!("T-{id}"), "--body", "Refuse."],
    )
    .ok();
    both(vec![], vec![id]);
    let inbox = env.run("codex", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Refuse.");
    env.run("codex", &["claim", &format!("t-{id}")]).ok();
    env.run(
        "codex",
        &["review", &n, "--body", "Refused with a clear error"],
    )
    .ok();
    both(vec![id], vec![]);
    env.run(
        "claude",
        &["request-changes", &n, "--body", "Add a leap-year test"],
    )
    .ok();
    both(vec![], vec![id]);
    let inbox = env.run("codex", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["reason"], "changes_requested");
    assert_eq!(
        inbox["tasks"][0]["last_word"]["text"],
        "Add a leap-year test"
    );
    env.run("codex", &["claim", &n]).ok();
    env.run("codex", &["review", &n, "--body", "Leap-year test added"])
        .ok();
    both(vec![id], vec![]);
    env.run("claude", &["approve", &n]).ok();
    both(vec![], vec![]);

    let task = env.run("claude", &["--json", "show", &n]).json();
    assert_eq!(task["status"], "completed");
    assert_eq!(task["result"], "Leap-year test added");
    assert_eq!(
        thread_kinds(&task),
        [
            "claim",
            "question",
            "answer",
            "claim",
            "review_request",
            "changes_request",
            "claim",
            "review_request",
            "approval"
        ]
    );
    assert_eq!(
        env.actions("default"),
        [
            "send",
            "claim",
            "ask",
            "answer",
            "claim",
            "review",
            "request_changes",
            "claim",
            "review",
            "approve"
        ]
    );
    // A finished task moves no more.
    let refused = env.run("codex", &["fail", &n, "--reason", "late"]);
    assert!(
        refused.fails(1).contains("is completed"),
        "{}",
        refused.stderr
    );
}

#[test]
fn refusals_say_which_task_its_status_and_who_may_act() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let id = env
        .send("claude", "codex", "Port the lexer", &[])
        .to_string();
    env.run("codex", &["claim", &id]).ok();
    let run = env.run("claude", &["ask", &id, "--body", "?"]);
    assert_eq!(
        run.fails(1).lines().next().unwrap(),
        "error: T-1 is working, assigned to codex: only codex can ask on it"
    );
    let run = env.run("gemini", &["cancel", &id]);
    assert!(
        run.fails(1).contains("only claude (the sender)"),
        "{}",
        run.stderr
    );
    let run = env.run("codex", &["done", &id]);
    assert!(
        run.fails(1).contains("done needs --result"),
        "{}",
        run.stderr
    );
    let run = env.run("codex", &["claim", "99"]);
    assert!(
        run.fails(1).contains("no task T-99 in project default"),
        "{}",
        run.stderr
    );
    let run = env.run("", &["inbox"]);
    assert!(
        run.fails(1)
            .contains("no identity: pass --as NAME or set BATON_AGENT")
    );
    let run = env.run("claude", &["send", "--to", "nobody", "--subject", "x"]);
    let stderr = run.fails(1);
    assert!(stderr.contains("unknown agent `nobody`"), "{stderr}");
    assert!(
        stderr.contains("claude, codex, gemini"),
        "lists the known agents: {stderr}"
    );
    let run = env.run("claude", &["claim", "T-x"]);
    assert!(run.fails(1).contains("not a task id"), "{}", run.stderr);
    // Nothing refused reached the log.
    assert_eq!(env.activity("default").len(), 2);
}

#[test]
fn blocked_tasks_are_in_no_inbox_until_their_dependencies_complete() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let first = env.send("lead", "dev", "Schema", &[]);
    let second = env.send("lead", "dev", "Migration", &["--after", &first.to_string()]);
    assert_eq!(env.inbox_ids("dev"), vec![first]);
    let board = env.run("lead", &["board"]).ok().to_string();
    assert!(board.contains("blocked by T-1"), "{board}");
    let run = env.run("dev", &["claim", &second.to_string()]);
    assert!(
        run.fails(1).contains("blocked until T-1 is completed"),
        "{}",
        run.stderr
    );
    env.run("dev", &["done", &first.to_string(), "--result", "done"])
        .ok();
    assert_eq!(env.inbox_ids("dev"), vec![second]);
    let run = env.run(
        "lead",
        &["send", "--to", "dev", "--subject", "x", "--after", "42"],
    );
    assert!(run.fails(1).contains("no task T-42"), "{}", run.stderr);
}

#[test]
fn inbox_orders_by_priority_then_age() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let low = env.send("lead", "dev", "low", &["--priority", "low"]);
    let normal = env.send("lead", "dev", "normal", &[]);
    let urgent = env.send("lead", "dev", "urgent", &["--priority", "urgent"]);
    let normal_later = env.send("lead", "dev", "normal later", &[]);
    assert_eq!(
        env.inbox_ids("dev"),
        vec![urgent, normal, normal_later, low]
    );
}

#[test]
fn a_stalled_claim_returns_to_the_sender_and_any_command_renews_the_lease() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let start = "2026-11-29T10:00:00.000Z";
    let at = |minutes: u32| {
        format!(
            "2026-11-29T{:02}:{:02}:00.000Z",
            10 + minutes / 60,
            minutes % 60
        )
    };
    let id = env.send("lead", "dev", "Long job", &[]).to_string();
    env.run_env("dev", &["claim", &id], &[("BATON_NOW", start)])
        .ok();
    let inbox = |agent: &str, minute: u32| -> Vec<Value> {
        let value = env
            .run_env(agent, &["--json", "inbox"], &[("BATON_NOW", &at(minute))])
            .json();
        value["tasks"].as_array().unwrap().clone()
    };
    assert!(inbox("lead", 29).is_empty(), "lease still live");
    // Twenty minutes in, dev runs a command: past half the lease, so it is renewed to 50.
    env.run_env("dev", &["status"], &[("BATON_NOW", &at(20))])
        .ok();
    assert!(inbox("lead", 45).is_empty(), "renewed lease still live");
    let stalled = inbox("lead", 51);
    assert_eq!(stalled.len(), 1);
    assert_eq!(stalled[0]["reason"], "stalled");
    let board = env
        .run_env("lead", &["board"], &[("BATON_NOW", &at(51))])
        .ok()
        .to_string();
    assert!(board.contains("STALLED"), "{board}");
}

#[test]
fn status_is_one_line_and_quiet_says_nothing_when_empty() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    assert_eq!(env.run("dev", &["status", "--quiet"]).ok(), "");
    env.send("lead", "dev", "Write docs", &[]);
    let line = env.run("dev", &["status", "--quiet"]).ok().to_string();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("T-1"), "{line}");
}

#[test]
fn global_flags_work_before_and_after_the_subcommand() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "x", &[]);
    let before = env.run("", &["--as", "dev", "--json", "inbox"]).json();
    let after = env.run("", &["inbox", "--json", "--as", "dev"]).json();
    assert_eq!(before["tasks"], after["tasks"]);
    let from_env = env
        .run_env("", &["--json", "inbox"], &[("BATON_AGENT", "dev")])
        .json();
    assert_eq!(from_env["agent"], "dev");
    let overridden = env
        .run_env("lead", &["--json", "inbox"], &[("BATON_AGENT", "dev")])
        .json();
    assert_eq!(overridden["agent"], "lead", "--as wins over BATON_AGENT");
}

#[test]
fn the_demo_walks_the_whole_lifecycle_without_touching_the_real_home() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let run = env.run("", &["demo"]);
    let out = run.ok();
    for step in [
        "send",
        "claim",
        "ask",
        "answer",
        "review",
        "request-changes",
        "approve",
    ] {
        assert!(
            out.contains(&format!("$ baton {step}")),
            "demo shows {step}: {out}"
        );
    }
    assert!(out.contains("T-1 completed"), "{out}");
    assert!(
        out.contains("1 task for codex") && out.contains("1 task for claude"),
        "both inboxes"
    );
    assert!(
        !env.home().join("projects").exists(),
        "the demo used a throwaway home"
    );
}

#[test]
fn help_teaches_and_exits_zero_while_bad_arguments_exit_one() {
    let env = TestEnv::new();
    let help = env.run("", &["--help"]);
    let text = help.ok();
    assert!(
        text.contains("Exit codes") && text.contains("inbox"),
        "{text}"
    );
    let run = env.run("", &["send", "--to", "x"]);
    assert_eq!(
        run.code, 1,
        "missing --subject is a wrong request: {}",
        run.stderr
    );
    let run = env.run("", &["frobnicate"]);
    assert_eq!(run.code, 1);
}

/// `--no-wake` is offered by the commands that hand work over, and by no other; before the
/// command, where a wrapper may pass it to everything it runs, every command takes it.
#[test]
fn no_wake_is_offered_only_where_work_is_handed_over() {
    let env = TestEnv::new();
    let offers = |command: &str| {
        let run = env.run("", &[command, "--help"]);
        run.ok().contains("--no-wake")
    };
    for command in [
        "send",
        "ask",
        "answer",
        "review",
        "approve",
        "request-changes",
        "done",
        "fail",
        "cancel",
        "reassign",
        "msg",
        "mcp",
        "serve",
    ] {
        assert!(offers(command), "{command} --help lacks --no-wake");
    }
    for command in [
        "inbox", "board", "show", "status", "log", "claim", "release", "agents", "whoami",
        "messages", "wait", "watch", "doctor", "note",
    ] {
        assert!(!offers(command), "{command} --help offers --no-wake");
    }
    env.register(&["lead"]);
    let refused = env.run("lead", &["inbox", "--no-wake"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("--no-wake"), "{}", refused.stderr);
    env.run("lead", &["--no-wake", "inbox"]).ok();
}

/// Every command that takes a task says, in its help, what the `<ID>` is and how to write it.
#[test]
fn the_task_id_is_described_in_every_commands_help() {
    let env = TestEnv::new();
    for command in [
        "show",
        "claim",
        "release",
        "ask",
        "answer",
        "review",
        "approve",
        "request-changes",
        "done",
        "fail",
        "cancel",
        "reassign",
    ] {
        let run = env.run("", &[command, "--help"]);
        let help = run.ok();
        let line = help
            .lines()
            .find(|line| line.trim_start().starts_with("<ID>"))
            .unwrap_or_else(|| panic!("{command} --help has no <ID> line:\n{help}"));
        assert!(
            line.contains("The task: 12, T-12 or t-12"),
            "{command} --help: {line}"
        );
    }
}

#[test]
fn a_change_reports_every_inbox_it_fills_including_unblocked_tasks() {
    let env = TestEnv::new();
    env.register(&["lead", "dev", "qa"]);
    let build = env.send("lead", "dev", "Build", &[]).to_string();
    let sent = env
        .run(
            "lead",
            &[
                "--json",
                "send",
                "--to",
                "qa",
                "--subject",
                "Test",
                "--after",
                &build,
            ],
        )
        .json();
    assert_eq!(
        sent["handovers"],
        serde_json::json!([]),
        "a blocked task fills no inbox"
    );
    let done = env
        .run("dev", &["--json", "done", &build, "--result", "built"])
        .json();
    let handovers = done["handovers"].as_array().unwrap();
    assert_eq!(handovers.len(), 1, "{handovers:?}");
    assert_eq!(handovers[0]["agent"], "qa");
    assert_eq!(handovers[0]["task"], 2);
    assert_eq!(handovers[0]["reason"], "assigned");
    let asked = env
        .run("qa", &["--json", "ask", "2", "--body", "Which build?"])
        .json();
    assert_eq!(asked["handovers"][0]["agent"], "lead");
    assert_eq!(asked["handovers"][0]["reason"], "question");
}
