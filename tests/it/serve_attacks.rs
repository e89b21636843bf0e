//! What a client may hold of `baton serve` is bounded (issue 40): idle sockets beyond the cap
//! on connections, a request head that stalls, and one token's streams beyond its share
//! leave `/healthz` and every other token served. Real sockets on loopback against the real
//! server; each wait has a deadline after which a hang fails the test.

use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

use crate::common::http::{Reply, Served, add_token, try_send};
use crate::common::{TestEnv, eventually_within};

/// How long an answer may take before the server counts as holding it out (a hang check,
/// not a measure of speed).
const DEADLINE: Duration = Duration::from_secs(40);

/// The answer to `GET path` as `token` on a connection of its own, or `None` if none came
/// within [`DEADLINE`] (the connection never accepted, or never answered).
fn answer_within(served: &Served, path: &str, token: &str) -> Option<Reply> {
    let address = served.address.clone();
    let mut headers = vec![("Host".to_string(), address.clone())];
    if !token.is_empty() {
        headers.push(("Authorization".to_string(), format!("Bearer {token}")));
    }
    let path = path.to_string();
    let (answered, answer) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = answered.send(try_send(&address, "GET", &path, &headers, None));
    });
    answer.recv_timeout(DEADLINE).ok()?.ok()
}

/// Lets this test process open `wanted` sockets, as far as its hard limit allows.
#[cfg(unix)]
fn allow_descriptors(wanted: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < wanted {
        setrlimit(Resource::RLIMIT_NOFILE, wanted.min(hard), hard).unwrap();
    }
}

/// 1,100 sockets that connect and send nothing, more than a server under Linux's usual
/// 1,024 descriptors may keep (it keeps 512): `/healthz` and another token's request are
/// still answered, the idlest sockets closed to make room.
#[cfg(unix)]
#[test]
fn idle_sockets_beyond_the_cap_leave_healthz_and_other_tokens_answered() {
    const SOCKETS: usize = 1_100;
    allow_descriptors(SOCKETS as u64 + 512);
    let env = TestEnv::new();
    let other = add_token(&env, "other");
    let served = Served::start_with_descriptors(&env, "alice", 1024);
    let address: std::net::SocketAddr = served.address.parse().unwrap();
    let mut idle = Vec::new();
    for _ in 0..SOCKETS {
        // A server that stopped accepting leaves the rest unconnected: the attack has
        // done what it came to do.
        match TcpStream::connect_timeout(&address, Duration::from_secs(5)) {
            Ok(socket) => idle.push(socket),
            Err(_) => break,
        }
    }
    let health = answer_within(&served, "/healthz", "")
        .expect("/healthz answers while idle sockets hold every connection");
    assert_eq!((health.status, health.body.trim()), (200, "ok"));
    let whoami = answer_within(&served, "/api/v1/whoami", &other)
        .expect("another token is answered while idle sockets hold every connection");
    assert_eq!(whoami.ok()["agent"], "other");
    assert_eq!(idle.len(), SOCKETS, "every socket was accepted");
    // The oldest were closed to make room (or by the header timeout, if this machine was
    // slow enough): the server did not keep them all.
    let first = &mut idle[0];
    first
        .set_read_timeout(Some(DEADLINE))
        .expect("a read timeout");
    let mut byte = [0; 1];
    assert!(
        matches!(first.read(&mut byte), Ok(0) | Err(_)),
        "the idlest socket is closed"
    );
}

/// A client that sends half a request head and stalls is closed once the header timeout
/// (10 s) has passed, and the server goes on answering.
#[test]
fn a_request_head_that_stalls_is_closed_after_the_header_timeout() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    let mut stalled = TcpStream::connect(&served.address).unwrap();
    stalled
        .write_all(
            format!(
                "GET /healthz HTTP/1.1\r\nHost: {}\r\nAccept: ",
                served.address
            )
            .as_bytes(),
        )
        .unwrap();
    stalled.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut answered = Vec::new();
    match stalled.read_to_end(&mut answered) {
        Ok(_) => {}
        Err(error) if error.kind() == ErrorKind::ConnectionReset => {}
        Err(error) => panic!(
            "the stalled connection was still open after {DEADLINE:?} ({error}); it sent {:?}",
            String::from_utf8_lossy(&answered)
        ),
    }
    let health = answer_within(&served, "/healthz", "").expect("/healthz answers");
    assert_eq!(health.status, 200);
}

/// One token opening streams beyond its share (32) is refused with the API's JSON, and an
/// A2A stream of it with a JSON-RPC error, while another token's stream and requests are
/// served; once the first token's streams close, it opens one again.
#[test]
fn one_token_beyond_its_stream_cap_is_refused_while_another_is_served() {
    const PER_TOKEN: usize = 32;
    let env = TestEnv::new();
    env.run("dev", &["agent", "add", "dev"]).ok();
    let greedy = add_token(&env, "greedy");
    let other = add_token(&env, "other");
    let served = Served::start(&env, "alice");
    let open: Vec<BufReader<TcpStream>> = (0..PER_TOKEN)
        .map(|count| {
            served
                .open_events(&greedy)
                .unwrap_or_else(|refusal| panic!("stream {count} refused: {refusal:?}"))
        })
        .collect();

    let refusal = served
        .open_events(&greedy)
        .expect_err("a stream beyond the token's share is refused");
    assert_eq!(refusal.status, 429, "{}", refusal.body);
    let words = refusal.json();
    assert!(
        words["error"].as_str().unwrap().contains("32 streams open"),
        "{words}"
    );
    assert!(words["hint"].as_str().is_some(), "{words}");

    // An A2A stream counts among them, refused as a stream of its JSON-RPC error, before
    // any task is sent.
    let message = json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Fix it"}]});
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendStreamingMessage",
                      "params": {"message": message}});
    let streamed = served.post("/a2a/agents/dev", &greedy, &body);
    assert_eq!(streamed.status, 200);
    assert!(
        streamed
            .header("content-type")
            .unwrap()
            .starts_with("text/event-stream"),
        "{}",
        streamed.body
    );
    let data = streamed
        .body
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("one event");
    let answer: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["error"]["code"], -32029, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("32 streams open"),
        "{answer}"
    );
    assert_eq!(env.inbox_ids("dev"), Vec::<u64>::new(), "no task was sent");

    // Another token is served meanwhile: a stream and a request.
    let _others = served
        .open_events(&other)
        .expect("another token's stream opens");
    let whoami = answer_within(&served, "/api/v1/whoami", &other).expect("answered");
    assert_eq!(whoami.ok()["agent"], "other");

    // Closed streams give their places back.
    drop(open);
    let reopened = eventually_within(DEADLINE, "a closed stream's place is given back", || {
        served.open_events(&greedy).ok()
    });
    drop(reopened);
}
