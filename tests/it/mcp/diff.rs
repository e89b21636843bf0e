//! The `diff` tool (SPEC section 18.4): a task's changes as `diff --json` gives them, and a
//! task without a worktree refused as a tool result.

use std::fs;

use serde_json::json;

use super::Server;
use crate::common::TestEnv;
use crate::common::git::{git, repository};

#[tokio::test(flavor = "current_thread")]
async fn the_diff_tool_gives_a_tasks_changes() {
    let env = TestEnv::new();
    let work = env.work();
    repository(&env, &work);
    env.init_project("claude", "app", &work);
    env.run("claude", &["project", "set", "--worktrees", "on"])
        .ok();
    let claude = Server::start(&env, &work, "claude").await;
    let codex = Server::start(&env, &work, "codex").await;
    codex.ok("inbox", json!({})).await;
    claude
        .ok("send", json!({"to": "codex", "subject": "Dates"}))
        .await;
    let claimed = codex.ok("claim", json!({"id": 1})).await;
    let tree = claimed["task"]["worktree"]["path"]
        .as_str()
        .unwrap()
        .to_string();
    fs::write(format!("{tree}/src/clock.rs"), "pub fn tick() {}\n").unwrap();
    git(&env, tree.as_ref(), &["add", "-A"], &[]).ok();
    git(&env, tree.as_ref(), &["commit", "-q", "-m", "clock"], &[]).ok();

    let diff = claude.ok("diff", json!({"id": 1})).await;
    assert_eq!(diff["files"][0]["path"], "src/clock.rs", "{diff:#}");
    assert_eq!(
        diff["files"][0]["hunks"],
        "@@ -0,0 +1 @@\n+pub fn tick() {}\n"
    );
    assert_eq!(diff["commits"][0]["subject"], "clock");
    let stat = claude.ok("diff", json!({"id": 1, "stat": true})).await;
    assert_eq!(stat["files"][0]["added"], 1);
    assert!(stat["files"][0].get("hunks").is_none(), "{stat:#}");

    claude
        .ok("send", json!({"to": "codex", "subject": "Unclaimed"}))
        .await;
    let refused = claude.refused("diff", json!({"id": 2})).await;
    assert!(refused.contains("T-2 has no worktree"), "{refused}");
}
