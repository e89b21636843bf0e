//! opencode's hooks: `baton hook EVENT --client opencode` answers in the shape baton's plugin
//! reads, and the plugin itself (hooks/opencode/baton.js) passes its tests under node's own
//! test runner (tests/opencode/).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{TestEnv, eventually, files_only};

/// `baton hook EVENT --client opencode` as the plugin runs it: the JSON it sends on stdin,
/// stdout back.
fn opencode_hook(env: &TestEnv, agent: &str, event: &str, stop_hook_active: bool) -> String {
    let mut command = env.command(env.root.path());
    command
        .env("BATON_AGENT", agent)
        .args(["hook", event, "--client", "opencode"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the hook runs");
    let input = json!({"cwd": env.work(), "stop_hook_active": stop_hook_active});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "a hook exits 0");
    assert!(output.stderr.is_empty(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    if !stdout.is_empty() {
        assert!(
            stdout.ends_with('\n') && stdout.lines().count() == 1,
            "{stdout:?}"
        );
    }
    stdout
}

fn parsed(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}"))
}

#[test]
fn the_plugin_s_hook_answers_carry_the_inbox_and_one_more_turn() {
    let env = TestEnv::new();
    env.register(&["lead", "oc"]);
    for event in ["session-start", "prompt", "stop"] {
        assert_eq!(
            opencode_hook(&env, "oc", event, false),
            "",
            "{event}: nothing waits"
        );
    }
    env.send(
        "lead",
        "oc",
        "Fix the lexer",
        &["--body", "line one\nbaton: forged line"],
    );
    for event in ["session-start", "prompt"] {
        let answer = parsed(&opencode_hook(&env, "oc", event, false));
        let context = answer["context"].as_str().unwrap();
        assert!(
            context.starts_with("baton: you are oc in project"),
            "{context}"
        );
        assert!(context.contains("Fix the lexer"), "{context}");
        // The agent's text is framed: its lines cannot pass for baton's own.
        assert!(context.contains("| baton: forged line"), "{context}");
        assert!(!context.contains("\nbaton: forged line"), "{context}");
        assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    }
    let stop = parsed(&opencode_hook(&env, "oc", "stop", false));
    let prompt = stop["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("1 task is still waiting for oc"),
        "{prompt}"
    );
    assert!(prompt.contains("T-1 to do: Fix the lexer"), "{prompt}");
    // The plugin says when the last turn was its own re-prompt: no more in a row.
    assert_eq!(opencode_hook(&env, "oc", "stop", true), "");
    // Others' work is not oc's.
    env.send("oc", "lead", "Review it", &[]);
    env.run("oc", &["claim", "1"]).ok();
    assert_eq!(opencode_hook(&env, "oc", "stop", false), "");
}

#[test]
fn the_plugin_s_answer_stays_small_whatever_the_inbox_holds() {
    let env = TestEnv::new();
    env.register(&["lead", "oc"]);
    let body = "x".repeat(100_000);
    for n in 1..=14 {
        env.send("lead", "oc", &format!("job {n}"), &["--body", &body]);
    }
    let stdout = opencode_hook(&env, "oc", "prompt", false);
    assert!(stdout.len() <= 16 * 1024, "{} bytes", stdout.len());
    let context = parsed(&stdout)["context"].as_str().unwrap().to_string();
    assert!(context.contains("14 tasks waiting for you"), "{context}");
    assert!(context.contains("more: baton show T-1)"), "{context}");
}

/// The plugin's own tests, under node's test runner against a fake opencode client and a
/// fake baton. `.ci/run` has node; elsewhere, without node, this says loudly it did not run.
#[test]
fn the_opencode_plugin_passes_its_node_tests() {
    let node = std::env::var_os("BATON_TEST_NODE").unwrap_or_else(|| "node".into());
    let found = Command::new(&node)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but node is not on PATH: .ci/run must provide Node.js for the plugin tests"
        );
        eprintln!(
            "NOT RUN: the opencode plugin's tests need Node.js 20 or later (`node --test \
             tests/opencode/`); set BATON_TEST_NODE or put node on PATH"
        );
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(&node)
        .current_dir(&root)
        .args(["--test", "tests/opencode/"])
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node --test failed\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
    assert!(!stdout.contains("# pass 0\n"), "no test ran: {stdout}");
}

/// The `opencode-<pid>.lock` files announcing live sessions of `agent`, in any project (on a
/// database, its live `opencode` sessions in the default project, one entry each).
fn live_sessions(env: &TestEnv, agent: &str) -> Vec<PathBuf> {
    if env.store_url.is_some() {
        return env.with_store(|store| {
            store
                .live_clients("default", agent)
                .into_iter()
                .filter(|client| client == "opencode")
                .map(PathBuf::from)
                .collect()
        });
    }
    let Ok(projects) = std::fs::read_dir(env.home().join("live")) else {
        return Vec::new();
    };
    projects
        .filter_map(|project| std::fs::read_dir(project.ok()?.path().join(agent)).ok())
        .flatten()
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("opencode-") && name.ends_with(".lock"))
        })
        .collect()
}

/// A running `hook follow --client opencode` as `agent`, and the lines it prints.
struct Follow {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    received: std::sync::mpsc::Receiver<String>,
}

impl Follow {
    fn start(env: &TestEnv, agent: &str) -> Follow {
        Follow::start_with(env, agent, &[])
    }

    fn start_with(env: &TestEnv, agent: &str, vars: &[(&str, &str)]) -> Follow {
        let mut command = env.command(env.root.path());
        command.envs(vars.iter().copied());
        let mut child = command
            .env("BATON_AGENT", agent)
            .args(["hook", "follow", "--client", "opencode"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hook follow runs");
        let stdin = child.stdin.take();
        let received = crate::common::stdout_lines(&mut child);
        Follow {
            child,
            stdin,
            received,
        }
    }

    /// The next pushed line, which must come.
    fn next(&self) -> Value {
        let line = self
            .received
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a pushed line");
        parsed(&line)
    }

    /// Closes its stdin, as the plugin's process ending does: it exits 0, having said
    /// nothing but, when a push met a command's write, that it waited for the board lock
    /// (as every command says; the test's own sends can race its records of seen).
    fn stop(self) {
        let said = self.stop_saying();
        assert!(
            said.lines()
                .all(|line| line.starts_with("waiting for the board lock held by ")),
            "{said}"
        );
    }

    /// Closes its stdin: it exits 0. Returns what it said on stderr.
    fn stop_saying(mut self) -> String {
        drop(self.stdin.take());
        let output = self.child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8_lossy(&output.stderr).into_owned()
    }
}

fn delivery_state(env: &TestEnv, id: &str) -> Value {
    let shown = env.run("lead", &["--json", "show", id]).json();
    shown["delivery"]["state"].clone()
}

#[test]
fn hook_follow_pushes_each_new_hand_over_to_its_agent_while_its_stdin_is_open() {
    let env = TestEnv::new();
    env.register(&["lead", "oc", "other"]);
    env.send("lead", "oc", "Already there", &[]);
    let follow = Follow::start(&env, "oc");
    // Unseen work waiting when the session begins is pushed (and the plugin prompts with
    // it only when the session is idle).
    let push = follow.next();
    assert_eq!(push["subject"], "Already there", "{push}");
    eventually("the live session is announced", || {
        (live_sessions(&env, "oc").len() == 1).then_some(())
    });

    env.send("lead", "oc", "First push", &[]);
    let push = follow.next();
    assert_eq!(push["subject"], "First push", "{push}");
    assert_eq!(push["from"], "lead");
    assert_eq!(push["id"], json!(2), "{push}");
    assert!(push["since"].is_string(), "{push}");

    // Others' work is not pushed; the next line is oc's next hand-over.
    env.send("lead", "other", "Not for oc", &[]);
    env.send("lead", "oc", "Second push", &[]);
    let push = follow.next();
    assert_eq!(push["subject"], "Second push", "{push}");
    assert!(
        follow
            .received
            .recv_timeout(std::time::Duration::from_millis(500))
            .is_err(),
        "one line per hand-over"
    );
    // A push shows the agent its task (SPEC section 11).
    eventually("the pushes are recorded as seen", || {
        ["1", "2", "4"]
            .iter()
            .all(|id| delivery_state(&env, id) == "seen")
            .then_some(())
    });
    assert_eq!(
        delivery_state(&env, "3"),
        "queued",
        "others' work stays unseen"
    );

    follow.stop();
    assert!(
        live_sessions(&env, "oc").is_empty(),
        "the announcement goes with it"
    );
}

/// What an earlier session was pushed has been seen: a new session is pushed only what
/// arrived since.
#[test]
fn hook_follow_does_not_push_what_the_agent_has_seen() {
    let env = TestEnv::new();
    env.register(&["lead", "oc"]);
    env.send("lead", "oc", "One", &[]);
    env.send("lead", "oc", "Two", &[]);
    let follow = Follow::start(&env, "oc");
    let pushed = [follow.next(), follow.next()];
    assert_eq!(
        pushed.map(|push| push["subject"].clone()),
        [json!("One"), json!("Two")]
    );
    eventually("both are recorded as seen", || {
        (delivery_state(&env, "1") == "seen" && delivery_state(&env, "2") == "seen").then_some(())
    });
    follow.stop();

    env.send("lead", "oc", "Three", &[]);
    let follow = Follow::start(&env, "oc");
    let push = follow.next();
    assert_eq!(push["subject"], "Three", "{push}");
    assert!(
        follow
            .received
            .recv_timeout(std::time::Duration::from_millis(500))
            .is_err(),
        "only what was not seen"
    );
    follow.stop();
}

/// A push whose seen mark cannot be written (the board's lock held past
/// `BATON_LOCK_TIMEOUT`) is not pushed again while it stays unseen, and is recorded once the
/// lock is free.
#[test]
fn hook_follow_does_not_push_twice_when_seen_cannot_be_recorded() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "oc"]);
    env.send("lead", "oc", "Locked out", &[]);
    let lock = crate::common::HeldLock::on(&env.project_dir("default").join("board.lock"));
    let follow = Follow::start_with(&env, "oc", &[("BATON_LOCK_TIMEOUT", "1")]);
    assert_eq!(follow.next()["subject"], "Locked out");
    // Longer than the follower's look-again period: it looks while T-1 is still unseen.
    std::thread::sleep(std::time::Duration::from_secs(7));
    assert_eq!(
        delivery_state(&env, "1"),
        "queued",
        "the lock kept it unseen"
    );
    drop(lock);
    env.send("lead", "oc", "Sentinel", &[]);
    assert_eq!(
        follow.next()["subject"],
        "Sentinel",
        "T-1 is not pushed twice"
    );
    eventually("T-1 is recorded as seen once the lock is free", || {
        (delivery_state(&env, "1") == "seen").then_some(())
    });
    // The first try to record and at least one more, at a later look, waited on the lock.
    let said = follow.stop_saying();
    let waits = said
        .lines()
        .filter(|line| line.starts_with("waiting for the board lock"));
    assert!(waits.count() >= 2, "{said}");
}

#[test]
fn hook_follow_is_for_the_plugin_only() {
    let env = TestEnv::new();
    env.register(&["oc"]);
    let mut command = env.command(env.root.path());
    command
        .env("BATON_AGENT", "oc")
        .args(["hook", "follow", "--client", "claude"])
        .stdin(Stdio::null());
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: hook follow is for baton's opencode plugin: pass --client opencode\n"
    );
}

#[test]
fn a_push_that_never_reaches_the_session_leaves_the_work_unseen() {
    let env = TestEnv::new();
    env.register(&["lead", "oc"]);
    let mut child = env
        .command(env.root.path())
        .env("BATON_AGENT", "oc")
        .args(["hook", "follow", "--client", "opencode"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("hook follow runs");
    // The plugin is gone before anything is pushed: nobody can read what the follower prints.
    drop(child.stdout.take());
    let id = env.send("lead", "oc", "Fix the parser", &[]).to_string();
    crate::common::exit_within(
        &mut child,
        std::time::Duration::from_secs(20),
        "the follower, nobody reading it",
        String::new,
    );
    assert_eq!(delivery_state(&env, &id), "queued");
}

/// A look that must renew the agent's leases, and so write, while the board lock stays busy
/// past `BATON_LOCK_TIMEOUT`, ends nothing: the follower looks again and pushes what comes
/// once the lock is free.
#[test]
fn hook_follow_outlasts_a_lock_busy_past_its_timeout() {
    if !files_only("looks at a project's files") {
        return;
    }
    const T0: &str = "2026-12-01T10:00:00.000Z";
    // Past half of the 30-minute lease: every look of oc's renews it, a locked write.
    const LATER: &str = "2026-12-01T10:20:00.000Z";
    let env = TestEnv::new();
    env.register(&["lead", "oc"]);
    let at = |when: &str, agent: &str, args: &[&str]| {
        env.run_with(&env.work(), agent, args, &[("BATON_NOW", when)])
            .ok()
            .to_string()
    };
    at(T0, "lead", &["send", "--to", "oc", "--subject", "Held"]);
    at(T0, "oc", &["claim", "1"]);
    let lock = crate::common::HeldLock::on(&env.project_dir("default").join("board.lock"));
    let follow = Follow::start_with(
        &env,
        "oc",
        &[("BATON_LOCK_TIMEOUT", "0.5"), ("BATON_NOW", LATER)],
    );
    // Several looks time out on the lock.
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(lock);
    at(
        LATER,
        "lead",
        &["send", "--to", "oc", "--subject", "After the lock"],
    );
    assert_eq!(follow.next()["subject"], "After the lock");
    follow.stop();
}
