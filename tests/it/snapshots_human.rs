//! What a person reads: the human output of `board`, `inbox`, `show`, `agents`, `log`,
//! `status` and `doctor`, pinned as snapshots, so any change to it shows in review as a
//! diff of what the user sees (the other tests only check that some words are there).
//!
//! Every command runs at a pinned `BATON_NOW` on one hub whose board carries each mark
//! these views print: blocked, stalled, waiting for, lease left, archived, unseen, a
//! dependency that ended, unread messages, a multi-line body framed behind `| `, and a control
//! character shown escaped. The temporary directory, which changes from run to run, is
//! replaced by `[HUB]` before a snapshot is compared.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::common::{Run, TestEnv, files_only};

/// When the old work was done and the agents first seen: more than 7 days before `NOW`, so
/// the finished task can be archived and an agent not seen since is reported as stale.
const LAST_WEEK: &str = "2026-11-20T09:00:00.000Z";
/// When the archive ran.
const YESTERDAY: &str = "2026-11-28T10:00:00.000Z";
/// When the open work was handed out: an hour before `NOW`, so a 30-minute lease taken
/// then has run out.
const AN_HOUR_AGO: &str = "2026-11-29T11:00:00.000Z";
/// A claim a quarter of an hour before `NOW`: its lease has 15 minutes left.
const A_QUARTER_AGO: &str = "2026-11-29T11:45:00.000Z";
/// The moment every snapshot is taken.
const NOW: &str = "2026-11-29T12:00:00.000Z";

/// A multi-line body with an escape sequence that would turn a terminal's text red.
const COLOURED_BODY: &str = "Compare the output on a dark and a light terminal.\n\
     The warning prints as \u{1b}[31mred\u{1b}[0m today.";

/// The hub: its environment, and the directory on `PATH` (holding one program, `waker`).
struct Hub {
    env: TestEnv,
    path: PathBuf,
}

impl Hub {
    /// Runs `baton --as AGENT --no-wake ARGS…` at `at`. Nothing is woken: a wake supervisor
    /// left running would hold a lock and show in `doctor`'s findings.
    fn run_at(&self, at: &str, agent: &str, args: &[&str]) -> Run {
        let mut all = vec!["--no-wake"];
        all.extend_from_slice(args);
        let path = self.path.to_str().expect("a UTF-8 test path");
        self.env.run_with(
            &self.env.work(),
            agent,
            &all,
            // The machine a wake command is registered on, as `agent show` names it.
            &[
                ("BATON_NOW", at),
                ("PATH", path),
                ("BATON_HOST", "hub-machine"),
            ],
        )
    }

    /// Runs at `at` and asserts success.
    #[track_caller]
    fn ok_at(&self, at: &str, agent: &str, args: &[&str]) {
        self.run_at(at, agent, args).ok();
    }

    /// What `agent` sees from `baton ARGS…` now, with the temporary directory redacted.
    #[track_caller]
    fn view(&self, agent: &str, args: &[&str]) -> String {
        let run = self.run_at(NOW, agent, args);
        self.redacted(run.ok())
    }

    fn redacted(&self, text: &str) -> String {
        let root = self.env.root.path().to_str().expect("a UTF-8 test path");
        text.replace(root, "[HUB]")
    }
}

/// One project, `default`, coordinated by `lead`, at `NOW`:
///
/// - T-1, done last week and archived yesterday;
/// - T-2, high priority with a review, multi-line body, claimed by dev 15 minutes ago;
/// - T-3, blocked until T-2 completes;
/// - T-4, claimed by qa an hour ago: its lease ran out, so it is stalled;
/// - T-5, with an escaped control character in its body, waiting for lead's answer;
/// - T-6, canceled, and T-7, which waited on it and now waits for lead's decision;
/// - messages to dev and to everyone, and baton's notifications;
/// - T-8, handed to ghost an hour ago and never seen: marked unseen;
/// - ghost, not seen for 9 days; dev and qa with wake commands, qa's not on `PATH`.
fn hub() -> Hub {
    let env = TestEnv::new();
    let path = env.root.path().join("bin");
    fs::create_dir_all(&path).unwrap();
    let waker = path.join("waker");
    fs::write(&waker, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&waker, fs::Permissions::from_mode(0o755)).unwrap();
    // The harness makes the home with the umask's mode: pin it, so `doctor` says the same
    // on every machine (a warning, which is one of the marks it shows).
    fs::set_permissions(env.home(), fs::Permissions::from_mode(0o755)).unwrap();
    let hub = Hub { env, path };

    for agent in ["lead", "dev", "qa", "ghost"] {
        hub.ok_at(LAST_WEEK, agent, &["whoami"]);
    }
    hub.ok_at(
        LAST_WEEK,
        "",
        &[
            "agent",
            "add",
            "dev",
            "--strengths",
            "parsers; careful with dates",
            "--skills",
            "rust,parsing",
            "--wake",
            "--",
            "waker",
            "--task",
            "inbox",
        ],
    );
    hub.ok_at(
        LAST_WEEK,
        "",
        &[
            "agent",
            "add",
            "qa",
            "--skills",
            "testing",
            "--wake",
            "--",
            "baton-test-no-such-waker",
        ],
    );
    hub.ok_at(
        LAST_WEEK,
        "lead",
        &["send", "--to", "dev", "--subject", "Pin the toolchain"],
    );
    hub.ok_at(
        LAST_WEEK,
        "dev",
        &["done", "1", "--result", "rust-toolchain.toml says 1.91"],
    );
    hub.ok_at(YESTERDAY, "lead", &["archive"]);

    let at = AN_HOUR_AGO;
    hub.ok_at(
        at,
        "lead",
        &[
            "send",
            "--to",
            "dev",
            "--subject",
            "Fix the date parser",
            "--body",
            "2026-02-30 is accepted.\nRefuse it; do not clamp to the month end.",
            "--files",
            "src/date.rs,tests/date.rs",
            "--priority",
            "high",
            "--review",
        ],
    );
    hub.ok_at(
        at,
        "lead",
        &[
            "send",
            "--to",
            "dev",
            "--subject",
            "Write the changelog",
            "--after",
            "2",
        ],
    );
    hub.ok_at(
        at,
        "lead",
        &[
            "send",
            "--to",
            "qa",
            "--subject",
            "Test the parser",
            "--priority",
            "low",
        ],
    );
    hub.ok_at(at, "qa", &["claim", "4"]);
    hub.ok_at(
        at,
        "lead",
        &[
            "send",
            "--to",
            "qa",
            "--subject",
            "Check the colours",
            "--body",
            COLOURED_BODY,
        ],
    );
    hub.ok_at(at, "qa", &["ask", "5", "--body", "Which terminals count?"]);
    hub.ok_at(
        at,
        "lead",
        &["send", "--to", "dev", "--subject", "Port the lexer"],
    );
    hub.ok_at(
        at,
        "lead",
        &[
            "send",
            "--to",
            "dev",
            "--subject",
            "Use the new lexer",
            "--after",
            "6",
        ],
    );
    hub.ok_at(
        at,
        "lead",
        &["cancel", "6", "--reason", "the old one will do"],
    );
    hub.ok_at(
        at,
        "lead",
        &["msg", "--to", "dev", "The benchmarks are in bench/"],
    );
    hub.ok_at(
        at,
        "qa",
        &[
            "msg",
            "--to",
            "@all",
            "--summary",
            "Wrapping up at six",
            "Push your work before six.\nSay so here when it is in.",
        ],
    );
    hub.ok_at(
        at,
        "lead",
        &[
            "note",
            "release \u{1b}[1mfrozen\u{1b}[0m until the parser lands",
        ],
    );
    // Handed to ghost, who has not looked since: unseen for an hour.
    hub.ok_at(
        at,
        "lead",
        &["send", "--to", "ghost", "--subject", "Translate the manual"],
    );
    hub.ok_at(A_QUARTER_AGO, "dev", &["claim", "2"]);
    hub
}

#[test]
fn board() {
    let hub = hub();
    insta::assert_snapshot!("board", hub.view("lead", &["board"]));
    insta::assert_snapshot!("board_all", hub.view("lead", &["board", "--all"]));
    insta::assert_snapshot!("board_mine", hub.view("dev", &["board", "--mine"]));
}

#[test]
fn inbox() {
    let hub = hub();
    insta::assert_snapshot!("inbox_lead", hub.view("lead", &["inbox"]));
    insta::assert_snapshot!("inbox_dev", hub.view("dev", &["inbox"]));
    // What the first inbox showed is read now: only tasks are shown again.
    insta::assert_snapshot!("inbox_dev_again", hub.view("dev", &["inbox"]));
    insta::assert_snapshot!("inbox_ghost", hub.view("ghost", &["inbox"]));
}

#[test]
fn show() {
    let hub = hub();
    insta::assert_snapshot!("show_archived", hub.view("lead", &["show", "1"]));
    insta::assert_snapshot!("show_lease_left", hub.view("lead", &["show", "2"]));
    insta::assert_snapshot!("show_blocked", hub.view("lead", &["show", "3"]));
    insta::assert_snapshot!("show_stalled", hub.view("lead", &["show", "4"]));
    insta::assert_snapshot!("show_escaped_body", hub.view("lead", &["show", "5"]));
    insta::assert_snapshot!("show_dependency_ended", hub.view("lead", &["show", "7"]));
    insta::assert_snapshot!("show_unseen", hub.view("lead", &["show", "8"]));
}

#[test]
fn agents() {
    let hub = hub();
    insta::assert_snapshot!("agents", hub.view("lead", &["agents"]));
    insta::assert_snapshot!("agent_show", hub.view("lead", &["agent", "show", "dev"]));
}

#[test]
fn log() {
    let hub = hub();
    insta::assert_snapshot!("log", hub.view("lead", &["log"]));
    insta::assert_snapshot!("log_last_3", hub.view("lead", &["log", "-n", "3"]));
}

#[test]
fn status() {
    let hub = hub();
    let lines: Vec<String> = ["lead", "dev", "qa", "ghost"]
        .iter()
        .map(|agent| hub.view(agent, &["status"]))
        .collect();
    insta::assert_snapshot!("status", lines.concat());
}

#[test]
fn doctor() {
    if !files_only("pins doctor's findings on the home's files: its log files and lock files") {
        return;
    }
    let hub = hub();
    let run = hub.run_at(NOW, "lead", &["doctor"]);
    // qa's wake program is not on PATH: a failure, so the doctor exits 1.
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    insta::assert_snapshot!("doctor", hub.redacted(&run.stdout));
}
