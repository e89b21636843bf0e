//! Scopes and reservations over MCP (SPEC section 18.2): `send` with `touches`, and the
//! `reserve`, `unreserve` and `reservations` tools, refusals as tool results.

use serde_json::json;

use super::Server;
use crate::common::TestEnv;

#[tokio::test(flavor = "current_thread")]
async fn agents_reserve_and_hold_work_through_their_tools() {
    let env = TestEnv::new();
    let claude = Server::start(&env, &env.work(), "claude").await;
    let codex = Server::start(&env, &env.work(), "codex").await;
    codex.ok("inbox", json!({})).await;

    let sent = claude
        .ok(
            "send",
            json!({"to": "codex", "subject": "Docs", "touches": ["docs/", "port:3000"]}),
        )
        .await;
    assert_eq!(sent["task"]["touches"], json!(["docs/", "port:3000"]));
    let taken = claude
        .ok(
            "reserve",
            json!({"patterns": ["docs/**"], "minutes": 30, "reason": "a rewrite"}),
        )
        .await;
    assert_eq!(taken["reservations"][0]["agent"], "claude");
    assert_eq!(taken["reservations"][0]["reason"], "a rewrite");
    // codex's task is held: its claim is refused as a tool result naming the holder.
    let refused = codex.refused("claim", json!({"id": 1})).await;
    assert!(
        refused.contains("it is held: docs/** by claude"),
        "{refused}"
    );
    let refused = codex
        .refused("reserve", json!({"patterns": ["docs/index.md"]}))
        .await;
    assert!(
        refused.contains("docs/index.md is held: docs/** by claude"),
        "{refused}"
    );
    let listed = codex.ok("reservations", json!({})).await;
    assert_eq!(listed["reservations"][0]["pattern"], "docs/**");
    let refused = claude.refused("unreserve", json!({})).await;
    assert!(
        refused.contains("unreserve needs the patterns"),
        "{refused}"
    );
    let ended = claude.ok("unreserve", json!({"all": true})).await;
    assert_eq!(ended["handovers"][0]["agent"], "codex");
    let claimed = codex.ok("claim", json!({"id": 1})).await;
    assert_eq!(claimed["task"]["reservations"][0]["pattern"], "docs/");
    let mine = codex.ok("reservations", json!({"mine": true})).await;
    assert_eq!(mine["reservations"].as_array().map(Vec::len), Some(2));
    claude.stop().await;
    codex.stop().await;
}
