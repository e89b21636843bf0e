//! The event stream of `baton serve`: every change reaches it, whoever makes it; a stalled
//! client holds up nobody; a stream ends with its token.

use std::time::Duration;

use serde_json::json;

use super::ends;
use crate::common::http::{Served, add_token, open_answered};
use crate::common::{TestEnv, eventually};

#[test]
fn every_change_reaches_a_connected_stream_whoever_makes_it() {
    every_change_reaches_a_stream(&[]);
}

#[test]
fn events_keep_arriving_when_the_file_event_source_is_unavailable() {
    // The fallback that looks at the files, as where the kernel gives no events.
    every_change_reaches_a_stream(&[("BATON_FILE_EVENTS", "poll")]);
}

/// Each change, from the CLI, the API or a project made after the server started, reaches
/// an open stream once, as its own kind, with the server's environment holding `vars`.
fn every_change_reaches_a_stream(vars: &[(&str, &str)]) {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let served = Served::start_with_vars(&env, "alice", &[], vars);
    let events = served.events(&served.login);
    let id = env.send("dev", "alice", "from the CLI", &[]);
    let event = events
        .recv_timeout(Duration::from_secs(20))
        .expect("an event");
    assert_eq!(
        event,
        json!({"project": "default", "kind": "send", "id": id})
    );
    env.run("alice", &["msg", "--to", "dev", "hello"]).ok();
    let event = events
        .recv_timeout(Duration::from_secs(20))
        .expect("an event");
    assert_eq!(event["kind"], "message");
    assert_eq!(event["id"], 1);
    // A change through the API is an event as well, and so is one in a new project.
    served
        .post(
            &format!("/api/v1/projects/default/tasks/{id}/claim"),
            &served.login,
            &json!({}),
        )
        .ok();
    let event = events
        .recv_timeout(Duration::from_secs(20))
        .expect("an event");
    assert_eq!(
        event,
        json!({"project": "default", "kind": "claim", "id": id})
    );
    // A change is told once, by its activity line; a board write with no line of its own
    // (the mark that a task was shown to its agent) is told as `board`.
    let shown = env.send("dev", "alice", "to be shown", &[]);
    let event = events
        .recv_timeout(Duration::from_secs(20))
        .expect("an event");
    assert_eq!(
        event,
        json!({"project": "default", "kind": "send", "id": shown})
    );
    env.run("alice", &["inbox"]).ok();
    let event = events
        .recv_timeout(Duration::from_secs(20))
        .expect("an event");
    assert_eq!(
        event,
        json!({"project": "default", "kind": "board", "id": null})
    );
    let extra = events.recv_timeout(Duration::from_millis(500));
    assert!(extra.is_err(), "one event per change, and then {extra:?}");
    let api = env.project_beside("alice", "api");
    env.run_in(
        &api,
        "alice",
        &["send", "--to", "dev", "--subject", "elsewhere"],
    )
    .ok();
    let event = eventually("the new project's change", || {
        events
            .recv_timeout(Duration::from_secs(1))
            .ok()
            .filter(|event| event["project"] == "api" && event["kind"] == "send")
    });
    assert_eq!(event["id"], 1);
}

#[test]
fn a_stalled_or_vanished_client_holds_up_nobody() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let served = Served::start(&env, "alice");
    // One client opens the stream and never reads; another goes away mid-stream.
    let bearer = format!("Bearer {}", served.login);
    let headers = [
        ("Host", served.address.as_str()),
        ("Authorization", &bearer),
    ];
    let stalled = open_answered(&served.address, "GET", "/api/v1/events", &headers);
    {
        let _gone = open_answered(&served.address, "GET", "/api/v1/events", &headers);
    }
    let listening = served.events(&served.login);
    // Far more changes than the stalled stream's backlog.
    let subject = "x".repeat(1_000);
    let body = "y".repeat(1_000);
    for _ in 0..40 {
        env.run(
            "dev",
            &[
                "send",
                "--to",
                "alice",
                "--subject",
                &subject,
                "--body",
                &body,
            ],
        )
        .ok();
    }
    let mut seen = 0;
    while seen < 40 {
        let event = listening
            .recv_timeout(Duration::from_secs(20))
            .expect("every change reaches the client that reads");
        if event["kind"] == "send" {
            seen += 1;
        }
    }
    // And the server still answers everyone else.
    assert_eq!(served.get("/healthz", "").body, "ok");
    let board = served
        .get("/api/v1/projects/default/board", &served.login)
        .ok();
    assert_eq!(board.as_array().unwrap().len(), 40);
    drop(stalled);
}

#[test]
fn an_event_stream_ends_when_its_token_is_removed_or_replaced() {
    let env = TestEnv::new();
    env.register(&["alice", "dev", "lead"]);
    let dev = add_token(&env, "dev");
    let lead = add_token(&env, "lead");
    let served = Served::start(&env, "alice");
    let dev_events = served.events(&dev);
    let lead_events = served.events(&lead);
    let login_events = served.events(&served.login);
    let id = env.send("alice", "dev", "before", &[]);
    for events in [&dev_events, &lead_events, &login_events] {
        let event = events.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(event["id"], id, "{event}");
    }

    // lead's token is removed; dev's is replaced by a new one of the same name, which the
    // old stream must not take for its own. Nothing else changes: the streams end by
    // themselves, not at the next event.
    env.run("", &["token", "rm", "lead"]).ok();
    env.run("", &["token", "rm", "dev"]).ok();
    let new_dev = add_token(&env, "dev");
    ends(&lead_events, "a removed token");
    ends(&dev_events, "a replaced token");

    // The others go on.
    let id = env.send("alice", "dev", "after", &[]);
    let event = login_events.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(event["id"], id, "{event}");
    assert_eq!(served.get("/api/v1/events", &dev).status, 401);
    assert_eq!(served.get("/api/v1/events", &lead).status, 401);
    let renewed = served.events(&new_dev);
    let id = env.send("alice", "dev", "renewed", &[]);
    let event = renewed.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(event["id"], id, "{event}");
}
