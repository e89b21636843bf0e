//! The `edit` tool: the fields in the shapes `send` takes them, the same entry and the same
//! refusals as the command line, hostile input refused with nothing changed.

use serde_json::json;

use super::Server;
use crate::common::TestEnv;

#[tokio::test(flavor = "current_thread")]
async fn the_edit_tool_changes_what_was_given_and_refuses_as_the_command_line_does() {
    let env = TestEnv::new();
    let claude = Server::start(&env, &env.work(), "claude").await;
    let codex = Server::start(&env, &env.work(), "codex").await;
    codex.ok("inbox", json!({})).await;
    claude
        .ok("send", json!({"to": "codex", "subject": "One"}))
        .await;
    claude
        .ok(
            "send",
            json!({"to": "codex", "subject": "Two", "touches": ["src/a.rs"]}),
        )
        .await;
    let edited = claude
        .ok(
            "edit",
            json!({
                "id": "T-2",
                "subject": "Two, again",
                "touches": ["src/b/**"],
                "after": ["T-1"],
                "priority": "low",
            }),
        )
        .await;
    let task = &edited["task"];
    assert_eq!(task["status"], "pending");
    assert_eq!(task["subject"], "Two, again");
    assert_eq!(task["touches"], json!(["src/b/**"]));
    assert_eq!(task["after"], json!([1]));
    assert_eq!(
        task["thread"][0]["text"],
        "subject was \"Two\"; touches were src/a.rs; priority was normal; after was none"
    );
    // Blocked now: out of codex's inbox.
    let inbox = codex.ok("inbox", json!({})).await;
    let ids: Vec<u64> = inbox["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1]);

    let refused = codex
        .refused("edit", json!({"id": 2, "body": "mine"}))
        .await;
    let cli = env.run("codex", &["edit", "2", "--body", "mine"]);
    assert_eq!(refused.lines().next(), cli.fails(1).lines().next());
    let before = claude.ok("show", json!({"id": 2})).await;
    for (arguments, words) in [
        (
            json!({"id": 2}),
            "edit needs one of `subject`, `body`, `files`, `touches`, `labels`, `priority`, \
             `after` or `reviewer` to change",
        ),
        (
            json!({"id": 2, "subject": "a\nb"}),
            "the subject must be one line: it holds a line break (\\u{a}) at byte 1",
        ),
        (
            json!({"id": 2, "touches": ["p".repeat(1024 * 1024)]}),
            "the pattern is 1,048,576 bytes long; at most 1,024 are accepted",
        ),
        (
            json!({"id": 2, "touches": vec!["src/x.rs"; 10_000]}),
            "a task names at most 64 patterns of what it touches; 10000 were given",
        ),
    ] {
        let said = claude.refused("edit", arguments).await;
        assert!(said.starts_with(&format!("error: {words}")), "{said}");
    }
    // A field of the wrong shape is refused as any tool's arguments are.
    let wrong = claude
        .refused("edit", json!({"id": 2, "touches": "src/a.rs"}))
        .await;
    assert!(wrong.contains("expected a sequence"), "{wrong}");
    assert_eq!(claude.ok("show", json!({"id": 2})).await, before);
    claude.stop().await;
    codex.stop().await;
}
