//! Wake, wait and watch: work reaches agents that are not running, and people see it live.
//!
//! The wake tests use tests/fake-agent.sh as the wake command: it records each start and
//! what it was started with, then claims and completes what waits in its inbox. Everything
//! here is asynchronous, so the tests poll for the outcome with a generous deadline and
//! never assert how long anything took.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::{Run, TestEnv, baton_bin, eventually_seeing, eventually_within};

/// How long the wake tests wait for a run (a hang check, not a measure of speed).
const DEADLINE: Duration = Duration::from_secs(60);

fn fake_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-agent.sh")
}

/// A hub with project `app` bound to the workspace, `lead` who sends, and `worker` whose
/// wake command is the fake agent.
struct Team {
    env: TestEnv,
}

impl Team {
    fn new() -> Team {
        let env = TestEnv::new();
        let work = env.work();
        env.init_project("", "app", &work);
        env.register(&["lead", "worker"]);
        let team = Team { env };
        team.set_wake("worker", &["bash", fake_agent().to_str().unwrap()]);
        team
    }

    /// Sets an agent's wake command, as a user does.
    fn set_wake(&self, agent: &str, argv: &[&str]) {
        let mut args = vec!["agent", "add", agent, "--wake", "--"];
        args.extend_from_slice(argv);
        self.env.run("", &args).ok();
    }

    fn record_path(&self) -> PathBuf {
        self.env.root.path().join("fake-agent.record")
    }

    fn gate_path(&self) -> PathBuf {
        self.env.root.path().join("fake-agent.gate")
    }

    /// Runs `baton ARGS…` as `lead`, identified by `BATON_AGENT` (which the woken agent
    /// must not inherit), with what the fake agent needs in the environment.
    fn lead(&self, args: &[&str], gated: bool) -> Run {
        let record = self.record_path();
        let gate = self.gate_path();
        let bin = baton_bin();
        let mut env = vec![
            ("BATON_AGENT", "lead"),
            ("FAKE_AGENT_RECORD", record.to_str().unwrap()),
            ("FAKE_AGENT_BATON", bin.to_str().unwrap()),
        ];
        if gated {
            env.push(("FAKE_AGENT_GATE", gate.to_str().unwrap()));
        }
        self.env.run_env("", args, &env)
    }

    fn send(&self, subject: &str, extra: &[&str], gated: bool) -> Run {
        let mut args = vec!["send", "--to", "worker", "--subject", subject];
        args.extend_from_slice(extra);
        self.lead(&args, gated)
    }

    /// Lets the fake agent's current run go on (it waits for the gate with `gated`).
    fn open_gate(&self) {
        std::fs::write(self.gate_path(), "go").unwrap();
    }

    /// Until the fake agent has started `count` runs (and looked at its inbox in each).
    fn until_starts(&self, count: usize) {
        eventually_seeing(DEADLINE, &format!("{count} runs have started"), || {
            if self.starts().len() >= count {
                Ok(())
            } else {
                Err(format!("{:#?}\n{}", self.record(), self.log("worker")))
            }
        });
    }

    /// Until `count` supervisors of `agent` have started and every one has ended.
    fn until_supervisors_end(&self, agent: &str, count: usize) {
        eventually_seeing(
            DEADLINE,
            &format!("{count} supervisors of {agent} have ended"),
            || {
                let log = self.log(agent);
                let started = log
                    .matches(&format!("supervisor of {agent} started"))
                    .count();
                let ended = log.matches(&format!("supervisor of {agent} ends")).count();
                if started >= count && ended == started {
                    Ok(())
                } else {
                    Err(format!("{:#?}\n{log}", self.record()))
                }
            },
        );
    }

    fn record(&self) -> Vec<String> {
        std::fs::read_to_string(self.record_path())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn starts(&self) -> Vec<String> {
        self.record()
            .into_iter()
            .filter(|line| line.starts_with("start "))
            .collect()
    }

    fn log(&self, agent: &str) -> String {
        std::fs::read_to_string(self.env.home().join("wake").join(format!("{agent}.log")))
            .unwrap_or_default()
    }

    /// `agent`'s wake log once its supervisor has ended.
    fn log_once_ended(&self, agent: &str) -> String {
        let ended = format!("supervisor of {agent} ends");
        eventually_seeing(
            DEADLINE,
            &format!("the supervisor of {agent} has ended"),
            || {
                let log = self.log(agent);
                if log.contains(&ended) {
                    Ok(())
                } else {
                    Err(log)
                }
            },
        );
        self.log(agent)
    }

    /// Statuses of the tasks on the board, by id order.
    fn statuses(&self) -> Vec<String> {
        let board = self.env.board("app");
        board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|task| task["status"].as_str().unwrap().to_string())
            .collect()
    }

    /// Until every task is completed, every supervisor that started has ended, and every
    /// run of the fake agent has ended.
    fn until_all_done(&self, tasks: usize) {
        eventually_seeing(
            DEADLINE,
            "every task is completed and every run has ended",
            || {
                let statuses = self.statuses();
                let log = self.log("worker");
                let supervisors = log.matches("supervisor of worker started").count();
                let ended = log.matches("supervisor of worker ends").count();
                let record = self.record();
                let starts = record
                    .iter()
                    .filter(|line| line.starts_with("start "))
                    .count();
                let ends = record
                    .iter()
                    .filter(|line| line.starts_with("end "))
                    .count();
                let done = statuses.len() == tasks
                    && statuses.iter().all(|status| status == "completed")
                    && supervisors > 0
                    && supervisors == ended
                    && starts == ends;
                if done {
                    Ok(())
                } else {
                    Err(format!(
                        "statuses {statuses:?}\nrecord {record:#?}\nlog:\n{log}"
                    ))
                }
            },
        );
    }
}

/// The value of `key=` in a start line of the fake agent's record.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line
        .find(&format!(" {key}="))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + key.len()
        + 2;
    let rest = &line[start..];
    if key == "prompt" {
        return rest;
    }
    rest.split(' ').next().unwrap_or("")
}

/// `saw=[1 2]` of a start line, as numbers.
fn saw(line: &str) -> Vec<u64> {
    let rest = &line[line.find(" saw=[").expect("saw") + 6..];
    rest[..rest.find(']').unwrap()]
        .split_whitespace()
        .map(|id| id.parse().unwrap())
        .collect()
}

#[test]
fn ten_tasks_in_quick_succession_wake_one_run_at_a_time_and_all_get_done() {
    let team = Team::new();
    for n in 1..=10 {
        let run = team.send(&format!("Task number {n}"), &[], false);
        run.ok();
        assert!(
            run.stderr.contains("woke worker") || run.stderr.contains("worker is already awake"),
            "the sender says whom it woke: {}",
            run.stderr
        );
        assert!(
            run.stderr.lines().count() <= 2,
            "one line about waking: {}",
            run.stderr
        );
    }
    team.until_all_done(10);

    let record = team.record();
    for (index, line) in record.iter().enumerate() {
        let expected = if index % 2 == 0 { "start " } else { "end " };
        assert!(
            line.starts_with(expected),
            "two runs overlapped (a start before the previous end):\n{record:#?}"
        );
    }
    let workspace = std::fs::canonicalize(team.env.work()).unwrap();
    for line in team.starts() {
        assert_eq!(
            field(&line, "agent"),
            "worker",
            "the woken agent, not the sender"
        );
        assert_eq!(Path::new(field(&line, "pwd")), workspace);
        let prompt = field(&line, "prompt");
        assert!(
            prompt.starts_with("You are worker") && prompt.contains("`baton inbox`"),
            "{prompt}"
        );
    }
    let board = team.env.board("app");
    for task in board["tasks"].as_array().unwrap() {
        assert_eq!(task["result"], "done by worker");
    }
}

#[test]
fn work_sent_during_a_run_causes_exactly_one_more_run() {
    let team = Team::new();
    let first = team.send("First task", &[], true);
    first.ok();
    assert!(
        first.stderr.contains("woke worker for T-1 (log: "),
        "{}",
        first.stderr
    );
    team.until_starts(1);

    let second = team.send("Second task", &[], true);
    second.ok();
    assert!(
        second.stderr.contains("worker is already awake"),
        "no second supervisor while one runs: {}",
        second.stderr
    );
    team.open_gate();
    team.until_starts(2);
    team.open_gate();
    team.until_all_done(2);

    let starts = team.starts();
    assert_eq!(starts.len(), 2, "exactly one more run: {starts:#?}");
    assert_eq!(saw(&starts[0]), vec![1]);
    assert_eq!(saw(&starts[1]), vec![2]);
    let log = team.log("worker");
    assert_eq!(log.matches("supervisor of worker started").count(), 1);
    assert!(
        log.contains("T-2 (to do, project app) arrived during run 1"),
        "{log}"
    );
}

#[test]
fn a_supervisor_stops_after_three_runs_in_a_row_and_the_work_stays() {
    let team = Team::new();
    team.send("Task 1", &[], true).ok();
    for run in 1..=3 {
        team.until_starts(run);
        let during = team.send(&format!("Task {}", run + 1), &[], true);
        during.ok();
        assert!(during.stderr.contains("already awake"), "{}", during.stderr);
        team.open_gate();
    }
    let log = team.log_once_ended("worker");
    assert!(
        log.contains("ends after 3 runs in a row; still waiting: T-4 (to do, project app)"),
        "{log}"
    );
    assert_eq!(team.starts().len(), 3);
    assert_eq!(
        team.env.inbox_ids("worker"),
        vec![4],
        "the fourth task waits"
    );
    assert_eq!(
        team.statuses()[..3],
        ["completed", "completed", "completed"]
    );
}

#[test]
fn a_message_wakes_its_recipient_and_a_completed_task_wakes_its_sender() {
    let team = Team::new();
    team.set_wake("lead", &["bash", fake_agent().to_str().unwrap()]);
    let run = team.lead(
        &["msg", "--to", "worker", "The benchmarks are in bench/"],
        false,
    );
    run.ok();
    assert!(run.stderr.contains("woke worker"), "{}", run.stderr);
    team.until_supervisors_end("worker", 1);
    let starts = team.starts();
    assert_eq!(starts.len(), 1, "{starts:#?}");
    assert_eq!(field(&starts[0], "agent"), "worker");
    assert_eq!(field(&starts[0], "messages"), "1", "it read the message");

    // The worker's run completes the task; the notification to lead wakes lead.
    team.send("Measure it", &[], false).ok();
    team.until_supervisors_end("worker", 2);
    team.until_supervisors_end("lead", 1);
    let lead_starts: Vec<String> = team
        .starts()
        .into_iter()
        .filter(|line| field(line, "agent") == "lead")
        .collect();
    assert_eq!(lead_starts.len(), 1, "{:#?}", team.record());
    assert_eq!(field(&lead_starts[0], "messages"), "1", "the notification");
    assert_eq!(team.statuses(), ["completed"]);
}

#[test]
fn no_wake_flag_and_the_project_setting_keep_the_agent_asleep_until_woken_by_hand() {
    let team = Team::new();
    let quiet = team.send("Not now", &["--no-wake"], false);
    quiet.ok();
    assert!(!quiet.stderr.contains("woke"), "{}", quiet.stderr);
    // Before the command it is the same flag.
    let before = team.lead(
        &["--no-wake", "send", "--to", "worker", "--subject", "Later"],
        false,
    );
    before.ok();
    assert!(!before.stderr.contains("woke"), "{}", before.stderr);

    let project_file = "projects/app/project.json";
    let mut project: serde_json::Value =
        serde_json::from_str(&team.env.hub_text(project_file).unwrap()).unwrap();
    project["settings"]["wake"] = false.into();
    team.env.write_hub_text(project_file, &project.to_string());
    let off = team.send("Not now either", &[], false);
    off.ok();
    assert!(!off.stderr.contains("woke"), "{}", off.stderr);

    // Give a wrongly started supervisor time to show itself: the window is the test.
    thread::sleep(Duration::from_secs(1));
    assert_eq!(team.log("worker"), "", "no supervisor ran");
    assert!(team.record().is_empty());
    assert_eq!(team.env.inbox_ids("worker"), vec![1, 2, 3]);

    let by_hand = team.lead(&["wake", "worker"], false);
    assert!(by_hand.ok().contains("woke worker"), "{}", by_hand.stdout);
    team.until_all_done(3);
    let starts = team.starts();
    assert_eq!(starts.len(), 1, "{starts:#?}");
    assert_eq!(saw(&starts[0]), vec![1, 2, 3]);
}

#[test]
fn a_wake_command_that_does_not_exist_leaves_the_task_and_a_line_in_the_log() {
    let team = Team::new();
    team.set_wake("worker", &["/nonexistent/agent-cli", "--headless"]);
    let run = team.send("Anyone there?", &[], false);
    run.ok();
    assert!(run.stderr.contains("woke worker"), "{}", run.stderr);
    let log = team.log_once_ended("worker");
    assert!(
        log.contains("cannot start `/nonexistent/agent-cli`"),
        "{log}"
    );
    assert_eq!(
        team.env.inbox_ids("worker"),
        vec![1],
        "the task still waits"
    );
}

/// A second start of the supervisor for work a run was already woken for (another hub's
/// look at the change, racing the command's own start, that takes the wake duty once a
/// quick run has let it go) runs the wake command no second time; new work runs it again.
#[cfg(unix)]
#[test]
fn a_second_start_for_work_a_run_was_woken_for_runs_nothing_again() {
    let team = Team::new();
    let runs = team.env.root.path().join("runs.txt");
    let command = format!("echo run >> '{}'", runs.display());
    team.set_wake("worker", &["sh", "-c", &command]);
    let count = || {
        std::fs::read_to_string(&runs)
            .unwrap_or_default()
            .lines()
            .count()
    };
    team.send("Once", &[], false).ok();
    team.log_once_ended("worker");
    assert_eq!(count(), 1);
    // As a second starter does: the supervisor of worker, in the project, not by hand.
    team.env
        .run("", &["__wake-supervisor", "worker", "app"])
        .ok();
    let log = team.log("worker");
    assert!(
        log.contains("nothing waits any more that no run was woken for"),
        "{log}"
    );
    assert_eq!(
        count(),
        1,
        "the task a run was woken for is not run for again"
    );
    team.send("Twice", &[], false).ok();
    eventually_within(DEADLINE, "the new task's run", || {
        (count() == 2).then_some(())
    });
}

#[test]
fn wake_by_hand_needs_a_wake_command() {
    let env = TestEnv::new();
    env.register(&["lead", "idle"]);
    let stderr = env.run("lead", &["wake", "idle"]).fails(1).to_string();
    assert!(stderr.contains("idle has no wake command"), "{stderr}");
    let stderr = env.run("lead", &["wake", "ghost"]).fails(1).to_string();
    assert!(stderr.contains("unknown agent `ghost`"), "{stderr}");
}

/// Starts `baton ARGS…` with stdout piped, and a thread that forwards its lines.
fn spawn_lines(env: &TestEnv, args: &[&str]) -> (Child, Receiver<String>) {
    spawn_lines_with(env, args, &[])
}

/// As [`spawn_lines`], with `vars` set in its environment.
fn spawn_lines_with(
    env: &TestEnv,
    args: &[&str],
    vars: &[(&str, &str)],
) -> (Child, Receiver<String>) {
    let mut child = env
        .command(&env.work())
        .args(args)
        .envs(vars.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("baton starts");
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    (child, receiver)
}

/// Reads lines until one satisfies `check`; returns everything read.
#[track_caller]
fn read_until(lines: &Receiver<String>, what: &str, check: impl Fn(&str) -> bool) -> Vec<String> {
    let started = Instant::now();
    let mut seen = Vec::new();
    while started.elapsed() < DEADLINE {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            let is_it = check(&line);
            seen.push(line);
            if is_it {
                return seen;
            }
        }
    }
    panic!("no line with {what}; saw:\n{}", seen.join("\n"));
}

#[test]
fn wait_returns_when_a_task_arrives_from_another_process() {
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    let (mut waiting, lines) = spawn_lines(&env, &["--as", "worker", "wait", "--timeout", "120"]);
    // Not a readiness wait, and no deadline to miss: `wait` says nothing once it watches,
    // and it watches before it looks, so a send before then is found by the look and one
    // after by the watch. The pause makes the watch the likely one, which is this test's.
    thread::sleep(Duration::from_millis(500));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "wait returned while the inbox was empty"
    );
    env.send("lead", "worker", "Wake up", &[]);
    let seen = read_until(&lines, "the task", |line| line.contains("T-1"));
    let status = eventually_within(DEADLINE, "wait exits", || waiting.try_wait().unwrap());
    assert_eq!(status.code(), Some(0), "{seen:?}");
    assert!(seen.concat().contains("1 task for worker"), "{seen:?}");

    let run = env.run("worker", &["--json", "wait", "--timeout", "0"]);
    assert_eq!(
        run.json()["tasks"][0]["id"],
        1,
        "work already waiting returns at once"
    );

    env.run("worker", &["msg", "--to", "lead", "Starting on it"])
        .ok();
    let run = env.run("lead", &["--json", "wait", "--timeout", "0"]);
    assert_eq!(
        run.json()["messages"][0]["summary"],
        "Starting on it",
        "an unread message counts as work"
    );
}

#[test]
fn wait_returns_after_a_send_with_file_events_and_with_the_fallback() {
    let fallback = [("BATON_FILE_EVENTS", "poll")];
    for vars in [&[][..], &fallback[..]] {
        let env = TestEnv::new();
        env.register(&["lead", "worker"]);
        let (mut waiting, lines) =
            spawn_lines_with(&env, &["--as", "worker", "wait", "--timeout", "120"], vars);
        // As in the test above: the pause makes it likely that the watch, not the first
        // look, sees the sends.
        thread::sleep(Duration::from_millis(500));
        // A change that is no work for the waiter is looked at and waited past: the window
        // in which a wrong return would show.
        env.send("worker", "lead", "For lead", &[]);
        thread::sleep(Duration::from_millis(500));
        assert!(
            waiting.try_wait().unwrap().is_none(),
            "{vars:?}: wait returned while its inbox was empty"
        );
        env.send("lead", "worker", "Wake up", &[]);
        let seen = read_until(&lines, "the task", |line| line.contains("T-2"));
        let status = eventually_within(DEADLINE, &format!("{vars:?}: wait exits"), || {
            waiting.try_wait().unwrap()
        });
        assert_eq!(status.code(), Some(0), "{vars:?}: {seen:?}");
        assert!(
            seen.concat().contains("1 task for worker"),
            "{vars:?}: {seen:?}"
        );
    }
}

#[test]
fn wait_times_out_with_exit_5() {
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    env.send("worker", "lead", "For lead, not worker", &[]);
    let stderr = env
        .run("worker", &["wait", "--timeout", "1"])
        .fails(5)
        .to_string();
    assert!(stderr.contains("no work arrived within 1s"), "{stderr}");
    let stderr = env
        .run("", &["wait", "--timeout", "1"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("no identity"), "{stderr}");
}

#[test]
fn watch_prints_the_board_again_on_each_change_when_not_on_a_terminal() {
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    let (mut watching, lines) = spawn_lines(&env, &["watch"]);
    read_until(&lines, "the empty board", |line| {
        line.contains("no tasks to show")
    });

    env.send("lead", "worker", "Paint the fence", &[]);
    read_until(&lines, "the new task", |line| {
        line.contains("Paint the fence")
    });
    env.send("lead", "worker", "Varnish the fence", &["--after", "1"]);
    read_until(&lines, "the blocked mark", |line| {
        line.contains("Varnish the fence") && line.contains("blocked by T-1")
    });
    env.run("worker", &["ask", "1", "--body", "Which colour?"])
        .ok();
    read_until(&lines, "whom the task waits for", |line| {
        line.contains("Paint the fence")
            && line.contains("input_required")
            && line.contains("waiting for lead")
    });

    watching.kill().unwrap();
    watching.wait().unwrap();
}

#[cfg(unix)]
#[test]
fn a_notification_service_that_never_answers_does_not_hold_up_the_command() {
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    // A session bus that accepts connections and never says a word.
    let socket = env.root.path().join("silent-bus");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let address = format!("unix:path={}", socket.display());
    let run = env.run_env(
        "lead",
        &["--json", "send", "--to", "worker", "--subject", "Ping"],
        &[
            ("BATON_NOTIFY", "1"),
            ("DBUS_SESSION_BUS_ADDRESS", &address),
        ],
    );
    assert_eq!(run.json()["task"]["id"], 1);
    assert_eq!(run.stderr, "", "notifying is silent and best-effort");
    assert_eq!(env.inbox_ids("worker"), vec![1]);
}

/// Waits until `path` exists, then removes it: a step of a scripted agent, in sh.
fn gate_step(path: &Path) -> String {
    format!(
        "until [ -e '{0}' ]; do sleep 0.05; done; rm -f '{0}'",
        path.display()
    )
}

#[test]
fn delivery_goes_queued_woken_seen_acted_and_woken_is_never_shown_as_seen() {
    let team = Team::new();
    let look = team.env.root.path().join("look.gate");
    let act = team.env.root.path().join("act.gate");
    // An agent that, once woken, waits to look at its inbox, then waits to claim T-1.
    let script = format!(
        "{}; \"$FAKE_AGENT_BATON\" --json inbox >/dev/null; {}; \"$FAKE_AGENT_BATON\" claim 1",
        gate_step(&look),
        gate_step(&act)
    );
    team.set_wake("worker", &["sh", "-c", &script]);
    let delivery = || team.lead(&["--json", "show", "1"], false).json()["delivery"].clone();

    team.send("Fix the lexer", &["--no-wake"], false).ok();
    assert_eq!(delivery()["state"], "queued");

    team.lead(&["wake", "worker"], false).ok();
    eventually_seeing(DEADLINE, "the wake run has started", || {
        match delivery()["state"].as_str() {
            Some("woken") => Ok(()),
            other => Err(format!("{other:?}\n{}", team.log("worker"))),
        }
    });
    let woken = delivery();
    assert!(woken["woken_at"].is_string(), "{woken}");
    assert!(woken["seen_at"].is_null(), "woken is not seen: {woken}");
    let shown = team.lead(&["show", "1"], false).ok().to_string();
    assert!(!shown.contains("seen"), "{shown}");

    std::fs::write(&look, "go").unwrap();
    eventually_seeing(
        DEADLINE,
        "the agent has looked",
        || match delivery()["state"].as_str() {
            Some("seen") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    std::fs::write(&act, "go").unwrap();
    eventually_seeing(
        DEADLINE,
        "the agent has claimed",
        || match delivery()["state"].as_str() {
            Some("acted") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    team.until_supervisors_end("worker", 1);
    assert!(
        !team.log("worker").contains("still unseen"),
        "{}",
        team.log("worker")
    );
}

#[test]
fn a_wake_run_that_never_shows_the_agent_its_work_is_logged_as_such() {
    let team = Team::new();
    team.set_wake("worker", &["true"]);
    team.send("Fix the lexer", &[], false).ok();
    team.until_supervisors_end("worker", 1);
    let log = team.log("worker");
    assert!(
        log.contains("run 1 ended with its work still unseen: T-1 (project app)"),
        "{log}"
    );
    let delivery = team.lead(&["--json", "show", "1"], false).json()["delivery"].clone();
    assert_eq!(delivery["state"], "woken", "{delivery}");
}
