//! Hubs behind a load balancer (docs/load-balancer.md): haproxy, configured as the page
//! says, in front of two hubs on one store, round robin with no stickiness.

use serde_json::json;

use crate::common::TestEnv;
use crate::common::haproxy::Balanced;
use crate::common::http::add_token;

#[test]
fn haproxy_as_the_page_configures_it_spreads_requests_over_both_hubs() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let token = add_token(&env, "codex");
    let Some(balanced) = Balanced::start(env) else {
        return;
    };
    let haproxy = &balanced.haproxy;
    let mut ids = Vec::new();
    for round in 0..6 {
        let sent = haproxy.post(
            "/api/v1/projects/default/tasks",
            &token,
            &json!({"to": "alice", "subject": format!("task {round}")}),
        );
        ids.push(sent.ok()["task"]["id"].as_u64().unwrap());
    }
    let board = haproxy.get("/api/v1/projects/default/board", &token).ok();
    for id in &ids {
        assert!(
            board.to_string().contains(&format!("\"id\":{id}")),
            "{board}"
        );
    }
    // Round robin: both hubs answered, each some of the changes.
    let log = haproxy.log();
    for hub in ["hubs/hub1", "hubs/hub2"] {
        let posts = log
            .iter()
            .filter(|line| line.contains(hub) && line.contains("POST /api/v1"))
            .count();
        assert!(posts > 0, "{hub} took no change:\n{}", log.join("\n"));
    }
}
