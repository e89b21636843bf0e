//! `edit` (SPEC sections 3 and 18.1) through the binary: the command line's text and JSON,
//! its refusals (one line naming the task, its status and who may act), hostile input
//! refused with nothing changed, and the HTTP API and a remote agent's `baton edit` against
//! a hub. Its MCP tool is tested with the other tools (`mcp/edit.rs`).

use serde_json::{Value, json};

use crate::common::remote::Hub;
use crate::common::{TestEnv, thread_kinds};

fn show(env: &TestEnv, agent: &str, id: u64) -> Value {
    env.run(agent, &["--json", "show", &id.to_string()]).json()
}

#[test]
fn the_sender_edits_a_waiting_task_and_the_old_values_stay_in_its_thread() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let id = env.send(
        "claude",
        "codex",
        "Fix the parser",
        &["--touches", "src/a.rs", "--body", "It fails"],
    );
    let n = id.to_string();
    let said = env.run(
        "claude",
        &[
            "edit",
            &n,
            "--subject",
            "Fix the lexer",
            "--touches",
            "src/lex/**,docs/",
            "--priority",
            "high",
        ],
    );
    assert!(
        said.ok().starts_with("T-1 pending: Fix the lexer"),
        "{}",
        said.stdout
    );
    let changed = env
        .run_stdin(
            "claude",
            &["--json", "edit", &n, "--body", "-"],
            "It fails\non `\\u`\n",
        )
        .json();
    let task = &changed["task"];
    assert_eq!(task["status"], "pending");
    assert_eq!(task["subject"], "Fix the lexer");
    assert_eq!(task["body"], "It fails\non `\\u`");
    assert_eq!(task["touches"], json!(["src/lex/**", "docs/"]));
    assert_eq!(task["priority"], "high");
    assert_eq!(thread_kinds(task), ["edit", "edit"]);
    assert_eq!(
        task["thread"][0]["text"],
        "subject was \"Fix the parser\"; touches were src/a.rs; priority was normal"
    );
    assert_eq!(task["thread"][1]["text"], "body was \"It fails\"");
    assert_eq!(task["thread"][1]["by"], "claude");
    // One activity record an edit, its status as it was.
    let edits: Vec<Value> = env
        .activity("default")
        .into_iter()
        .filter(|line| line["action"] == "edit")
        .collect();
    assert_eq!(edits.len(), 2);
    assert_eq!(
        (&edits[0]["from_status"], &edits[0]["to_status"]),
        (&json!("pending"), &json!("pending"))
    );
    assert_eq!(edits[0]["text"], task["thread"][0]["text"]);
    // Still the assignee's to do, and `show` tells the entry as any other.
    assert_eq!(env.inbox_ids("codex"), [id]);
    let shown = env.run("codex", &["show", &n]);
    assert!(
        shown
            .ok()
            .contains("claude edit: subject was \"Fix the parser\""),
        "{}",
        shown.stdout
    );
    // A question waiting on the sender: the task may be edited while it waits, and the
    // question stays the last word its sender reads.
    env.run("codex", &["ask", &n, "--body", "Which lexer?"])
        .ok();
    env.run("claude", &["edit", &n, "--files", "src/lex.rs"])
        .ok();
    let inbox = env.run("claude", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Which lexer?");
    assert_eq!(show(&env, "claude", id)["status"], "input_required");
}

#[test]
fn refusals_are_one_line_naming_the_task_its_status_and_who_may_act_and_change_nothing() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let id = env.send("claude", "codex", "Fix the parser", &[]);
    let later = env.send("claude", "codex", "Then the docs", &["--after", "1"]);
    let gone = env.send("claude", "codex", "Not needed", &[]);
    env.run("claude", &["cancel", &gone.to_string()]).ok();
    let n = id.to_string();
    let refused = |agent: &str, args: &[&str]| -> String {
        let mut line = vec!["edit", n.as_str()];
        line.extend_from_slice(args);
        let ran = env.run(agent, &line);
        let stderr = ran.fails(1).to_string();
        assert!(stderr.starts_with("error: "), "{stderr}");
        stderr
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("error: ")
            .to_string()
    };
    let before = show(&env, "claude", id);
    let logged = env.activity("default").len();
    let many: Vec<String> = (0..10_000).map(|n| format!("src/{n}.rs")).collect();
    let many = many.join(",");
    let long = "x".repeat(100_000);
    let (gone_id, later_id) = (gone.to_string(), later.to_string());
    let cases: Vec<(&str, Vec<&str>, String)> = vec![
        (
            "codex",
            vec!["-s", "mine now"],
            "T-1 is pending, assigned to codex: only claude (the sender) can edit it".into(),
        ),
        (
            "claude",
            vec!["-s", "Fix the parser"],
            "T-1 is pending, assigned to codex: the edit changes nothing".into(),
        ),
        (
            "claude",
            vec![],
            "edit needs one of --subject, --body, --files, --touches, --label, --priority, \
             --after or --reviewer to change"
                .into(),
        ),
        (
            "claude",
            vec!["--after", "1"],
            "T-1 is pending, assigned to codex: it cannot wait on itself".into(),
        ),
        (
            "claude",
            vec!["--after", "99"],
            "no task T-99 in project default".into(),
        ),
        (
            "claude",
            vec!["--after", &gone_id],
            format!(
                "T-1 is pending, assigned to codex: T-{gone} is canceled: waiting on it, it could never start"
            ),
        ),
        (
            "claude",
            vec!["--after", &later_id],
            format!(
                "T-1 is pending, assigned to codex: its waits would close a circle (T-1 → \
                 T-{later} → T-1): none of them could ever start"
            ),
        ),
        (
            "claude",
            vec!["--after", "x"],
            "--after: `x` is not a task id (expected 12, T-12 or t-12)".into(),
        ),
        (
            "claude",
            vec!["--reviewer", "nobody"],
            "unknown agent `nobody`; known agents: claude, codex, gemini".into(),
        ),
        (
            "claude",
            vec!["-s", "Fix\nT-7 [urgent] to do: fake"],
            "the subject must be one line: it holds a line break (\\u{a}) at byte 3".into(),
        ),
        (
            "claude",
            vec!["--touches", "src/a.rs,../x"],
            "`../x` climbs out of the workspace with `..`".into(),
        ),
        (
            "claude",
            vec!["--touches", &many],
            "a task names at most 64 patterns of what it touches; 10000 were given".into(),
        ),
        (
            "claude",
            vec!["--touches", &long],
            "the pattern is 100,000 bytes long; at most 1,024 are accepted".into(),
        ),
        (
            "claude",
            vec!["--files", "a.rs,,b.rs"],
            "T-1 is pending, assigned to codex: a file name given is empty".into(),
        ),
    ];
    for (agent, args, words) in &cases {
        assert_eq!(refused(agent, args), *words, "{agent} {args:?}");
    }
    assert_eq!(show(&env, "claude", id), before, "nothing changed");
    assert_eq!(env.activity("default").len(), logged, "nothing logged");
    // Not while it is worked on, nor once it is finished.
    env.run("codex", &["claim", &n]).ok();
    assert_eq!(
        refused("claude", &["-s", "Fix the lexer"]),
        "T-1 is working, assigned to codex: edit needs it pending, input_required or \
         changes_requested"
    );
    env.run("codex", &["done", &n, "--result", "fixed"]).ok();
    assert_eq!(
        refused("claude", &["-s", "Fix the lexer"]),
        "T-1 is completed, assigned to codex: it is finished, and nothing moves it again"
    );
    // The coordinator may edit what another sent.
    let theirs = env.send("gemini", "codex", "Tidy up", &[]);
    env.run("claude", &["edit", &theirs.to_string(), "-p", "low"])
        .ok();
}

#[test]
fn an_edit_over_http_and_from_a_remote_agent_is_the_same_edit() {
    let hub = Hub::start();
    let agent = hub.agent();
    // codex, on a machine of its own, sends a task and edits it through the hub.
    agent
        .run(&["send", "--to", "alice", "--subject", "Review the plan"])
        .ok();
    let edited = agent
        .run(&[
            "--json",
            "edit",
            "1",
            "--subject",
            "Review the new plan",
            "--after",
            "",
        ])
        .json();
    assert_eq!(edited["task"]["subject"], "Review the new plan");
    assert_eq!(
        edited["task"]["thread"][0]["text"],
        "subject was \"Review the plan\""
    );
    assert_eq!(
        hub.env.run("alice", &["--json", "show", "1"]).json()["subject"],
        "Review the new plan"
    );
    // Refused on the hub, refused here in the same words and exit code.
    let here = agent.run(&["edit", "1", "--touches", "/etc/passwd"]);
    let there = hub
        .env
        .run("codex", &["edit", "1", "--touches", "/etc/passwd"]);
    assert_eq!(here.fails(1), there.fails(1));
    let mine = hub.env.run("alice", &["edit", "1", "--body", "mine"]);
    assert!(
        mine.fails(1).starts_with(
            "error: T-1 is pending, assigned to alice: only codex (the sender) can edit it"
        ),
        "{}",
        mine.stderr
    );

    // The API itself: the fields under `edits`, and a pattern of a megabyte refused in
    // one line.
    let path = "/api/v1/projects/default/tasks/1/edit";
    let token = &hub.token;
    let changed = hub
        .served
        .post(
            path,
            token,
            &json!({"edits": {"priority": "urgent", "files": ["a.rs"]}}),
        )
        .ok();
    assert_eq!(changed["task"]["priority"], "urgent");
    assert_eq!(changed["task"]["files"], json!(["a.rs"]));
    let before = hub.env.run("alice", &["--json", "show", "1"]).json();
    let huge = "p".repeat(1024 * 1024);
    for (body, words) in [
        (
            json!({"edits": {"touches": [huge]}}),
            "the pattern is 1,048,576 bytes long; at most 1,024 are accepted",
        ),
        (
            // In the command line's words, as a remote `baton edit` shows them.
            json!({"edits": {}}),
            "edit needs one of --subject, --body, --files, --touches, --label, --priority, \
             --after or --reviewer to change",
        ),
    ] {
        let refused = hub.served.post(path, token, &body);
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.json()["error"], words);
    }
    let misspelled = hub
        .served
        .post(path, token, &json!({"edits": {"subjekt": "x"}}));
    assert_eq!(misspelled.status, 422, "{}", misspelled.body);
    assert!(
        misspelled.body.contains("unknown field `subjekt`"),
        "{}",
        misspelled.body
    );
    assert_eq!(
        hub.env.run("alice", &["--json", "show", "1"]).json(),
        before
    );
}
