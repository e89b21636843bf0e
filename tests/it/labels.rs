//! Labels and search (SPEC section 19) through the binary: labels set by `send`, changed and
//! cleared by `edit` (the old ones kept in the thread), shown by `show`, `board` and
//! `inbox`; `board --label/--search [--all]` finding subject, body and thread words with
//! case folded, archived tasks only with `--all`; the same on the HTTP API and from an agent
//! on another machine (`BATON_URL`); hostile labels and searches refused in one line with
//! nothing written. The MCP tools are tested with the others (`mcp/labels.rs`).

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::remote::Hub;

/// The ids of a `--json` board.
fn ids(board: &Value) -> Vec<u64> {
    board
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {board}"))
        .iter()
        .map(|task| task["id"].as_u64().unwrap())
        .collect()
}

/// A board of four tasks from claude to codex: T-1 "Fix the Parser" (bug, ui), T-2 with
/// "Straße" in its body (docs), T-3 with "LEXER" in a question of its thread, T-4 labelled
/// bug and finished and archived, its body saying "parser" too.
fn board_of_four() -> TestEnv {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    env.send(
        "claude",
        "codex",
        "Fix the Parser",
        &["--label", "bug,ui,bug"],
    );
    env.send(
        "claude",
        "codex",
        "Write the docs",
        &["--label", "docs", "--body", "Mention the Straße case"],
    );
    env.send("claude", "codex", "Tidy up", &[]);
    env.run(
        "codex",
        &["ask", "3", "--body", "Does this include the LEXER?"],
    )
    .ok();
    env.send(
        "claude",
        "codex",
        "Old work",
        &["--label", "bug", "--body", "the parser again"],
    );
    env.run("codex", &["done", "4", "--result", "fixed"]).ok();
    env.run("claude", &["archive", "--older-than", "0"]).ok();
    env
}

#[test]
fn labels_are_set_shown_changed_and_cleared_with_the_old_ones_in_the_thread() {
    let env = board_of_four();
    let shown = env.run("claude", &["--json", "show", "1"]).json();
    assert_eq!(shown["labels"], json!(["bug", "ui"]), "repeated ones once");
    // Every task's JSON carries the list, empty or not.
    assert_eq!(
        env.run("claude", &["--json", "show", "3"]).json()["labels"],
        json!([])
    );
    let text = env.run("claude", &["show", "1"]);
    assert!(
        text.ok().contains("\n  labels:   bug, ui\n"),
        "{}",
        text.stdout
    );
    let board = env.run("claude", &["board"]);
    assert!(
        board.ok().contains("Fix the Parser  #bug #ui"),
        "{}",
        board.stdout
    );
    let inbox = env.run("codex", &["inbox", "--peek"]);
    assert!(
        inbox.ok().contains("  labels: bug, ui\n"),
        "{}",
        inbox.stdout
    );

    let changed = env
        .run("claude", &["--json", "edit", "1", "--label", "ui,perf"])
        .json();
    assert_eq!(changed["task"]["labels"], json!(["ui", "perf"]));
    let cleared = env
        .run("claude", &["--json", "edit", "1", "--label", ""])
        .json();
    assert_eq!(cleared["task"]["labels"], json!([]));
    let said: Vec<&Value> = cleared["task"]["thread"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["kind"] == "edit")
        .map(|entry| &entry["text"])
        .collect();
    assert_eq!(said, ["labels were bug, ui", "labels were ui, perf"]);
    let edits = env
        .activity("default")
        .into_iter()
        .filter(|line| line["action"] == "edit")
        .count();
    assert_eq!(edits, 2, "one activity record an edit");
}

#[test]
fn the_board_filters_by_label_and_words_and_the_archive_only_with_all() {
    let env = board_of_four();
    let board = |args: &[&str]| -> Vec<u64> {
        let mut all = vec!["--json", "board"];
        all.extend_from_slice(args);
        ids(&env.run("claude", &all).json())
    };
    assert_eq!(board(&["--label", "bug"]), [1]);
    assert_eq!(board(&["--label", "bug", "--all"]), [1, 4]);
    assert_eq!(board(&["--label", "docs"]), [2]);
    assert!(board(&["--label", "perf"]).is_empty());
    // Subject, body and thread, case aside; the archive's only with --all.
    assert_eq!(board(&["--search", "PARSER"]), [1]);
    assert_eq!(board(&["--search", "parser", "--all"]), [1, 4]);
    assert_eq!(board(&["--search", "STRASSE"]), Vec::<u64>::new());
    assert_eq!(board(&["--search", "straße case"]), [2]);
    assert_eq!(board(&["--search", "lexer"]), [3]);
    assert_eq!(board(&["--search", "the", "--label", "docs"]), [2]);
    assert_eq!(
        board(&["--search", "fixed", "--all"]),
        [4],
        "the thread's done"
    );
    // Without a label or words, --all is the board's finished tasks, as before: the
    // archive is searched, not listed.
    assert_eq!(board(&["--all"]), [1, 2, 3]);
    let archived = env.run("claude", &["--json", "board", "--all", "--label", "bug"]);
    let archived = archived.json();
    assert_eq!(archived[1]["archived"], true);
    assert_eq!(archived[0]["archived"], false);
    let shown = env.run("claude", &["board", "--all", "--search", "parser"]);
    assert!(
        shown
            .ok()
            .lines()
            .any(|line| line.starts_with("T-4") && line.ends_with("#bug  [archived]")),
        "{}",
        shown.stdout
    );
}

#[test]
fn hostile_labels_and_searches_are_refused_in_one_line_and_nothing_is_written() {
    let env = board_of_four();
    let before = env.run("claude", &["--json", "board", "--all"]).json();
    let ten_thousand: Vec<String> = (0..10_000).map(|n| format!("l{n}")).collect();
    let ten_thousand = ten_thousand.join(",");
    // A megabyte cannot be one argument (Linux takes 128 KiB at most); the API's test sends
    // one.
    let long = "a".repeat(100_000);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["send", "--to", "codex", "-s", "x", "--label", "a\u{1b}[2Jb"],
            "error: invalid label `a\\u{1b}[2Jb`: use 1-64 of a-z 0-9 . _ -, starting with a \
             letter or digit",
        ),
        (
            vec!["send", "--to", "codex", "-s", "x", "--label", &ten_thousand],
            "error: a task has at most 16 labels; 10000 were given",
        ),
        (
            vec!["edit", "1", "--label", "Bug"],
            "error: invalid label `Bug`: use 1-64 of a-z 0-9 . _ -, starting with a letter \
             or digit",
        ),
        (
            vec!["board", "--search", &long],
            "error: the search text is 100,000 characters long; at most 1,000 are accepted",
        ),
        (
            vec!["board", "--search", "two\nlines"],
            "error: the search text must be one line: it holds a line break (\\u{a}) at byte 3",
        ),
        (
            vec!["board", "--label", "x\u{7}"],
            "error: invalid label `x\\u{7}`: use 1-64 of a-z 0-9 . _ -, starting with a letter \
             or digit",
        ),
    ];
    for (args, said) in cases {
        let run = env.run("claude", &args);
        let stderr = run.fails(1);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines[0], said, "{args:?}");
        assert!(
            lines.len() == 2 && lines[1].starts_with("hint: "),
            "one line and a hint: {stderr}"
        );
    }
    assert_eq!(
        env.run("claude", &["--json", "board", "--all"]).json(),
        before,
        "nothing written"
    );
}

#[test]
fn the_api_and_a_remote_agent_filter_the_same_and_refuse_in_the_apis_shape() {
    let hub = Hub::start();
    let agent = hub.agent();
    // codex, on a machine of its own, sends labelled tasks through the hub.
    agent
        .run(&[
            "send",
            "--to",
            "alice",
            "--subject",
            "Fix the Parser",
            "--label",
            "bug",
        ])
        .ok();
    agent
        .run(&[
            "send",
            "--to",
            "alice",
            "--subject",
            "Docs",
            "--body",
            "A PARSER note",
        ])
        .ok();
    agent
        .run(&[
            "send",
            "--to",
            "alice",
            "--subject",
            "Old",
            "--label",
            "bug",
        ])
        .ok();
    hub.env
        .run("alice", &["done", "3", "--result", "the parser, done"])
        .ok();
    hub.env.run("alice", &["archive", "--older-than", "0"]).ok();
    let remote = |args: &[&str]| -> Vec<u64> {
        let mut all = vec!["--json", "board"];
        all.extend_from_slice(args);
        ids(&agent.run(&all).json())
    };
    assert_eq!(remote(&["--label", "bug"]), [1]);
    assert_eq!(remote(&["--search", "parser"]), [1, 2]);
    assert_eq!(remote(&["--search", "parser", "--all"]), [1, 2, 3]);
    assert_eq!(
        remote(&["--label", "bug", "--all", "--search", "DONE"]),
        [3]
    );
    let edited = agent
        .run(&["--json", "edit", "2", "--label", "docs,bug"])
        .json();
    assert_eq!(edited["task"]["labels"], json!(["docs", "bug"]));
    assert_eq!(remote(&["--label", "bug"]), [1, 2]);
    // Refused on this machine before anything is sent, in the hub's words.
    let here = agent.run(&["board", "--label", "Bad"]);
    let there = hub.env.run("codex", &["board", "--label", "Bad"]);
    assert_eq!(here.fails(1), there.fails(1));

    // The API itself.
    let token = &hub.token;
    let get = |query: &str| {
        hub.served
            .get(&format!("/api/v1/projects/default/board?{query}"), token)
    };
    assert_eq!(ids(&get("label=bug").ok()), [1, 2]);
    assert_eq!(ids(&get("search=Parser&all=true").ok()), [1, 2, 3]);
    assert_eq!(ids(&get("search=parser&label=docs").ok()), [2]);
    let archived = get("label=bug&all=true").ok();
    assert_eq!(archived[2]["archived"], true);
    assert_eq!(archived[2]["labels"], json!(["bug"]));
    assert_eq!(
        ids(&get("search=&label=").ok()),
        [1, 2],
        "empty: nothing asked"
    );
    let long = "a".repeat(5000);
    for (query, words) in [
        (
            "label=Bad".to_string(),
            "invalid label `Bad`: use 1-64 of a-z 0-9 . _ -, starting with a letter or digit",
        ),
        (
            format!("search={long}"),
            "the search text is 5,000 characters long; at most 1,000 are accepted",
        ),
        (
            "search=a%0Ab".to_string(),
            "the search text must be one line: it holds a line break (\\u{a}) at byte 1",
        ),
    ] {
        let refused = get(&query);
        assert_eq!(refused.status, 400, "{}", refused.body);
        let body = refused.json();
        assert_eq!(body["error"], words);
        assert_eq!(body["code"], 1);
        assert!(body["hint"].is_string(), "{body}");
    }
    // A search of a megabyte is refused whole, and the hub answers on.
    let huge = get(&format!("search={}", "a".repeat(1024 * 1024)));
    assert!(
        (400..500).contains(&huge.status),
        "{} {}",
        huge.status,
        huge.body
    );
    assert_eq!(ids(&get("label=docs").ok()), [2]);
    // The task's labels in the body of a send, and refused there too.
    let sent = hub
        .served
        .post(
            "/api/v1/projects/default/tasks",
            token,
            &json!({"to": "alice", "subject": "Via API", "labels": ["api", "api"]}),
        )
        .ok();
    assert_eq!(sent["task"]["labels"], json!(["api"]));
    let many: Vec<String> = (0..10_000).map(|n| format!("l{n}")).collect();
    let refused = hub.served.post(
        "/api/v1/projects/default/tasks",
        token,
        &json!({"to": "alice", "subject": "Many", "labels": many}),
    );
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(
        refused.json()["error"],
        "a task has at most 16 labels; 10000 were given"
    );
}
