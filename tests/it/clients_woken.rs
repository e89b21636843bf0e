//! Real clients, scripted models: each agent client, woken by baton with the exact wake
//! command `baton setup` registered, takes a task through baton and finishes it.
//!
//! The model is `tests/clients/model_server.py`, a scripted server on 127.0.0.1 that speaks
//! the client's model API and answers with tool calls to baton (see its docstring). Each
//! test wires one real, pinned client in a throwaway home with `baton setup`, points it at
//! the server, and goes through three rounds, asserting what a user would check:
//!
//! 1. a task sent to the agent wakes it; the client shows the model the task (from its
//!    hooks where it has them, else the model looks with baton's `inbox`), and the task ends
//!    `completed` with the scripted result, by that agent, one activity line per change;
//! 2. a question round trip: the woken agent asks, the sender answers, which wakes it again,
//!    and it finishes with the answer it was given;
//! 3. where the client has a stop hook baton wires: with two tasks waiting and a model that
//!    deals with one task per turn, the stop hook keeps the one session going to the second.
//!
//! The rounds ([`prove_rounds`]) are the same for a client on another machine, woken there
//! by `baton listen` (`clients_remote.rs`).
//!
//! Like `clients.rs`, they need `BATON_TEST_CLIENTS` (see there), and python3.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::clients::{
    ANSWER, Dialect, ModelServer, PROJECT, QUESTION, RESULT, WiredClient, clients_bin,
};
use crate::common::machine::Machine;
use crate::common::{Run, TestEnv, baton_bin, eventually_or};

/// Longest one wake (every run of its supervisor) may take before the test gives up on it.
pub const WAKE_TIMEOUT: Duration = Duration::from_secs(240);

/// A real client wired to a hub and woken by baton, as the rounds of a proof see it: on
/// the hub's own machine, woken by the wake command setup registered ([`Rig`]), or on
/// another, woken by `baton listen` (`clients_remote.rs`).
pub trait Woken {
    fn dialect(&self) -> &Dialect;

    fn server(&self) -> &ModelServer;

    /// The hub's machine, whose home holds the board.
    fn hub(&self) -> &TestEnv;

    /// Runs `baton --as lead ARGS…` on the hub's machine, in the project's workspace.
    fn lead(&self, args: &[&str]) -> Run;

    /// Checks that `run`, lead's command, woke the agent, and waits until that wake is over.
    fn woke(&mut self, run: &Run);

    /// Sends two tasks that together wake the agent once; their numbers.
    fn send_two_for_one_wake(&mut self, one: (&str, &str), two: (&str, &str)) -> (u64, u64);

    /// The log of the agent's wake runs, with everything else there is to see of them.
    fn wake_log(&self) -> String;

    fn agent(&self) -> &'static str {
        self.dialect().client
    }

    /// Sends a task to the agent, which must wake it; its number.
    fn send(&mut self, subject: &str, body: &str) -> u64 {
        let agent = self.agent();
        let run = self.lead(&[
            "--json",
            "send",
            "--to",
            agent,
            "--subject",
            subject,
            "--body",
            body,
        ]);
        let id = run.json()["task"]["id"].as_u64().expect("a task id");
        self.woke(&run);
        id
    }

    fn task(&self, id: u64) -> Value {
        self.lead(&["--json", "show", &id.to_string()]).json()
    }

    /// The activity lines of task `id`: (actor, action).
    fn activity(&self, id: u64) -> Vec<(String, String)> {
        self.hub()
            .activity(PROJECT)
            .iter()
            .filter(|line| line["task"] == id)
            .map(|line| {
                (
                    line["actor"].as_str().unwrap().to_string(),
                    line["action"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn expect_activity(&self, id: u64, expected: &[(&str, &str)]) {
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(actor, action)| (actor.to_string(), action.to_string()))
            .collect();
        assert_eq!(
            self.activity(id),
            expected,
            "T-{id}'s activity; model answers:\n{}",
            self.server().answers(0)
        );
    }

    /// Asserts that task `id` is `status`, with everything to see when it is not.
    fn expect_status(&self, id: u64, status: &str) -> Value {
        let task = self.task(id);
        assert_eq!(
            task["status"],
            status,
            "T-{id}: {task:#}\nwake log:\n{}\nmodel answers:\n{}\nthe last request:\n{}",
            self.wake_log(),
            self.server().answers(0),
            self.server()
                .requests()
                .last()
                .map(|request| request["body"].to_string())
                .unwrap_or_default()
        );
        task
    }
}

/// One client wired by setup in a throwaway home, and its scripted model.
struct Rig {
    wired: WiredClient,
    dialect: Dialect,
    /// Supervisors of the agent that have ended so far.
    ended: usize,
}

impl Rig {
    fn new(bin: PathBuf, dialect: Dialect, server_args: &[&str]) -> Rig {
        // Away from /tmp, which Codex's sandbox lets every shell command write: the hub must
        // be as out of reach as `~/.local/share/baton` is, for the test to see the sandbox.
        let machine = Machine::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
        Rig {
            wired: WiredClient::new(machine, bin, &dialect, server_args),
            dialect,
            ended: 0,
        }
    }

    /// Waits until one more supervisor of the agent has ended; on the deadline, kills what
    /// runs and fails with everything there is to see.
    fn until_supervisor_ends(&mut self) {
        let ends = format!("baton wake: supervisor of {} ends", self.agent());
        let ended = self.ended;
        eventually_or(
            WAKE_TIMEOUT,
            &format!("the end of the wake of {}", self.agent()),
            || (self.wake_log().matches(&ends).count() > ended).then_some(()),
            || {
                let log = self.wake_log();
                self.kill_supervisors(&log);
                format!(
                    "wake log:\n{log}\nmodel requests:\n{}",
                    self.wired.server.answers(0)
                )
            },
        );
        self.ended += 1;
    }

    /// Kills every supervisor the log names, with the client it runs (its session).
    fn kill_supervisors(&self, log: &str) {
        for line in log.lines() {
            if let Some(pid) = line
                .split("(pid ")
                .nth(1)
                .and_then(|rest| rest.split(')').next())
            {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .status();
            }
        }
    }
}

impl Woken for Rig {
    fn dialect(&self) -> &Dialect {
        &self.dialect
    }

    fn server(&self) -> &ModelServer {
        &self.wired.server
    }

    fn hub(&self) -> &TestEnv {
        &self.wired.machine.env
    }

    /// In the workspace, with everything a wake run needs: the clients on `PATH` and the
    /// variables that point them at the model server. The supervisor it starts inherits
    /// them.
    fn lead(&self, args: &[&str]) -> Run {
        self.wired
            .lead(args, &(self.dialect.env)(&self.wired.server))
    }

    fn woke(&mut self, run: &Run) {
        assert!(
            run.stderr.contains(&format!("woke {}", self.agent())),
            "the agent was not woken: {}",
            run.stderr
        );
        self.until_supervisor_ends();
    }

    /// The first with `--no-wake`, so that the second's wake finds both.
    fn send_two_for_one_wake(&mut self, one: (&str, &str), two: (&str, &str)) -> (u64, u64) {
        let agent = self.agent();
        let quiet = self.lead(&[
            "--json",
            "send",
            "--to",
            agent,
            "--subject",
            one.0,
            "--body",
            one.1,
            "--no-wake",
        ]);
        let first = quiet.json()["task"]["id"].as_u64().expect("a task id");
        (first, self.send(two.0, two.1))
    }

    fn wake_log(&self) -> String {
        fs::read_to_string(
            self.wired
                .machine
                .env
                .home()
                .join(format!("wake/{}.log", self.agent())),
        )
        .unwrap_or_default()
    }
}

/// The whole proof for one client on the hub's own machine.
fn prove(dialect: Dialect, server_args: &[&str]) {
    let Some(bin) = clients_bin() else {
        return;
    };
    let mut rig = Rig::new(bin, dialect, server_args);
    // The wake command is setup's, word for word, and it is what the supervisor ran.
    let wake = rig.wired.machine.agent(rig.agent())["wake"].clone();
    let wake_words: Vec<String> = wake
        .as_array()
        .unwrap_or_else(|| panic!("setup registered no wake command: {wake}"))
        .iter()
        .map(|word| word.as_str().unwrap().to_string())
        .collect();
    prove_rounds(&mut rig, &wake_words);
}

/// The three rounds of the proof (see the module's documentation), wherever the client
/// runs; `wake_words` is the wake command setup gave for it, which the wakes must run.
pub fn prove_rounds(rig: &mut impl Woken, wake_words: &[String]) {
    let agent = rig.agent();
    let claim_tool = rig.dialect().claim_tool;
    assert_eq!(wake_words[0], agent, "{wake_words:?}");

    // 1. A task wakes the agent, which finishes it.
    let first = rig.send(
        "Fix the date parser",
        "It accepts 2026-02-30; make it refuse invalid days.",
    );
    let log = rig.wake_log();
    assert!(
        log.contains(&format!("run 1 of at most 3 in project {PROJECT}"))
            && log.contains(&format!("{} PROMPT", wake_words.join(" "))),
        "the wake did not run setup's wake command:\n{log}"
    );
    let task = rig.expect_status(first, "completed");
    assert_eq!(task["result"], RESULT);
    let board = rig.lead(&["--json", "board", "--all"]).json();
    let shown = crate::common::task_in(&board, first);
    assert_eq!(
        (&shown["status"], &shown["to"], &shown["result"]),
        (&json!("completed"), &json!(agent), &json!(RESULT)),
        "the board: {shown:#}"
    );
    rig.expect_activity(
        first,
        &[("lead", "send"), (agent, "claim"), (agent, "done")],
    );
    let calls = rig.server().calls(0);
    assert!(
        calls.iter().any(|(name, args)| name == claim_tool
            && (args["id"] == first
                || args["cmd"]
                    .as_str()
                    .is_some_and(|cmd| cmd.ends_with(&format!(" claim {first}"))))),
        "the model did not claim T-{first} through {claim_tool}: {calls:?}"
    );
    let looked = |calls: &[(String, Value)]| {
        calls.iter().any(|(name, args)| {
            name.ends_with("inbox")
                || args["cmd"]
                    .as_str()
                    .is_some_and(|cmd| cmd.ends_with(" inbox"))
        })
    };
    let sent = rig.server().sent_text(0);
    if rig.dialect().has_hook_context {
        // The hook put the task in front of the model, which acted on it without looking.
        assert!(
            sent.contains(&format!("T-{first} [normal] to do: Fix the date parser")),
            "no hook context in what the client sent:\n{sent}"
        );
        assert!(
            !looked(&calls),
            "the model had to look at the inbox itself: {calls:?}"
        );
    } else {
        assert!(
            looked(&calls),
            "the model never looked at the inbox: {calls:?}"
        );
        assert!(sent.contains("Fix the date parser"), "{sent}");
    }

    // 2. A question round trip: ask, answer, and a second wake that finishes it.
    let second = rig.send("Decide on invalid dates", "Clamp or refuse? ASK FIRST.");
    let task = rig.expect_status(second, "input_required");
    let question = task["thread"].as_array().unwrap().last().cloned().unwrap();
    assert_eq!(
        (&question["by"], &question["kind"], &question["text"]),
        (&json!(agent), &json!("question"), &json!(QUESTION)),
        "{task:#}"
    );
    let answer = rig.lead(&["answer", &second.to_string(), "--body", ANSWER]);
    answer.ok();
    rig.woke(&answer);
    let task = rig.expect_status(second, "completed");
    assert_eq!(
        task["result"],
        format!("{RESULT} (answer used: {ANSWER})"),
        "the model did not get the answer"
    );
    rig.expect_activity(
        second,
        &[
            ("lead", "send"),
            (agent, "ask"),
            ("lead", "answer"),
            (agent, "claim"),
            (agent, "done"),
        ],
    );

    // 3. The stop hook keeps one session going while work waits for it.
    if rig.dialect().has_stop_hook {
        let from = rig.server().requests().len();
        let runs_before = rig.wake_log().matches(" of at most 3 in project ").count();
        let (waiting, last) = rig.send_two_for_one_wake(
            ("Update the changelog", "One line for the fix."),
            ("Tag the release", "After the changelog."),
        );
        for id in [waiting, last] {
            rig.expect_status(id, "completed");
            rig.expect_activity(id, &[("lead", "send"), (agent, "claim"), (agent, "done")]);
        }
        let log = rig.wake_log();
        assert_eq!(
            log.matches(" of at most 3 in project ").count(),
            runs_before + 1,
            "both tasks must be done in one run, kept going by the stop hook:\n{log}"
        );
        assert!(
            rig.server()
                .sent_text(from)
                .contains(&format!("still waiting for {agent} in project {PROJECT}")),
            "the stop hook's word never reached the model:\n{}",
            rig.server().answers(from)
        );
    }
}

#[test]
fn claude_code_woken_by_baton_takes_and_finishes_its_tasks() {
    prove(Dialect::claude(), &[]);
}

#[test]
fn codex_woken_by_baton_takes_and_finishes_its_tasks_through_baton_tools() {
    // `exec` runs with approvals off: baton's server must be approved in its table.
    prove(Dialect::codex("mcp__baton__claim"), &[]);
}

#[test]
fn codex_woken_by_baton_takes_and_finishes_its_tasks_with_baton_in_its_shell() {
    // The shell runs in Codex's sandbox: the hub must be writable there.
    let baton = baton_bin().display().to_string();
    prove(
        Dialect::codex("exec_command"),
        &["--route", "shell", "--baton", &baton],
    );
}

#[test]
fn gemini_cli_woken_by_baton_takes_and_finishes_its_tasks() {
    prove(Dialect::gemini(), &[]);
}

#[test]
fn opencode_woken_by_baton_takes_and_finishes_its_tasks() {
    prove(Dialect::opencode(), &[]);
}
