//! Labels and search on the MCP tools (SPEC section 19): `send` takes `labels`, `edit`
//! changes them, `board` filters by `label` and `search` (the archive's too with `all`), and
//! hostile ones are refused as the command line refuses them.

use serde_json::{Value, json};

use super::Server;
use crate::common::TestEnv;

/// The ids of the `board` tool's answer.
fn ids(board: &Value) -> Vec<u64> {
    board["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks: {board}"))
        .iter()
        .map(|task| task["id"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn the_board_tool_filters_by_label_and_words_and_refuses_hostile_ones() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let claude = Server::start(&env, &env.work(), "claude").await;
    let sent = claude
        .ok(
            "send",
            json!({"to": "codex", "subject": "Fix the Parser", "labels": ["bug", "ui", "bug"]}),
        )
        .await;
    assert_eq!(sent["task"]["labels"], json!(["bug", "ui"]));
    claude
        .ok(
            "send",
            json!({"to": "codex", "subject": "Docs", "body": "the PARSER's manual"}),
        )
        .await;
    claude
        .ok(
            "send",
            json!({"to": "codex", "subject": "Old", "labels": ["bug"]}),
        )
        .await;
    env.run("codex", &["done", "3", "--result", "done"]).ok();
    env.run("claude", &["archive", "--older-than", "0"]).ok();

    let board = |arguments: Value| {
        let claude = &claude;
        async move { ids(&claude.ok("board", arguments).await) }
    };
    assert_eq!(board(json!({"label": "bug"})).await, [1]);
    assert_eq!(board(json!({"label": "bug", "all": true})).await, [1, 3]);
    assert_eq!(board(json!({"search": "parser"})).await, [1, 2]);
    assert_eq!(board(json!({"search": "PARSER", "label": "ui"})).await, [1]);
    assert_eq!(board(json!({"search": "", "label": ""})).await, [1, 2]);
    let edited = claude
        .ok("edit", json!({"id": 2, "labels": ["docs"]}))
        .await;
    assert_eq!(edited["task"]["labels"], json!(["docs"]));
    assert_eq!(edited["task"]["thread"][0]["text"], "labels were none");
    assert_eq!(board(json!({"label": "docs"})).await, [2]);

    let before = env.run("claude", &["--json", "board", "--all"]).json();
    let many: Vec<String> = (0..10_000).map(|n| format!("l{n}")).collect();
    for (tool, arguments, words) in [
        (
            "board",
            json!({"search": "a".repeat(1024 * 1024)}),
            "the search text is 1,048,576 characters long; at most 1,000 are accepted",
        ),
        (
            "board",
            json!({"label": "x\u{1b}"}),
            "invalid label `x\\u{1b}`: use 1-64 of a-z 0-9 . _ -, starting with a letter or \
             digit",
        ),
        (
            "send",
            json!({"to": "codex", "subject": "Many", "labels": many}),
            "a task has at most 16 labels; 10000 were given",
        ),
        (
            "edit",
            json!({"id": 1, "labels": ["Bug"]}),
            "invalid label `Bug`: use 1-64 of a-z 0-9 . _ -, starting with a letter or digit",
        ),
    ] {
        let refused = claude.refused(tool, arguments).await;
        let first = refused.lines().next().unwrap_or_default();
        assert_eq!(
            first.strip_prefix("error: "),
            Some(words),
            "{tool}: {refused}"
        );
    }
    assert_eq!(
        env.run("claude", &["--json", "board", "--all"]).json(),
        before,
        "nothing written"
    );
    claude.stop().await;
}
