//! `baton serve` over real sockets on loopback (SPEC section 12): who may ask, what the API
//! answers next to the CLI, the event stream, and surviving what clients and files do to it.

mod events;
mod logins;

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{Served, add_token, send};
use crate::common::{TestEnv, ends_within, files_only, task_in, without_ages};

#[test]
fn only_healthz_and_the_page_are_open_and_every_answer_carries_the_policy() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    for path in [
        "/healthz",
        "/",
        "/assets/text.js",
        "/assets/login.js",
        "/assets/diff.js",
        "/assets/stats.js",
        "/assets/app.js",
        "/assets/app.css",
    ] {
        let reply = served.get(path, "");
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        let policy = reply.header("content-security-policy").unwrap();
        assert!(policy.contains("script-src 'self'"), "{policy}");
        assert!(policy.contains("default-src 'none'"), "{policy}");
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
    }
    assert_eq!(served.get("/healthz", "").body, "ok");
    for path in [
        "/api/v1/whoami",
        "/api/v1/projects",
        "/api/v1/projects/default/board",
        "/api/v1/projects/default/stats",
        "/api/v1/events",
    ] {
        let reply = served.get(path, "");
        assert_eq!(reply.status, 401, "{path}");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
        assert!(reply.json()["error"].as_str().unwrap().contains("token"));
        assert_eq!(served.get(path, "baton_not_a_token").status, 401, "{path}");
    }
    let mcp = served.post(
        "/mcp",
        "",
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(mcp.status, 401);
    // The login token acts as the human who ran the server.
    assert_eq!(
        served.get("/api/v1/whoami", &served.login).ok(),
        json!({"agent": "alice"})
    );
}

#[test]
fn a_foreign_host_is_refused_on_every_route() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    let port = served.port();
    let ask = |host: &str, path: &str| {
        send(
            &served.address,
            "GET",
            path,
            &[
                ("Host".to_string(), host.to_string()),
                (
                    "Authorization".to_string(),
                    format!("Bearer {}", served.login),
                ),
            ],
            None,
        )
    };
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "127.0.0.1".to_string(),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
    ] {
        for path in ["/healthz", "/", "/api/v1/whoami", "/mcp"] {
            let reply = ask(&host, path);
            assert_eq!(reply.status, 403, "{host} {path}: {}", reply.body);
        }
    }
    assert_eq!(
        ask(&format!("localhost:{port}"), "/api/v1/whoami").status,
        200
    );
    assert_eq!(
        ask(&format!("127.0.0.1:{port}"), "/api/v1/whoami").status,
        200
    );
    // No Host at all is no better.
    let bare = send(&served.address, "GET", "/healthz", &[], None);
    assert_eq!(bare.status, 403, "{}", bare.body);
}

#[test]
fn the_token_is_the_identity_whatever_the_request_says() {
    let env = TestEnv::new();
    env.register(&["alice", "bob", "carol"]);
    let bob = add_token(&env, "bob");
    let served = Served::start(&env, "alice");
    // bob sends; nothing in the request can make it carol's.
    let sent = served.post(
        "/api/v1/projects/default/tasks?as=carol&agent=carol",
        &bob,
        &json!({"to": "alice", "subject": "from bob", "review": true}),
    );
    let sent = sent.ok();
    assert_eq!(sent["task"]["from"], "bob");
    let sneaky = served.post(
        "/api/v1/projects/default/tasks",
        &bob,
        &json!({"to": "alice", "subject": "s", "from": "carol"}),
    );
    assert_eq!(
        sneaky.status, 422,
        "an unknown field is refused: {}",
        sneaky.body
    );
    let headers = [
        ("Host".to_string(), served.address.clone()),
        ("Authorization".to_string(), format!("Bearer {bob}")),
        ("X-Baton-Agent".to_string(), "carol".to_string()),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let claimed = send(
        &served.address,
        "POST",
        "/api/v1/projects/default/tasks/1/claim",
        &headers,
        Some("{}"),
    );
    // The task is alice's to claim, not bob's (nor carol's).
    assert_eq!(claimed.status, 400, "{}", claimed.body);
    assert_eq!(claimed.json()["code"], 1);
    let shown = env.run("alice", &["--json", "show", "1"]).json();
    assert_eq!(shown["from"], "bob");
    assert_eq!(shown["status"], "pending");
    assert_eq!(
        env.activity("default").len(),
        1,
        "the refused claim changed nothing"
    );
}

#[test]
fn a_task_goes_through_its_life_from_the_api_as_the_cli_sees_it() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let dev = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let act = |id: u64, action: &str, token: &str, body: Value| {
        served
            .post(
                &format!("/api/v1/projects/default/tasks/T-{id}/{action}"),
                token,
                &body,
            )
            .ok()
    };
    let sent = served
        .post(
            "/api/v1/projects/default/tasks",
            &login,
            &json!({"to": "dev", "subject": "fix the parser", "body": "line one\nline two",
                    "priority": "high", "review": true}),
        )
        .ok();
    let id = sent["task"]["id"].as_u64().unwrap();
    // The same shape as the CLI's `send --json`.
    let cli = env
        .run(
            "alice",
            &["--json", "send", "--to", "dev", "--subject", "twin"],
        )
        .json();
    let keys =
        |value: &Value| -> Vec<String> { value.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(keys(&sent), keys(&cli));
    assert_eq!(keys(&sent["task"]), keys(&cli["task"]));

    act(id, "claim", &dev, json!({}));
    act(id, "ask", &dev, json!({"text": "which parser?"}));
    act(id, "answer", &login, json!({"text": "the JSON one"}));
    act(id, "review", &dev, json!({"text": "fixed"}));
    let board = served.get("/api/v1/projects/default/board", &login).ok();
    let task = task_in(&board, id);
    assert_eq!(task["status"], "review_requested");
    assert_eq!(task["turn"], "alice");
    act(id, "approve", &login, json!({"text": "thanks"}));
    let shown = served
        .get(&format!("/api/v1/projects/default/tasks/{id}"), &login)
        .ok();
    assert_eq!(
        shown,
        env.run("alice", &["--json", "show", &id.to_string()])
            .json()
    );
    assert_eq!(shown["status"], "completed");
    let by: Vec<&str> = shown["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["by"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["dev", "dev", "alice", "dev", "alice"]);

    // Reassign and cancel from the API too; a message reaches the CLI.
    let other = env.send("alice", "dev", "second", &[]);
    let reassigned = act(
        other,
        "reassign",
        &login,
        json!({"to": "alice", "text": "mine now"}),
    );
    assert_eq!(reassigned["task"]["to"], "alice");
    let canceled = act(other, "cancel", &login, json!({"text": "not needed"}));
    assert_eq!(canceled["task"]["status"], "canceled");
    let message = served
        .post(
            "/api/v1/projects/default/messages",
            &login,
            &json!({"to": "dev", "text": "lunch?"}),
        )
        .ok();
    assert_eq!(message["message"]["from"], "alice");
    let mail = env.run("dev", &["--json", "messages"]).json();
    assert!(mail.to_string().contains("lunch?"), "{mail}");
    let agents = served.get("/api/v1/projects/default/agents", &login).ok();
    // Seconds since each was seen may tick over between the two looks; `last_seen` may not.
    assert_eq!(
        without_ages(agents),
        without_ages(env.run("alice", &["--json", "agents"]).json())
    );
    let log = served.get("/api/v1/projects/default/log?n=3", &login).ok();
    assert_eq!(log.as_array().unwrap().len(), 3);
    assert_eq!(log[2]["action"], "cancel");
}

/// A view marks read what it drew: `?through=SEQ` leaves a message that arrived after the
/// view was drawn unread, where marking everything would have hidden it unseen.
#[test]
fn marking_messages_read_through_a_number_leaves_later_ones_unread() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let seqs: Vec<u64> = ["first", "second", "third"]
        .iter()
        .map(|text| {
            env.run("dev", &["--json", "msg", "--to", "alice", text])
                .json()["message"]["seq"]
                .as_u64()
                .expect("a message number")
        })
        .collect();
    let unread_texts = || -> Vec<String> {
        let mail = env.run("alice", &["--json", "messages", "--peek"]).json();
        mail["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["unread"] == true)
            .map(|entry| entry["body"].as_str().unwrap().to_string())
            .collect()
    };
    let peeked = served.get(
        &format!(
            "/api/v1/projects/default/messages?peek=true&through={}",
            seqs[2]
        ),
        &login,
    );
    assert_eq!(peeked.status, 200);
    assert_eq!(
        unread_texts(),
        ["first", "second", "third"],
        "a peek marks nothing"
    );
    let marked = served
        .get(
            &format!("/api/v1/projects/default/messages?through={}", seqs[1]),
            &login,
        )
        .ok();
    assert_eq!(marked["messages"].as_array().unwrap().len(), 3, "{marked}");
    assert_eq!(
        unread_texts(),
        ["third"],
        "only those up to the number count as read"
    );
    served.get("/api/v1/projects/default/messages", &login).ok();
    assert_eq!(unread_texts(), Vec::<String>::new());
}

#[test]
fn refusals_are_one_json_line_with_the_cli_exit_code() {
    let env = TestEnv::new();
    env.register(&["alice"]);
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let unknown = served.get("/api/v1/projects/default/tasks/99", &login);
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["code"], 1);
    // A task id in a path is read as the CLI reads one: `t-99` is task 99, `0` and `+99` are
    // no task id at all.
    assert_eq!(
        served
            .get("/api/v1/projects/default/tasks/t-99", &login)
            .status,
        404
    );
    for not_an_id in ["0", "+99"] {
        let refused = served.get(
            &format!("/api/v1/projects/default/tasks/{not_an_id}"),
            &login,
        );
        assert_eq!(refused.status, 400, "{not_an_id}: {}", refused.body);
        assert!(
            refused.json()["error"]
                .as_str()
                .unwrap()
                .contains("is not a task id"),
            "{}",
            refused.body
        );
    }
    let no_project = served.get("/api/v1/projects/nowhere/board", &login);
    assert_eq!(no_project.status, 404, "{}", no_project.body);
    let bad_name = served.get("/api/v1/projects/..%2Fetc/board", &login);
    assert!(
        [400, 404].contains(&bad_name.status),
        "{}: {}",
        bad_name.status,
        bad_name.body
    );
    let two_lines = served.post(
        "/api/v1/projects/default/tasks",
        &login,
        &json!({"to": "alice", "subject": "a\nb"}),
    );
    assert_eq!(two_lines.status, 400);
    assert!(
        two_lines.json()["error"]
            .as_str()
            .unwrap()
            .contains("one line")
    );
    let not_json = send(
        &served.address,
        "POST",
        "/api/v1/projects/default/tasks",
        &[
            ("Host".to_string(), served.address.clone()),
            ("Authorization".to_string(), format!("Bearer {login}")),
            ("Content-Type".to_string(), "application/json".to_string()),
        ],
        Some("{not json"),
    );
    assert_eq!(not_json.status, 400);
    assert!(not_json.json()["error"].is_string(), "{}", not_json.body);
    let no_action = served.post(
        "/api/v1/projects/default/tasks/1/explode",
        &login,
        &json!({}),
    );
    assert_eq!(no_action.status, 404);
    assert!(
        env.activity("default").is_empty(),
        "nothing refused changed anything"
    );
}

#[test]
fn a_corrupt_board_is_named_and_the_other_projects_keep_working() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let api = env.project_beside("alice", "api");
    env.run_in(&api, "alice", &["send", "--to", "dev", "--subject", "s"])
        .ok();
    env.send("alice", "dev", "fine", &[]);
    let served = Served::start(&env, "alice");
    std::fs::write(env.board_path("api"), "{ this is not a board").unwrap();
    let broken = served.get("/api/v1/projects/api/board", &served.login);
    assert_eq!(broken.status, 500, "{}", broken.body);
    let error = broken.json();
    assert_eq!(error["code"], 4);
    assert!(
        error["error"].as_str().unwrap().contains("board.json"),
        "{error}"
    );
    let fine = served
        .get("/api/v1/projects/default/board", &served.login)
        .ok();
    assert_eq!(fine.as_array().unwrap().len(), 1);
    assert_eq!(served.get("/api/v1/projects", &served.login).status, 200);
    // The file is left as it was for the human to look at.
    assert_eq!(
        std::fs::read_to_string(env.board_path("api")).unwrap(),
        "{ this is not a board"
    );
}

#[test]
fn a_removed_token_stops_working_at_the_next_request_and_list_shows_its_use() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let dev = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    assert_eq!(
        served.get("/api/v1/whoami", &dev).ok(),
        json!({"agent": "dev"})
    );
    let listed = env.run("", &["--json", "token", "list"]).json();
    let dev_row = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == "dev" && row["login"] == false)
        .unwrap()
        .clone();
    assert!(dev_row["last_used_at"].is_string(), "{listed}");
    env.run("", &["token", "rm", "dev"]).ok();
    assert_eq!(served.get("/api/v1/whoami", &dev).status, 401);
    // No file under the home holds a token, the login's included.
    for entry in walk(&env.home()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(&served.login),
            "{} holds the login token",
            entry.display()
        );
        assert!(!text.contains(&dev), "{} holds a token", entry.display());
    }
}

#[test]
fn serve_refuses_what_it_cannot_do_in_one_line() {
    let env = TestEnv::new();
    let run = env.run("", &["serve"]);
    let stderr = run.fails(1);
    assert!(stderr.contains("no identity"), "{stderr}");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let run = env.run("alice", &["serve", "--listen", &address]);
    let stderr = run.fails(1);
    assert!(
        stderr.starts_with(&format!("error: cannot listen on {address}")),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    let run = env.run("alice", &["serve", "--listen", "nowhere"]);
    run.fails(1);
}

#[test]
fn listening_beyond_loopback_says_the_traffic_is_plain_http() {
    let env = TestEnv::new();
    let mut command = env.command(&env.work());
    command
        .args(["--as", "alice", "serve", "--listen", "0.0.0.0:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let lines = crate::common::stdout_lines(&mut child);
    let url = lines.recv_timeout(Duration::from_secs(30)).unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(
        stderr.contains("warning: listening on 0.0.0.0:") && stderr.contains("plain HTTP"),
        "{stderr}"
    );
}

/// The stream `events` has ended: its connection closed, whatever came before.
#[track_caller]
fn ends(events: &std::sync::mpsc::Receiver<Value>, what: &str) {
    ends_within(
        events,
        Duration::from_secs(30),
        &format!("the event stream of {what}"),
    );
}

#[test]
fn every_refusal_is_the_api_json_with_its_status_kept() {
    let env = TestEnv::new();
    env.register(&["alice"]);
    let served = Served::start(&env, "alice");
    let id = env.send("alice", "alice", "a task", &[]);
    let bearer = format!("Bearer {}", served.login);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "1"}},
    })
    .to_string();
    let tools_list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let claim = format!("/api/v1/projects/default/tasks/{id}/claim");
    let too_large = format!("{{\"text\": \"{}\"}}", "x".repeat(3 << 20));
    const AS_JSON: (&str, &str) = ("Content-Type", "application/json");
    const AS_TEXT: (&str, &str) = ("Content-Type", "text/plain");
    const TAKES_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
    const TAKES_JSON: (&str, &str) = ("Accept", "application/json");
    let ask = |method: &str, path: &str, headers: &[(&str, &str)], body: &str| {
        let mut all = vec![
            ("Host".to_string(), served.address.clone()),
            ("Authorization".to_string(), bearer.clone()),
        ];
        all.extend(
            headers
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string())),
        );
        let body = (!body.is_empty()).then_some(body);
        send(&served.address, method, path, &all, body)
    };
    let tasks = "/api/v1/projects/default/tasks";
    let refusals = [
        (
            415,
            "claim, not JSON",
            ask("POST", &claim, &[AS_TEXT], "{}"),
        ),
        (
            400,
            "claim, bad JSON",
            ask("POST", &claim, &[AS_JSON], "{not json"),
        ),
        (
            422,
            "claim, no such field",
            ask("POST", &claim, &[AS_JSON], r#"{"bogus": 1}"#),
        ),
        (
            413,
            "claim, too large",
            ask("POST", &claim, &[AS_JSON], &too_large),
        ),
        (415, "send, not JSON", ask("POST", tasks, &[AS_TEXT], "{}")),
        (
            422,
            "send, wrong shape",
            ask("POST", tasks, &[AS_JSON], r#"{"to": 1}"#),
        ),
        (
            405,
            "no such method",
            ask("DELETE", "/api/v1/projects", &[], ""),
        ),
        (
            400,
            "bad query",
            ask("GET", "/api/v1/projects/default/log?n=many", &[], ""),
        ),
        (
            400,
            "bad status",
            ask("GET", "/api/v1/projects/default/board?status=lost", &[], ""),
        ),
        (
            406,
            "MCP, JSON only",
            ask("POST", "/mcp", &[AS_JSON, TAKES_JSON], &initialize),
        ),
        (
            406,
            "MCP stream, no SSE",
            ask("GET", "/mcp", &[TAKES_JSON], ""),
        ),
        (
            415,
            "MCP, not JSON",
            ask("POST", "/mcp", &[AS_TEXT, TAKES_BOTH], &initialize),
        ),
        (
            415,
            "MCP, bad JSON",
            ask("POST", "/mcp", &[AS_JSON, TAKES_BOTH], "{not json"),
        ),
        (
            405,
            "MCP, no such method",
            ask("PUT", "/mcp", &[AS_JSON, TAKES_BOTH], &initialize),
        ),
        (400, "MCP, no session", ask("DELETE", "/mcp", &[], "")),
        (
            400,
            "MCP, unknown version",
            ask(
                "POST",
                "/mcp",
                &[AS_JSON, TAKES_BOTH, ("MCP-Protocol-Version", "1999-01-01")],
                &tools_list,
            ),
        ),
        (
            404,
            "MCP, unknown session",
            ask(
                "POST",
                "/mcp",
                &[AS_JSON, TAKES_BOTH, ("Mcp-Session-Id", "no-such-session")],
                &tools_list,
            ),
        ),
    ];
    for (status, what, reply) in refusals {
        assert_eq!(reply.status, status, "{what}: {}", reply.body);
        assert_eq!(
            reply.header("content-type"),
            Some("application/json"),
            "{what}"
        );
        let refusal = reply.json();
        let error = refusal["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {refusal}"));
        assert!(
            !error.is_empty() && !error.contains('\n'),
            "{what}: {refusal}"
        );
        let keys: Vec<&String> = refusal.as_object().unwrap().keys().collect();
        assert!(
            keys.iter()
                .all(|key| ["error", "hint", "code"].contains(&key.as_str())),
            "{what}: {refusal}"
        );
        if status == 405 {
            assert!(reply.header("allow").is_some(), "{what}: Allow is kept");
        }
    }
    // A token refusal keeps its header too.
    let unauthorized = served.get("/api/v1/whoami", "baton_nobody");
    assert_eq!(unauthorized.header("www-authenticate"), Some("Bearer"));
    assert!(unauthorized.json()["error"].is_string());

    // What succeeds is left as it was: MCP's event stream, the API's JSON.
    let opened = ask("POST", "/mcp", &[AS_JSON, TAKES_BOTH], &initialize);
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert_eq!(opened.header("content-type"), Some("text/event-stream"));
    assert!(
        opened.body.contains("\"protocolVersion\""),
        "{}",
        opened.body
    );
    assert!(
        env.activity("default").len() == 1,
        "nothing refused changed anything"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
