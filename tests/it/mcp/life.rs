//! A task's whole life through MCP servers: rmcp's client, eight servers on one board, the
//! Python SDK.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::{ClientLifecycleMode, ServiceError};
use serde_json::{Value, json};

use super::{Server, TOOLS, mcp_command, task_numbers};
use crate::common::{TestEnv, baton_bin, eventually_seeing, files_only, thread_kinds};

#[tokio::test(flavor = "current_thread")]
async fn two_servers_walk_a_task_through_its_whole_life() {
    let env = TestEnv::new();
    let claude = Server::start(&env, &env.work(), "claude").await;
    let codex = Server::start(&env, &env.work(), "codex").await;

    // Each server acts as the identity it was started with.
    let inbox = codex.ok("inbox", json!({})).await;
    assert_eq!(inbox["agent"], "codex");
    assert_eq!(inbox["project"], "default");
    assert_eq!(inbox["tasks"], json!([]));

    let sent = claude
        .ok(
            "send",
            json!({
                "to": "codex",
                "subject": "Fix the date parser",
                "body": "It drops the time zone",
                "files": ["src/date.rs"],
                "priority": "high",
                "review": true,
            }),
        )
        .await;
    assert_eq!(sent["project"], "default");
    assert_eq!(sent["task"]["id"], 1);
    assert_eq!(sent["task"]["from"], "claude");
    assert_eq!(sent["task"]["to"], "codex");
    assert_eq!(sent["task"]["status"], "pending");
    assert_eq!(sent["task"]["priority"], "high");
    assert_eq!(sent["task"]["files"], json!(["src/date.rs"]));
    assert_eq!(sent["handovers"][0]["agent"], "codex");

    // The inbox is the CLI's, field for field.
    let inbox = codex.ok("inbox", json!({})).await;
    assert_eq!(task_numbers(&inbox["tasks"]), [1]);
    assert_eq!(inbox["tasks"][0]["reason"], "assigned");
    assert_eq!(inbox["tasks"][0]["waiting"], "claude");
    assert_eq!(inbox, env.run("codex", &["--json", "inbox"]).json());

    let claimed = codex.ok("claim", json!({"id": 1})).await;
    assert_eq!(claimed["task"]["status"], "working");
    assert!(claimed["task"]["lease_expires_at"].is_string());

    // A question goes to the sender's inbox; "T-1" is accepted as well as 1.
    let asked = codex
        .ok(
            "ask",
            json!({"id": "T-1", "body": "Which zone is the default?"}),
        )
        .await;
    assert_eq!(asked["task"]["status"], "input_required");
    assert_eq!(asked["handovers"][0]["agent"], "claude");
    let inbox = claude.ok("inbox", json!({})).await;
    assert_eq!(task_numbers(&inbox["tasks"]), [1]);
    assert_eq!(inbox["tasks"][0]["reason"], "question");
    assert_eq!(
        inbox["tasks"][0]["last_word"]["text"],
        "Which zone is the default?"
    );

    let answered = claude.ok("answer", json!({"id": 1, "body": "UTC"})).await;
    assert_eq!(answered["task"]["status"], "pending");
    codex.ok("claim", json!({"id": 1})).await;

    // Review, changes, review again, approval.
    let reviewed = codex.ok("review", json!({"id": 1, "body": "Ready"})).await;
    assert_eq!(reviewed["task"]["status"], "review_requested");
    let inbox = claude.ok("inbox", json!({})).await;
    assert_eq!(inbox["tasks"][0]["reason"], "review_requested");

    let sent_back = claude
        .ok("request_changes", json!({"id": 1, "body": "Add a test"}))
        .await;
    assert_eq!(sent_back["task"]["status"], "changes_requested");
    let inbox = codex.ok("inbox", json!({})).await;
    assert_eq!(inbox["tasks"][0]["reason"], "changes_requested");
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Add a test");

    codex.ok("claim", json!({"id": 1})).await;
    codex
        .ok("review", json!({"id": 1, "body": "Test added"}))
        .await;

    // Only the reviewer approves; the refusal is the CLI's message, as a tool result.
    let refusal = codex.refused("approve", json!({"id": 1})).await;
    let cli = env.run("codex", &["approve", "1"]);
    assert_eq!(refusal, cli.fails(1).trim_end());
    assert!(
        refusal.starts_with("error: T-1 is review_requested"),
        "{refusal}"
    );

    let approved = claude
        .ok("approve", json!({"id": 1, "body": "Thanks"}))
        .await;
    assert_eq!(approved["task"]["status"], "completed");
    assert_eq!(approved["task"]["turn"], Value::Null);

    // Nothing moves a finished task.
    let refusal = codex.refused("done", json!({"id": 1, "result": "x"})).await;
    assert_eq!(
        refusal,
        env.run("codex", &["done", "1", "--result", "x"])
            .fails(1)
            .trim_end()
    );

    // `show` and `board` answer exactly what the CLI's --json prints.
    let shown = claude.ok("show", json!({"id": 1})).await;
    assert_eq!(shown, env.run("claude", &["--json", "show", "1"]).json());
    assert_eq!(
        thread_kinds(&shown),
        [
            "claim",
            "question",
            "answer",
            "claim",
            "review_request",
            "changes_request",
            "claim",
            "review_request",
            "approval"
        ]
    );
    let board = codex.ok("board", json!({"all": true})).await;
    assert_eq!(
        board["tasks"],
        env.run("codex", &["--json", "board", "--all"]).json()
    );
    let open = codex.ok("board", json!({})).await;
    assert_eq!(open["tasks"], json!([]));
    let completed = codex.ok("board", json!({"status": "completed"})).await;
    assert_eq!(task_numbers(&completed["tasks"]), [1]);

    // The activity log holds every step, by the right actor.
    let steps: Vec<(String, String)> = env
        .activity("default")
        .iter()
        .map(|line| {
            (
                line["actor"].as_str().unwrap().to_string(),
                line["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("claude", "send"),
        ("codex", "claim"),
        ("codex", "ask"),
        ("claude", "answer"),
        ("codex", "claim"),
        ("codex", "review"),
        ("claude", "request_changes"),
        ("codex", "claim"),
        ("codex", "review"),
        ("claude", "approve"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(actor, action)| (actor.to_string(), action.to_string()))
        .collect();
    assert_eq!(steps, expected);

    // A message, read through the inbox: peeking leaves it unread, reading marks it read.
    let sent = claude
        .ok(
            "message",
            json!({"to": "codex", "text": "Thanks for the fix\nThe tests read well."}),
        )
        .await;
    assert_eq!(sent["project"], "default");
    assert_eq!(sent["message"]["from"], "claude");
    assert_eq!(sent["message"]["to"], "codex");
    assert_eq!(sent["message"]["type"], "text");
    assert_eq!(sent["message"]["summary"], "Thanks for the fix");
    let bodies = |inbox: &Value| -> Vec<String> {
        inbox["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|message| message["body"].as_str().unwrap().to_string())
            .collect()
    };
    let peeked = codex.ok("inbox", json!({"peek": true})).await;
    assert_eq!(
        bodies(&peeked),
        ["Thanks for the fix\nThe tests read well."]
    );
    let read = codex.ok("inbox", json!({})).await;
    assert_eq!(read["messages"], peeked["messages"]);
    let again = codex.ok("inbox", json!({})).await;
    assert_eq!(again["messages"], json!([]));
    assert_eq!(again, env.run("codex", &["--json", "inbox"]).json());

    // A broadcast reaches everyone but its sender; refusals are the CLI's.
    codex
        .ok(
            "message",
            json!({"to": "@all", "text": "Release at five", "type": "shutdown_request"}),
        )
        .await;
    let inbox = claude.ok("inbox", json!({"peek": true})).await;
    assert!(
        inbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["body"] == "Release at five"
                && message["type"] == "shutdown_request"),
        "{inbox}"
    );
    let refusal = claude
        .refused("message", json!({"to": "nobody", "text": "Hello"}))
        .await;
    assert_eq!(
        refusal,
        env.run("claude", &["msg", "--to", "nobody", "Hello"])
            .fails(1)
            .trim_end()
    );
    let refusal = claude
        .refused(
            "message",
            json!({"to": "codex", "text": "Hi", "type": "notification"}),
        )
        .await;
    assert!(
        refusal.starts_with("error: notifications are written by baton itself"),
        "{refusal}"
    );

    let agents = claude.ok("agents", json!({})).await;
    assert_eq!(agents["project"], "default");
    assert_eq!(agents["problems"], json!([]));
    let mut names: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["claude", "codex"]);

    claude.stop().await;
    codex.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_other_transitions_work_and_refusals_are_tool_results() {
    let env = TestEnv::new();
    env.register(&["gemini"]);
    let claude = Server::start(&env, &env.work(), "claude").await;
    let codex = Server::start(&env, &env.work(), "codex").await;
    codex.ok("inbox", json!({})).await;

    let first = claude
        .ok("send", json!({"to": "codex", "subject": "One"}))
        .await;
    assert_eq!(first["task"]["id"], 1);
    codex.ok("claim", json!({"id": 1})).await;
    let released = codex.ok("release", json!({"id": 1})).await;
    assert_eq!(released["task"]["status"], "pending");
    let done = codex.ok("done", json!({"id": 1, "result": "Did it"})).await;
    assert_eq!(done["task"]["status"], "completed");
    assert_eq!(done["task"]["result"], "Did it");

    claude
        .ok("send", json!({"to": "codex", "subject": "Two"}))
        .await;
    let failed = codex
        .ok("fail", json!({"id": 2, "reason": "Cannot reach it"}))
        .await;
    assert_eq!(failed["task"]["status"], "failed");

    claude
        .ok(
            "send",
            json!({"to": "codex", "subject": "Three", "after": [1]}),
        )
        .await;
    let reassigned = claude
        .ok(
            "reassign",
            json!({"id": 3, "to": "gemini", "body": "Yours now"}),
        )
        .await;
    assert_eq!(reassigned["task"]["to"], "gemini");
    assert_eq!(reassigned["task"]["after"], json!([1]));
    let canceled = claude
        .ok("cancel", json!({"id": 3, "reason": "Not needed"}))
        .await;
    assert_eq!(canceled["task"]["status"], "canceled");

    // Refusals carry the CLI's lines, hint included.
    let refusal = codex.refused("claim", json!({"id": 9})).await;
    assert_eq!(
        refusal,
        env.run("codex", &["claim", "9"]).fails(1).trim_end()
    );
    let refusal = claude
        .refused("send", json!({"to": "nobody", "subject": "Hello"}))
        .await;
    assert_eq!(
        refusal,
        env.run("claude", &["send", "--to", "nobody", "--subject", "Hello"])
            .fails(1)
            .trim_end()
    );
    assert!(refusal.contains("\nhint: "), "{refusal}");
    let refusal = codex.refused("ask", json!({"id": 1, "body": "Why?"})).await;
    assert!(refusal.starts_with("error: T-1 is completed"), "{refusal}");

    // Bad arguments are tool results too, not protocol errors.
    let refusal = codex.refused("claim", json!({"id": "soon"})).await;
    assert!(refusal.contains("`soon` is not a task id"), "{refusal}");
    let refusal = codex.refused("claim", json!({})).await;
    assert!(refusal.contains("id"), "{refusal}");
    let refusal = codex.refused("board", json!({"status": "sleeping"})).await;
    assert!(refusal.contains("sleeping"), "{refusal}");

    // An unknown tool is the protocol's invalid-params error.
    let error = codex
        .client
        .call_tool(CallToolRequestParams::new("add_wake_command"))
        .await
        .expect_err("an unknown tool is a protocol error");
    match error {
        ServiceError::McpError(error) => assert_eq!(error.code.0, -32602, "{error:?}"),
        other => panic!("unexpected error {other:?}"),
    }

    claude.stop().await;
    codex.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_bound_project_refuses_servers_outside_its_workspace() {
    let env = TestEnv::new();
    let api = env.project_beside("claude", "api");
    env.register(&["codex"]);

    // Inside the workspace the project follows the working directory.
    let inside = Server::start(&env, &api, "claude").await;
    let sent = inside
        .ok("send", json!({"to": "codex", "subject": "In api"}))
        .await;
    assert_eq!(sent["project"], "api");
    let board = inside.ok("board", json!({})).await;
    assert_eq!(board["tasks"][0]["subject"], "In api");
    // The `project` argument picks another project.
    let board = inside.ok("board", json!({"project": "default"})).await;
    assert_eq!(board["tasks"], json!([]));

    // Outside, naming the project is refused with the CLI's exit-2 message.
    let outside = Server::start(&env, &env.work(), "codex").await;
    let refusal = outside.refused("board", json!({"project": "api"})).await;
    let cli = env.run("codex", &["--project", "api", "board"]);
    assert_eq!(refusal, cli.fails(2).trim_end());
    assert!(
        refusal.starts_with("error: project api is bound to "),
        "{refusal}"
    );
    let refusal = outside
        .refused("claim", json!({"id": 1, "project": "api"}))
        .await;
    assert!(
        refusal.starts_with("error: project api is bound to "),
        "{refusal}"
    );
    // Without the argument it works in the default project, which has no task 1.
    let refusal = outside.refused("claim", json!({"id": 1})).await;
    assert!(
        refusal.contains("no task T-1 in project default"),
        "{refusal}"
    );
    let refusal = outside
        .refused("inbox", json!({"project": "nowhere"}))
        .await;
    assert!(
        refusal.starts_with("error: project nowhere does not exist"),
        "{refusal}"
    );

    // A server started for the project (`--project api`) from outside is refused too.
    let pinned = Server::start_with(
        mcp_command(&env, &env.work(), "codex", &["--project", "api"]),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let refusal = pinned.refused("inbox", json!({})).await;
    assert_eq!(refusal, cli.fails(2).trim_end());

    // Nothing leaked into the api board from outside.
    let board = env.board("api");
    assert_eq!(board["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(board["tasks"][0]["status"], "pending");

    inside.stop().await;
    outside.stop().await;
    pinned.stop().await;
}

/// A client that prefers the stateless 2026-07-28 era probes `server/discover` first, as
/// Claude Code does. baton refuses the probe (channel pushes are dropped on that era, see
/// CLIENTS.md), so the client falls back to `initialize` on 2025-11-25 and works as usual.
/// (Until issue 16 this test asserted that the stateless era was served.)
#[tokio::test(flavor = "current_thread")]
async fn probing_clients_fall_back_from_discover_to_initialize() {
    let env = TestEnv::new();
    let auto = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let claude =
        Server::start_with(mcp_command(&env, &env.work(), "claude", &[]), auto.clone()).await;
    assert_eq!(claude.protocol_version(), "2025-11-25");
    // An initialize-era client on the same board at the same time.
    let codex = Server::start(&env, &env.work(), "codex").await;
    assert_eq!(codex.protocol_version(), "2025-11-25");
    codex.ok("inbox", json!({})).await;

    let tools = claude.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), TOOLS.len());
    claude
        .ok("send", json!({"to": "codex", "subject": "Probed"}))
        .await;
    codex.ok("claim", json!({"id": 1})).await;
    codex.ok("review", json!({"id": 1})).await;
    let approved = claude.ok("approve", json!({"id": 1})).await;
    assert_eq!(approved["task"]["status"], "completed");
    let refusal = claude.refused("approve", json!({"id": 1})).await;
    assert!(refusal.starts_with("error: T-1 is completed"), "{refusal}");

    claude.stop().await;
    codex.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_identity_can_come_from_the_environment() {
    let env = TestEnv::new();
    let mut command = mcp_command(&env, &env.work(), "", &[]);
    command.env("BATON_AGENT", "gemini");
    let gemini = Server::start_with(command, ClientLifecycleMode::Initialize).await;
    let inbox = gemini.ok("inbox", json!({})).await;
    assert_eq!(inbox["agent"], "gemini");
    gemini.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn work_handed_over_through_mcp_wakes_the_receiver() {
    let env = TestEnv::new();
    let work = env.work();
    env.init_project("", "app", &work);
    // The stand-in agent of tests/it/wake.rs: it claims and completes what it finds.
    let fake_agent = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fake-agent.sh");
    env.run(
        "",
        &[
            "agent",
            "add",
            "worker",
            "--wake",
            "--",
            "bash",
            fake_agent.to_str().unwrap(),
        ],
    )
    .ok();
    let record = env.root.path().join("fake-agent.record");
    let start = |extra: &[&str], stderr: &Path| {
        let mut command = mcp_command(&env, &work, "lead", extra);
        // The woken agent inherits these through the supervisor the server starts.
        command
            .env("FAKE_AGENT_RECORD", &record)
            .env("FAKE_AGENT_BATON", baton_bin());
        let stderr = std::fs::File::create(stderr).unwrap();
        Server::start_quiet(command, ClientLifecycleMode::Initialize, stderr)
    };

    // With --no-wake the server hands work over without waking anyone.
    let quiet_log = env.root.path().join("quiet.stderr");
    let quiet = start(&["--no-wake"], &quiet_log).await;
    quiet
        .ok("send", json!({"to": "worker", "subject": "Not yet"}))
        .await;
    quiet.stop().await;
    let said = std::fs::read_to_string(&quiet_log).unwrap();
    assert!(!said.contains("woke"), "{said}");
    assert_eq!(env.board("app")["tasks"][0]["status"], "pending");

    // Without it, handing over work starts the receiver's wake command, which does it all.
    let log = env.root.path().join("lead.stderr");
    let lead = start(&[], &log).await;
    let sent = lead
        .ok("send", json!({"to": "worker", "subject": "Now"}))
        .await;
    assert_eq!(sent["task"]["id"], 2);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(said.contains("woke worker for T-2 (log: "), "{said}");
    eventually_seeing(
        Duration::from_secs(60),
        "the woken agent finishing both tasks",
        || {
            let statuses: Vec<String> = env.board("app")["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|task| task["status"].as_str().unwrap().to_string())
                .collect();
            // Done once the tasks are, and the supervisor has ended (it leaves the home alone).
            let wake_log =
                std::fs::read_to_string(env.home().join("wake/worker.log")).unwrap_or_default();
            if statuses == ["completed", "completed"]
                && wake_log.contains("supervisor of worker ends")
            {
                return Ok(());
            }
            Err(format!(
                "{statuses:?}\n{}",
                std::fs::read_to_string(&record).unwrap_or_default()
            ))
        },
    );
    let shown = lead.ok("show", json!({"id": 2})).await;
    assert_eq!(shown["result"], "done by worker");
    let record = std::fs::read_to_string(&record).unwrap();
    assert!(record.contains("agent=worker"), "{record}");
    lead.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn eight_servers_on_one_board_lose_nothing() {
    const SERVERS: usize = 8;
    const TASKS_EACH: usize = 12;
    let env = TestEnv::new();
    env.register(&["sink"]);
    let mut servers = Vec::new();
    for number in 0..SERVERS {
        let agent = format!("agent{number}");
        // Lock waits are announced on stderr; keep the test output readable.
        let server = Server::start_quiet(
            mcp_command(&env, &env.work(), &agent, &[]),
            ClientLifecycleMode::Initialize,
            Stdio::null(),
        )
        .await;
        servers.push((agent, server));
    }
    let mut running = tokio::task::JoinSet::new();
    for (agent, server) in servers {
        running.spawn(async move {
            let mut sent = Vec::new();
            for index in 0..TASKS_EACH {
                let subject = format!("{agent} #{index}");
                let changed = server
                    .ok("send", json!({"to": "sink", "subject": subject}))
                    .await;
                sent.push((changed["task"]["id"].as_u64().unwrap(), subject));
            }
            server.stop().await;
            sent
        });
    }
    let mut reported = Vec::new();
    while let Some(result) = running.join_next().await {
        reported.extend(result.expect("a server's client task"));
    }
    let total = SERVERS * TASKS_EACH;
    assert_eq!(reported.len(), total);

    // Every task is on the board once, under the id its sender was told, ids dense.
    let board = env.board("default");
    assert_eq!(board["next_id"], total as u64 + 1);
    let tasks = board["tasks"].as_array().unwrap();
    let mut on_board: Vec<(u64, String)> = tasks
        .iter()
        .map(|task| {
            (
                task["id"].as_u64().unwrap(),
                task["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    on_board.sort();
    reported.sort();
    assert_eq!(on_board, reported);
    let ids: Vec<u64> = on_board.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=total as u64).collect::<Vec<_>>());
    for task in tasks {
        let subject = task["subject"].as_str().unwrap();
        assert!(
            subject.starts_with(task["from"].as_str().unwrap()),
            "{task}"
        );
    }

    // One activity line per send, by the sender, naming its task.
    let mut logged: Vec<(u64, String)> = env
        .activity("default")
        .iter()
        .filter(|line| line["action"] == "send")
        .map(|line| {
            (
                line["task"].as_u64().unwrap(),
                line["actor"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    logged.sort();
    let mut expected: Vec<(u64, String)> = tasks
        .iter()
        .map(|task| {
            (
                task["id"].as_u64().unwrap(),
                task["from"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(logged, expected);
    assert_eq!(env.inbox_ids("sink").len(), total);
}

/// The scenario driven by the official Python SDK (`mcp` from PyPI, pinned in
/// tests/mcp_python/requirements.txt). `.ci/run` installs it into a virtual environment and
/// sets `BATON_TEST_PYTHON` to that environment's python; this test then must pass.
#[test]
fn the_python_sdk_drives_the_same_scenario() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let Some(python) = crate::common::python(
        "the Python MCP client scenario",
        "tests/mcp_python/requirements.txt",
    ) else {
        return;
    };
    let env = TestEnv::new();
    let api = env.project_beside("claude", "api");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/scenario.py");
    let output = Command::new(&python)
        .arg(&script)
        .arg(baton_bin())
        .current_dir(env.work())
        .env("BATON_HOME", env.home())
        .envs(env.store_env())
        .env("BATON_NOTIFY", "0")
        .env_remove("BATON_AGENT")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", PathBuf::from(&python).display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python scenario failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    print!("{stdout}");
    assert!(stdout.contains("python scenario: ok"), "{stdout}");

    // What the Python clients did is on disk, as the CLI sees it.
    let shown = env.run("claude", &["--json", "show", "1"]).json();
    assert_eq!(shown["status"], "completed");
    assert_eq!(shown["from"], "claude");
    assert_eq!(shown["to"], "codex");
    assert_eq!(
        env.actions("default"),
        [
            "send",
            "claim",
            "ask",
            "answer",
            "claim",
            "review",
            "request_changes",
            "claim",
            "review",
            "approve"
        ]
    );
    // The refused call left the api project untouched.
    let api_board = env
        .run_in(&api, "claude", &["--json", "board", "--all"])
        .json();
    assert_eq!(api_board, json!([]));
}
