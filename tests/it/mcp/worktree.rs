//! A task's worktree over MCP (SPEC section 18.4): the `inbox` tool's result, and the task a
//! claim gives back, name where its work is done.

use serde_json::json;

use super::Server;
use crate::common::TestEnv;
use crate::worktree_faces::{send_and_wake, worktree_of, worktrees_app};

#[tokio::test(flavor = "current_thread")]
async fn the_inbox_and_a_claim_name_the_task_s_worktree() {
    let env = TestEnv::new();
    let workspace = worktrees_app(&env);
    let (id, _) = send_and_wake(&env, &workspace, "Fix the date parser");
    let tree = worktree_of(&env, id).display().to_string();
    let dev = Server::start(&env, &workspace, "dev").await;
    let inbox = dev.ok("inbox", json!({"peek": true})).await;
    assert_eq!(
        inbox["tasks"][0]["worktree"]["path"],
        json!(tree),
        "{inbox}"
    );
    assert_eq!(
        inbox["tasks"][0]["worktree"]["branch"],
        json!(format!("baton/T-{id}"))
    );
    let claimed = dev.ok("claim", json!({"id": id})).await;
    assert_eq!(
        claimed["task"]["worktree"]["path"],
        json!(tree),
        "{claimed}"
    );
    dev.stop().await;
}
