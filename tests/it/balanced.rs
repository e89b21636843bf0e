//! Hubs behind a load balancer (docs/load-balancer.md): haproxy, configured as the page
//! says, in front of two hubs on one store, round robin with no stickiness.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TryRecvError;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::common::haproxy::{Balanced, Haproxy, page_config};
use crate::common::http::{Served, add_token, events_at, open, read_reply, try_send};
use crate::common::remote::{Agent, HubHome};
use crate::common::{TestEnv, cluster, eventually, eventually_seeing};
use crate::postgres_store::assert_each_acknowledged_change_once;

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
    // A change under way: its head read and its body asked for, the body not sent yet.
    let (mut slow, body) = under_way(&served, &token, "under way");
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

/// A hundred agents at once, each sending tasks through haproxy until told to stop; what was
/// acknowledged (the id and the subject), and every answer that was not an acknowledgement.
struct Swarm {
    stop: Arc<AtomicBool>,
    acknowledged: Arc<Mutex<Vec<(String, u64, String)>>>,
    refused: Arc<Mutex<Vec<String>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Swarm {
    const AGENTS: usize = 100;

    fn start(haproxy: &Haproxy, tokens: &[String]) -> Swarm {
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(Mutex::new(Vec::new()));
        let threads = (0..Swarm::AGENTS)
            .map(|agent| {
                let token = tokens[agent % tokens.len()].clone();
                let address = haproxy.address.clone();
                let (stop, acknowledged, refused) =
                    (stop.clone(), acknowledged.clone(), refused.clone());
                std::thread::spawn(move || {
                    let headers = [
                        ("Host".to_string(), address.clone()),
                        ("Authorization".to_string(), format!("Bearer {token}")),
                        ("Content-Type".to_string(), "application/json".to_string()),
                    ];
                    for n in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let subject = format!("agent {agent} task {n}");
                        let body = json!({"to": "dev", "subject": subject}).to_string();
                        let path = "/api/v1/projects/default/tasks";
                        match try_send(&address, "POST", path, &headers, Some(&body)) {
                            Ok(reply) if reply.status == 200 => {
                                let id = reply.json()["task"]["id"].as_u64().unwrap();
                                acknowledged.lock().unwrap().push((
                                    "haproxy".to_string(),
                                    id,
                                    subject,
                                ));
                            }
                            Ok(reply) => refused
                                .lock()
                                .unwrap()
                                .push(format!("{subject}: {} {}", reply.status, reply.body)),
                            Err(error) => {
                                refused.lock().unwrap().push(format!("{subject}: {error}"))
                            }
                        }
                    }
                })
            })
            .collect();
        Swarm {
            stop,
            acknowledged,
            refused,
            threads,
        }
    }

    fn acknowledged(&self) -> usize {
        self.acknowledged.lock().unwrap().len()
    }

    /// Waits until `more` changes beyond `from` are acknowledged; fails at once on a refusal.
    fn until(&self, from: usize, more: usize, what: &str) -> usize {
        eventually_seeing(Duration::from_secs(40), what, || {
            let refused = self.refused.lock().unwrap();
            assert!(refused.is_empty(), "refused: {refused:#?}");
            let now = self.acknowledged();
            match now >= from + more {
                true => Ok(now),
                false => Err(format!("{now} acknowledged")),
            }
        })
    }

    fn stop(self) -> (Vec<(String, u64, String)>, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            thread.join().unwrap();
        }
        let acknowledged = self.acknowledged.lock().unwrap().clone();
        let refused = self.refused.lock().unwrap().clone();
        (acknowledged, refused)
    }
}

/// The swarm of 100 agents through haproxy and two hubs on one database while one hub is
/// SIGTERMed, drains and exits 0, and is started again: no agent is refused anything (what
/// the draining hub answered 503 haproxy sent to the other), and every acknowledged change is
/// on the board once, the activity log agreeing.
#[test]
fn a_hundred_agents_through_haproxy_see_no_refusal_while_a_hub_drains_and_comes_back() {
    if !cluster::runs_here() {
        return;
    }
    let mut env = TestEnv::new();
    if env.store_url.is_none() {
        // Two hubs of one home share it on the files too; the log's numbers are checked in
        // the database.
        env.store_url = Some(cluster::fresh_database(None));
    }
    env.register(&["alice", "dev"]);
    let tokens: Vec<String> = (0..10)
        .map(|n| add_token(&env, &format!("agent{n}")))
        .collect();
    let Some(mut balanced) = Balanced::start(env) else {
        return;
    };
    let swarm = Swarm::start(&balanced.haproxy, &tokens);
    let mut seen = swarm.until(0, 300, "300 changes acknowledged through both hubs");
    let since = balanced.haproxy.log().len();
    let (status, stderr) = balanced.stop(0);
    assert!(
        status.success(),
        "the drained hub exits 0: {status:?} {stderr}"
    );
    balanced.haproxy.logged(since, "Server hubs/hub1 is DOWN");
    seen = swarm.until(seen, 300, "300 more through the other hub");
    balanced.restart(0);
    let since = balanced.haproxy.log().len();
    seen = swarm.until(seen, 300, "300 more through both hubs again");
    balanced.haproxy.logged(since, "hubs/hub1 ");
    let (acknowledged, refused) = swarm.stop();
    assert!(refused.is_empty(), "refused: {refused:#?}");
    assert!(acknowledged.len() >= seen);
    assert_each_acknowledged_change_once(&balanced.env, &acknowledged);
    // What haproxy sent again: each is a request a hub refused untouched or never took.
    let log = balanced.haproxy.log();
    let retried = log
        .iter()
        .filter(|line| line.contains("POST /api/v1") && retries(line) > 0)
        .count();
    eprintln!(
        "figure: {} changes acknowledged, {retried} sent again by haproxy, none refused",
        acknowledged.len()
    );
}

/// The retries of a request in haproxy's log line (`option httplog`: the last of
/// `actconn/feconn/beconn/srv_conn/retries`, `+` before it when redispatched, which follows
/// the timers `Tq/Tw/Tc/Tr/Ta`).
fn retries(line: &str) -> u32 {
    line.split_whitespace()
        .filter(|word| word.matches('/').count() == 4)
        .nth(1)
        .and_then(|word| word.rsplit('/').next())
        .and_then(|last| last.trim_start_matches('+').parse().ok())
        .unwrap_or(0)
}

/// The README's lines of haproxy's configuration are the page's, which the tests above run:
/// neither can say what was not tested.
#[test]
fn the_readmes_haproxy_lines_are_the_ones_the_tests_run() {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("```haproxy\n")
        .expect("the README shows haproxy's lines");
    let block = &readme[start + "```haproxy\n".len()..];
    let block = &block[..block.find("```").expect("the block ends")];
    let shown: String = block
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| format!("{}\n", line.strip_prefix("  ").unwrap_or(line)))
        .collect();
    assert!(shown.lines().count() >= 5, "{shown}");
    assert!(
        page_config().contains(&shown),
        "the README's lines:\n{shown}\nare not the page's:\n{}",
        page_config()
    );
}

/// The web board through haproxy with a hub SIGKILLed: the login that one hub printed is
/// good on both and after that hub's death, and the event stream the page had on it opens
/// again through haproxy, on the other, and tells the changes that follow.
#[test]
fn the_web_boards_login_and_event_stream_carry_on_through_haproxy_when_a_hub_dies() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let Some(mut balanced) = Balanced::start(env) else {
        return;
    };
    let login = balanced.hub(0).login.clone();
    let haproxy = &balanced.haproxy;
    let board = "/api/v1/projects/default/board";
    for _ in 0..4 {
        haproxy.get(board, &login).ok();
    }
    // Round robin: two streams, one on each hub.
    let streams = [
        events_at(&haproxy.address, &login),
        events_at(&haproxy.address, &login),
    ];
    let since = haproxy.log().len();
    balanced.kill(0);
    let haproxy = &balanced.haproxy;
    haproxy.logged(since, "Server hubs/hub1 is DOWN");
    // The stream that was on the dead hub is cut; the page opens it again, on the other.
    let cut = eventually("the stream on the dead hub is cut", || {
        streams
            .iter()
            .position(|stream| matches!(stream.try_recv(), Err(TryRecvError::Disconnected)))
    });
    let reopened = events_at(&haproxy.address, &login);
    let kept = &streams[1 - cut];
    for _ in 0..4 {
        haproxy.get(board, &login).ok();
    }
    let id = balanced.env.send("alice", "codex", "after the death", &[]);
    let told = json!({"project": "default", "kind": "send", "id": id});
    for stream in [kept, &reopened] {
        let event = stream
            .recv_timeout(Duration::from_secs(20))
            .expect("the change is told");
        assert_eq!(event, told);
    }
    // The hub comes back; the login printed by its first life is still good through it.
    balanced.restart(0);
    for _ in 0..4 {
        balanced.haproxy.get(board, &login).ok();
    }
}

/// An A2A client's `SubscribeToTask` (`tasks/resubscribe`) through haproxy: the stream on the
/// hub that is SIGKILLed is cut, subscribed again it is on the other hub, starting from the
/// task as it is, and both tell the task's next change.
#[test]
fn an_a2a_stream_resubscribes_through_haproxy_on_the_other_hub_when_one_dies() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let lead = add_token(&env, "lead");
    let Some(mut balanced) = Balanced::start(env) else {
        return;
    };
    let sent = balanced.haproxy.post(
        "/a2a/agents/dev",
        &lead,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Watch me"}]},
            "configuration": {"returnImmediately": true}}}),
    );
    let task = sent.ok()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Round robin: one stream on each hub, each opened with the task as it is.
    let mut streams = [
        subscribe(&balanced.haproxy, &lead, &task),
        subscribe(&balanced.haproxy, &lead, &task),
    ];
    for stream in &mut streams {
        assert!(next_data(stream).unwrap().contains("TASK_STATE_SUBMITTED"));
    }
    balanced.kill(0);
    // The stream on the dead hub is cut (the other stays open and quiet), …
    let cut = eventually("the stream on the dead hub is cut", || {
        streams.iter_mut().position(has_ended)
    });
    // … subscribed again through haproxy it is on the other, from the task as it is.
    streams[cut] = subscribe(&balanced.haproxy, &lead, &task);
    assert!(
        next_data(&mut streams[cut])
            .unwrap()
            .contains("TASK_STATE_SUBMITTED")
    );
    let id = task.rsplit("T-").next().unwrap();
    balanced.env.run("dev", &["claim", id]).ok();
    for stream in &mut streams {
        let event = next_data(stream).expect("the claim is told");
        assert!(event.contains("TASK_STATE_WORKING"), "{event}");
    }
}

/// `SubscribeToTask` through `haproxy`, its answer's head read.
fn subscribe(haproxy: &Haproxy, token: &str, task: &str) -> BufReader<std::net::TcpStream> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                      "params": {"id": task}})
    .to_string();
    let stream = open(
        &haproxy.address,
        "POST",
        "/a2a/agents/dev",
        &[
            ("Host", &haproxy.address),
            ("Authorization", &format!("Bearer {token}")),
            ("Content-Type", "application/json"),
            ("Accept", "text/event-stream"),
            ("Content-Length", &body.len().to_string()),
        ],
    );
    let mut stream = BufReader::new(stream);
    stream.get_mut().write_all(body.as_bytes()).unwrap();
    stream
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// The next `data:` line of an event stream; `None` once it has ended or broken. A stream
/// that stays quiet for 30 s fails the test (a read's timeout).
fn next_data(stream: &mut BufReader<std::net::TcpStream>) -> Option<String> {
    loop {
        let mut line = String::new();
        match stream.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) if line.starts_with("data: ") => return Some(line),
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                panic!("the stream stayed quiet: {error}")
            }
            Err(error) if error.kind() == std::io::ErrorKind::TimedOut => {
                panic!("the stream stayed quiet: {error}")
            }
            Err(_) => return None,
        }
    }
}

/// Whether `stream`, quiet, has ended or broken; its read timeout left at 30 s.
fn has_ended(stream: &mut BufReader<std::net::TcpStream>) -> bool {
    let short = Some(Duration::from_millis(100));
    stream.get_ref().set_read_timeout(short).unwrap();
    let mut line = String::new();
    let ended = match stream.read_line(&mut line) {
        Ok(read) => read == 0,
        Err(error) => !matches!(
            error.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    };
    assert!(!line.starts_with("data: "), "an event while quiet: {line}");
    let long = Some(Duration::from_secs(30));
    stream.get_ref().set_read_timeout(long).unwrap();
    ended
}

/// A change under way on `served`: a task sent with `subject`, its head read and its body
/// asked for (`100 Continue`: the hub has taken it in), the body not sent yet; the
/// connection, and the body to send.
fn under_way(
    served: &Served,
    token: &str,
    subject: &str,
) -> (BufReader<std::net::TcpStream>, String) {
    let body = json!({"to": "alice", "subject": subject}).to_string();
    let slow = held(
        served,
        "/api/v1/projects/default/tasks",
        &[("Authorization", &format!("Bearer {token}"))],
        &body,
    );
    (slow, body)
}

/// A POST of `body` to `path` whose head is read and whose body is asked for
/// (`Expect: 100-continue`), the body not sent yet: a request under way.
fn held(
    served: &Served,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> BufReader<std::net::TcpStream> {
    let length = body.len().to_string();
    let mut all = vec![
        ("Host", served.address.as_str()),
        ("Content-Type", "application/json"),
        ("Content-Length", &length),
        ("Expect", "100-continue"),
    ];
    all.extend_from_slice(headers);
    let slow = open(&served.address, "POST", path, &all);
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut slow = BufReader::new(slow);
    let mut line = String::new();
    slow.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 100"), "{line:?}");
    slow.read_line(&mut line).unwrap();
    slow
}

/// An MCP tool call under way when the drain begins is carried out and answered, the
/// session's stream (GET) ends at once so that its client opens it again elsewhere, and
/// the hub then exits 0.
#[test]
fn a_draining_hub_answers_the_mcp_call_under_way_and_ends_the_sessions_stream() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let token = add_token(&env, "codex");
    let served = Served::start(&env, "alice");
    let bearer = format!("Bearer {token}");
    let accept = ("Accept", "application/json, text/event-stream");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "drain-test", "version": "1"}},
    })
    .to_string();
    let mut opened = held(
        &served,
        "/mcp",
        &[("Authorization", bearer.as_str()), accept],
        &initialize,
    );
    opened.get_mut().write_all(initialize.as_bytes()).unwrap();
    let opened = read_reply(&mut opened).expect("initialize is answered");
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let in_session = [
        ("Authorization", bearer.as_str()),
        accept,
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut told = held(&served, "/mcp", &in_session, &initialized.to_string());
    told.get_mut()
        .write_all(initialized.to_string().as_bytes())
        .unwrap();
    let told = read_reply(&mut told).expect("initialized is taken");
    assert_eq!(told.status, 202, "{told:?}");
    // The session's stream, open.
    let mut get = vec![("Host", served.address.as_str())];
    get.extend_from_slice(&in_session);
    let mut stream = BufReader::new(open(&served.address, "GET", "/mcp", &get));
    stream
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = String::new();
    stream.read_line(&mut head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head:?}");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "send", "arguments":
                                 {"to": "alice", "subject": "called while draining"}}})
    .to_string();
    let mut slow = held(&served, "/mcp", &in_session, &call);
    // Open: its head read, nothing more to read before the drain.
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
    }
    let quiet = Duration::from_millis(500);
    stream.get_ref().set_read_timeout(Some(quiet)).unwrap();
    let mut early = String::new();
    let before = stream.read_line(&mut early);
    assert!(
        before.is_err(),
        "the stream ended before the drain: {early:?}"
    );
    stream
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    served.terminate();
    eventually("/healthz answers 503", || {
        (served.get("/healthz", "").status == 503).then_some(())
    });
    // The stream ends at the drain's start, cleanly (its last, empty chunk), while the call
    // is still under way: its client opens it again, on another hub.
    let mut rest = String::new();
    while !rest.ends_with("0\r\n\r\n") {
        let mut line = String::new();
        let read = stream
            .read_line(&mut line)
            .expect("the stream ends cleanly");
        assert!(read > 0, "the stream was cut: {rest:?}");
        rest.push_str(&line);
    }
    slow.get_mut().write_all(call.as_bytes()).unwrap();
    let answer = read_reply(&mut slow).expect("the call under way is answered");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.contains("called while draining"), "{answer:?}");
    assert!(!answer.body.contains("\"isError\":true"), "{answer:?}");
    let (status, stderr) = served.stop_waited();
    assert!(status.success(), "{status:?}: {stderr}");
    let board = env.run("alice", &["--json", "board"]).ok().to_string();
    assert!(board.contains("called while draining"), "{board}");
}

/// Without a balancer, an agent whose `BATON_URL` names two hubs carries on on the second
/// while the first drains: the draining hub's 503 says the request was untouched, so even a
/// change goes on to the next hub, and is made once.
#[test]
fn an_agent_naming_two_hubs_sends_a_change_to_the_second_while_the_first_drains() {
    let HubHome { env, token } = HubHome::new();
    let a = Served::start(&env, "alice");
    let b = Served::start(&env, "alice");
    let (mut slow, body) = under_way(&a, &token, "keeps the first draining");
    a.terminate();
    eventually("the first hub drains", || {
        (a.get("/healthz", "").status == 503).then_some(())
    });
    let agent = Agent::new(
        format!("http://{},http://{}", a.address, b.address),
        token.clone(),
    );
    let sent = agent.run(&[
        "--json",
        "send",
        "--to",
        "alice",
        "--subject",
        "while draining",
    ]);
    let id = sent.json()["task"]["id"].as_u64().unwrap();
    slow.get_mut().write_all(body.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut slow).unwrap().status, 200);
    let (status, stderr) = a.stop_waited();
    assert!(status.success(), "{status:?}: {stderr}");
    let log = env
        .run("alice", &["--json", "log", "-n", "100"])
        .ok()
        .to_string();
    let sends = log
        .lines()
        .filter(|line| {
            line.contains("\"action\":\"send\"") && line.contains(&format!("\"task\":{id},"))
        })
        .count();
    assert_eq!(sends, 1, "{log}");
    drop(b);
}
