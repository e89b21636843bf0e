//! More than one hub (SPEC section 16): `BATON_URL` naming several, comma-separated. Two
//! `baton serve` on one hub home share one state, as two hubs on one database do; an
//! agent's machine (a home of its own) names both, and carries on on the second when the
//! first is SIGKILLed: its commands, `listen`, `wait`, `watch` and `baton mcp`.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{CLOSED, Served};
use crate::common::remote::{Agent, HubHome};
use crate::common::{TestEnv, eventually};

/// The token's secret never shows: every output of the agent's machine is checked for it.
const SECRET_PART: &str = "baton_";

/// One hub home served twice: hubs `a` and `b`, with a token for `codex`.
struct TwoHubs {
    env: TestEnv,
    a: Option<Served>,
    b: Served,
    a_url: String,
    token: String,
}

impl TwoHubs {
    fn start() -> TwoHubs {
        let HubHome { env, token } = HubHome::new();
        assert!(token.starts_with(SECRET_PART), "{token}");
        let a = Served::start(&env, "alice");
        let b = Served::start(&env, "alice");
        TwoHubs {
            a_url: format!("http://{}", a.address),
            a: Some(a),
            b,
            env,
            token,
        }
    }

    fn b_url(&self) -> String {
        format!("http://{}", self.b.address)
    }

    /// `BATON_URL` naming both, the first first.
    fn both(&self) -> String {
        format!("{},{}", self.a_url, self.b_url())
    }

    /// The first hub SIGKILLed, as a crash or the OOM killer ends it.
    fn kill_a(&mut self) {
        self.a.take().expect("hub a runs").kill();
    }

    fn agent(&self) -> Agent {
        Agent::new(self.both(), self.token.clone())
    }

    /// `alice` sends `codex` a task on the hubs' machine; its id.
    fn send(&self, subject: &str) -> u64 {
        self.env.send("alice", "codex", subject, &[])
    }

    /// Every activity record of `default`, through the CLI of the hubs' machine.
    fn log(&self) -> Vec<Value> {
        let log = self.env.run("alice", &["--json", "log", "-n", "1000"]);
        log.ok()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a record of JSON"))
            .collect()
    }

    fn status_of(&self, id: u64) -> String {
        let shown = self
            .env
            .run("alice", &["--json", "show", &id.to_string()])
            .json();
        shown["status"].as_str().unwrap_or_default().to_string()
    }
}

#[test]
fn a_remote_agent_carries_on_on_the_second_hub_when_the_first_is_killed() {
    let mut hubs = TwoHubs::start();
    let agent = hubs.agent();
    let first = hubs.send("Fix the parser");
    let second = hubs.send("Fix the lexer");
    agent.run(&["claim", &first.to_string()]).ok();
    hubs.kill_a();
    // Claimed on the first hub, finished through the second: the agent's work goes on.
    agent
        .run(&["done", &first.to_string(), "--result", "fixed"])
        .ok();
    agent.run(&["claim", &second.to_string()]).ok();
    agent
        .run(&["done", &second.to_string(), "--result", "fixed too"])
        .ok();
    let sent = agent.run(&["--json", "send", "--to", "alice", "--subject", "Follow-up"]);
    let follow_up = sent.json()["task"]["id"].as_u64().unwrap();
    assert_eq!(hubs.status_of(first), "completed");
    assert_eq!(hubs.status_of(second), "completed");
    assert_eq!(hubs.status_of(follow_up), "pending");
    // Each change made once: no request was made twice on two hubs.
    let log = hubs.log();
    for (action, task) in [
        ("claim", first),
        ("done", first),
        ("claim", second),
        ("done", second),
        ("send", follow_up),
    ] {
        let made = log
            .iter()
            .filter(|line| line["action"] == action && line["task"] == task)
            .count();
        assert_eq!(made, 1, "{action} T-{task} in {log:?}");
    }
    // The first hub named in BATON_URL down from the start is no matter either.
    let late = Agent {
        url: format!("http://{},{}", CLOSED[0], hubs.b_url()),
        ..hubs.agent()
    };
    let inbox = late.run(&["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["tasks"], json!([]), "{inbox}");
}

#[test]
fn every_hub_down_is_exit_6_naming_each_and_why() {
    let [one, two] = CLOSED;
    let agent = Agent {
        env: TestEnv::new(),
        url: format!("http://{one},http://{two}/"),
        token: "baton_nothing_to_see".into(),
    };
    let status = agent.run(&["status"]);
    let stderr = status.fails(6);
    let mut lines = stderr.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "error: no hub answers: hub http://{one} unreachable: nothing listens there \
             (connection refused); hub http://{two} unreachable: nothing listens there \
             (connection refused)"
        )
    );
    assert!(lines.next().unwrap().starts_with("hint: "), "{stderr}");
    // A wait has nothing to wait on either: the same, at once.
    let wait = agent.run(&["wait", "--timeout", "30"]);
    assert!(wait.fails(6).contains("no hub answers"), "{}", wait.stderr);
    // A hook stays silent, one line for the client's log.
    let hook = agent.hook("prompt", &json!({"cwd": agent.env.work()}));
    assert_eq!(hook.ok(), "");
    assert_eq!(hook.stderr.lines().count(), 1, "{}", hook.stderr);
    assert!(hook.stderr.contains(one) && hook.stderr.contains(two));
}

#[test]
fn a_wrong_list_of_hubs_is_one_clear_line() {
    for (url, said) in [
        (
            "http://127.0.0.1:1,,http://127.0.0.1:2",
            "error: BATON_URL `http://127.0.0.1:1,,http://127.0.0.1:2` has an empty item (hub 2 \
             of 3): hubs are separated by single commas",
        ),
        (
            "http://127.0.0.1:1, 127.0.0.1:2",
            "error: BATON_URL 127.0.0.1:2 is not a URL (hub 2 of 2)",
        ),
        (
            "http://127.0.0.1:1,http://127.0.0.1:1/",
            "error: BATON_URL names http://127.0.0.1:1 twice: each hub once, in the order to \
             try them",
        ),
    ] {
        let agent = Agent {
            env: TestEnv::new(),
            url: url.into(),
            token: "baton_not_shown".into(),
        };
        let refused = agent.run(&["status"]);
        let stderr = refused.fails(1);
        assert_eq!(stderr.lines().next(), Some(said), "{stderr}");
        assert!(
            stderr
                .lines()
                .skip(1)
                .all(|line| line.starts_with("hint: ")),
            "{stderr}"
        );
    }
}

#[test]
fn wait_and_watch_move_to_the_second_hub_and_see_a_change_made_after_the_kill() {
    let mut hubs = TwoHubs::start();
    let agent = hubs.agent();
    let waiting = agent.spawn(&["wait", "--timeout", "60"], false);
    let watch = agent.spawn(&["--json", "watch"], false);
    let first: Value =
        serde_json::from_str(&watch.stdout.recv_timeout(Duration::from_secs(20)).unwrap()).unwrap();
    assert_eq!(first, json!([]));
    // The board was printed after its stream opened on the first hub; the wait opens its
    // own at once, and looks once it has, saying nothing. The pause makes it likely that
    // the wait is on the first hub when it is killed (what this test is about); were it
    // not yet, it opens on the second and returns all the same: no deadline to miss.
    std::thread::sleep(Duration::from_millis(700));
    hubs.kill_a();
    let warned = watch.said("connecting again");
    assert!(
        warned.starts_with(&format!("warning: hub {} unreachable: ", hubs.a_url)),
        "{warned}"
    );
    let moved = watch.said("connected again");
    assert_eq!(
        moved,
        format!("baton: connected again, to the hub at {}", hubs.b_url())
    );
    let id = hubs.send("After the kill");
    let mut waiting = waiting;
    let waited = eventually("wait returns", || waiting.child.try_wait().unwrap());
    assert_eq!(waited.code(), Some(0));
    let printed = waiting.stdout.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        printed.contains(&format!("1 task for codex in default (T-{id} to do)")),
        "{printed}"
    );
    let board = eventually("watch prints the board with the task", || {
        let line = watch.stdout.recv_timeout(Duration::from_millis(200)).ok()?;
        let board: Value = serde_json::from_str(&line).unwrap();
        (!board.as_array()?.is_empty()).then_some(board)
    });
    assert_eq!(board[0]["subject"], "After the kill");
}

#[test]
fn log_follow_says_which_hub_it_follows_once_the_first_is_killed() {
    let mut hubs = TwoHubs::start();
    let before = hubs.send("Before the kill");
    // The second hub named with a user and a password: a line may name the hub, never the
    // password.
    let b = hubs.b.address.clone();
    let agent = Agent::new(
        format!("{},http://codex:hunter2@{b}", hubs.a_url),
        hubs.token.clone(),
    );
    let follow = agent.spawn(&["log", "--follow"], false);
    let first = follow.stdout.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(first.contains(&format!("T-{before}")), "{first}");
    hubs.kill_a();
    let warned = follow.said("connecting again");
    assert!(
        warned.starts_with(&format!("warning: hub {} unreachable: ", hubs.a_url)),
        "{warned}"
    );
    let moved = follow.said("connected again");
    assert_eq!(
        moved,
        format!("baton: connected again, to the hub at http://codex:***@{b}")
    );
    // Nothing logged after the kill is missed.
    let after = hubs.send("After the kill");
    let printed = eventually("log --follow prints the task sent after the kill", || {
        let line = follow
            .stdout
            .recv_timeout(Duration::from_millis(200))
            .ok()?;
        line.contains(&format!("T-{after}")).then_some(line)
    });
    assert!(printed.contains("After the kill"), "{printed}");
    assert!(!warned.contains("hunter2") && !moved.contains("hunter2"));
}

/// A wake command that appends one line per run to `runs`: the agent, and the hubs it was
/// given in the order it was given them.
#[cfg(unix)]
fn counting_wake(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let runs = env.root.path().join("runs.txt");
    let script = env.root.path().join("wake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"run as $BATON_AGENT on $BATON_URL\" >> '{}'\n",
            runs.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, runs)
}

#[cfg(unix)]
fn lines_of(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(unix)]
#[test]
fn listen_keeps_waking_its_agent_after_the_first_hub_is_killed() {
    let mut hubs = TwoHubs::start();
    let agent = hubs.agent();
    let (script, runs) = counting_wake(&agent.env);
    let listen = agent.spawn(&["listen", "--wake", "--", script.to_str().unwrap()], false);
    listen.said(&format!("listening to the hub at {} for codex", hubs.a_url));
    let first = hubs.send("Before the kill");
    eventually("the first hand-over woke codex", || {
        (lines_of(&runs).len() == 1).then_some(())
    });
    assert_eq!(
        lines_of(&runs)[0],
        format!("run as codex on {}", hubs.both())
    );
    hubs.kill_a();
    listen.said(&format!(
        "listening to the hub at {} for codex",
        hubs.b_url()
    ));
    let second = hubs.send("After the kill");
    eventually("the second hand-over woke codex", || {
        (lines_of(&runs).len() == 2).then_some(())
    });
    // The run is given the hub that answers first, then the other.
    assert_eq!(
        lines_of(&runs)[1],
        format!("run as codex on {},{}", hubs.b_url(), hubs.a_url)
    );
    for id in [first, second] {
        let shown = hubs
            .env
            .run("alice", &["--json", "show", &id.to_string()])
            .json();
        assert_eq!(shown["delivery"]["state"], "woken", "T-{id}: {shown}");
    }
    // The window in which a run twice for one hand-over would show: it is the test.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(lines_of(&runs).len(), 2, "each hand-over woken for once");
}

#[test]
fn baton_mcp_opens_its_session_again_on_the_second_hub() {
    let mut hubs = TwoHubs::start();
    let agent = hubs.agent();
    let mut bridge = agent.spawn(&["mcp"], true);
    let mut stdin = bridge.stdin.take().unwrap();
    let mut say = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    say(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
    );
    say(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    say(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"inbox","arguments":{"peek":true}}}),
    );
    let answer = |id: u64| -> Value {
        eventually(&format!("the answer to {id}"), || {
            let line = bridge
                .stdout
                .recv_timeout(Duration::from_millis(100))
                .ok()?;
            let frame: Value = serde_json::from_str(&line).unwrap();
            (frame["id"] == id).then_some(frame)
        })
    };
    assert!(answer(1)["result"]["serverInfo"].is_object());
    assert!(answer(2)["result"]["content"].is_array());
    hubs.kill_a();
    hubs.send("Through the second hub");
    say(
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"inbox","arguments":{"peek":true}}}),
    );
    let inbox = answer(3);
    let text = inbox["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let shown: Value = serde_json::from_str(text).unwrap_or_else(|_| panic!("{inbox}"));
    assert_eq!(shown["tasks"][0]["subject"], "Through the second hub");
    match crate::common::test_store() {
        // On the files each hub keeps its own MCP sessions: the second opens it again.
        crate::common::TestStore::Files => {
            bridge.said("opening it there again");
        }
        // On one database every hub serves every session: the second carries it on.
        crate::common::TestStore::Postgres(_) => {
            let said: Vec<String> = bridge.stderr.try_iter().collect();
            assert!(
                !said
                    .iter()
                    .any(|line| line.contains("opening it there again")),
                "{said:?}"
            );
        }
    }
}

/// Two machines' hubs on one database (SPEC section 16): codex's wake command is registered
/// on machine A. Work handed to codex through machine B starts nothing on B, which says the
/// hub on A wakes it; hub A, following the database, runs the command there, with A's home.
/// `baton wake codex` on B sends the user to A; work handed over while hub A is down is
/// woken for when it starts again. On the files (one machine's), the host of a
/// record is not looked at: see `wake.rs`'s unit tests.
#[cfg(unix)]
#[test]
fn a_wake_command_runs_on_its_host_whoever_hands_the_work_over() {
    let machine_a = TestEnv::new();
    let machine_b = TestEnv::new();
    let (url, made_here) = match &machine_a.store_url {
        Some(url) => (url.clone(), false),
        None if crate::common::cluster::runs_here() => {
            (crate::common::cluster::fresh_database(None), true)
        }
        None => return,
    };
    let on_a = [("BATON_STORE", url.as_str()), ("BATON_HOST", "machine-a")];
    let on_b = [("BATON_STORE", url.as_str()), ("BATON_HOST", "machine-b")];
    let (script, runs) = counting_host_wake(&machine_a);
    machine_a
        .run_env(
            "",
            &[
                "agent",
                "add",
                "codex",
                "--wake",
                "--",
                script.to_str().unwrap(),
            ],
            &on_a,
        )
        .ok();
    machine_a
        .run_env("", &["agent", "add", "alice"], &on_a)
        .ok();
    let hub_a = Served::start_with_vars(&machine_a, "alice", &[], &on_a);

    let sent = machine_b.run_env(
        "alice",
        &[
            "--json",
            "send",
            "--to",
            "codex",
            "--subject",
            "Handed over on B",
        ],
        &on_b,
    );
    sent.ok();
    assert!(
        sent.stderr
            .contains("codex's wake command runs on its host, machine-a: the hub there wakes it"),
        "{}",
        sent.stderr
    );
    let id = sent.json()["task"]["id"].as_u64().unwrap();
    eventually("hub A woke codex on machine A", || {
        (!lines_of(&runs).is_empty()).then_some(())
    });
    let home_a = std::path::absolute(machine_a.home()).unwrap();
    assert_eq!(
        lines_of(&runs),
        vec![format!("codex woken with home {}", home_a.display())]
    );
    assert!(
        !machine_b.home().join("wake").join("codex.log").exists(),
        "nothing ran on machine B"
    );
    eventually("the hand-over's delivery says woken", || {
        let shown = machine_b
            .run_env("alice", &["--json", "show", &id.to_string()], &on_b)
            .json();
        (shown["delivery"]["state"] == "woken").then_some(())
    });

    let refused = machine_b.run_env("alice", &["wake", "codex"], &on_b);
    let stderr = refused.fails(1);
    assert!(
        stderr.contains("codex's wake command runs on its host, machine-a, not on this machine")
            && stderr.contains("run `baton wake codex` there"),
        "{stderr}"
    );
    // The window in which a second run would show: it is the test.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(lines_of(&runs).len(), 1, "one hand-over, one run");

    // Work handed over while hub A is down is woken for when it starts again.
    hub_a.kill();
    machine_b
        .run_env(
            "alice",
            &["send", "--to", "codex", "--subject", "While A was down"],
            &on_b,
        )
        .ok();
    // The window in which a run without hub A would show: it is the test.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(lines_of(&runs).len(), 1, "nothing runs while hub A is down");
    let hub_a = Served::start_with_vars(&machine_a, "alice", &[], &on_a);
    eventually("hub A, started again, woke codex for what arrived", || {
        (lines_of(&runs).len() == 2).then_some(())
    });
    drop(hub_a);
    if made_here {
        crate::common::cluster::drop_database(&url);
    }
}

/// A wake command that writes which agent it ran as and which home it was given.
#[cfg(unix)]
pub fn counting_host_wake(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let runs = env.root.path().join("runs.txt");
    let script = env.root.path().join("wake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$BATON_AGENT woken with home $BATON_HOME\" >> '{}'\n",
            runs.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, runs)
}

/// A hub checks a token against the tokens as stored on every request, with what the
/// request's session reads in the same round trip: a token that both hubs have used is
/// refused at once by both when it is removed, and a new one is taken at once by both.
#[test]
fn a_token_removed_or_added_is_refused_or_taken_at_once_by_every_hub() {
    let env = TestEnv::new();
    env.register(&["alice", "codex"]);
    let token = crate::common::http::add_token(&env, "codex");
    let hubs = [Served::start(&env, "alice"), Served::start(&env, "alice")];
    let (tasks, board) = (
        "/api/v1/projects/default/tasks",
        "/api/v1/projects/default/board",
    );
    let send = |hub: &Served, token: &str, subject: &str| {
        hub.post(tasks, token, &json!({"to": "alice", "subject": subject}))
    };
    for hub in &hubs {
        send(hub, &token, "before").ok();
        hub.get(board, &token).ok();
    }
    env.run("", &["token", "rm", "codex"]).ok();
    for hub in &hubs {
        for refused in [hub.get(board, &token), send(hub, &token, "after rm")] {
            assert_eq!(refused.status, 401, "{}", refused.body);
        }
    }
    let again = crate::common::http::add_token(&env, "codex");
    for hub in &hubs {
        assert_eq!(send(hub, &again, "again").ok()["task"]["from"], "codex");
        assert_eq!(hub.get(board, &token).status, 401);
    }
    let subjects: Vec<String> = hubs[0]
        .get(board, &again)
        .ok()
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["subject"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(subjects, ["before", "before", "again", "again"]);
}
