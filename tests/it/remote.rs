//! A hub on another machine (SPEC section 13): two private homes stand for two machines, one
//! serving its board on loopback (`baton serve`), the other acting on it with `BATON_URL`
//! and `BATON_TOKEN`, through the real binaries.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Run, TestEnv, task_in};
use crate::http::{Served, eventually};

/// The hub's machine: a home served on loopback, with a token for `codex`.
struct Hub {
    env: TestEnv,
    served: Served,
    token: String,
}

impl Hub {
    fn start() -> Hub {
        let env = TestEnv::new();
        env.run("", &["agent", "add", "codex"]).ok();
        env.run("", &["agent", "add", "alice"]).ok();
        let token = env
            .run("", &["token", "add", "codex"])
            .ok()
            .trim()
            .to_string();
        let served = Served::start(&env, "alice");
        Hub { env, served, token }
    }

    fn url(&self) -> String {
        format!("http://{}", self.served.address)
    }
}

/// The agent's machine: a home of its own, and the hub's address and token in the
/// environment of every command.
struct Agent {
    env: TestEnv,
    url: String,
    token: String,
}

impl Agent {
    fn of(hub: &Hub) -> Agent {
        Agent {
            env: TestEnv::new(),
            url: hub.url(),
            token: hub.token.clone(),
        }
    }

    fn command(&self, cwd: &Path) -> Command {
        let mut command = self.env.command(cwd);
        command
            .env("BATON_URL", &self.url)
            .env("BATON_TOKEN", &self.token);
        command
    }

    fn run_in(&self, cwd: &Path, args: &[&str]) -> Run {
        run(self.command(cwd).args(args))
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_in(&self.env.work(), args)
    }

    /// Starts `baton ARGS…` on this machine, its stdout piped (stdin too with
    /// `stdin_open`, for a process that lives as long as its stdin).
    fn spawn(&self, args: &[&str], stdin_open: bool) -> Child {
        self.command(&self.env.work())
            .args(args)
            .stdin(if stdin_open {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the baton binary runs")
    }

    fn hook(&self, event: &str, input: &Value) -> Run {
        let command = {
            let mut command = self.command(&self.env.work());
            command.args(["hook", event, "--client", "claude"]);
            command
        };
        self.env.run_piped(command, &input.to_string())
    }
}

fn run(command: &mut Command) -> Run {
    let output = command.output().expect("the baton binary runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn a_tasks_whole_life_is_split_between_a_local_and_a_remote_agent() {
    let hub = Hub::start();
    let agent = Agent::of(&hub);
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
    let agent = Agent::of(&hub);
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

#[test]
fn wait_on_the_remote_side_returns_when_the_hub_side_sends() {
    let hub = Hub::start();
    let agent = Agent::of(&hub);
    let timed_out = agent.run(&["wait", "--timeout", "1"]);
    timed_out.fails(5);
    let waiting = agent.spawn(&["wait", "--timeout", "60"], false);
    std::thread::sleep(Duration::from_millis(700));
    hub.env
        .run("alice", &["send", "--to", "codex", "--subject", "Wake up"])
        .ok();
    let output = waiting.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
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

/// `baton serve` on a given port, for a hub stopped and started again at one address.
#[cfg(unix)]
fn serve_on(env: &TestEnv, address: &str) -> Child {
    let mut child = env
        .command(&env.work())
        .args(["--as", "alice", "serve", "--listen", address])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = crate::common::stdout_lines(&mut child);
    lines
        .recv_timeout(Duration::from_secs(30))
        .expect("baton serve printed its URL");
    child
}

#[cfg(unix)]
#[test]
fn listen_wakes_once_per_burst_and_catches_up_after_the_hub_restarts() {
    let env = TestEnv::new();
    env.run("", &["agent", "add", "codex"]).ok();
    let token = env
        .run("", &["token", "add", "codex"])
        .ok()
        .trim()
        .to_string();
    let address = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().to_string()
    };
    let agent = Agent {
        env: TestEnv::new(),
        url: format!("http://{address}"),
        token,
    };
    let (script, runs) = counting_wake(&agent.env);
    // Started before its hub, as a service at boot may be: it waits for the hub.
    let mut listen = agent.spawn(&["listen", "--wake", "--", script.to_str().unwrap()], false);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        listen.try_wait().unwrap().is_none(),
        "listen waits for its hub"
    );
    let mut server = serve_on(&env, &address);
    // It has nothing to do until work arrives; then a burst wakes it once.
    std::thread::sleep(Duration::from_secs(2));
    assert!(lines_of(&runs).is_empty(), "woken with nothing to do");
    // One burst whatever the machine's load: the three sends wait on the board lock and
    // commit one after the other the moment it is let go (sent one by one, a loaded
    // machine could space them past the burst's 300 ms).
    env.run("alice", &["status"]).ok();
    let held = crate::common::HeldLock::on(&env.project_dir("default").join("board.lock"));
    let sends: Vec<Child> = ["One", "Two", "Three"]
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
    std::thread::sleep(Duration::from_millis(500));
    drop(held);
    crate::common::all_succeed(sends);
    eventually("the burst woke codex", || {
        (lines_of(&runs).len() == 1).then_some(())
    });
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
    server.kill().unwrap();
    server.wait().unwrap();
    env.run(
        "alice",
        &["send", "--to", "codex", "--subject", "While down"],
    )
    .ok();
    std::thread::sleep(Duration::from_secs(1));
    let mut server = serve_on(&env, &address);
    let started = Instant::now();
    eventually("the listener caught up", || {
        (lines_of(&runs).len() == 2).then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        lines_of(&runs).len(),
        2,
        "caught up once, after {:?}",
        started.elapsed()
    );
    let board = env.board("default");
    assert_eq!(task_in(&board["tasks"], 4)["delivery"]["state"], "woken");
    for child in [&mut listen, &mut server] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn a_hub_that_cannot_be_reached_is_exit_6_and_hooks_stay_silent() {
    let closed = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().to_string()
    };
    let agent = Agent {
        env: TestEnv::new(),
        url: format!("http://{closed}"),
        token: "baton_nothing".into(),
    };
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
    let agent = Agent::of(&hub);
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
        ..Agent::of(&hub)
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
    let agent = Agent::of(&hub);
    agent.run(&["status"]).ok();
    hub.env.run("", &["token", "rm", "codex"]).ok();
    let refused = agent.run(&["status"]);
    let stderr = refused.fails(1);
    assert!(stderr.contains("refused the token"), "{stderr}");
    assert!(!stderr.contains(&hub.token), "the token is never shown");
}

#[test]
fn only_the_tokens_agent_may_act_and_hub_only_commands_say_so() {
    let hub = Hub::start();
    let agent = Agent::of(&hub);
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
    let agent = Agent::of(&hub);
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
    let agent = Agent::of(&hub);
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
    let agent = Agent::of(&hub);
    let mut follow = agent.spawn(&["hook", "follow", "--client", "opencode"], true);
    let lines = crate::common::stdout_lines(&mut follow);
    std::thread::sleep(Duration::from_millis(500));
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "Pushed across"],
        )
        .ok();
    let line = lines
        .recv_timeout(Duration::from_secs(20))
        .expect("a push for the hand-over");
    let push: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(push["id"], 1);
    assert_eq!(push["subject"], "Pushed across");
    assert_eq!(push["from"], "alice");
    eventually("the push is recorded as seen on the hub", || {
        let board = hub.env.board("default");
        (task_in(&board["tasks"], 1)["delivery"]["state"] == "seen").then_some(())
    });
    assert!(
        lines.recv_timeout(Duration::from_secs(1)).is_err(),
        "a hand-over is pushed once"
    );
    drop(follow.stdin.take());
    let status = follow.wait().unwrap();
    assert!(status.success(), "it ends when the plugin's stdin closes");
}

#[test]
fn watch_and_log_follow_on_the_remote_side_see_the_hubs_changes() {
    let hub = Hub::start();
    let agent = Agent::of(&hub);
    let mut watch = agent.spawn(&["--json", "watch"], false);
    let boards = crate::common::stdout_lines(&mut watch);
    let first: Value =
        serde_json::from_str(&boards.recv_timeout(Duration::from_secs(20)).unwrap()).unwrap();
    assert_eq!(first, serde_json::json!([]));
    let mut log = agent.spawn(&["log", "--follow"], false);
    let log_lines = crate::common::stdout_lines(&mut log);
    std::thread::sleep(Duration::from_millis(500));
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
    for child in [&mut watch, &mut log] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn a_hub_answers_a_host_name_only_when_serve_allows_it() {
    let env = TestEnv::new();
    let token = env
        .run("", &["token", "add", "codex"])
        .ok()
        .trim()
        .to_string();
    let served = Served::start_with(&env, "alice", &["--allow-host", "BuildBox.lan"]);
    let ask = |host: &str| {
        let headers = [
            ("Host".to_string(), host.to_string()),
            ("Authorization".to_string(), format!("Bearer {token}")),
        ];
        crate::http::send(&served.address, "GET", "/api/v1/whoami", &headers, None).status
    };
    assert_eq!(ask(&format!("buildbox.lan:{}", served.port())), 200);
    assert_eq!(ask("buildbox.lan"), 200, "a proxy in front on port 80");
    assert_eq!(ask(&format!("other.lan:{}", served.port())), 403);
    let refused = env.run("alice", &["serve", "--allow-host", "http://x:1"]);
    refused.fails(1);
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
    let machine = TestEnv::new();
    let url = hub.url();
    machine
        .run_env(
            "",
            &[
                "setup",
                "--client",
                "claude",
                "--url",
                &url,
                "--token-env",
                "HUB_TOKEN",
            ],
            &[("HUB_TOKEN", &hub.token)],
        )
        .ok();
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(machine.root.path().join("user-home/.claude/settings.json"))
            .unwrap(),
    )
    .unwrap();
    let line = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!line.contains(&hub.token), "{line}");
    // The client runs the line in its own environment: the variable, and nothing of baton's.
    let mut shell = Command::new("sh");
    shell
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", machine.root.path().join("user-home"))
        .env("BATON_HOME", machine.home())
        .env("HUB_TOKEN", &hub.token)
        .current_dir(machine.work())
        .arg("-c")
        .arg(&line);
    let answer = machine.run_piped(
        shell,
        &serde_json::json!({"cwd": machine.work()}).to_string(),
    );
    let answer: Value = serde_json::from_str(answer.ok()).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("Through the wiring"), "{context}");
}
