//! A hub on another machine (SPEC section 13): two private homes stand for two machines, one
//! serving its board on loopback (`baton serve`), the other acting on it with `BATON_URL`
//! and `BATON_TOKEN`, through the real binaries.

#[cfg(unix)]
use std::path::Path;
use std::process::Stdio;
#[cfg(unix)]
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::Value;

#[cfg(unix)]
use crate::common::http::free_address;
use crate::common::http::{CLOSED, Served, add_token};
use crate::common::remote::{Agent, Hub, HubHome};
use crate::common::{TestEnv, eventually, files_only, run, task_in};

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
    let hub_api = hub.env.work().join("api");
    std::fs::create_dir_all(&hub_api).unwrap();
    hub.env.init_project("alice", "api", &hub_api);
    hub.env
        .run_in(
            &hub_api,
            "alice",
            &["send", "--to", "codex", "--subject", "Name the project"],
        )
        .ok();
    let agent = hub.agent();
    let mine = agent.env.work().join("api");
    std::fs::create_dir_all(&mine).unwrap();
    agent
        .run(&["project", "map", "api", mine.to_str().unwrap()])
        .ok();
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

/// A wake command that appends one line per run to `runs` of the agent's machine.
#[cfg(unix)]
fn counting_wake(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let runs = env.root.path().join("runs.txt");
    let script = env.root.path().join("wake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"run as $BATON_AGENT on ${{BATON_URL:-nowhere}}\" >> '{}'\n\
             cut -d' ' -f6 /proc/$$/stat > '{}.session'\n",
            runs.display(),
            runs.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, runs)
}

#[cfg(unix)]
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(unix)]
#[test]
fn listen_wakes_once_per_burst_and_catches_up_after_the_hub_restarts() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.run("", &["agent", "add", "codex"]).ok();
    let token = add_token(&env, "codex");
    let address = free_address();
    let agent = Agent::new(format!("http://{address}"), token);
    let (script, runs) = counting_wake(&agent.env);
    // Started before its hub, as a service at boot may be: it waits for the hub.
    let mut listen = agent.spawn(&["listen", "--wake", "--", script.to_str().unwrap()], false);
    listen.said("trying again in 1s");
    assert!(
        listen.child.try_wait().unwrap().is_none(),
        "listen waits for its hub"
    );
    let server = Served::start_at(&env, "alice", &address, &[], &[]);
    // It has nothing to do until work arrives; then a burst wakes it once.
    listen.said(&format!(
        "listening to the hub at http://{address} for codex"
    ));
    // The window in which a run for nothing would show: waited out, it is the test.
    std::thread::sleep(Duration::from_secs(2));
    assert!(lines_of(&runs).is_empty(), "woken with nothing to do");
    // One burst whatever the machine's load: the three sends wait on the board lock and
    // commit one after the other the moment it is let go (sent one by one, a loaded
    // machine could space them past the burst's 300 ms).
    env.run("alice", &["status"]).ok();
    let held = crate::common::HeldLock::on(&env.project_dir("default").join("board.lock"));
    let mut sends: Vec<Child> = ["One", "Two", "Three"]
        .iter()
        .map(|subject| {
            env.command(&env.work())
                .args([
                    "--as",
                    "alice",
                    "send",
                    "--to",
                    "codex",
                    "--subject",
                    subject,
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Each says when it waits on the lock (SPEC section 2); then all three are waiting. Its
    // stderr is read to the end, so that nothing it says after meets a closed pipe.
    let said: Vec<_> = sends.iter_mut().map(crate::common::stderr_lines).collect();
    for lines in &said {
        crate::common::line_with(lines, "waiting for the board lock");
    }
    drop(held);
    crate::common::all_succeed(sends);
    eventually("the burst woke codex", || {
        (lines_of(&runs).len() == 1).then_some(())
    });
    // The window in which a second run would show: waited out, it is the test.
    std::thread::sleep(Duration::from_secs(2));
    let after_burst = lines_of(&runs);
    assert_eq!(
        after_burst.len(),
        1,
        "one run for one burst: {after_burst:?}"
    );
    assert_eq!(after_burst[0], format!("run as codex on http://{address}"));
    // The run has a session of its own, not listen's.
    let session_of = |stat: String| stat.split(' ').nth(5).map(str::to_string);
    let listen_session =
        session_of(std::fs::read_to_string(format!("/proc/{}/stat", listen.id())).unwrap());
    let run_session = std::fs::read_to_string(runs.with_extension("txt.session")).unwrap();
    assert_ne!(Some(run_session.trim().to_string()), listen_session);
    let board = env.board("default");
    for id in 1..=3 {
        assert_eq!(task_in(&board["tasks"], id)["delivery"]["state"], "woken");
    }
    // The hub stops; work arrives on its machine meanwhile; it starts again at the same
    // address, and the listener catches up once.
    server.kill();
    env.run(
        "alice",
        &["send", "--to", "codex", "--subject", "While down"],
    )
    .ok();
    // The listener has seen its hub go before it comes back.
    listen.said("connecting again in");
    let server = Served::start_at(&env, "alice", &address, &[], &[]);
    let started = Instant::now();
    eventually("the listener caught up", || {
        (lines_of(&runs).len() == 2).then_some(())
    });
    // The window in which a second catch-up would show: waited out, it is the test.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        lines_of(&runs).len(),
        2,
        "caught up once, after {:?}",
        started.elapsed()
    );
    let board = env.board("default");
    assert_eq!(task_in(&board["tasks"], 4)["delivery"]["state"], "woken");
    drop(listen);
    server.kill();
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
    let hub_api = hub.env.work().join("api");
    std::fs::create_dir_all(&hub_api).unwrap();
    hub.env.init_project("alice", "api", &hub_api);
    hub.env
        .run_in(
            &hub_api,
            "alice",
            &["send", "--to", "codex", "--subject", "Bridge me"],
        )
        .ok();
    let agent = hub.agent();
    let mine = agent.env.work().join("api");
    std::fs::create_dir_all(&mine).unwrap();
    agent
        .run(&["project", "map", "api", mine.to_str().unwrap()])
        .ok();
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
fn a_hub_answers_a_host_name_only_when_serve_allows_it() {
    let env = TestEnv::new();
    let token = add_token(&env, "codex");
    let served = Served::start_with(&env, "alice", &["--allow-host", "BuildBox.lan"]);
    let reply = |host: &str| {
        let headers = [
            ("Host".to_string(), host.to_string()),
            ("Authorization".to_string(), format!("Bearer {token}")),
        ];
        crate::common::http::send(&served.address, "GET", "/api/v1/whoami", &headers, None)
    };
    let ask = |host: &str| reply(host).status;
    assert_eq!(ask(&format!("buildbox.lan:{}", served.port())), 200);
    assert_eq!(ask("buildbox.lan"), 200, "a proxy in front on port 80");
    let refused = reply(&format!("other.lan:{}", served.port()));
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json()["hint"],
        "if `other.lan` is this server's name, start it with `baton serve --allow-host other.lan`"
    );
    let hostile = reply("`evil`;<b>.lan:80");
    assert_eq!(hostile.status, 403);
    assert!(
        hostile.json()["hint"]
            .as_str()
            .unwrap()
            .ends_with("`baton serve --allow-host NAME`"),
        "{}",
        hostile.body
    );
    assert!(!hostile.body.contains("evil"), "{}", hostile.body);
    let refused = env.run("alice", &["serve", "--allow-host", "http://x:1"]);
    refused.fails(1);
}

/// Forwards every connection to `127.0.0.1:PORT` on to `target`, as a port forward or a
/// proxy in front of a hub does: the hub then sees a `Host` it does not answer by itself.
fn forward_to(target: String) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = std::net::TcpStream::connect(&target) else {
                continue;
            };
            let (mut client_in, mut server_out) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut client_in, &mut server_out);
                let _ = server_out.shutdown(std::net::Shutdown::Write);
            });
            let (mut server_in, mut client_out) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server_in, &mut client_out);
                let _ = client_out.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    port
}

#[test]
fn a_remote_command_refused_for_its_host_says_how_the_hub_allows_the_name() {
    let hub = Hub::start();
    let port = forward_to(hub.served.address.clone());
    let mut agent = hub.agent();
    agent.url = format!("http://127.0.0.1:{port}");
    let error = agent.run(&["whoami"]).fails(1).to_string();
    assert!(
        error.contains(&format!(
            "the hub at http://127.0.0.1:{port} refused the name it was reached by"
        )),
        "{error}"
    );
    assert!(
        error.contains("on the hub's machine, start it with `baton serve --allow-host 127.0.0.1`"),
        "{error}"
    );

    // What the hint says works.
    let Hub { env, served, token } = hub;
    drop(served);
    let served = Served::start_with(&env, "alice", &["--allow-host", "127.0.0.1"]);
    agent.url = format!("http://127.0.0.1:{}", forward_to(served.address.clone()));
    agent.token = token;
    assert!(agent.run(&["whoami"]).ok().contains("codex"));
}

/// What Gemini CLI does to every string of its settings when it loads them: `$VAR`,
/// `${VAR}` and `${VAR:-default}` become the variable's value (an unset one stays as it is).
#[cfg(unix)]
fn as_gemini_expands(line: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, default, used) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => {
                    let body = &inner[..end];
                    let (name, default) = match body.split_once(":-") {
                        Some((name, default)) => (name, Some(default)),
                        None => (body, None),
                    };
                    (name, default, end + 2)
                }
                None => ("", None, 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], None, end)
        };
        let value = vars
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
            .or(default.map(str::to_string));
        match value {
            Some(value) if !name.is_empty() => out.push_str(&value),
            _ => out.push_str(&rest[at..at + 1 + used]),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The prompt hook line a remote setup writes for `client`, as the client runs it: in its
/// own environment (the token's variable, nothing of baton's), after what the client does to
/// the line. Returns the line the shell got, and the hook's answer.
#[cfg(unix)]
fn run_remote_prompt_hook(hub: &Hub, client: &str) -> (String, Value) {
    let machine = TestEnv::new();
    let url = hub.url();
    machine
        .run_env(
            "",
            &[
                "setup",
                "--client",
                client,
                "--url",
                &url,
                "--token-env",
                "HUB_TOKEN",
            ],
            &[("HUB_TOKEN", &hub.token)],
        )
        .ok();
    let user = machine.root.path().join("user-home");
    let (settings, event) = match client {
        "claude" => (user.join(".claude/settings.json"), "UserPromptSubmit"),
        "gemini" => (user.join(".gemini/settings.json"), "BeforeAgent"),
        other => panic!("no prompt hook file known for {other}"),
    };
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    let written = settings["hooks"][event][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!written.contains(&hub.token), "{written}");
    let line = if client == "gemini" {
        as_gemini_expands(&written, &[("HUB_TOKEN", &hub.token)])
    } else {
        written
    };
    let mut shell = Command::new("sh");
    shell
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", &user)
        .env("BATON_HOME", machine.home())
        .env("HUB_TOKEN", &hub.token)
        .current_dir(machine.work())
        .arg("-c")
        .arg(&line);
    let answer = machine.run_piped(
        shell,
        &serde_json::json!({"cwd": machine.work()}).to_string(),
    );
    (line, serde_json::from_str(answer.ok()).unwrap())
}

#[cfg(unix)]
#[test]
fn the_hook_line_remote_setup_writes_shows_the_hubs_inbox_with_the_token_from_its_variable() {
    let hub = Hub::start();
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "Through the wiring"],
        )
        .ok();
    for client in ["claude", "gemini"] {
        let (line, answer) = run_remote_prompt_hook(&hub, client);
        // What the shell is given is its argument, in `ps` for anyone to read.
        assert!(!line.contains(&hub.token), "{client}: {line}");
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("{client}: {answer}"));
        assert!(
            context.contains("Through the wiring"),
            "{client}: {context}"
        );
    }
    assert_eq!(
        as_gemini_expands("a $X ${X} ${Y:-d} $Z ${Z}", &[("X", "1")]),
        "a 1 1 d $Z ${Z}"
    );
}

#[test]
fn a_token_named_by_baton_token_env_is_read_from_that_variable() {
    let hub = Hub::start();
    let agent = hub.agent();
    let run = |vars: &[(&str, &str)]| {
        let mut command = agent.env.command(&agent.env.work());
        command
            .env("BATON_URL", &agent.url)
            .env_remove("BATON_TOKEN")
            .envs(vars.iter().copied())
            .arg("whoami");
        run(&mut command)
    };
    let named = run(&[("BATON_TOKEN_ENV", "HUB_TOKEN"), ("HUB_TOKEN", &hub.token)]);
    assert!(named.ok().contains("codex"), "{}", named.stdout);
    let unset = run(&[("BATON_TOKEN_ENV", "HUB_TOKEN")]);
    assert!(
        unset
            .fails(1)
            .contains("BATON_TOKEN_ENV names HUB_TOKEN, which is not set"),
        "{}",
        unset.stderr
    );
    let bad = run(&[("BATON_TOKEN_ENV", "$(touch x)")]);
    assert!(
        bad.fails(1).contains("must name a variable"),
        "{}",
        bad.stderr
    );
}

/// The time `seconds` from now (before it, for a negative number), as baton writes times:
/// for a claim made in the past, whose lease is then near its end.
pub fn seconds_from_now(seconds: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let at = now.as_secs() as i64 + seconds;
    let (days, rest) = (at.div_euclid(86_400), at.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        now.subsec_millis()
    )
}

/// Sets the project's lease in its `project.json` (SPEC section 3).
fn set_lease_minutes(env: &TestEnv, project: &str, minutes: u64) {
    let path = format!("projects/{project}/project.json");
    let mut value: Value = serde_json::from_str(&env.hub_text(&path).unwrap()).unwrap();
    value["settings"]["lease_minutes"] = minutes.into();
    env.write_hub_text(&path, &serde_json::to_string_pretty(&value).unwrap());
}

/// A hub where codex has claimed T-1 50 seconds ago under a one-minute lease: 10 seconds
/// are left, less than half, so any renewal would move it.
fn hub_with_a_claim_near_its_end() -> (TestEnv, String, String) {
    let HubHome { env, token } = HubHome::new();
    env.send("alice", "codex", "Long job", &["--no-wake"]);
    set_lease_minutes(&env, "default", 1);
    env.run_env(
        "codex",
        &["claim", "1"],
        &[("BATON_NOW", &seconds_from_now(-50))],
    )
    .ok();
    let lease = task_in(&env.board("default")["tasks"], 1)["lease_expires_at"]
        .as_str()
        .unwrap()
        .to_string();
    (env, token, lease)
}

fn lease_of(env: &TestEnv) -> String {
    task_in(&env.board("default")["tasks"], 1)["lease_expires_at"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_claim_stalls_on_time_while_listen_and_watch_look_and_the_agents_own_command_renews_it() {
    let (env, token, lease) = hub_with_a_claim_near_its_end();
    let served = Served::start(&env, "alice");
    let agent = Agent::new(format!("http://{}", served.address), token);
    let listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let watch = agent.spawn(&["--json", "watch"], false);
    let boards = &watch.stdout;
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board");
    // A hand-over makes the listener look at the inbox, and the board be drawn again.
    env.send("alice", "codex", "More work", &["--no-wake"]);
    listen.said("work arrived for codex: T-2");
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board again");
    assert_eq!(
        lease_of(&env),
        lease,
        "a look on codex's behalf renewed its lease"
    );
    eventually("the claim stalls and goes back to its sender", || {
        let inbox = env.run("alice", &["--json", "inbox", "--peek"]).json();
        let tasks = inbox["tasks"].as_array().unwrap().clone();
        tasks
            .iter()
            .any(|task| task["id"] == 1 && task["reason"] == "stalled")
            .then_some(())
    });
    assert_eq!(lease_of(&env), lease);
    // codex's own command, from its machine, shows it alive: the lease is renewed.
    agent.run(&["status"]).ok();
    assert_ne!(
        lease_of(&env),
        lease,
        "the agent's own command renews its lease"
    );
    drop((listen, watch));
}

#[test]
fn a_board_watched_on_the_hubs_machine_renews_no_lease_and_records_no_heartbeat() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let (env, _token, lease) = hub_with_a_claim_near_its_end();
    let seen = |env: &TestEnv| {
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(env.home().join("agents/codex.json")).unwrap(),
        )
        .unwrap();
        record["last_seen"].clone()
    };
    let last_seen = seen(&env);
    let mut watch = env
        .command(&env.work())
        .args(["--as", "codex", "--json", "watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let boards = crate::common::stdout_lines(&mut watch);
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board");
    env.send("alice", "codex", "More work", &["--no-wake"]);
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board again");
    let _ = watch.kill();
    let _ = watch.wait();
    assert_eq!(lease_of(&env), lease, "watching renewed the lease");
    assert_eq!(seen(&env), last_seen, "watching recorded a heartbeat");
    env.run("codex", &["status"]).ok();
    assert_ne!(lease_of(&env), lease, "codex's own command renews it");
}

#[test]
fn while_listen_runs_the_hub_tells_a_sender_its_listener_takes_the_work() {
    let hub = Hub::start();
    let agent = hub.agent();
    let unreached = hub
        .env
        .run("alice", &["send", "--to", "codex", "--subject", "Before"]);
    assert!(
        unreached
            .ok()
            .contains("codex has no wake command and no live session"),
        "{}",
        unreached.stdout
    );
    let listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let sent = hub
        .env
        .run("alice", &["send", "--to", "codex", "--subject", "Listened"]);
    assert!(
        !sent.ok().contains("no wake command and no live session"),
        "{}",
        sent.stdout
    );
    assert!(
        sent.stderr
            .contains("codex's listener (`baton listen` on its machine) wakes it for T-2"),
        "{}",
        sent.stderr
    );
    listen.said("work arrived for codex");
    // The listener gone, the hub says so again once it notices the stream closed.
    drop(listen);
    eventually("the hub notices the listener is gone", || {
        let sent = hub
            .env
            .run("alice", &["send", "--to", "codex", "--subject", "After"]);
        // Paces the sends, each of which makes a task: not a wait for anything.
        std::thread::sleep(Duration::from_millis(500));
        sent.ok()
            .contains("no wake command and no live session")
            .then_some(())
    });
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

#[test]
fn a_wake_command_is_shown_to_its_agent_and_the_coordinator_and_runs_only_for_waiting_work() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    hub.env
        .run(
            "",
            &[
                "agent",
                "add",
                "codex",
                "--wake",
                "--",
                "/bin/true",
                "--api-key",
                "sk-secret-1",
            ],
        )
        .ok();
    let token = |name: &str| add_token(&hub.env, name);
    let (alice, mallory) = (token("alice"), token("mallory"));
    // alice coordinates `default`: she sends there first.
    hub.env
        .run(
            "alice",
            &["send", "--to", "alice", "--subject", "Mine", "--no-wake"],
        )
        .ok();
    let record = |path: &str, token: &str| {
        let reply = hub.served.get(path, token);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body
    };
    let hidden = record("/api/v1/agents/codex", &mallory);
    assert!(!hidden.contains("sk-secret"), "{hidden}");
    let hidden: Value = serde_json::from_str(&hidden).unwrap();
    assert_eq!(hidden["wake"], Value::Null);
    assert_eq!(hidden["wake_hidden"], true);
    assert!(record("/api/v1/agents/codex", &hub.token).contains("sk-secret-1"));
    assert!(record("/api/v1/agents/codex?project=default", &alice).contains("sk-secret-1"));
    assert!(!record("/api/v1/agents/codex", &alice).contains("sk-secret"));
    assert!(!record("/api/v1/agents/codex?project=default", &mallory).contains("sk-secret"));
    let shown = Agent {
        token: mallory.clone(),
        ..hub.agent()
    }
    .run(&["agent", "show", "codex"]);
    assert!(
        shown.ok().contains("wake:      set (shown only to"),
        "{}",
        shown.stdout
    );
    // Nothing waits for codex: nobody elsewhere may run its wake command.
    let wake = |token: &str| {
        hub.served.post(
            "/api/v1/projects/default/wake/codex",
            token,
            &serde_json::json!({}),
        )
    };
    let refused = wake(&mallory);
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.body.contains("nothing waits for codex"),
        "{}",
        refused.body
    );
    assert!(!hub.env.home().join("wake/codex.log").exists(), "it ran");
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "Work", "--no-wake"],
        )
        .ok();
    let woken = wake(&mallory);
    assert_eq!(woken.status, 200, "{}", woken.body);
    let outcome: Value = serde_json::from_str(&woken.body).unwrap();
    assert_eq!(outcome["outcome"], "started", "{outcome}");
    assert_eq!(outcome["log"], "wake/codex.log");
    let home = hub.env.home();
    assert!(
        !woken.body.contains(home.to_str().unwrap()),
        "the hub's home: {}",
        woken.body
    );
}

/// A wake command that lists its descriptors in the wake log and then says it is done.
#[cfg(target_os = "linux")]
const DESCRIPTOR_LISTER: &str = r#"
echo "descriptors of the run:"
ls /proc/$$/fd
echo "end of descriptors"
touch "$0"
"#;

#[cfg(target_os = "linux")]
#[test]
fn listens_wake_run_holds_no_descriptor_above_2() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    let agent = hub.agent();
    let done = agent.env.root.path().join("listed");
    // listen is started holding descriptors 7 and 9, as a caller that hands some down would.
    let mut listen = Command::new("/bin/sh")
        .args(["-c", r#"exec "$0" "$@" 7</dev/null 9</dev/null"#])
        .arg(crate::common::baton_bin())
        .args(["listen", "--wake", "--", "/bin/sh", "-c", DESCRIPTOR_LISTER])
        .arg(&done)
        .current_dir(agent.env.work())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("BATON_HOME", agent.env.home())
        .env("BATON_URL", &agent.url)
        .env("BATON_TOKEN", &agent.token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = crate::common::stderr_lines(&mut listen);
    crate::common::line_with(&said, "listening to the hub");
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "List them"],
        )
        .ok();
    eventually("the run listed its descriptors", || {
        done.exists().then_some(())
    });
    let _ = listen.kill();
    let _ = listen.wait();
    let log = std::fs::read_to_string(agent.env.home().join("wake/codex.log")).unwrap();
    let heading = "descriptors of the run:\n";
    let start = log.find(heading).expect("listed") + heading.len();
    let end = start + log[start..].find("end of descriptors").expect("whole");
    let descriptors: Vec<&str> = log[start..end].lines().collect();
    assert_eq!(descriptors, ["0", "1", "2"], "no descriptor above 2: {log}");
}

#[cfg(unix)]
#[test]
fn listen_stops_at_once_on_sigterm_and_says_so() {
    let hub = Hub::start();
    let agent = hub.agent();
    let mut listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let status = Command::new("kill")
        .args(["-TERM", &listen.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stopped = listen.said("stopping");
    assert!(stopped.contains("stopping (SIGTERM)"), "{stopped}");
    let (status, _) = listen.finish();
    assert_eq!(status.code(), Some(0), "stopped as asked");
}

#[cfg(unix)]
#[test]
fn after_three_runs_in_a_row_listen_runs_again_for_what_still_waits() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    let agent = hub.agent();
    let runs = agent.env.root.path().join("runs.txt");
    // Each of the first three runs hands codex one more task, from alice on the hub: work
    // that arrives during a run, which the next run is for.
    let script = agent.env.root.path().join("wake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho run >> '{runs}'\nn=$(wc -l < '{runs}')\n\
             if [ \"$n\" -le 3 ]; then\n\
             env -u BATON_URL -u BATON_TOKEN BATON_HOME='{home}' BATON_NOTIFY=0 \
             '{baton}' --as alice send --to codex --subject \"Next $n\" --no-wake > /dev/null\n\
             fi\n",
            runs = runs.display(),
            home = hub.env.home().display(),
            baton = crate::common::baton_bin().display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let listen = agent.spawn(&["listen", "--wake", "--", script.to_str().unwrap()], false);
    listen.said("listening to the hub");
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "First", "--no-wake"],
        )
        .ok();
    let rested = listen.said("ran 3 times in a row");
    assert!(
        rested.contains("still waiting: T-4 (project default); run for at the next change"),
        "{rested}"
    );
    assert_eq!(lines_of(&runs).len(), 3);
    let board = hub.env.board("default");
    assert_eq!(task_in(&board["tasks"], 4)["delivery"]["state"], "queued");
    // The next change on the hub brings it up, as the line says.
    hub.env.run("alice", &["note", "anything new?"]).ok();
    eventually("a run for T-4", || {
        let board = hub.env.board("default");
        (task_in(&board["tasks"], 4)["delivery"]["state"] == "woken").then_some(())
    });
    eventually("the fourth run", || {
        (lines_of(&runs).len() == 4).then_some(())
    });
    let log = std::fs::read_to_string(agent.env.home().join("wake/codex.log")).unwrap();
    assert!(
        log.contains("run for at the next change on the hub"),
        "{log}"
    );
    drop(listen);
}

/// An agent whose only trace on the hub is the token made for it: `baton listen` on its
/// machine may be its first contact, and a listener looks on its behalf, registering nobody.
/// The token registers it, so the listener is answered and work sent to it is taken.
#[test]
fn an_agent_with_only_a_token_is_listened_for_and_handed_work() {
    let env = TestEnv::new();
    env.run("", &["agent", "add", "alice"]).ok();
    let token = env
        .run("", &["token", "add", "codex"])
        .ok()
        .trim()
        .to_string();
    let registered: Value =
        serde_json::from_str(env.run("", &["--json", "agent", "show", "codex"]).ok()).unwrap();
    assert_eq!(registered["name"], "codex", "{registered}");
    assert!(registered["wake"].is_null(), "{registered}");

    let served = Served::start(&env, "alice");
    let agent = Agent::new(format!("http://{}", served.address), token);
    let mut listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let sent = env.run(
        "alice",
        &["send", "--to", "codex", "--subject", "First contact"],
    );
    sent.ok();
    assert!(
        sent.stderr.contains("listener"),
        "the sender is told the listener brings it the work: {}",
        sent.stderr
    );
    let _ = listen.child.kill();
    let _ = listen.child.wait();
    let unknown: Vec<String> = listen
        .stderr
        .try_iter()
        .filter(|line| line.contains("unknown agent"))
        .collect();
    assert!(unknown.is_empty(), "{unknown:?}");
}
