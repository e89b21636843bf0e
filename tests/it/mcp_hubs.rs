//! An MCP session over Streamable HTTP carries on on any hub sharing the store (SPEC
//! section 16: hubs keep no state another hub needs): two `baton serve` on one PostgreSQL
//! database, whatever store the rest of the suite runs on, each request of one session sent
//! to the other hub than the last, as a balancer with no stickiness sends them; then the
//! hub that opened the session SIGKILLed.

use serde_json::{Value, json};

use crate::common::http::{Reply, Served, send};
use crate::common::{TestEnv, TestStore, cluster, test_store};

/// Two hubs on one database, and a token for `dev`.
struct Hubs {
    env: TestEnv,
    /// `BATON_STORE` for the hubs and the CLI, where the suite's own store is the files.
    vars: Vec<(&'static str, String)>,
    a: Option<Served>,
    b: Served,
    token: String,
}

impl Hubs {
    /// `None` where PostgreSQL cannot run (the test then says NOT RUN and passes, as the
    /// store's other tests do).
    fn start() -> Option<Hubs> {
        if !cluster::runs_here() {
            return None;
        }
        let env = TestEnv::new();
        let vars = match test_store() {
            TestStore::Files => vec![("BATON_STORE", cluster::fresh_database(None))],
            TestStore::Postgres(_) => Vec::new(),
        };
        let mut hubs = Hubs {
            a: None,
            b: Served::start_with_vars(&env, "alice", &[], &Self::borrowed(&vars)),
            token: String::new(),
            env,
            vars,
        };
        hubs.a = Some(hubs.serve());
        hubs.token = hubs.cli(&["token", "add", "dev"]).trim().to_string();
        Some(hubs)
    }

    fn borrowed<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
        vars.iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect()
    }

    /// One more hub on the database.
    fn serve(&self) -> Served {
        Served::start_with_vars(&self.env, "alice", &[], &Self::borrowed(&self.vars))
    }

    /// The CLI as `alice` on the hubs' store; its stdout.
    fn cli(&self, args: &[&str]) -> String {
        self.env
            .run_env("alice", args, &Self::borrowed(&self.vars))
            .ok()
            .to_string()
    }

    fn a(&self) -> &Served {
        self.a.as_ref().expect("hub a runs")
    }
}

/// A request to `/mcp` of `hub`, written by hand: `session` is none for `initialize`.
fn to_mcp(hub: &Served, method: &str, token: &str, session: Option<&str>, body: &Value) -> Reply {
    let mut headers = vec![
        ("Host".to_string(), hub.address.clone()),
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
        (
            "Accept".to_string(),
            "application/json, text/event-stream".to_string(),
        ),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id".to_string(), session.to_string()));
        headers.push(("MCP-Protocol-Version".to_string(), "2025-06-18".to_string()));
    }
    let body = (method == "POST").then(|| body.to_string());
    send(&hub.address, method, "/mcp", &headers, body.as_deref())
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
    let other_token = hubs.cli(&["token", "add", "lead"]).trim().to_string();
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

    hubs.a.take().expect("hub a runs").kill();
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
    let c = hubs.serve();
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
