//! `/mcp` of `baton serve` driven by real MCP clients over Streamable HTTP: rmcp's own
//! client (the `initialize` eras and the stateless 2026-07-28 era) and the official Python
//! SDK through tests/mcp_python/http_scenario.py, each with two tokens; raw HTTP for what a
//! client library will not send (no token, a foreign `Host`). The token is the identity:
//! nothing in a call can make it act as anyone else.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion, RequestMetaObject, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::common::http::{Reply, Served, add_token, open, send};
use crate::common::{TestEnv, task_in};
use crate::mcp::{params, succeeded, text_of, was_refused};

/// The URL of a server's `/mcp`.
fn mcp_url(served: &Served) -> String {
    format!("http://{}/mcp", served.address)
}

/// A POST to `/mcp` written by hand, so that any `Host` and any header can be sent.
fn raw(served: &Served, host: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let all: Vec<(String, String)> = [
        ("Host", host),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]
    .iter()
    .chain(headers)
    .map(|(name, value)| (name.to_string(), value.to_string()))
    .collect();
    send(&served.address, "POST", path, &all, Some(body))
}

/// The `initialize` request of a raw client.
fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "1"}},
    })
    .to_string()
}

/// An rmcp client session on `/mcp`, acting as whoever its token belongs to.
struct Client {
    client: RunningService<RoleClient, ClientConfig>,
}

/// How a client opens its session.
#[derive(Clone)]
enum Era {
    /// The `initialize` handshake at this version.
    Initialize(ProtocolVersion),
    /// No handshake: `server/discover`, then every request carries its own `_meta`.
    Stateless,
}

impl Client {
    async fn open(served: &Served, token: &str, era: Era) -> Client {
        Client::open_with(served, token, era, HashMap::new())
            .await
            .expect("the MCP session opens")
    }

    async fn open_with(
        served: &Served,
        token: &str,
        era: Era,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Client, rmcp::service::ClientInitializeError> {
        let config = StreamableHttpClientTransportConfig::with_uri(mcp_url(served))
            .auth_header(token)
            .custom_headers(headers);
        let transport = StreamableHttpClientTransport::from_config(config);
        let (version, lifecycle) = match era {
            Era::Initialize(version) => (version, ClientLifecycleMode::Initialize),
            Era::Stateless => (
                ProtocolVersion::V_2026_07_28,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            ),
        };
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("http-test", "1"),
        )
        .with_protocol_version(version);
        let client = info.serve_with_lifecycle(transport, lifecycle).await?;
        Ok(Client { client })
    }

    fn protocol_version(&self) -> String {
        self.client
            .peer_info()
            .expect("server info")
            .protocol_version
            .to_string()
    }

    async fn try_call(
        &self,
        params: CallToolRequestParams,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        self.client.call_tool(params).await
    }

    async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        self.try_call(params(name, arguments))
            .await
            .unwrap_or_else(|error| panic!("{name}: protocol error {error:?}"))
    }

    async fn ok(&self, name: &str, arguments: Value) -> Value {
        succeeded(name, &self.call(name, arguments).await)
    }

    async fn refused(&self, name: &str, arguments: Value) -> String {
        was_refused(name, &self.call(name, arguments).await)
    }

    async fn stop(self) {
        self.client.cancel().await.expect("the session closes");
    }
}

/// Who wrote each entry of a task's thread, in order.
fn thread_by(task: &Value) -> Vec<(String, String)> {
    task["thread"]
        .as_array()
        .expect("a thread")
        .iter()
        .map(|entry| {
            (
                entry["kind"].as_str().unwrap().to_string(),
                entry["by"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Who did what, from the activity log.
fn steps(env: &TestEnv) -> Vec<(String, String)> {
    env.activity("default")
        .iter()
        .map(|line| {
            (
                line["actor"].as_str().unwrap().to_string(),
                line["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The life of a task over `/mcp` between two tokens: `lead` sends to `dev` (for review),
/// `dev` claims, asks, `lead` answers, `dev` cannot mark it done alone and asks for review,
/// `lead` approves. Each step is the token's agent's, on disk and as the CLI reads it.
async fn walk_a_task(env: &TestEnv, lead: &Client, dev: &Client) {
    let inbox = dev.ok("inbox", json!({})).await;
    assert_eq!(inbox["agent"], "dev");
    assert_eq!(inbox["tasks"], json!([]));
    assert_eq!(lead.ok("inbox", json!({})).await["agent"], "lead");

    let sent = lead
        .ok(
            "send",
            json!({"to": "dev", "subject": "Fix the parser", "body": "It drops zones",
                   "review": true}),
        )
        .await;
    assert_eq!(sent["task"]["id"], 1);
    assert_eq!(sent["task"]["from"], "lead");
    assert_eq!(sent["task"]["to"], "dev");
    assert_eq!(sent["task"]["review"], true);

    let inbox = dev.ok("inbox", json!({})).await;
    assert_eq!(inbox["tasks"][0]["id"], 1);
    assert_eq!(inbox["tasks"][0]["reason"], "assigned");
    assert_eq!(inbox, env.run("dev", &["--json", "inbox"]).json());

    assert_eq!(
        dev.ok("claim", json!({"id": 1})).await["task"]["status"],
        "working"
    );
    let asked = dev
        .ok("ask", json!({"id": "T-1", "body": "Which zone?"}))
        .await;
    assert_eq!(asked["task"]["status"], "input_required");
    let inbox = lead.ok("inbox", json!({})).await;
    assert_eq!(inbox["tasks"][0]["reason"], "question");
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Which zone?");
    let answered = lead.ok("answer", json!({"id": 1, "body": "UTC"})).await;
    assert_eq!(answered["task"]["status"], "pending");
    dev.ok("claim", json!({"id": 1})).await;

    // Sent with review: `done` is refused with the CLI's words, `review` hands it back.
    let refusal = dev
        .refused("done", json!({"id": 1, "result": "Fixed"}))
        .await;
    assert_eq!(
        refusal,
        env.run("dev", &["done", "1", "--result", "Fixed"])
            .fails(1)
            .trim_end()
    );
    let reviewed = dev.ok("review", json!({"id": 1, "body": "Fixed"})).await;
    assert_eq!(reviewed["task"]["status"], "review_requested");
    let refusal = dev.refused("approve", json!({"id": 1})).await;
    assert!(
        refusal.starts_with("error: T-1 is review_requested"),
        "{refusal}"
    );
    let approved = lead.ok("approve", json!({"id": 1, "body": "Thanks"})).await;
    assert_eq!(approved["task"]["status"], "completed");

    // The CLI reads what the HTTP clients did.
    let shown = lead.ok("show", json!({"id": 1})).await;
    let cli = env.run("lead", &["--json", "show", "1"]).json();
    assert_eq!(shown, cli);
    assert_eq!((&cli["from"], &cli["to"]), (&json!("lead"), &json!("dev")));
    assert_eq!(
        thread_by(&cli),
        pairs(&[
            ("claim", "dev"),
            ("question", "dev"),
            ("answer", "lead"),
            ("claim", "dev"),
            ("review_request", "dev"),
            ("approval", "lead"),
        ])
    );
    let board = dev.ok("board", json!({"all": true})).await;
    assert_eq!(
        board["tasks"],
        env.run("dev", &["--json", "board", "--all"]).json()
    );
    assert_eq!(
        steps(env),
        pairs(&[
            ("lead", "send"),
            ("dev", "claim"),
            ("dev", "ask"),
            ("lead", "answer"),
            ("dev", "claim"),
            ("dev", "review"),
            ("lead", "approve"),
        ])
    );
    // Neither token's agent is the one the server runs as.
    assert!(
        !env.activity("default")
            .iter()
            .any(|line| line["actor"] == "alice")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn two_tokens_walk_a_task_through_its_life_in_the_initialize_era() {
    let env = TestEnv::new();
    let lead_token = add_token(&env, "lead");
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let lead = Client::open(
        &served,
        &lead_token,
        Era::Initialize(ProtocolVersion::V_2025_06_18),
    )
    .await;
    let dev = Client::open(
        &served,
        &dev_token,
        Era::Initialize(ProtocolVersion::V_2025_11_25),
    )
    .await;
    assert_eq!(lead.protocol_version(), "2025-06-18");
    assert_eq!(dev.protocol_version(), "2025-11-25");
    let instructions = lead
        .client
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .unwrap_or_default();
    assert!(instructions.contains("your token"), "{instructions}");

    walk_a_task(&env, &lead, &dev).await;

    // A message between the tokens: from and to are their agents.
    let sent = lead
        .ok("message", json!({"to": "dev", "text": "Thanks"}))
        .await;
    assert_eq!(
        (&sent["message"]["from"], &sent["message"]["to"]),
        (&json!("lead"), &json!("dev"))
    );
    let inbox = dev.ok("inbox", json!({})).await;
    assert_eq!(inbox["messages"][0]["from"], "lead");
    assert_eq!(inbox["messages"][0]["body"], "Thanks");

    lead.stop().await;
    dev.stop().await;
}

/// The stateless era over HTTP: no `initialize`, each request carrying its own `_meta`.
/// Over stdio baton refuses it (channel pushes need a handshake connection); over HTTP,
/// where nothing is pushed, it is served.
#[tokio::test(flavor = "current_thread")]
async fn two_tokens_walk_a_task_through_its_life_in_the_stateless_era() {
    let env = TestEnv::new();
    let lead_token = add_token(&env, "lead");
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let lead = Client::open(&served, &lead_token, Era::Stateless).await;
    let dev = Client::open(&served, &dev_token, Era::Stateless).await;
    assert_eq!(lead.protocol_version(), "2026-07-28");
    assert_eq!(dev.protocol_version(), "2026-07-28");

    walk_a_task(&env, &lead, &dev).await;

    // One session of each era on the same board at once.
    let old = Client::open(
        &served,
        &dev_token,
        Era::Initialize(ProtocolVersion::V_2025_11_25),
    )
    .await;
    let board = old.ok("board", json!({"all": true})).await;
    assert_eq!(board, dev.ok("board", json!({"all": true})).await);

    lead.stop().await;
    dev.stop().await;
    old.stop().await;
}

/// Tool calls that name another agent every way a request could: in the arguments, in
/// `_meta`, in headers. Each still acts as its token's agent.
#[tokio::test(flavor = "current_thread")]
async fn nothing_in_a_request_changes_whom_it_acts_as() {
    let env = TestEnv::new();
    env.register(&["mallory", "dev"]);
    let lead_token = add_token(&env, "lead");
    let served = Served::start(&env, "alice");
    let mut headers = HashMap::new();
    for name in ["x-baton-agent", "x-agent", "x-as", "baton-agent"] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static("mallory"),
        );
    }
    for era in [
        Era::Initialize(ProtocolVersion::V_2025_11_25),
        Era::Stateless,
    ] {
        let lead = Client::open_with(&served, &lead_token, era, headers.clone())
            .await
            .expect("the session opens");
        let claims = json!({
            "as": "mallory", "agent": "mallory", "from": "mallory", "actor": "mallory",
            "by": "mallory", "identity": "mallory", "sender": "mallory",
        });
        let mut arguments = json!({"to": "dev", "subject": "Claimed to be mallory"});
        arguments
            .as_object_mut()
            .unwrap()
            .extend(claims.as_object().unwrap().clone());
        let mut call = params("send", arguments);
        let meta = json!({"agent": "mallory", "as": "mallory", "baton/agent": "mallory",
                          "identity": {"agent": "mallory"}});
        call.meta = Some(RequestMetaObject(meta.as_object().unwrap().clone().into()));
        let sent = lead.try_call(call).await.expect("send answers");
        assert_eq!(sent.is_error, Some(false), "{}", text_of(&sent));
        let id = sent.structured_content.unwrap()["task"]["id"]
            .as_u64()
            .expect("a task id");

        let mut arguments = json!({"to": "dev", "text": "From mallory?"});
        arguments
            .as_object_mut()
            .unwrap()
            .extend(claims.as_object().unwrap().clone());
        lead.ok("message", arguments).await;
        let inbox = lead
            .ok("inbox", json!({"as": "mallory", "agent": "mallory"}))
            .await;
        assert_eq!(inbox["agent"], "lead");
        lead.stop().await;

        // On disk: the task is lead's, the message is lead's, the log says lead.
        let task = task_in(&env.board("default")["tasks"], id);
        assert_eq!(task["from"], "lead", "{task}");
        let shown = env.run("dev", &["--json", "show", &id.to_string()]).json();
        assert_eq!(shown["from"], "lead");
    }
    let actors: Vec<String> = env
        .activity("default")
        .iter()
        .map(|line| line["actor"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(actors, ["lead", "lead"]);
    let mail = env.hub_text("projects/default/mail.jsonl").unwrap();
    let senders: Vec<Value> = mail
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|message| message["body"] == "From mallory?")
        .map(|message| message["from"].clone())
        .collect();
    assert_eq!(senders, [json!("lead"), json!("lead")]);
    assert!(!mail.contains("\"from\":\"mallory\""), "{mail}");

    // Raw requests naming another agent in headers and in a query string: the same.
    let token = format!("Bearer {lead_token}");
    let answer = raw(
        &served,
        &served.address,
        "/mcp?as=mallory&agent=mallory",
        &[
            ("Authorization", &token),
            ("X-Baton-Agent", "mallory"),
            ("X-Agent", "mallory"),
            ("X-Forwarded-User", "mallory"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &initialize_body(),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body.contains("your token"), "{}", answer.body);
}

#[tokio::test(flavor = "current_thread")]
async fn mcp_needs_a_known_token_and_its_own_host() {
    let env = TestEnv::new();
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let address = served.address.as_str();
    let bearer = format!("Bearer {dev_token}");

    // The raw client's requests are well formed: with the token and the right Host, 200.
    let answer = raw(
        &served,
        address,
        "/mcp",
        &[("Authorization", &bearer)],
        &initialize_body(),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = raw(
        &served,
        &address.replace("127.0.0.1", "localhost"),
        "/mcp",
        &[("Authorization", &bearer)],
        &initialize_body(),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);

    // No token, a wrong one, another scheme: 401, and the answer never echoes the token.
    let wrong = format!("Bearer {dev_token}x");
    for headers in [
        vec![],
        vec![("Authorization", "Bearer baton_0000")],
        vec![("Authorization", "Bearer ")],
        vec![("Authorization", dev_token.as_str())],
        vec![("Authorization", wrong.as_str())],
    ] {
        let answer = raw(&served, address, "/mcp", &headers, &initialize_body());
        assert_eq!(answer.status, 401, "{headers:?}: {}", answer.body);
        assert!(!answer.body.contains(&dev_token));
    }

    // A foreign Host is refused before the token is looked at (DNS rebinding).
    let port = address.rsplit(':').next().unwrap();
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.evil.example:{port}"),
        "127.0.0.1:1".to_string(),
    ] {
        let answer = raw(
            &served,
            &host,
            "/mcp",
            &[("Authorization", &bearer)],
            &initialize_body(),
        );
        assert_eq!(answer.status, 403, "{host}: {}", answer.body);
    }

    // rmcp's client with a wrong token cannot open a session.
    let refused = Client::open_with(
        &served,
        "baton_0000",
        Era::Initialize(ProtocolVersion::V_2025_11_25),
        HashMap::new(),
    )
    .await;
    assert!(refused.is_err(), "a wrong token opened a session");

    // A session opened with a token stops working on the call after `token rm`.
    let dev = Client::open(
        &served,
        &dev_token,
        Era::Initialize(ProtocolVersion::V_2025_11_25),
    )
    .await;
    assert_eq!(dev.ok("inbox", json!({})).await["agent"], "dev");
    env.run("", &["token", "rm", "dev"]).ok();
    let after = dev.try_call(params("inbox", json!({}))).await;
    assert!(after.is_err(), "a removed token still acts: {after:?}");
    let answer = raw(
        &served,
        address,
        "/mcp",
        &[("Authorization", &bearer)],
        &initialize_body(),
    );
    assert_eq!(answer.status, 401, "{}", answer.body);
    let _ = dev.client.cancel().await;
}

/// Over HTTP the caller has no working directory on the hub: a project is named by id, every
/// project is reachable so, and a call that names none acts on `default`, whatever directory
/// the server runs in (here, the workspace of another project).
#[tokio::test(flavor = "current_thread")]
async fn over_http_a_project_is_named_by_id_wherever_the_server_runs() {
    let env = TestEnv::new();
    env.register(&["dev", "lead"]);
    // The server runs in `env.work()`, which is project `here`'s workspace.
    env.init_project("lead", "here", &env.work());
    env.project_beside("lead", "away");
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    for era in [
        Era::Initialize(ProtocolVersion::V_2025_11_25),
        Era::Stateless,
    ] {
        let dev = Client::open(&served, &dev_token, era).await;
        for project in ["away", "here", "default"] {
            let sent = dev
                .ok(
                    "send",
                    json!({"to": "lead", "subject": format!("to {project}"), "project": project}),
                )
                .await;
            assert_eq!(sent["project"], project, "{sent}");
        }
        let unnamed = dev
            .ok("send", json!({"to": "lead", "subject": "unnamed"}))
            .await;
        assert_eq!(
            unnamed["project"], "default",
            "not the server's directory's"
        );
        let board = dev.ok("board", json!({"project": "away"})).await;
        assert!(board["tasks"].to_string().contains("to away"), "{board}");
        let refusal = dev.refused("board", json!({"project": "nowhere"})).await;
        assert!(refusal.contains("nowhere"), "{refusal}");
        dev.stop().await;
    }
    // On disk, as the CLI sees it: each task where it was named, by dev.
    let subjects = |project: &str| -> Vec<String> {
        env.board(project)["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .inspect(|task| assert_eq!(task["from"], "dev"))
            .map(|task| task["subject"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(subjects("away"), ["to away", "to away"]);
    assert_eq!(subjects("here"), ["to here", "to here"]);
    assert_eq!(
        subjects("default"),
        ["to default", "unnamed", "to default", "unnamed"]
    );
}

/// A request to `/mcp` in the session `session`, written by hand.
fn in_session(address: &str, method: &str, token: &str, session: &str, body: &str) -> Reply {
    let mut headers = vec![
        ("Host".to_string(), address.to_string()),
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Mcp-Session-Id".to_string(), session.to_string()),
        ("MCP-Protocol-Version".to_string(), "2025-11-25".to_string()),
    ];
    match method {
        "POST" => {
            headers.push(("Content-Type".to_string(), "application/json".to_string()));
            headers.push((
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ));
        }
        _ => headers.push(("Accept".to_string(), "text/event-stream".to_string())),
    }
    let body = (method == "POST").then_some(body);
    send(address, method, "/mcp", &headers, body)
}

/// A session belongs to the token that opened it: another token (another agent's, or
/// another of the same agent's) that presents its id gets 404 on every method, as for an id
/// that never was, and cannot use it or end it.
#[tokio::test(flavor = "current_thread")]
async fn an_mcp_session_answers_only_the_token_that_opened_it() {
    let env = TestEnv::new();
    let dev_token = add_token(&env, "dev");
    let lead_token = add_token(&env, "lead");
    // The server runs as dev: its login token is dev's too, but another token.
    let served = Served::start(&env, "dev");
    let bearer = format!("Bearer {dev_token}");
    let opened = raw(
        &served,
        &served.address,
        "/mcp",
        &[("Authorization", &bearer)],
        &initialize_body(),
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = in_session(
        &served.address,
        "POST",
        &dev_token,
        &session,
        &initialized.to_string(),
    );
    assert_eq!(answer.status, 202, "{}", answer.body);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let listed = in_session(&served.address, "POST", &dev_token, &session, &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(listed.body.contains("\"inbox\""), "{}", listed.body);

    // A call that would change the board if it got through.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "send",
                                 "arguments": {"to": "dev", "subject": "hijacked"}}})
    .to_string();
    for (who, other) in [("lead", &lead_token), ("dev's login", &served.login)] {
        let unknown = in_session(&served.address, "POST", other, "no-such-session", &list);
        assert_eq!(unknown.status, 404, "{}", unknown.body);
        for (method, body) in [
            ("POST", &list),
            ("POST", &call),
            ("GET", &list),
            ("DELETE", &list),
        ] {
            let refused = in_session(&served.address, method, other, &session, body);
            assert_eq!(refused.status, 404, "{who} {method}: {}", refused.body);
            assert_eq!(refused.body, unknown.body, "as for an id that never was");
        }
    }
    // The session is its opener's still, neither used nor ended by the others.
    let listed = in_session(&served.address, "POST", &dev_token, &session, &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        env.activity("default").is_empty(),
        "no call was made in the session by another token"
    );
    let ended = in_session(&served.address, "DELETE", &dev_token, &session, "");
    assert_eq!(ended.status, 202, "{}", ended.body);
    let after = in_session(&served.address, "POST", &dev_token, &session, &list);
    assert_eq!(after.status, 404, "{}", after.body);
}

/// A session's open stream (its GET) ends once its token is removed, not only its next
/// request.
#[test]
fn an_mcp_session_ends_with_its_token() {
    let env = TestEnv::new();
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let bearer = format!("Bearer {dev_token}");
    let opened = raw(
        &served,
        &served.address,
        "/mcp",
        &[("Authorization", &bearer)],
        &initialize_body(),
    );
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = in_session(
        &served.address,
        "POST",
        &dev_token,
        &session,
        &initialized.to_string(),
    );
    assert_eq!(answer.status, 202, "{}", answer.body);
    let (ended, stream_ended) = std::sync::mpsc::channel();
    let (address, token, id) = (served.address.clone(), dev_token.clone(), session.clone());
    // Not scoped: a stream that never ends must not keep the test from failing.
    std::thread::spawn(move || {
        // Read to its end: only the session's end ends it.
        let stream = in_session(&address, "GET", &token, &id, "");
        let _ = ended.send(stream.status);
    });
    // The window in which a stream that does not stay open would end: it is the test.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(stream_ended.try_recv().is_err(), "the stream stays open");
    env.run("", &["token", "rm", "dev"]).ok();
    let status = stream_ended
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the stream ends with its token");
    assert_eq!(status, 200);
}

/// What a client reads of a tool: everything but rmcp's own ordering.
fn tool_values(mut tools: Vec<Tool>) -> Vec<Value> {
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
        .into_iter()
        .map(|tool| serde_json::to_value(tool).unwrap())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn the_tools_over_http_are_the_tools_over_stdio() {
    let env = TestEnv::new();
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let mut command = env.command(&env.work());
    command.args(["--as", "dev", "mcp"]);
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(command))
        .stderr(Stdio::null())
        .spawn()
        .expect("baton mcp starts");
    let stdio = ().serve(transport).await.expect("the stdio session opens");
    let over_stdio = tool_values(stdio.list_all_tools().await.expect("tools/list"));
    assert_eq!(over_stdio.len(), 22);
    for era in [
        Era::Initialize(ProtocolVersion::V_2025_11_25),
        Era::Stateless,
    ] {
        let http = Client::open(&served, &dev_token, era).await;
        let over_http = tool_values(http.client.list_all_tools().await.expect("tools/list"));
        assert_eq!(over_http, over_stdio);
        http.stop().await;
    }
    stdio.cancel().await.expect("the session closes");
}

/// The official Python SDK's `streamable_http_client` drives the same life of a task with
/// two tokens (tests/mcp_python/http_scenario.py). `.ci/run` installs the SDK and sets
/// `BATON_TEST_PYTHON`; this test then must pass.
#[test]
fn the_python_sdk_drives_a_task_over_http() {
    let Some(python) = crate::common::python(
        "the Python MCP client over HTTP",
        "tests/mcp_python/requirements.txt",
    ) else {
        return;
    };
    let env = TestEnv::new();
    let lead_token = add_token(&env, "lead");
    let dev_token = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/http_scenario.py");
    let output = python_command(&python, &script, &mcp_url(&served))
        .env("LEAD_TOKEN", &lead_token)
        .env("DEV_TOKEN", &dev_token)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", Path::new(&python).display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python HTTP scenario failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    print!("{stdout}");
    assert!(stdout.contains("python http scenario: ok"), "{stdout}");
    // The script never prints a token, nor does the SDK in its errors.
    for token in [&lead_token, &dev_token] {
        assert!(!stdout.contains(token.as_str()) && !stderr.contains(token.as_str()));
    }

    // What the Python clients did is on disk, as the CLI sees it, by the tokens' agents.
    let shown = env.run("lead", &["--json", "show", "1"]).json();
    assert_eq!(shown["status"], "completed");
    assert_eq!(
        (&shown["from"], &shown["to"]),
        (&json!("lead"), &json!("dev"))
    );
    assert_eq!(
        thread_by(&shown),
        pairs(&[
            ("claim", "dev"),
            ("question", "dev"),
            ("answer", "lead"),
            ("claim", "dev"),
            ("review_request", "dev"),
            ("approval", "lead"),
        ])
    );
    assert_eq!(
        steps(&env),
        pairs(&[
            ("lead", "send"),
            ("dev", "claim"),
            ("dev", "ask"),
            ("lead", "answer"),
            ("dev", "claim"),
            ("dev", "review"),
            ("lead", "approve"),
            ("lead", "send"),
        ])
    );
    // The call that named mallory was lead's.
    let shown = env.run("lead", &["--json", "show", "2"]).json();
    assert_eq!(shown["from"], "lead");
}

fn python_command(python: &std::ffi::OsStr, script: &Path, url: &str) -> Command {
    let mut command = Command::new(python);
    command
        .arg(script)
        .arg(url)
        .env_remove("BATON_AGENT")
        .stdin(Stdio::null());
    command
}

/// The events of an SSE body, each its lines.
fn sse_events(body: &str) -> Vec<Vec<String>> {
    body.replace("\r\n", "\n")
        .split("\n\n")
        .map(|event| {
            event
                .lines()
                .map(str::to_string)
                .filter(|line| !line.is_empty())
                .collect::<Vec<String>>()
        })
        .filter(|lines| !lines.is_empty())
        .collect()
}

/// An event with no data to give (a priming event: an id, a retry and an empty `data`).
fn is_priming(event: &[String]) -> bool {
    !event.iter().all(|line| line.starts_with(':'))
        && event
            .iter()
            .filter_map(|line| line.strip_prefix("data:"))
            .all(|data| data.trim().is_empty())
}

/// The first bytes of `/mcp`'s standalone stream (a GET), read for `for_ms`.
fn stream_start(address: &str, token: &str, session: &str, version: &str, for_ms: u64) -> String {
    use std::io::Read;
    let mut stream = open(
        address,
        "GET",
        "/mcp",
        &[
            ("Host", address),
            ("Authorization", &format!("Bearer {token}")),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", version),
            ("Accept", "text/event-stream"),
        ],
    );
    stream
        .set_read_timeout(Some(std::time::Duration::from_millis(for_ms)))
        .unwrap();
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(read) = stream.read(&mut buffer) {
        if read == 0 {
            break;
        }
        got.extend_from_slice(&buffer[..read]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// SSE priming events came with 2025-11-25: a session on an older version gets none (Gemini
/// CLI 0.61.0 on 2025-06-18 failed on it and dropped the server), in the answer to
/// `initialize`, in its other answers or in its standalone stream; a 2025-11-25 session
/// gets them as that version says.
#[test]
fn priming_events_go_only_to_sessions_whose_version_has_them() {
    let env = TestEnv::new();
    let token = add_token(&env, "dev");
    let served = Served::start(&env, "dev");
    let bearer = format!("Bearer {token}");
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let primes = version == "2025-11-25";
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "raw-test", "version": "1"}},
        })
        .to_string();
        let opened = raw(
            &served,
            &served.address,
            "/mcp",
            &[("Authorization", &bearer)],
            &initialize,
        );
        assert_eq!(opened.status, 200, "{}", opened.body);
        let events = sse_events(&opened.body);
        assert_eq!(
            events.iter().any(|event| is_priming(event)),
            primes,
            "{version}: {}",
            opened.body
        );
        let answer = events
            .iter()
            .find(|event| !is_priming(event))
            .expect("the answer");
        assert!(
            answer
                .iter()
                .any(|line| line.contains(&format!("\"protocolVersion\":\"{version}\""))),
            "{version} negotiated: {answer:?}"
        );
        let session = opened.header("mcp-session-id").unwrap().to_string();
        // A 2025-03-26 client sends no MCP-Protocol-Version header.
        let mut headers = vec![
            ("Host".to_string(), served.address.clone()),
            ("Authorization".to_string(), bearer.clone()),
            ("Mcp-Session-Id".to_string(), session.clone()),
            ("Content-Type".to_string(), "application/json".to_string()),
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ];
        if version != "2025-03-26" {
            headers.push(("MCP-Protocol-Version".to_string(), version.to_string()));
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let notified = send(
            &served.address,
            "POST",
            "/mcp",
            &headers,
            Some(&initialized.to_string()),
        );
        assert_eq!(notified.status, 202, "{}", notified.body);
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
        let listed = send(&served.address, "POST", "/mcp", &headers, Some(&list));
        assert_eq!(listed.status, 200, "{}", listed.body);
        let events = sse_events(&listed.body);
        assert_eq!(
            events.iter().any(|event| is_priming(event)),
            primes,
            "{version}: {}",
            listed.body
        );
        assert!(listed.body.contains("\"inbox\""), "{}", listed.body);
        if version != "2025-03-26" {
            let start = stream_start(&served.address, &token, &session, version, 1500);
            assert!(start.starts_with("HTTP/1.1 200"), "{start}");
            assert_eq!(start.contains("retry:"), primes, "{version}: {start}");
        }
    }
}
