//! `baton serve` over real sockets on loopback (SPEC section 12): who may ask, what the API
//! answers next to the CLI, the event stream, and surviving what clients and files do to it.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::http::{Served, add_token, open_answered, send};
use crate::common::{TestEnv, ends_within, eventually, files_only, task_in, without_ages};

#[test]
fn only_healthz_and_the_page_are_open_and_every_answer_carries_the_policy() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    for path in ["/healthz", "/", "/assets/app.js", "/assets/app.css"] {
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
fn sigterm_stops_it_cleanly_and_its_login_survives_the_restart() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let address = served.address.clone();
    assert_eq!(served.get("/api/v1/whoami", &login).status, 200);
    // An open event stream does not keep it from stopping.
    let _events = served.events(&login);
    let (status, stderr) = served.stop();
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
    assert!(
        TcpStream::connect(&address).is_err(),
        "nothing listens after it stopped"
    );
    assert!(
        !stderr.contains(&login),
        "the token is never logged: {stderr}"
    );
    let logins = |env: &TestEnv| -> usize {
        let listed = env.run("", &["--json", "token", "list"]).json();
        listed
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["login"] == true && row["name"] == "alice")
            .count()
    };
    assert_eq!(logins(&env), 1, "the login stays in the file");

    // The next server takes it: the tab that held it stays logged in (SPEC section 13).
    let next = Served::start(&env, "alice");
    assert_eq!(
        next.get("/api/v1/whoami", &login).ok(),
        json!({"agent": "alice"})
    );
    assert_eq!(next.get("/api/v1/whoami", &next.login).status, 200);
    assert_eq!(logins(&env), 2);
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

/// The findings of `baton doctor --json`: (name, status, detail).
fn doctor_findings(env: &TestEnv) -> Vec<(String, String, String)> {
    let run = env.run("", &["--json", "doctor"]);
    let value: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("doctor --json ({error}): {run:?}"));
    value["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| {
            let field = |name: &str| check[name].as_str().unwrap().to_string();
            (field("name"), field("status"), field("detail"))
        })
        .collect()
}

#[test]
fn the_page_is_told_what_the_caller_may_do_and_other_readers_get_the_cli_shape() {
    let env = TestEnv::new();
    env.register(&["alice", "dev", "rev"]);
    let dev = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let id = env.send("alice", "dev", "reviewed by rev", &["--reviewer", "rev"]);
    let offered = |token: &str| -> Value {
        served
            .get(
                &format!("/api/v1/projects/default/tasks/{id}?offered=true"),
                token,
            )
            .ok()["offered"]
            .clone()
    };
    assert_eq!(offered(&dev), json!(["claim", "ask", "review", "fail"]));
    assert_eq!(offered(&login), json!(["cancel", "reassign"]));
    env.run("dev", &["claim", &id.to_string()]).ok();
    env.run("dev", &["review", &id.to_string()]).ok();
    // Review requested of rev: the sender may not approve, nor reassign before the verdict.
    assert_eq!(offered(&login), json!(["cancel"]));
    assert_eq!(offered(&dev), json!(["fail"]));
    let board = served
        .get("/api/v1/projects/default/board?offered=true", &login)
        .ok();
    assert_eq!(task_in(&board, id)["offered"], json!(["cancel"]));

    // Unasked, the answers are the CLI's `--json`, with no field of the page's.
    let shown = served
        .get(&format!("/api/v1/projects/default/tasks/{id}"), &login)
        .ok();
    assert_eq!(
        shown,
        env.run("alice", &["--json", "show", &id.to_string()])
            .json()
    );
    let board = served.get("/api/v1/projects/default/board", &login).ok();
    assert_eq!(board, env.run("alice", &["--json", "board"]).json());

    // A task that waits on an unfinished one cannot be claimed, so claim is not offered.
    let waiting = env.send(
        "alice",
        "dev",
        "after the first",
        &["--after", &id.to_string()],
    );
    let offered_waiting = served
        .get(
            &format!("/api/v1/projects/default/tasks/{waiting}?offered=true"),
            &dev,
        )
        .ok();
    assert!(
        !offered_waiting["offered"]
            .as_array()
            .unwrap()
            .contains(&json!("claim")),
        "{offered_waiting}"
    );
}

#[test]
fn the_page_opens_on_the_project_serve_runs_in_and_logs_out_its_login_alone() {
    let env = TestEnv::new();
    let work = env.work();
    env.init_project("alice", "api", &work);
    env.project_beside("alice", "aaa");
    // `Served` runs the server in the work directory, which belongs to `api`.
    let served = Served::start(&env, "alice");
    assert_eq!(
        served.get("/api/v1/page", &served.login).ok(),
        json!({"agent": "alice", "project": "api"})
    );
    let named = Served::start_with(&env, "alice", &["--project", "aaa"]);
    assert_eq!(
        named.get("/api/v1/page", &named.login).ok()["project"],
        "aaa"
    );
    let unknown = env.run(
        "alice",
        &["serve", "--project", "nowhere", "--listen", "127.0.0.1:0"],
    );
    assert!(unknown.fails(1).contains("nowhere"), "{}", unknown.stderr);

    // Logging out removes the login it presents, and no other token.
    let dev = add_token(&env, "dev");
    let out = served
        .post("/api/v1/logout", &served.login, &json!({}))
        .ok();
    assert_eq!(out, json!({"removed": true}));
    assert_eq!(served.get("/api/v1/whoami", &served.login).status, 401);
    assert_eq!(named.get("/api/v1/whoami", &named.login).status, 200);
    let out = served.post("/api/v1/logout", &dev, &json!({})).ok();
    assert_eq!(
        out,
        json!({"removed": false}),
        "an agent's token is not a login"
    );
    assert_eq!(served.get("/api/v1/whoami", &dev).status, 200);
}

#[test]
fn a_login_survives_a_killed_server_and_ends_at_token_rm() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    let old_login = served.login.clone();
    assert_eq!(served.get("/api/v1/whoami", &old_login).status, 200);
    // SIGKILL: the server does nothing on its way out, and its login stays good.
    served.kill();
    let next = Served::start(&env, "alice");
    assert_eq!(
        next.get("/api/v1/whoami", &old_login).ok(),
        json!({"agent": "alice"})
    );
    let expired = |findings: &[(String, String, String)]| {
        findings
            .iter()
            .filter(|(name, status, _)| name == "tokens" && status == "warn")
            .count()
    };
    assert_eq!(expired(&doctor_findings(&env)), 0, "nothing expired");

    // `token rm` ends every login of alice at once, and the refusal says how to log in.
    let events = next.events(&next.login);
    env.run("", &["token", "rm", "alice"]).ok();
    for login in [&old_login, &next.login] {
        let refused = next.get("/api/v1/whoami", login);
        assert_eq!(refused.status, 401, "{}", refused.body);
        let body = refused.json();
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("removed (`baton token rm`)"),
            "{body}"
        );
        assert!(
            body["hint"]
                .as_str()
                .unwrap()
                .contains("URL `baton serve` prints"),
            "{body}"
        );
    }
    // Its open event stream ends with it.
    ends(&events, "a token that is gone");
}

#[test]
fn a_login_unused_for_its_time_to_live_is_refused_then_dropped() {
    let env = TestEnv::new();
    let served = Served::start_with(&env, "alice", &["--login-ttl", "2s"]);
    let login = served.login.clone();
    assert_eq!(served.get("/api/v1/whoami", &login).status, 200);
    let used = Instant::now();
    // Unused for longer than 2 seconds: however slow the machine, it is past its time.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(used.elapsed() > Duration::from_secs(2));
    let refused = served.get("/api/v1/whoami", &login);
    assert_eq!(refused.status, 401, "{}", refused.body);
    let body = refused.json();
    assert_eq!(
        body["error"],
        "this web login expired: it went unused for more than 2s"
    );
    assert!(
        body["hint"]
            .as_str()
            .unwrap()
            .contains("restart it for a new one"),
        "{body}"
    );
    assert_eq!(
        refused.header("www-authenticate"),
        Some("Bearer"),
        "{:?}",
        refused.headers
    );
    let findings = doctor_findings(&env);
    assert!(
        findings
            .iter()
            .any(|(name, status, detail)| name == "tokens"
                && status == "warn"
                && detail.contains("web login of alice")
                && detail.contains("expired")),
        "{findings:#?}"
    );
    // The next start drops it from the file, and its own login works.
    drop(served);
    let next = Served::start(&env, "alice");
    let listed = env.run("", &["--json", "token", "list"]).json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(next.get("/api/v1/whoami", &next.login).status, 200);
    assert_eq!(next.get("/api/v1/whoami", &login).status, 401);
}

#[test]
fn a_bad_login_ttl_is_refused_in_one_line() {
    let env = TestEnv::new();
    for (ttl, words) in [
        ("12", "a number and a unit"),
        ("0s", "from 1s to 365d"),
        ("2w", "90s, 30m, 12h or 7d"),
    ] {
        let run = env.run(
            "alice",
            &["serve", "--listen", "127.0.0.1:0", "--login-ttl", ttl],
        );
        let stderr = run.fails(1);
        assert!(stderr.contains(words), "{ttl}: {stderr}");
        assert_eq!(
            stderr
                .lines()
                .filter(|line| line.starts_with("error:"))
                .count(),
            1,
            "{stderr}"
        );
    }
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
