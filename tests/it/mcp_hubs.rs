//! An MCP session over Streamable HTTP carries on on any hub sharing the store (SPEC
//! section 16: hubs keep no state another hub needs): two `baton serve` on one PostgreSQL
//! database, whatever store the rest of the suite runs on (on the files one hub serves
//! every session), each request of one session sent to the other hub than the last, as a
//! balancer with no stickiness sends them, by hand and through haproxy with the Python
//! SDK's client; then a hub SIGKILLed.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::haproxy::Balanced;
use crate::common::http::{Reply, Served, add_token, mcp_request, open_answered};

/// Two hubs on one database, and a token for `dev`.
struct Hubs {
    env: TestEnv,
    a: Option<Served>,
    b: Served,
    token: String,
}

impl Hubs {
    /// `None` where PostgreSQL cannot run (the test then says NOT RUN and passes, as the
    /// store's other tests do).
    fn start() -> Option<Hubs> {
        let env = TestEnv::on_postgres()?;
        Some(Hubs {
            a: Some(Served::start(&env, "alice")),
            b: Served::start(&env, "alice"),
            token: add_token(&env, "dev"),
            env,
        })
    }

    /// The CLI as `alice` on the hubs' store; its stdout.
    fn cli(&self, args: &[&str]) -> String {
        self.env.run("alice", args).ok().to_string()
    }

    fn a(&self) -> &Served {
        self.a.as_ref().expect("hub a runs")
    }
}

/// A request to `/mcp` of `hub`: `session` is none for `initialize`.
fn to_mcp(hub: &Served, method: &str, token: &str, session: Option<&str>, body: &Value) -> Reply {
    mcp_request(hub, method, token, session, "2025-06-18", body)
}

/// The JSON-RPC answer in an SSE body (or a JSON one).
fn answer_of(reply: &Reply) -> Value {
    let data = reply
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| !data.is_empty())
        .unwrap_or(reply.body.as_str());
    serde_json::from_str(data).unwrap_or_else(|_| panic!("no JSON-RPC answer in: {reply:?}"))
}

/// A tool's call, as JSON-RPC request `id`.
fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// What a tool answered, parsed from its text.
fn tool_result(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(reply);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no tool result: {answer}"));
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

/// A session opened on hub a is served by hub b from its next request on, and by a again,
/// alternately, the same session id throughout: its calls act as its token's agent on
/// both, its owner is known to both (another token gets 404 on either), and it carries on
/// after hub a is SIGKILLed. Ended on b, it is ended everywhere, a hub started afterwards
/// included.
#[test]
fn an_mcp_session_carries_on_on_any_hub_and_after_its_hub_is_killed() {
    let Some(mut hubs) = Hubs::start() else {
        return;
    };
    let other_token = add_token(&hubs.env, "lead");
    let token = hubs.token.clone();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                   "clientInfo": {"name": "raw-test", "version": "1"}},
    });
    let opened = to_mcp(hubs.a(), "POST", &token, None, &initialize);
    assert_eq!(opened.status, 200, "{opened:?}");
    assert_eq!(
        answer_of(&opened)["result"]["protocolVersion"],
        "2025-06-18"
    );
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let told = to_mcp(&hubs.b, "POST", &token, Some(&session), &initialized);
    assert_eq!(
        told.status, 202,
        "b takes the session's next message: {told:?}"
    );

    // Alternately on b and a: each hub serves each call of the one session.
    for round in 0..3u64 {
        let (first, second) = if round % 2 == 0 {
            (&hubs.b, hubs.a())
        } else {
            (hubs.a(), &hubs.b)
        };
        let subject = format!("Round {round}");
        let sent = to_mcp(
            first,
            "POST",
            &token,
            Some(&session),
            &call(
                10 + round * 2,
                "send",
                json!({"to": "dev", "subject": subject}),
            ),
        );
        assert_eq!(
            tool_result(&sent)["task"]["from"],
            "dev",
            "acts as the token's agent"
        );
        let inbox = to_mcp(
            second,
            "POST",
            &token,
            Some(&session),
            &call(11 + round * 2, "inbox", json!({"peek": true})),
        );
        let subjects: Vec<Value> = tool_result(&inbox)["tasks"]
            .as_array()
            .expect("the inbox's tasks")
            .iter()
            .map(|task| task["subject"].clone())
            .collect();
        assert!(subjects.contains(&json!(subject)), "{subjects:?}");
    }
    // Its owner is known to both: another token is refused on either, as for no session.
    for hub in [hubs.a(), &hubs.b] {
        let refused = to_mcp(
            hub,
            "POST",
            &other_token,
            Some(&session),
            &call(30, "inbox", json!({})),
        );
        assert_eq!(refused.status, 404, "{refused:?}");
    }

    // The session's stream, open on a, is cut with it and opened again on b from its last
    // event (the priming event's id, 0).
    let headers = |hub: &Served| -> Vec<(String, String)> {
        vec![
            ("Host".to_string(), hub.address.clone()),
            ("Authorization".to_string(), format!("Bearer {token}")),
            ("Mcp-Session-Id".to_string(), session.clone()),
            ("MCP-Protocol-Version".to_string(), "2025-06-18".to_string()),
            ("Accept".to_string(), "text/event-stream".to_string()),
        ]
    };
    let on_a = headers(hubs.a());
    let on_a: Vec<(&str, &str)> = on_a.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let _stream_on_a = open_answered(&hubs.a().address, "GET", "/mcp", &on_a);
    hubs.a.take().expect("hub a runs").kill();
    let mut on_b = headers(&hubs.b);
    on_b.push(("Last-Event-ID".to_string(), "0".to_string()));
    let on_b: Vec<(&str, &str)> = on_b.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut stream_on_b = open_answered(&hubs.b.address, "GET", "/mcp", &on_b);
    // A resumption rmcp could not make is answered with a stream that ends at once; this
    // one stays open. Half a second is the window in which it would have ended.
    stream_on_b
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut first = [0u8; 64];
    match stream_on_b.read(&mut first) {
        Err(error)
            if error.kind() == std::io::ErrorKind::WouldBlock
                || error.kind() == std::io::ErrorKind::TimedOut => {}
        other => panic!("the stream on b stays open, not {other:?}"),
    }
    let sent = to_mcp(
        &hubs.b,
        "POST",
        &token,
        Some(&session),
        &call(
            40,
            "send",
            json!({"to": "dev", "subject": "After the kill"}),
        ),
    );
    assert_eq!(tool_result(&sent)["task"]["subject"], "After the kill");
    let c = Served::start(&hubs.env, "alice");
    let listed = to_mcp(
        &c,
        "POST",
        &token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 41, "method": "tools/list"}),
    );
    assert_eq!(
        listed.status, 200,
        "a hub started since serves it: {listed:?}"
    );
    assert!(listed.body.contains("\"inbox\""), "{listed:?}");

    let ended = to_mcp(&hubs.b, "DELETE", &token, Some(&session), &json!({}));
    assert_eq!(ended.status, 202, "{ended:?}");
    for hub in [&hubs.b, &c] {
        let after = to_mcp(
            hub,
            "POST",
            &token,
            Some(&session),
            &call(50, "inbox", json!({})),
        );
        assert_eq!(after.status, 404, "ended everywhere: {after:?}");
    }
    let log = hubs.cli(&["--json", "log", "-n", "100"]);
    assert_eq!(
        log.lines().filter(|line| line.contains("\"send\"")).count(),
        4,
        "each call acted once: {log}"
    );
}

/// The status haproxy logged for a request (`option httplog`: the field after the timers
/// `TR/Tw/Tc/Tr/Ta`).
fn logged_status(line: &str) -> Option<&str> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let timers = fields
        .iter()
        .position(|field| field.matches('/').count() == 4)?;
    fields.get(timers + 1).copied()
}

/// A client's `initialize` over what a hub keeps of a session (64 KiB) opens a session all
/// the same, which its hub serves; the store keeps none of those bytes, so another hub
/// refuses it as unknown (404), and the client opens one there.
#[test]
fn an_initialize_too_big_to_keep_is_a_session_of_its_hub_alone() {
    let Some(hubs) = Hubs::start() else {
        return;
    };
    let token = hubs.token.clone();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18",
                   "capabilities": {"experimental": {"padding": {"x": "p".repeat(100_000)}}},
                   "clientInfo": {"name": "big-test", "version": "1"}},
    });
    let opened = to_mcp(hubs.a(), "POST", &token, None, &initialize);
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let told = to_mcp(hubs.a(), "POST", &token, Some(&session), &initialized);
    assert_eq!(told.status, 202, "{told:?}");
    let here = to_mcp(
        hubs.a(),
        "POST",
        &token,
        Some(&session),
        &call(2, "inbox", json!({"peek": true})),
    );
    assert!(tool_result(&here)["tasks"].is_array());
    let elsewhere = to_mcp(
        &hubs.b,
        "POST",
        &token,
        Some(&session),
        &call(3, "inbox", json!({"peek": true})),
    );
    assert_eq!(elsewhere.status, 404, "{elsewhere:?}");
}

/// The official Python SDK's client (tests/mcp_python/hubs_scenario.py) opens a session
/// through haproxy in front of two hubs (round robin, no stickiness, as
/// docs/load-balancer.md configures it) as Claude Code (whose `clientInfo` baton pushes
/// new work to), calls tools, and holds the session's stream open; it is pushed a task
/// alice sends its agent. The hub holding the stream is SIGKILLed. Its stream opens again
/// on the other hub from its `Last-Event-ID` and is pushed the task alice sends then, and
/// its next calls go on there, the same session throughout, with no error; every hand-over
/// is pushed exactly once, and recorded seen.
/// `.ci/run` installs the SDK and haproxy; this test then must pass.
#[test]
fn the_python_sdk_carries_on_through_haproxy_when_a_hub_is_killed() {
    let Some(python) =
        crate::common::python("the Python MCP client", "tests/mcp_python/requirements.txt")
    else {
        return;
    };
    let Some(env) = TestEnv::on_postgres() else {
        return;
    };
    env.register(&["alice", "dev"]);
    let token = add_token(&env, "dev");
    let Some(mut balanced) = Balanced::start(env) else {
        return;
    };
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/hubs_scenario.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(format!("{}/mcp", balanced.haproxy.url()))
        .env("DEV_TOKEN", &token)
        .env_remove("BATON_AGENT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python client starts");
    let (said, lines) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = said.send(line);
        }
    });
    let mut stdout = Vec::new();
    let mut read_until = |wanted: &str| {
        while let Ok(line) = lines.recv_timeout(Duration::from_secs(120)) {
            let is_it = line.contains(wanted);
            stdout.push(line);
            if is_it {
                return;
            }
        }
    };
    read_until("opened");
    // Pushed on the stream: a task from another agent.
    balanced
        .env
        .run(
            "alice",
            &["send", "--to", "dev", "--subject", "Before the kill"],
        )
        .ok();
    read_until("Before the kill");

    // The SDK opens its stream as it tells the session open (`notifications/initialized`,
    // answered 202), one request each, taken by the two hubs in turn: the stream is on the
    // hub that did not take the notification.
    let told = balanced
        .haproxy
        .log()
        .into_iter()
        .find(|line| line.contains("POST /mcp") && logged_status(line) == Some("202"))
        .expect("haproxy logged the notification that the session is open");
    let stream_hub = if told.contains("hubs/hub1") { 1 } else { 0 };
    balanced.kill(stream_hub);
    let mut stdin = child.stdin.take().expect("piped");
    writeln!(stdin, "killed").expect("the client reads on");
    drop(stdin);
    // Pushed on the stream opened again on the other hub.
    read_until("reopened");
    balanced
        .env
        .run(
            "alice",
            &["send", "--to", "dev", "--subject", "After the kill"],
        )
        .ok();
    read_until("python hubs scenario: ok");
    let status = child.wait().expect("the client ends");
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().expect("piped"), &mut stderr);
    let stdout = stdout.join("\n");
    assert!(
        status.success() && stdout.contains("python hubs scenario: ok"),
        "the Python hubs scenario failed\nstdout:\n{stdout}\nstderr:\n{stderr}\nhaproxy:\n{}",
        balanced.haproxy.log().join("\n")
    );
    assert!(!stdout.contains(&token) && !stderr.contains(&token));
    print!("{stdout}");

    // The stream was on the hub killed, cut there, and opened again on the other.
    let killed = format!("hubs/hub{}", stream_hub + 1);
    let other = format!("hubs/hub{}", 2 - stream_hub);
    let streams = || -> Vec<String> {
        balanced
            .haproxy
            .log()
            .into_iter()
            .filter(|line| line.contains("GET /mcp"))
            .collect()
    };
    crate::common::eventually("haproxy logs both streams' ends", || {
        (streams().len() >= 2).then_some(())
    });
    let streams = streams();
    assert!(
        streams[0].contains(&killed) && streams[1].contains(&other),
        "{streams:#?}"
    );
    // Each call acted once: nine tasks sent by dev, two by alice.
    let log = balanced
        .env
        .run("alice", &["--json", "log", "-n", "100"])
        .ok()
        .to_string();
    let sends: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("\"send\""))
        .collect();
    assert_eq!(sends.len(), 11, "{log}");
    // Every hand-over pushed once, alice's two among them, each recorded seen.
    let pushed: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("pushed "))
        .collect();
    let tasks: Vec<&str> = pushed
        .iter()
        .map(|line| line.split_whitespace().next().expect("a task id"))
        .collect();
    let distinct: std::collections::BTreeSet<&&str> = tasks.iter().collect();
    assert_eq!(
        distinct.len(),
        tasks.len(),
        "a task pushed twice: {pushed:#?}"
    );
    for subject in ["Before the kill", "After the kill"] {
        let task = pushed
            .iter()
            .find(|line| line.ends_with(subject))
            .and_then(|line| line.split_whitespace().next())
            .unwrap_or_else(|| panic!("{subject:?} not pushed: {pushed:#?}"));
        let id = task.trim_start_matches("T-");
        let shown = balanced.env.run("dev", &["--json", "show", id]).json();
        assert_eq!(shown["delivery"]["state"], "seen", "{shown}");
    }
}
