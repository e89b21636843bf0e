//! Hubs behind a load balancer (docs/load-balancer.md): haproxy, configured as the page
//! says, in front of two hubs on one store, round robin with no stickiness.

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

use serde_json::json;

use crate::common::haproxy::Balanced;
use crate::common::http::{Served, add_token, open, read_reply};
use crate::common::{TestEnv, eventually};

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

/// SIGTERM drains a hub: `/healthz` and every new request are answered 503 (`Retry-After`,
/// untouched) at once, its event streams end cleanly, the request it was answering finishes,
/// and then it exits 0.
#[test]
fn a_draining_hub_answers_503_finishes_what_it_holds_and_exits_0() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let token = add_token(&env, "codex");
    let served = Served::start(&env, "alice");
    let mut events = served.open_events(&token).expect("the event stream opens");
    // A change under way: its head read and its body asked for (`100 Continue`: the hub
    // has taken it in), the body not sent yet.
    let body = json!({"to": "alice", "subject": "under way"}).to_string();
    let slow = open(
        &served.address,
        "POST",
        "/api/v1/projects/default/tasks",
        &[
            ("Host", &served.address),
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
            ("Content-Length", &body.len().to_string()),
            ("Expect", "100-continue"),
        ],
    );
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut slow = BufReader::new(slow);
    let mut line = String::new();
    slow.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 100"), "{line:?}");
    slow.read_line(&mut line).unwrap();
    served.terminate();
    // At once: the health check and any new request are 503, untouched.
    let health = eventually("/healthz answers 503", || {
        let reply = served.get("/healthz", "");
        (reply.status == 503).then_some(reply)
    });
    assert_eq!(health.header("retry-after"), Some("1"), "{health:?}");
    let refused = served.post(
        "/api/v1/projects/default/tasks",
        &token,
        &json!({"to": "alice", "subject": "refused"}),
    );
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("stopping"),
        "{}",
        refused.body
    );
    // The event stream ends cleanly: its last, empty chunk.
    let mut rest = String::from("\r\n");
    while !rest.ends_with("\r\n0\r\n\r\n") {
        let mut line = String::new();
        let read = events
            .read_line(&mut line)
            .expect("the stream ends cleanly");
        assert!(read > 0, "the stream was cut: {rest:?}");
        rest.push_str(&line);
    }
    // The change under way is made and answered.
    slow.get_mut().write_all(body.as_bytes()).unwrap();
    let answer = read_reply(&mut slow).expect("the change under way is answered");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer.json()["task"]["id"].as_u64().unwrap();
    let (status, stderr) = served.stop_waited();
    assert!(status.success(), "{status:?}: {stderr}");
    let board = env
        .run("alice", &["--json", "board", "--all"])
        .ok()
        .to_string();
    assert!(board.contains("under way"), "{board}");
    assert!(!board.contains("refused"), "{board}");
    let shown = env
        .run("alice", &["--json", "show", &id.to_string()])
        .json();
    assert_eq!(shown["subject"], "under way");
}
