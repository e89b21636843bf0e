//! Board reads over HTTP answered from bytes encoded once per version of the board: never
//! a board older than the one stored, whoever changed it (a CLI process, another `serve` on
//! the same home, a hand edit) or whatever time did to it (a lease running out), with an
//! ETag and 304 for a client that already has it.

use serde_json::Value;

use crate::common::http::{Reply, Served, send};
use crate::common::{TestEnv, files_only, task_in};

const BOARD: &str = "/api/v1/projects/default/board";

fn token(env: &TestEnv, name: &str) -> String {
    env.run("", &["token", "add", name]).ok().trim().to_string()
}

/// GET of `path` as `token`, with `If-None-Match: etag` when one is given.
fn get(served: &Served, path: &str, token: &str, etag: Option<&str>) -> Reply {
    let mut headers = vec![
        ("Host".to_string(), served.address.clone()),
        ("Authorization".to_string(), format!("Bearer {token}")),
    ];
    if let Some(etag) = etag {
        headers.push(("If-None-Match".to_string(), etag.to_string()));
    }
    send(&served.address, "GET", path, &headers, None)
}

fn status_of(board: &Value, id: u64) -> String {
    task_in(board, id)["status"]
        .as_str()
        .unwrap_or("absent")
        .to_string()
}

#[test]
fn a_board_changed_by_another_process_between_two_reads_is_never_served_as_it_was() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let codex = token(&env, "codex");
    let served = Served::start(&env, "alice");
    // The server's reads of an unchanged board are kept; each CLI change between two reads
    // must show in the second, whatever the change (a new task, a status there and back).
    let mut ids = Vec::new();
    for round in 0..8 {
        let before = served.get(BOARD, &served.login).ok();
        let again = served.get(BOARD, &served.login).ok();
        assert_eq!(before, again, "an unchanged board reads the same");
        let id = env.send("alice", "codex", &format!("Round {round}"), &[]);
        ids.push(id);
        let after = served.get(BOARD, &served.login).ok();
        assert_eq!(status_of(&after, id), "pending", "round {round}: {after}");
        env.run("codex", &["claim", &id.to_string()]).ok();
        let claimed = served.get(BOARD, &served.login).ok();
        assert_eq!(status_of(&claimed, id), "working", "round {round}");
        // Read by codex too: another caller, the same answer for an unfiltered board.
        assert_eq!(served.get(BOARD, &codex).ok(), claimed);
        env.run("codex", &["release", &id.to_string()]).ok();
        let released = served.get(BOARD, &served.login).ok();
        assert_eq!(status_of(&released, id), "pending", "round {round}");
        assert_eq!(released.as_array().unwrap().len(), ids.len());
    }
    // Through a second server on the same home: a change there, then a read here.
    let other = Served::start(&env, "alice");
    let kept = served.get(BOARD, &served.login).ok();
    let claim = format!("/api/v1/projects/default/tasks/{}/claim", ids[0]);
    let claimed = other.post(&claim, &codex, &serde_json::json!({}));
    assert_eq!(claimed.status, 200, "{}", claimed.body);
    let read = served.get(BOARD, &served.login).ok();
    assert_ne!(read, kept);
    assert_eq!(status_of(&read, ids[0]), "working");
}

#[test]
fn a_board_edited_in_place_is_read_again() {
    if !files_only("edits board.json in place") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    env.send("alice", "codex", "Fix the parser", &[]);
    let served = Served::start(&env, "alice");
    let first = served.get(BOARD, &served.login).ok();
    assert_eq!(first[0]["subject"], "Fix the parser");
    // Same length, same file: only its times say it changed.
    let path = env.board_path("default");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("Fix the parser", "Fix the lexer!")).unwrap();
    let second = served.get(BOARD, &served.login).ok();
    assert_eq!(second[0]["subject"], "Fix the lexer!");
}

#[test]
fn a_lease_running_out_shows_at_the_next_read_with_no_write() {
    if !files_only("sets a lease to run out in seconds, in board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let id = env.send("alice", "codex", "Fix the parser", &[]);
    env.run("codex", &["claim", &id.to_string()]).ok();
    // The lease runs out six seconds from now (a project's lease is a minute at least):
    // time enough for a loaded machine to start the server and read the board before.
    let path = env.board_path("default");
    let mut board: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let soon = chrono::Utc::now() + chrono::Duration::seconds(6);
    board["tasks"][0]["lease_expires_at"] =
        Value::String(soon.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
    std::fs::write(&path, serde_json::to_string_pretty(&board).unwrap()).unwrap();
    // Read by alice, whose reads renew none of codex's leases.
    let served = Served::start(&env, "alice");
    let working = served.get(BOARD, &served.login).ok();
    assert_eq!(working[0]["stalled"], false, "{working}");
    assert_eq!(served.get(BOARD, &served.login).ok(), working, "kept");
    // Until just past the lease's end: the time running out is the test.
    let left = soon - chrono::Utc::now() + chrono::Duration::milliseconds(500);
    std::thread::sleep(left.to_std().unwrap_or_default());
    let stalled = served.get(BOARD, &served.login).ok();
    assert_eq!(stalled[0]["stalled"], true, "{stalled}");
    assert_eq!(stalled[0]["turn"], "alice", "{stalled}");
}

#[test]
fn an_unchanged_board_has_one_etag_and_if_none_match_is_304() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    env.send("alice", "codex", "Fix the parser", &[]);
    let served = Served::start(&env, "alice");
    let first = get(&served, BOARD, &served.login, None);
    assert_eq!(first.status, 200);
    assert_eq!(first.header("content-type"), Some("application/json"));
    let etag = first.header("etag").expect("an ETag").to_string();
    let second = get(&served, BOARD, &served.login, None);
    assert_eq!(second.body, first.body);
    assert_eq!(second.header("etag"), Some(etag.as_str()));
    let known = get(&served, BOARD, &served.login, Some(&etag));
    assert_eq!(known.status, 304);
    assert_eq!(known.body, "");
    assert_eq!(known.header("etag"), Some(etag.as_str()));
    env.send("alice", "codex", "Fix the lexer", &[]);
    let changed = get(&served, BOARD, &served.login, Some(&etag));
    assert_eq!(
        changed.status, 200,
        "the tag of an older board is not this one's"
    );
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
    assert_eq!(changed.json().as_array().unwrap().len(), 2);
}

#[test]
fn what_a_caller_is_offered_is_its_own() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let codex = token(&env, "codex");
    let id = env.send("alice", "codex", "Fix the parser", &[]);
    let served = Served::start(&env, "alice");
    let path = format!("{BOARD}?offered=true");
    let offered = |token: &str| -> Vec<String> {
        let board = served.get(&path, token).ok();
        task_in(&board, id)["offered"]
            .as_array()
            .unwrap()
            .iter()
            .map(|kind| kind.as_str().unwrap().to_string())
            .collect()
    };
    for _ in 0..2 {
        assert!(offered(&codex).contains(&"claim".to_string()));
        assert!(!offered(&served.login).contains(&"claim".to_string()));
        assert!(offered(&served.login).contains(&"cancel".to_string()));
    }
    let mine = format!("{BOARD}?mine=true");
    assert_eq!(served.get(&mine, &codex).ok().as_array().unwrap().len(), 1);
    env.register(&["bob"]);
    let bob = token(&env, "bob");
    assert_eq!(served.get(&mine, &bob).ok().as_array().unwrap().len(), 0);
}
