//! `baton serve` as an A2A server (SPEC section 17), on loopback: the official A2A Python
//! SDK (tests/a2a_python/scenario.py) hands an agent a task, streams it, answers, approves,
//! cancels and subscribes while the agent works through the CLI; raw HTTP for the shapes a
//! client library hides (both versions' fields, JSON-RPC refusals, a blocking send).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{Reply, Served, add_token};
use crate::common::{TestEnv, baton_bin};

/// A JSON-RPC request to `path` as `token`, with `headers` besides.
fn rpc(served: &Served, path: &str, token: &str, method: &str, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    served.post(path, token, &body)
}

/// The `error` member of a JSON-RPC answer (HTTP 200, as JSON-RPC answers refusals).
#[track_caller]
fn refused(reply: &Reply) -> Value {
    let answer = reply.ok();
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    answer["error"].clone()
}

/// A text message of A2A 1.0.
fn message(text: &str) -> Value {
    json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// The data lines of an event stream's body, each a JSON-RPC answer.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("an event is JSON"))
        .collect()
}

/// A hub with the agent `dev` (strengths and skills) and a token for `lead`, served.
fn hub() -> (TestEnv, Served, String) {
    let env = TestEnv::new();
    env.run(
        "dev",
        &[
            "agent",
            "add",
            "dev",
            "--strengths",
            "Rust and parsers",
            "--skills",
            "parsers,rust",
        ],
    )
    .ok();
    let lead = add_token(&env, "lead");
    let served = Served::start(&env, "alice");
    (env, served, lead)
}

/// The official Python SDK drives the scenario of SPEC section 17 against a real server
/// while the agent acts through the CLI (tests/a2a_python). `.ci/run` installs the SDK and
/// sets `BATON_TEST_PYTHON`; this test then must pass.
#[test]
fn the_python_a2a_sdk_hands_a_task_to_an_agent_on_the_board() {
    let Some(python) = crate::common::python(
        "the A2A Python SDK scenario",
        "tests/a2a_python/requirements.txt",
    ) else {
        return;
    };
    let (env, served, lead) = hub();
    let eve = add_token(&env, "eve");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/a2a_python/scenario.py");
    // The agent's commands run as the test's own do: the environment of `env.command`.
    let template = env.command(&env.work());
    let mut command = Command::new(&python);
    for (name, value) in template.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let output = command
        .arg(&script)
        .arg(served.base().trim_end_matches('/'))
        .current_dir(env.work())
        .env("BATON", baton_bin())
        .env("LEAD_TOKEN", &lead)
        .env("EVE_TOKEN", &eve)
        .stdin(Stdio::null())
        .output()
        .expect("the Python scenario runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the A2A scenario failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    print!("{stdout}");
    assert!(stdout.contains("a2a scenario: ok"), "{stdout}");
    for token in [&lead, &eve] {
        assert!(!stdout.contains(token.as_str()) && !stderr.contains(token.as_str()));
    }

    // What the A2A caller did is on the board, by the token's agent, as the CLI sees it.
    let shown = env.run("lead", &["--json", "show", "1"]).json();
    assert_eq!(shown["status"], "completed");
    assert_eq!(
        (&shown["from"], &shown["to"]),
        (&json!("lead"), &json!("dev"))
    );
    assert_eq!(shown["subject"], "Fix the parser");
    let thread: Vec<(&str, &str)> = shown["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["kind"].as_str().unwrap(),
                entry["by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        thread,
        [
            ("claim", "dev"),
            ("question", "dev"),
            ("answer", "lead"),
            ("claim", "dev"),
            ("review_request", "dev"),
            ("approval", "lead"),
        ]
    );
    let second = env.run("lead", &["--json", "show", "2"]).json();
    assert_eq!(second["status"], "changes_requested");
    // The hostile subject was kept exactly, as SPEC section 10 says of what is accepted.
    let board = env.run("lead", &["--json", "board", "--all"]).json();
    let hostile = board
        .as_array()
        .unwrap()
        .iter()
        .find(|task| task["subject"].as_str().unwrap().starts_with("<script>"))
        .expect("the hostile task is on the board");
    assert_eq!(
        hostile["body"],
        "red \u{1b}[31mtext\u{1b}[0m and \u{202e}gnirts"
    );
}

#[test]
fn cards_speak_to_clients_of_both_versions_and_need_a_token() {
    let (_env, served, lead) = hub();
    let base = served.base().trim_end_matches('/').to_string();
    let card = served
        .get("/a2a/agents/dev/.well-known/agent-card.json", &lead)
        .ok();
    let url = format!("{base}/a2a/agents/dev");
    // 1.0's members …
    assert_eq!(
        card["supportedInterfaces"],
        json!([
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ])
    );
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}])
    );
    // … and 0.3's beside them.
    assert_eq!(
        (&card["url"], &card["preferredTransport"]),
        (&json!(url), &json!("JSONRPC"))
    );
    assert_eq!(card["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(card["security"], json!([{"bearer": []}]));
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["parsers", "rust"]);
    assert_eq!(card["skills"][0]["description"], "Rust and parsers");
    assert!(
        card["description"]
            .as_str()
            .unwrap()
            .starts_with("Rust and parsers\n\n")
    );

    let hub_card = served.get("/.well-known/agent-card.json", &lead).ok();
    assert_eq!(hub_card["url"], format!("{base}/a2a"));
    let agents: Vec<&str> = hub_card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["id"].as_str().unwrap())
        .collect();
    assert!(agents.contains(&"dev"), "{hub_card}");

    assert_eq!(
        served
            .get("/a2a/agents/dev/.well-known/agent-card.json", "")
            .status,
        401
    );
    let unknown = served.get("/a2a/agents/nobody/.well-known/agent-card.json", &lead);
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert!(
        unknown.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("unknown agent `nobody`")
    );
}

#[test]
fn json_rpc_refusals_are_json_rpc_errors_in_batons_words() {
    let (env, served, lead) = hub();
    let dev = "/a2a/agents/dev";
    let error = refused(&rpc(&served, dev, &lead, "tasks/send", json!({})));
    assert_eq!(error["code"], -32601);
    assert!(
        error["message"].as_str().unwrap().contains("SendMessage"),
        "{error}"
    );

    let mut headers = vec![
        ("Host".to_string(), served.address.clone()),
        ("Authorization".to_string(), format!("Bearer {lead}")),
        ("Content-Type".to_string(), "application/json".to_string()),
        ("A2A-Version".to_string(), "2.0".to_string()),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "1"}});
    let reply = crate::common::http::send(
        &served.address,
        "POST",
        dev,
        &headers,
        Some(&body.to_string()),
    );
    assert_eq!(refused(&reply)["code"], -32009);
    headers.pop();
    let reply = crate::common::http::send(&served.address, "POST", dev, &headers, Some("{nope"));
    assert_eq!(refused(&reply)["code"], -32700);

    let push = refused(&rpc(
        &served,
        dev,
        &lead,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "default/T-1", "url": "http://127.0.0.1:9/"}),
    ));
    assert_eq!(push["code"], -32003);

    // A file is not words: baton takes text.
    let file = json!({"messageId": "m", "role": "ROLE_USER",
                      "parts": [{"url": "file:///etc/passwd", "mediaType": "text/plain"}]});
    let error = refused(&rpc(
        &served,
        dev,
        &lead,
        "SendMessage",
        json!({"message": file}),
    ));
    assert_eq!(error["code"], -32005);

    // The hub's endpoint needs to be told whose the new task is.
    let error = refused(&rpc(
        &served,
        "/a2a",
        &lead,
        "SendMessage",
        json!({"message": message("Who takes this?")}),
    ));
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("metadata.baton.to"),
        "{error}"
    );
    let sent = rpc(
        &served,
        "/a2a",
        &lead,
        "SendMessage",
        json!({"message": message("Dev takes this"), "metadata": {"baton": {"to": "dev"}},
               "configuration": {"returnImmediately": true}}),
    )
    .ok();
    assert_eq!(sent["result"]["task"]["id"], "default/T-1", "{sent}");
    assert_eq!(sent["result"]["task"]["metadata"]["baton"]["to"], "dev");

    // With two projects, a caller says which.
    env.project_beside("lead", "api");
    let error = refused(&rpc(
        &served,
        dev,
        &lead,
        "SendMessage",
        json!({"message": message("Where does this go?")}),
    ));
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("this hub has 2 projects (api, default)"),
        "{error}"
    );
    // The refusal itself says how to name it: a client that shows only the message (the
    // Python SDK's error) tells its user.
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with("say which one in metadata.baton.project"),
        "{error}"
    );
    let mut into_api = message("Into api");
    into_api["metadata"] = json!({"baton": {"project": "api"}});
    let sent = rpc(
        &served,
        dev,
        &lead,
        "message/send",
        json!({"message": into_api, "configuration": {"blocking": false}}),
    )
    .ok();
    assert_eq!(
        (&sent["result"]["id"], &sent["result"]["kind"]),
        (&json!("api/T-1"), &json!("task"))
    );
    assert_eq!(sent["result"]["status"]["state"], "submitted");

    // A context that is no project is refused, never swapped for another.
    let mut elsewhere = message("Somewhere");
    elsewhere["contextId"] = json!("b7e1c3a0-context-of-the-client");
    let error = refused(&rpc(
        &served,
        dev,
        &lead,
        "SendMessage",
        json!({"message": elsewhere}),
    ));
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("the contextId `b7e1c3a0-context-of-the-client` is no project"),
        "{error}"
    );

    // A task that is not the caller's is not there for it.
    let eve = add_token(&env, "eve");
    let error = refused(&rpc(
        &served,
        dev,
        &eve,
        "GetTask",
        json!({"id": "api/T-1"}),
    ));
    assert_eq!(error["code"], -32001);
    assert_eq!(error["message"], "no task T-1 in project api");
    // Answering a task that asked nothing is refused by the board's own rule.
    let mut answer = message("An answer to nothing");
    answer["taskId"] = json!("api/T-1");
    let error = refused(&rpc(
        &served,
        dev,
        &lead,
        "SendMessage",
        json!({"message": answer}),
    ));
    assert_eq!(error["code"], -32004);
    assert_eq!(
        error["message"],
        "T-1 is pending, assigned to dev: answer needs it input_required"
    );
    assert_eq!(error["data"][0]["reason"], "UNSUPPORTED_OPERATION");

    // A token nobody holds: 401, and still JSON-RPC.
    let reply = rpc(&served, dev, "baton_nobody", "GetTask", json!({"id": "1"}));
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json()["error"]["code"], -32000);
}

/// A send without `returnImmediately` (0.3's `message/send`, which waits by default) answers
/// once the task stops: here when the agent asks its question. A resubscription to a task
/// waiting on its caller is that task, and its end.
#[test]
fn a_blocking_send_answers_once_the_agent_asks() {
    let (env, served, lead) = hub();
    let agent = {
        let work = env.work();
        // The test's own environment (its home, and its store: BATON_STORE on PostgreSQL).
        let vars: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)> = env
            .command(&work)
            .get_envs()
            .map(|(name, value)| (name.to_owned(), value.map(|value| value.to_owned())))
            .collect();
        std::thread::spawn(move || {
            // The send is on the board before the agent looks: wait for it there.
            let run = |args: &[&str]| {
                let mut command = Command::new(baton_bin());
                for (name, value) in &vars {
                    match value {
                        Some(value) => command.env(name, value),
                        None => command.env_remove(name),
                    };
                }
                command
                    .args(["--as", "dev"])
                    .args(args)
                    .current_dir(&work)
                    .stdin(Stdio::null())
                    .output()
                    .unwrap()
            };
            crate::common::eventually_within(Duration::from_secs(30), "the task came", || {
                run(&["claim", "1"]).status.success().then_some(())
            });
            assert!(run(&["ask", "1", "--body", "Which one?"]).status.success());
        })
    };
    let old = json!({"messageId": "m", "role": "user", "kind": "message",
                     "parts": [{"kind": "text", "text": "Pick one"}]});
    let answer = rpc(
        &served,
        "/a2a/agents/dev",
        &lead,
        "message/send",
        json!({"message": old}),
    )
    .ok();
    agent.join().unwrap();
    let task = &answer["result"];
    assert_eq!(task["kind"], "task", "{answer}");
    assert_eq!(task["status"]["state"], "input-required");
    assert_eq!(
        task["status"]["message"]["parts"][0],
        json!({"kind": "text", "text": "Which one?"})
    );

    let stream = rpc(
        &served,
        "/a2a/agents/dev",
        &lead,
        "tasks/resubscribe",
        json!({"id": "default/T-1"}),
    );
    assert_eq!(stream.status, 200);
    assert!(
        stream
            .header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = events(&stream.body);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["result"]["status"]["state"], "input-required");
}

/// A refused streaming request is a stream too, of one event carrying the JSON-RPC error:
/// the A2A JavaScript SDK that Gemini CLI uses reads nothing but `text/event-stream` there,
/// and would drop baton's words with anything else.
#[test]
fn a_refused_stream_is_a_stream_of_the_error() {
    let (env, served, lead) = hub();
    for project in ["app", "web"] {
        std::fs::create_dir_all(env.work().join(project)).unwrap();
        env.run(
            "lead",
            &[
                "project",
                "init",
                "--name",
                project,
                "--workspace",
                env.work().join(project).to_str().unwrap(),
            ],
        )
        .ok();
    }
    let old = json!({"messageId": "m", "role": "user", "kind": "message",
                     "parts": [{"kind": "text", "text": "Fix it"}]});
    for (method, params) in [
        ("message/stream", json!({"message": old})),
        (
            "SendStreamingMessage",
            json!({"message": message("Fix it")}),
        ),
        ("tasks/resubscribe", json!({"id": "app/T-9"})),
    ] {
        let reply = rpc(&served, "/a2a/agents/dev", &lead, method, params);
        assert_eq!(reply.status, 200, "{method}");
        assert!(
            reply
                .header("content-type")
                .unwrap()
                .starts_with("text/event-stream"),
            "{method}: {}",
            reply.body
        );
        let events = events(&reply.body);
        assert_eq!(events.len(), 1, "{method}: {events:?}");
        assert_eq!(events[0]["id"], 7, "{method}");
        let error = &events[0]["error"];
        let words = error["message"].as_str().unwrap();
        match method {
            "tasks/resubscribe" => assert!(words.contains("T-9"), "{error}"),
            _ => assert!(words.contains("projects (app, default, web)"), "{error}"),
        }
    }
    // A request that asks for no stream is refused as JSON, as before.
    let error = refused(&rpc(
        &served,
        "/a2a/agents/dev",
        &lead,
        "message/send",
        json!({"message": old}),
    ));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("projects (app, default, web)"),
        "{error}"
    );
}

/// `?project=ID` on an agent's card gives an endpoint whose new tasks go to that project:
/// what a caller that sends no metadata (Gemini CLI) needs on a hub of several projects.
#[test]
fn an_endpoint_s_project_takes_the_tasks_sent_there() {
    let (env, served, lead) = hub();
    for project in ["app", "web"] {
        std::fs::create_dir_all(env.work().join(project)).unwrap();
        env.run(
            "lead",
            &[
                "project",
                "init",
                "--name",
                project,
                "--workspace",
                env.work().join(project).to_str().unwrap(),
            ],
        )
        .ok();
    }
    let card = served
        .get(
            "/a2a/agents/dev/.well-known/agent-card.json?project=web",
            &lead,
        )
        .ok();
    let url = card["url"].as_str().unwrap();
    assert!(url.ends_with("/a2a/agents/dev?project=web"), "{card}");
    let path = url.split_once("://").unwrap().1;
    let path = &path[path.find('/').unwrap()..];
    let old = json!({"messageId": "m", "role": "user", "kind": "message",
                     "parts": [{"kind": "text", "text": "Fix the web form"}]});
    let answer = rpc(
        &served,
        path,
        &lead,
        "message/send",
        json!({"message": old, "configuration": {"blocking": false}}),
    )
    .ok();
    let task = &answer["result"];
    assert_eq!(task["contextId"], "web", "{answer}");
    let shown = env
        .run("lead", &["--json", "--project", "web", "show", "1"])
        .json();
    assert_eq!(shown["subject"], "Fix the web form");
    // The message's own word wins over the endpoint's.
    let named = json!({"messageId": "m2", "role": "user", "kind": "message",
                       "metadata": {"baton": {"project": "app"}},
                       "parts": [{"kind": "text", "text": "Fix the app"}]});
    let answer = rpc(
        &served,
        path,
        &lead,
        "message/send",
        json!({"message": named, "configuration": {"blocking": false}}),
    )
    .ok();
    assert_eq!(answer["result"]["contextId"], "app", "{answer}");

    // A project that is not there, or no project's name, is refused, on the card and the
    // endpoint alike; the endpoint's refusal is JSON-RPC's.
    for project in ["nope", "..%2Fx"] {
        let card = served.get(
            &format!("/a2a/agents/dev/.well-known/agent-card.json?project={project}"),
            &lead,
        );
        assert!(card.status == 404 || card.status == 400, "{}", card.body);
        let reply = rpc(
            &served,
            &format!("/a2a/agents/dev?project={project}"),
            &lead,
            "message/send",
            json!({"message": old}),
        );
        let answer: Value = serde_json::from_str(&reply.body).unwrap();
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("?project="),
            "{answer}"
        );
    }
}

/// A stream lasts no longer than its token (SPEC section 13): `token rm` ends it.
#[test]
fn a_stream_ends_when_its_token_is_removed() {
    use std::io::{BufRead, BufReader, Read, Write};

    let (env, served, lead) = hub();
    let sent = rpc(
        &served,
        "/a2a/agents/dev",
        &lead,
        "SendMessage",
        json!({"message": message("Watch me"), "configuration": {"returnImmediately": true}}),
    )
    .ok();
    assert_eq!(sent["result"]["task"]["id"], "default/T-1");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                      "params": {"id": "default/T-1"}})
    .to_string();
    let mut connection = std::net::TcpStream::connect(&served.address).unwrap();
    connection
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        connection,
        "POST /a2a/agents/dev HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {lead}\r\n\
         Content-Type: application/json\r\nAccept: text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        served.address,
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(connection);
    let mut line = String::new();
    // The stream is open once the task as it is has come.
    while !line.starts_with("data: ") {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the stream ended early"
        );
    }
    assert!(line.contains("TASK_STATE_SUBMITTED"), "{line}");
    // Open and quiet while nothing changes …
    reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut more = Vec::new();
    let quiet = reader.read_until(b'\0', &mut more);
    assert!(quiet.is_err(), "the stream ended by itself: {more:?}");
    reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // … until its token is removed.
    env.run("", &["token", "rm", "lead"]).ok();
    let mut rest = String::new();
    reader
        .read_to_string(&mut rest)
        .expect("the stream ends once its token is gone");
    assert!(!rest.contains("data: "), "{rest}");
}

/// The Python client of docs/a2a.md, quoted there whole from tests/a2a_python/example.py.
const EXAMPLE: &str = "tests/a2a_python/example.py";

/// docs/a2a.md shows the example file as it is, and the SDK version it names is the one
/// requirements.txt pins (the one the scenario runs).
#[test]
fn the_docs_quote_the_a2a_example_whole_with_the_pinned_sdk() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(root.join(EXAMPLE)).unwrap();
    let page = std::fs::read_to_string(root.join("docs/a2a.md")).unwrap();
    assert!(
        page.contains(&format!("```python\n{example}```\n")),
        "docs/a2a.md quotes {EXAMPLE} whole, as it is"
    );
    let requirements =
        std::fs::read_to_string(root.join("tests/a2a_python/requirements.txt")).unwrap();
    let pinned = requirements
        .lines()
        .find(|line| line.starts_with("a2a-sdk=="))
        .expect("the SDK is pinned");
    assert!(
        example.contains(&format!("pip install {pinned};")),
        "{pinned}"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("`{pinned}`")),
        "the README names {pinned}"
    );
}

/// The example of docs/a2a.md, run as its first line says against a hub of two projects,
/// hands `dev` a task in the project it names.
#[test]
fn the_docs_a2a_python_example_hands_dev_a_task() {
    let Some(python) =
        crate::common::python("the A2A example", "tests/a2a_python/requirements.txt")
    else {
        return;
    };
    let (env, served, _) = hub();
    env.project_beside("lead", "api");
    let you = add_token(&env, "you");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(EXAMPLE);
    let output = Command::new(&python)
        .arg(&script)
        .env("HUB", served.base().trim_end_matches('/'))
        .env("TOKEN", &you)
        .current_dir(env.work())
        .stdin(Stdio::null())
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the example failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(
        stdout.trim(),
        "default/T-1 TASK_STATE_SUBMITTED",
        "{stderr}"
    );
    let shown = env.run("dev", &["--json", "show", "1"]).json();
    assert_eq!(
        (&shown["from"], &shown["to"], &shown["status"]),
        (&json!("you"), &json!("dev"), &json!("pending"))
    );
    assert_eq!(shown["subject"], "Fix the date parser");
    assert_eq!(shown["body"], "2026-02-30 is accepted");
}
