//! Pushes of new work on an MCP session over HTTP (SPEC section 11; src/serve/pushes.rs):
//! a client that takes pushes (Claude Code's `clientInfo`) holding its session's stream
//! (`GET /mcp`) is pushed one `notifications/claude/channel` per hand-over to its agent,
//! each an event of the session's log in the store, recorded seen once pushed; a stream
//! that comes back with `Last-Event-ID` resumes strictly after it, nothing pushed twice.
//! Through two hubs with one SIGKILLed: tests/it/mcp_hubs.rs.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::http::{
    Reply, Served, add_token, free_address, mcp_request, open_answered, send,
};

/// How long a push may take to arrive.
const PUSH_WITHIN: Duration = Duration::from_secs(30);

/// A POST to `/mcp`, on the protocol version Claude Code negotiates: `session` is none for
/// `initialize`.
fn to_mcp(hub: &Served, token: &str, session: Option<&str>, body: &Value) -> Reply {
    mcp_request(hub, "POST", token, session, "2025-11-25", body)
}

/// Opens a session as Claude Code does (its `clientInfo` name is what takes pushes).
fn open_session(hub: &Served, token: &str, client: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": client, "version": "2.1.0"}}});
    let opened = to_mcp(hub, token, None, &initialize);
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let told = to_mcp(hub, token, Some(&session), &initialized);
    assert_eq!(told.status, 202, "{told:?}");
    session
}

/// One event of a stream: its id and its data (empty for a priming event).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    id: Option<String>,
    data: String,
}

impl Event {
    /// The task a push carries.
    fn task(&self) -> String {
        let message: Value = serde_json::from_str(&self.data).expect("a JSON-RPC message");
        assert_eq!(
            message["method"], "notifications/claude/channel",
            "{message}"
        );
        message["params"]["meta"]["task_id"]
            .as_str()
            .expect("a task id")
            .to_string()
    }
}

/// A session's stream, read event by event (the chunk sizes of the chunked body are lines
/// of their own, neither `id:` nor `data:`, and are passed over).
struct Stream(BufReader<TcpStream>);

impl Stream {
    fn open(hub: &Served, token: &str, session: &str, last_event_id: Option<&str>) -> Stream {
        let authorization = format!("Bearer {token}");
        let mut headers = vec![
            ("Host", hub.address.as_str()),
            ("Authorization", authorization.as_str()),
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        if let Some(id) = last_event_id {
            headers.push(("Last-Event-ID", id));
        }
        let reader = open_answered(&hub.address, "GET", "/mcp", &headers);
        reader
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        Stream(reader)
    }

    /// The next event within `within`, keep-alive comments passed over.
    fn next_within(&mut self, within: Duration) -> Option<Event> {
        let started = Instant::now();
        let (mut id, mut data, mut is_event) = (None, String::new(), false);
        while started.elapsed() < within {
            let mut line = String::new();
            match self.0.read_line(&mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(_) => continue,
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(value) = line.strip_prefix("id:") {
                id = Some(value.trim().to_string());
                is_event = true;
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.trim());
                is_event = true;
            } else if line.starts_with("retry:") {
                is_event = true;
            } else if line.is_empty() && is_event {
                return Some(Event { id, data });
            }
        }
        None
    }

    fn next(&mut self) -> Event {
        self.next_within(PUSH_WITHIN)
            .expect("an event on the session's stream")
    }
}

/// `baton_mcp_pushes_total` as the hub's `/metrics` at `address` says it.
fn pushes_sent(address: &str) -> u64 {
    let reply = send(
        address,
        "GET",
        "/metrics",
        &[("Host".to_string(), address.to_string())],
        None,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
        .body
        .lines()
        .find_map(|line| line.strip_prefix("baton_mcp_pushes_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no baton_mcp_pushes_total in:\n{}", reply.body))
}

fn delivery(env: &TestEnv, id: &str) -> Value {
    env.run("alice", &["--json", "show", id]).json()["delivery"].clone()
}

/// On the files (one hub): a task alice sends to dev is pushed into dev's open stream
/// once, as a channel notification with the log's position as its id, and recorded seen
/// at once; a stream resumed with that id is not pushed it again, and is pushed the next
/// task; one resumed from before it is pushed it from the log. A client that does not take
/// pushes is pushed nothing, its stream left to rmcp.
#[test]
fn a_task_pushed_on_the_stream_is_seen_and_not_pushed_again_on_a_resumed_stream() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let token = add_token(&env, "dev");
    let metrics = free_address();
    let hub = Served::start_with(&env, "alice", &["--metrics", &metrics]);
    let session = open_session(&hub, &token, "claude-code");

    let mut stream = Stream::open(&hub, &token, &session, None);
    let priming = stream.next();
    assert_eq!(priming.data, "", "{priming:?}");
    let start = priming.id.expect("a priming event's id");
    assert!(start.starts_with("push-"), "{start}");

    env.run(
        "alice",
        &["send", "--to", "dev", "--subject", "Review the parser"],
    )
    .ok();
    let pushed = stream.next();
    assert_eq!(pushed.task(), "T-1", "{pushed:?}");
    assert!(
        pushed.data.contains("Review the parser"),
        "{:?}",
        pushed.data
    );
    let first = pushed.id.clone().expect("a push's id");
    assert_ne!(first, start);
    crate::common::eventually("T-1 recorded seen by its push", || {
        (delivery(&env, "1")["state"] == "seen").then_some(())
    });
    drop(stream);

    // Resumed after it: not pushed again; the next task is.
    let mut resumed = Stream::open(&hub, &token, &session, Some(&first));
    let priming = resumed.next();
    assert_eq!(priming.data, "", "{priming:?}");
    env.run(
        "alice",
        &["send", "--to", "dev", "--subject", "Fix the lexer"],
    )
    .ok();
    let next = resumed.next();
    assert_eq!(next.task(), "T-2", "T-1 is not pushed again: {next:?}");
    let second = next.id.clone().expect("a push's id");
    assert!(resumed.next_within(Duration::from_secs(2)).is_none());
    drop(resumed);

    // Resumed from before both: the log has them, in order, once each.
    let mut again = Stream::open(&hub, &token, &session, Some(&start));
    assert_eq!(again.next().data, "");
    let (one, two) = (again.next(), again.next());
    assert_eq!(
        (one.task(), two.task()),
        ("T-1".to_string(), "T-2".to_string())
    );
    assert_eq!((one.id, two.id), (Some(first), Some(second)));
    assert!(again.next_within(Duration::from_secs(2)).is_none());
    drop(again);

    // Sent while the session has no stream: pushed once one opens, resumed or afresh.
    env.run("alice", &["send", "--to", "dev", "--subject", "While away"])
        .ok();
    let mut back = Stream::open(&hub, &token, &session, None);
    assert_eq!(back.next().data, "");
    assert_eq!(back.next().task(), "T-3");
    assert!(back.next_within(Duration::from_secs(2)).is_none());
    drop(back);
    // Five pushes sent: T-1, T-2, both again from the log, T-3.
    assert_eq!(pushes_sent(&metrics), 5);

    // A client that does not take pushes: rmcp's stream, nothing pushed, nothing seen.
    let other = add_token(&env, "alice");
    let quiet = open_session(&hub, &other, "some-client");
    let mut theirs = Stream::open(&hub, &other, &quiet, None);
    env.run(
        "dev",
        &["send", "--to", "alice", "--subject", "Look at this"],
    )
    .ok();
    while let Some(event) = theirs.next_within(Duration::from_secs(3)) {
        assert_eq!(event.data, "", "nothing pushed: {event:?}");
    }
    assert_ne!(delivery(&env, "4")["state"], "seen");
}

/// Two streams of one session open at once (as when a client reconnects while its old
/// stream, on a hub that stopped answering, is not yet closed): both look at the board and
/// append, and the log holds each hand-over once, at one position, which both send.
#[test]
fn two_streams_of_one_session_push_a_task_once_at_one_position() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let token = add_token(&env, "dev");
    let hub = Served::start(&env, "alice");
    let session = open_session(&hub, &token, "claude-code");
    let mut one = Stream::open(&hub, &token, &session, None);
    let mut two = Stream::open(&hub, &token, &session, None);
    let start = one.next();
    assert_eq!(two.next(), start, "both begin at the log's end");

    env.run(
        "alice",
        &["send", "--to", "dev", "--subject", "Review the parser"],
    )
    .ok();
    let (first, second) = (one.next(), two.next());
    assert_eq!(first.task(), "T-1");
    assert_eq!(first, second, "the same event, at the same position");
    assert!(one.next_within(Duration::from_secs(2)).is_none());
    assert!(two.next_within(Duration::from_secs(1)).is_none());
    drop((one, two));

    // The log holds it once: a stream resumed from the start is sent it once.
    let mut again = Stream::open(&hub, &token, &session, start.id.as_deref());
    assert_eq!(again.next().data, "");
    assert_eq!(again.next(), first);
    assert!(again.next_within(Duration::from_secs(2)).is_none());
}

/// What a Claude Code session over HTTP with its stream open is announced as: a live
/// session of its agent (src/wake/mod.rs `HTTP_STREAM_CLIENT`).
const LIVE_OVER_HTTP: &str = "claude-http";

/// The clients of `agent`'s live sessions in `project`, as the store tells any hub or
/// command sharing it.
fn live(env: &TestEnv, project: &str, agent: &str) -> Vec<String> {
    env.with_store(|store| store.live_clients(project, agent))
}

/// The hub's one project (made by a first send).
fn only_project(env: &TestEnv) -> String {
    let projects = env.with_store(|store| baton::project::project_ids(store).unwrap());
    assert_eq!(projects.len(), 1, "{projects:?}");
    projects[0].clone()
}

/// dev, with a wake command that counts its runs in the file returned, and a token; the
/// hub's project made by a first task to alice.
fn woken_dev(env: &TestEnv) -> (std::path::PathBuf, String) {
    env.register(&["alice", "dev"]);
    let runs = env.root.path().join("wake-runs.txt");
    let script = format!("echo run >> '{}'", runs.display());
    env.run(
        "",
        &["agent", "add", "dev", "--wake", "--", "sh", "-c", &script],
    )
    .ok();
    env.run("dev", &["send", "--to", "alice", "--subject", "Set up"])
        .ok();
    (runs, add_token(env, "dev"))
}

/// Waits until dev's live sessions in `project` are one over HTTP (`is_live`) or none.
fn until_live(env: &TestEnv, project: &str, is_live: bool, what: &str) {
    crate::common::eventually(what, || {
        let live = live(env, project, "dev");
        let wanted: &[&str] = if is_live { &[LIVE_OVER_HTTP] } else { &[] };
        (live == wanted).then_some(())
    });
}

/// Ends `session` with a DELETE through `hub`; its `stream` (held on any hub) ends, and with
/// it the live session announced in `project`.
fn ended_by_delete(
    env: &TestEnv,
    project: &str,
    hub: &Served,
    token: &str,
    session: &str,
    mut stream: Stream,
) {
    let ended = mcp_request(
        hub,
        "DELETE",
        token,
        Some(session),
        "2025-11-25",
        &json!({}),
    );
    assert!(ended.status < 300, "{ended:?}");
    assert!(
        stream.ends_within(PUSH_WITHIN),
        "the DELETEd session's stream ends"
    );
    until_live(
        env,
        project,
        false,
        "the announcement gone with the session",
    );
}

fn runs_of(runs: &std::path::Path) -> usize {
    std::fs::read_to_string(runs).map_or(0, |text| text.lines().count())
}

/// Waits for the wake command's `count`th run; failing, with dev's wake log.
fn until_runs(env: &TestEnv, runs: &std::path::Path, count: usize) {
    crate::common::eventually_or(
        Duration::from_secs(60),
        &format!("the wake command's run {count}"),
        || (runs_of(runs) == count).then_some(()),
        || std::fs::read_to_string(env.home().join("wake/dev.log")).unwrap_or_default(),
    );
}

impl Stream {
    /// Whether the hub ends the stream (its body's end, or the connection closed) within
    /// `within`, events passed over.
    fn ends_within(&mut self, within: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < within {
            let mut line = String::new();
            match self.0.read_line(&mut line) {
                // The chunked body's last chunk, or the connection's end.
                Ok(0) => return true,
                Ok(_) if line.trim_end() == "0" => return true,
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return true,
            }
        }
        false
    }
}

/// A Claude Code session over HTTP holding its stream open is a live session of its agent,
/// as a stdio `baton mcp` one is: the sender hears that the work goes to it, where an agent
/// with no wake command and no live session is named as one that will see it only at its
/// next prompt. The announcement ends when the stream closes, when the session is DELETEd
/// (its stream ending with it), and when the hub holding the stream is SIGKILLed: after
/// each, the sender is told so again. On the files and, with BATON_TEST_STORE, on
/// PostgreSQL.
#[test]
fn an_open_stream_is_a_live_session_until_the_stream_its_session_or_its_hub_ends() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    env.run("dev", &["send", "--to", "alice", "--subject", "Set up"])
        .ok();
    let token = add_token(&env, "dev");
    let project = only_project(&env);
    let hub = Served::start(&env, "alice");
    let session = open_session(&hub, &token, "claude-code");
    let sent_unreachable = |subject: &str| {
        let said = env
            .run("alice", &["send", "--to", "dev", "--subject", subject])
            .ok()
            .to_string();
        said.contains("dev has no wake command and no live session")
    };
    assert!(
        live(&env, &project, "dev").is_empty(),
        "no stream, no live session"
    );

    // 1. Stream open: live; the sender is told so, and the push is the delivery.
    let mut stream = Stream::open(&hub, &token, &session, None);
    assert_eq!(stream.next().data, "", "the priming event");
    until_live(&env, &project, true, "the stream announced live");
    assert!(!sent_unreachable("Review the parser"), "dev is live");
    let pushed = stream.next().task();
    let first = pushed.trim_start_matches("T-");
    crate::common::eventually("the push recorded seen", || {
        (delivery(&env, first)["state"] == "seen").then_some(())
    });

    // 2. Stream closed: no longer live.
    drop(stream);
    until_live(
        &env,
        &project,
        false,
        "the announcement gone with the stream",
    );
    assert!(sent_unreachable("Fix the lexer"));

    // 3. DELETE: the stream ends with its session, and the announcement with it.
    let stream = Stream::open(&hub, &token, &session, None);
    until_live(&env, &project, true, "the stream announced live again");
    ended_by_delete(&env, &project, &hub, &token, &session, stream);
    assert!(sent_unreachable("Check the time zones"));

    // 4. The hub holding the stream SIGKILLed: nothing of it is left live.
    let session = open_session(&hub, &token, "claude-code");
    let mut stream = Stream::open(&hub, &token, &session, None);
    assert_eq!(stream.next().data, "");
    until_live(
        &env,
        &project,
        true,
        "the new session's stream announced live",
    );
    hub.kill();
    until_live(
        &env,
        &project,
        false,
        "no live session left by the killed hub",
    );
    assert!(sent_unreachable("Write the release notes"));
}

/// A push into a Claude Code session may be dropped by the client unsaid (print mode, no
/// channels flag, no first-party login: CLIENTS.md), over HTTP as over stdio: work pushed
/// on an open stream still runs the agent's wake command.
#[test]
fn work_pushed_on_an_open_stream_still_runs_the_wake_command() {
    let env = TestEnv::new();
    let (runs, token) = woken_dev(&env);
    let project = only_project(&env);
    let hub = Served::start(&env, "alice");
    let session = open_session(&hub, &token, "claude-code");
    let mut stream = Stream::open(&hub, &token, &session, None);
    assert_eq!(stream.next().data, "", "the priming event");
    until_live(&env, &project, true, "the stream announced live");
    let id = env.send("alice", "dev", "Review the parser", &[]);
    assert_eq!(stream.next().task(), format!("T-{id}"));
    until_runs(&env, &runs, 1);
}

/// Two hubs on one PostgreSQL database (whatever store the rest of the suite runs on: on
/// the files one hub serves every session): the stream held on one, its session DELETEd
/// through the other. The hub holding the stream is told by the store and ends it, and its
/// announcement, at once; the next hand-over is pushed to no one and runs the wake
/// command.
#[test]
fn a_session_deleted_through_another_hub_is_pushed_nothing_and_its_work_wakes_the_agent() {
    let Some(env) = TestEnv::on_postgres() else {
        return;
    };
    let (runs, token) = woken_dev(&env);
    let project = only_project(&env);
    let (one, two) = (Served::start(&env, "alice"), Served::start(&env, "alice"));
    let session = open_session(&one, &token, "claude-code");
    let mut stream = Stream::open(&two, &token, &session, None);
    assert_eq!(stream.next().data, "");
    until_live(
        &env,
        &project,
        true,
        "the stream on the second hub announced live",
    );
    ended_by_delete(&env, &project, &one, &token, &session, stream);
    let id = env.send("alice", "dev", "Review the parser", &[]);
    until_runs(&env, &runs, 1);
    assert_ne!(
        delivery(&env, &id.to_string())["state"],
        "seen",
        "nothing pushed to the ended session"
    );
}
