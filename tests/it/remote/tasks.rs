//! Acting on a hub elsewhere: a task's life split between a local and a remote agent, the
//! remote hooks, `wait`, `mcp`, `watch` and `log` there, tokens refused, mapped directories.

use super::*;

#[test]
fn a_tasks_whole_life_is_split_between_a_local_and_a_remote_agent() {
    let hub = Hub::start();
    let agent = hub.agent();
    hub.env
        .run(
            "alice",
            &[
                "send",
                "--to",
                "codex",
                "--subject",
                "Fix the parser",
                "--review",
            ],
        )
        .ok();
    // The remote agent sees what a local one would, in the same words and the same JSON.
    let inbox = agent.run(&["inbox", "--peek"]);
    assert!(
        inbox.ok().contains("T-1 [normal] to do: Fix the parser"),
        "{}",
        inbox.stdout
    );
    assert_eq!(
        agent.run(&["--json", "show", "1"]).json(),
        hub.env.run("codex", &["--json", "show", "1"]).json()
    );
    agent.run(&["claim", "1"]).ok();
    agent.run(&["ask", "1", "--body", "Refuse, or clamp?"]).ok();
    let question = hub.env.run("alice", &["inbox"]);
    assert!(
        question.ok().contains("Refuse, or clamp?"),
        "{}",
        question.stdout
    );
    hub.env
        .run("alice", &["answer", "1", "--body", "Refuse."])
        .ok();
    let answered = agent.run(&["inbox"]);
    assert!(answered.ok().contains("Refuse."), "{}", answered.stdout);
    // A transition refused on the hub is refused here in the same words and exit code.
    let refused = agent.run(&["done", "1", "--result", "skipped the review"]);
    let local = hub
        .env
        .run("codex", &["done", "1", "--result", "skipped the review"]);
    assert_eq!(refused.fails(1), local.fails(1));
    agent.run(&["claim", "1"]).ok();
    agent
        .run(&["review", "1", "--body", "Invalid days refused"])
        .ok();
    hub.env
        .run(
            "alice",
            &["request-changes", "1", "--body", "Add a leap-year test"],
        )
        .ok();
    agent.run(&["claim", "1"]).ok();
    agent
        .run(&["review", "1", "--body", "Leap years tested"])
        .ok();
    hub.env.run("alice", &["approve", "1"]).ok();
    let board = hub.env.board("default");
    let task = task_in(&board["tasks"], 1);
    assert_eq!(task["status"], "completed");
    let kinds: Vec<&str> = task["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"question") && kinds.contains(&"answer"),
        "{kinds:?}"
    );
    // Each remote change is one line of the hub's log, by the token's agent.
    let claims = hub
        .env
        .activity("default")
        .into_iter()
        .filter(|line| line["actor"] == "codex" && line["action"] == "claim")
        .count();
    assert_eq!(claims, 3);
    let log = agent.run(&["log", "-n", "3"]);
    assert!(log.ok().contains("alice approve T-1"), "{}", log.stdout);
}

#[test]
fn the_remote_agents_hooks_show_its_inbox_and_keep_it_working() {
    let hub = Hub::start();
    let agent = hub.agent();
    let input = serde_json::json!({"cwd": agent.env.work(), "hook_event_name": "UserPromptSubmit"});
    let quiet = agent.hook("prompt", &input);
    assert_eq!(quiet.ok(), "", "nothing waits: nothing is added");
    hub.env
        .run(
            "alice",
            &[
                "send",
                "--to",
                "codex",
                "--subject",
                "Ship it",
                "--body",
                "now \u{1b}[2J",
            ],
        )
        .ok();
    let prompt = agent.hook("prompt", &input);
    let answer: Value = serde_json::from_str(prompt.ok()).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("you are codex"), "{context}");
    assert!(context.contains("Ship it"), "{context}");
    assert!(
        context.contains("| now \\u{1b}[2J"),
        "escaped and framed as on the hub: {context}"
    );
    let stop = agent.hook("stop", &serde_json::json!({"cwd": agent.env.work()}));
    let stop: Value = serde_json::from_str(stop.ok()).unwrap();
    assert_eq!(stop["decision"], "block", "{stop}");
    let active = agent.hook("stop", &serde_json::json!({"stop_hook_active": true}));
    assert_eq!(active.ok(), "", "a stop already active lets the agent stop");
    // Shown by a hook counts as seen on the hub.
    let board = hub.env.board("default");
    assert_eq!(task_in(&board["tasks"], 1)["delivery"]["state"], "seen");
}

/// A client wired by `setup --url` calls the hub's MCP tools over HTTP, where a call that
/// names no project acts on `default`; the hooks know the mapped project. So in any other
/// project the hook's words tell the agent (an interactive session nobody woke too) to name
/// it; in `default` they need not.
#[test]
fn the_remote_hook_tells_the_agent_to_name_a_mapped_project_to_its_tools() {
    let hub = Hub::start();
    let (agent, mine) = api_mapped_by_the_agent(&hub, "Name the project");
    let note = "Pass `project: api` to every baton tool";
    let prompt = agent.hook("prompt", &serde_json::json!({"cwd": mine}));
    let answer: Value = serde_json::from_str(prompt.ok()).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("Name the project"), "{context}");
    assert!(context.contains(note), "{context}");
    let stop = agent.hook("stop", &serde_json::json!({"cwd": mine}));
    let stop: Value = serde_json::from_str(stop.ok()).unwrap();
    assert_eq!(stop["decision"], "block", "{stop}");
    assert!(stop["reason"].as_str().unwrap().contains(note), "{stop}");

    // In `default`, what a tool acts on when it names none, nothing is added.
    hub.env
        .run("alice", &["send", "--to", "codex", "--subject", "Plain"])
        .ok();
    let prompt = agent.hook("prompt", &serde_json::json!({"cwd": agent.env.work()}));
    let answer: Value = serde_json::from_str(prompt.ok()).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("Plain"), "{context}");
    assert!(!context.contains("Pass `project"), "{context}");
}

#[test]
fn wait_on_the_remote_side_returns_when_the_hub_side_sends() {
    let hub = Hub::start();
    let agent = hub.agent();
    let timed_out = agent.run(&["wait", "--timeout", "1"]);
    timed_out.fails(5);
    let mut waiting = agent.spawn(&["wait", "--timeout", "60"], false);
    // Not a readiness wait, and no deadline to miss: `wait` says nothing when it has opened
    // its stream and looked, and it opens the stream before it looks, so a send before then
    // is found by the look and one after by the stream. The pause makes the stream the
    // likely one, which is what this test is about; the other is the first look's test.
    std::thread::sleep(Duration::from_millis(700));
    hub.env
        .run("alice", &["send", "--to", "codex", "--subject", "Wake up"])
        .ok();
    let (status, stdout) = waiting.finish();
    assert_eq!(status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("1 task for codex in default (T-1 to do)"),
        "{stdout}"
    );
}

#[test]
fn a_hub_that_cannot_be_reached_is_exit_6_and_hooks_stay_silent() {
    let closed = CLOSED[0];
    let agent = Agent::new(format!("http://{closed}"), "baton_nothing".into());
    let status = agent.run(&["status"]);
    let stderr = status.fails(6);
    assert!(
        stderr.starts_with(&format!("error: hub http://{closed} unreachable: ")),
        "{stderr}"
    );
    let started = Instant::now();
    let hook = agent.hook("prompt", &serde_json::json!({"cwd": agent.env.work()}));
    assert_eq!(hook.ok(), "", "nothing for the client to parse");
    assert_eq!(hook.stderr.lines().count(), 1, "{}", hook.stderr);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a hook does not hang"
    );
}

#[test]
fn doctor_on_the_agents_machine_checks_the_hub_too() {
    let hub = Hub::start();
    let agent = hub.agent();
    let healthy = agent.run(&["doctor"]);
    let report = healthy.ok();
    assert!(
        report.contains(&format!(
            "the hub at {} answers; the token acts as codex",
            hub.url()
        )),
        "{report}"
    );
    assert!(report.contains("project default is on the hub"), "{report}");
    let elsewhere = Agent {
        token: "baton_not_a_token".into(),
        ..hub.agent()
    };
    let refused = elsewhere.run(&["doctor"]);
    refused.fails(1);
    assert!(
        refused.stdout.contains("refused the token"),
        "{}",
        refused.stdout
    );
}

#[test]
fn a_token_removed_on_the_hub_is_refused_at_the_next_remote_command() {
    let hub = Hub::start();
    let agent = hub.agent();
    agent.run(&["status"]).ok();
    hub.env.run("", &["token", "rm", "codex"]).ok();
    let refused = agent.run(&["status"]);
    let stderr = refused.fails(1);
    assert!(stderr.contains("refused the token"), "{stderr}");
    assert!(!stderr.contains(&hub.token), "the token is never shown");
}

#[test]
fn only_the_tokens_agent_may_act_and_hub_only_commands_say_so() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    let agent = hub.agent();
    let other = agent.run(&["--as", "alice", "inbox"]);
    assert!(
        other
            .fails(1)
            .contains("this token acts as codex, not alice"),
        "{}",
        other.stderr
    );
    agent.run(&["--as", "codex", "status"]).ok();
    for command in [
        vec!["archive"],
        vec!["agent", "add", "codex", "--wake", "--", "true"],
        vec!["doctor", "--restore", "default"],
        vec!["project", "init", "--name", "api"],
        vec!["token", "list"],
        vec!["alert", "add", "phone", "--url", "https://ntfy.sh/topic"],
        vec!["alert", "list"],
    ] {
        let run = agent.run(&command);
        assert!(
            run.fails(1).contains("runs only on the hub's machine"),
            "{command:?}: {}",
            run.stderr
        );
    }
    assert!(!hub.env.home().join("projects/api").exists());
    assert!(!hub.env.home().join("alerts.json").exists());
    assert!(!agent.env.home().join("alerts.json").exists());
    // A name is checked before it becomes part of a URL path.
    for command in [
        vec!["wake", "../whoami"],
        vec!["agent", "add", "x/../../whoami"],
    ] {
        let run = agent.run(&command);
        assert!(
            run.fails(1).starts_with("error: invalid agent name"),
            "{command:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_mapped_directory_acts_on_its_project_and_isolation_holds_across_machines() {
    let hub = Hub::start();
    let hub_api = hub.env.work().join("api");
    std::fs::create_dir_all(&hub_api).unwrap();
    hub.env.init_project("alice", "api", &hub_api);
    let agent = hub.agent();
    let mine = agent.env.work().join("api-checkout");
    let elsewhere = agent.env.work().join("web");
    std::fs::create_dir_all(mine.join("src")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    agent
        .run(&["project", "map", "nosuch", mine.to_str().unwrap()])
        .fails(1);
    agent
        .run(&["project", "map", "api", mine.to_str().unwrap()])
        .ok();
    let sent = agent.run_in(
        &mine.join("src"),
        &["--json", "send", "--to", "alice", "--subject", "API work"],
    );
    assert_eq!(sent.json()["project"], "api");
    let here = agent.run_in(
        &elsewhere,
        &["--json", "send", "--to", "alice", "--subject", "Elsewhere"],
    );
    assert_eq!(here.json()["project"], "default");
    let outside = agent.run_in(&elsewhere, &["--project", "api", "board"]);
    assert!(
        outside.fails(2).contains("project api is bound to"),
        "{}",
        outside.stderr
    );
    assert_eq!(
        task_in(&hub.env.board("api")["tasks"], 1)["subject"],
        "API work"
    );
}

#[test]
fn baton_mcp_bridges_to_the_hubs_tools_in_the_mapped_project() {
    let hub = Hub::start();
    let (agent, mine) = api_mapped_by_the_agent(&hub, "Bridge me");
    let lines = [
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
        serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"inbox","arguments":{"peek":true}}}),
    ];
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut command = agent.command(&mine);
    command.arg("mcp");
    let run = agent.env.run_piped(command, &input);
    let frames: Vec<Value> = run
        .ok()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let initialized = frames
        .iter()
        .find(|frame| frame["id"] == 1)
        .expect("initialize answered");
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    let inbox = frames
        .iter()
        .find(|frame| frame["id"] == 2)
        .expect("inbox answered");
    let text = inbox["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let shown: Value = serde_json::from_str(text).expect("the inbox as JSON");
    assert_eq!(
        shown["project"], "api",
        "the mapped project's inbox: {inbox}"
    );
    assert_eq!(shown["tasks"][0]["subject"], "Bridge me");
}

#[test]
fn the_opencode_plugins_follower_pushes_hand_overs_from_a_remote_hub() {
    let hub = Hub::start();
    let agent = hub.agent();
    // A hand-over there before it starts is pushed at its first look: that push says it
    // follows the hub.
    hub.env
        .run("alice", &["send", "--to", "codex", "--subject", "Waiting"])
        .ok();
    let mut follow = agent.spawn(&["hook", "follow", "--client", "opencode"], true);
    let push = |what: &str| -> Value {
        let line = follow
            .stdout
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("a push for {what}"));
        serde_json::from_str(&line).unwrap()
    };
    assert_eq!(push("the waiting hand-over")["id"], 1);
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "Pushed across"],
        )
        .ok();
    let pushed = push("the hand-over");
    assert_eq!(pushed["id"], 2);
    assert_eq!(pushed["subject"], "Pushed across");
    assert_eq!(pushed["from"], "alice");
    eventually("the push is recorded as seen on the hub", || {
        let board = hub.env.board("default");
        (task_in(&board["tasks"], 2)["delivery"]["state"] == "seen").then_some(())
    });
    assert!(
        follow.stdout.recv_timeout(Duration::from_secs(1)).is_err(),
        "a hand-over is pushed once"
    );
    drop(follow.stdin.take());
    let (status, _) = follow.finish();
    assert!(status.success(), "it ends when the plugin's stdin closes");
}

#[test]
fn watch_and_log_follow_on_the_remote_side_see_the_hubs_changes() {
    let hub = Hub::start();
    let agent = hub.agent();
    let watch = agent.spawn(&["--json", "watch"], false);
    let boards = &watch.stdout;
    let first: Value =
        serde_json::from_str(&boards.recv_timeout(Duration::from_secs(20)).unwrap()).unwrap();
    assert_eq!(first, serde_json::json!([]));
    // A line already in the log is printed first: then it follows.
    hub.env.run("alice", &["note", "Before the follow"]).ok();
    let log = agent.spawn(&["log", "--follow"], false);
    let log_lines = &log.stdout;
    let before = log_lines
        .recv_timeout(Duration::from_secs(20))
        .expect("the log's last line");
    assert!(before.contains("Before the follow"), "{before}");
    hub.env
        .run("alice", &["send", "--to", "codex", "--subject", "Watched"])
        .ok();
    let next = eventually("the board again, with the task", || {
        let line = boards.recv_timeout(Duration::from_millis(200)).ok()?;
        let board: Value = serde_json::from_str(&line).unwrap();
        (!board.as_array()?.is_empty()).then_some(board)
    });
    assert_eq!(next[0]["subject"], "Watched");
    let sent = log_lines
        .recv_timeout(Duration::from_secs(20))
        .expect("the send's log line");
    assert!(sent.contains("alice send T-1"), "{sent}");
    assert!(
        log_lines.recv_timeout(Duration::from_secs(1)).is_err(),
        "each line once"
    );
}

#[test]
fn a_remote_agent_is_shown_its_own_mapped_directory_never_the_hubs_path() {
    let hub = Hub::start();
    let hub_api = hub.env.work().join("srv-api");
    std::fs::create_dir_all(&hub_api).unwrap();
    hub.env.init_project("alice", "api", &hub_api);
    hub.env
        .run_in(&hub_api, "alice", &["coordinator", "--human", "alice"])
        .ok();
    hub.env
        .run_in(
            &hub_api,
            "alice",
            &["send", "--to", "codex", "--subject", "Mapped"],
        )
        .ok();
    let human = add_token(&hub.env, "alice");
    let agent = hub.agent();
    let mine = agent.env.work().join("api-here");
    std::fs::create_dir_all(&mine).unwrap();
    agent
        .run(&["project", "map", "api", mine.to_str().unwrap()])
        .ok();
    let hub_path = hub_api.to_str().unwrap();
    let whoami = agent.run_in(&mine, &["whoami"]);
    assert!(
        whoami.ok().contains(mine.to_str().unwrap()) && !whoami.stdout.contains(hub_path),
        "{}",
        whoami.stdout
    );
    let shown = agent.run_in(&mine, &["--json", "project", "show"]).json();
    assert_eq!(shown["workspace"], mine.to_str().unwrap());
    let input = serde_json::json!({"cwd": mine});
    let mut command = agent.command(&mine);
    command.args(["hook", "prompt", "--client", "claude"]);
    let prompt = agent.env.run_piped(command, &input.to_string());
    let context = prompt.ok();
    assert!(
        context.contains(&format!("(workspace {})", mine.display())),
        "{context}"
    );
    assert!(!context.contains(hub_path), "the hub's path: {context}");
    // Over HTTP the hub sends its path to a human of the project alone.
    let projects = |token: &str| {
        let reply = hub.served.get("/api/v1/projects", token);
        assert_eq!(reply.status, 200);
        let listed: Value = serde_json::from_str(&reply.body).unwrap();
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|project| project["id"] == "api")
            .unwrap()["workspace"]
            .clone()
    };
    assert_eq!(projects(&hub.token), Value::Null, "an agent's token");
    assert_eq!(projects(&human), hub_path, "a human's token");
    let one = hub.served.get("/api/v1/projects/api", &hub.token);
    assert!(!one.body.contains(hub_path), "{}", one.body);
    let noted = hub.served.post(
        "/api/v1/projects/api/context",
        &hub.token,
        &serde_json::json!({"text": "a note"}),
    );
    assert_eq!(noted.status, 200, "{}", noted.body);
    assert!(!noted.body.contains(hub_path), "{}", noted.body);
}

/// Project `api` on the hub with one task `subject` sent to codex in it, and the agent's
/// machine with its own directory mapped to it: the agent, and that directory.
fn api_mapped_by_the_agent(hub: &Hub, subject: &str) -> (Agent, std::path::PathBuf) {
    let hub_api = hub.env.work().join("api");
    std::fs::create_dir_all(&hub_api).unwrap();
    hub.env.init_project("alice", "api", &hub_api);
    hub.env
        .run_in(
            &hub_api,
            "alice",
            &["send", "--to", "codex", "--subject", subject],
        )
        .ok();
    let agent = hub.agent();
    let mine = agent.env.work().join("api");
    std::fs::create_dir_all(&mine).unwrap();
    agent
        .run(&["project", "map", "api", mine.to_str().unwrap()])
        .ok();
    (agent, mine)
}
