//! The core board through the real binary: the lifecycle, refusals, stored-data errors,
//! locks, names, concurrency and crashes.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TestEnv, files_only, thread_kinds};

fn status_of(env: &TestEnv, agent: &str, id: u64) -> String {
    let view = env.run(agent, &["--json", "show", &id.to_string()]).json();
    view["status"].as_str().unwrap().to_string()
}

#[test]
fn a_task_walks_its_whole_life_and_is_always_in_the_right_inbox() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let id = env.send(
        "claude",
        "codex",
        "Fix the parser",
        &[
            "--body",
            "It accepts 2026-02-30",
            "--files",
            "src/date.rs,tests/date.rs",
            "--review",
        ],
    );
    let both = |claude: Vec<u64>, codex: Vec<u64>| {
        assert_eq!(env.inbox_ids("claude"), claude, "claude's inbox");
        assert_eq!(env.inbox_ids("codex"), codex, "codex's inbox");
    };
    both(vec![], vec![id]);
    let inbox = env.run("codex", &["--json", "inbox"]).json();
    let entry = &inbox["tasks"][0];
    assert_eq!(entry["body"], "It accepts 2026-02-30");
    assert_eq!(
        entry["files"],
        serde_json::json!(["src/date.rs", "tests/date.rs"])
    );
    assert_eq!(entry["waiting"], "claude");

    let n = id.to_string();
    env.run("codex", &["claim", &n]).ok();
    both(vec![], vec![]);
    env.run("codex", &["ask", &n, "--body", "Refuse or clamp?"])
        .ok();
    both(vec![id], vec![]);
    let inbox = env.run("claude", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["reason"], "question");
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Refuse or clamp?");
    env.run(
        "claude",
        &["answer", &format!("T-{id}"), "--body", "Refuse."],
    )
    .ok();
    both(vec![], vec![id]);
    let inbox = env.run("codex", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["last_word"]["text"], "Refuse.");
    env.run("codex", &["claim", &format!("t-{id}")]).ok();
    env.run(
        "codex",
        &["review", &n, "--body", "Refused with a clear error"],
    )
    .ok();
    both(vec![id], vec![]);
    env.run(
        "claude",
        &["request-changes", &n, "--body", "Add a leap-year test"],
    )
    .ok();
    both(vec![], vec![id]);
    let inbox = env.run("codex", &["--json", "inbox"]).json();
    assert_eq!(inbox["tasks"][0]["reason"], "changes_requested");
    assert_eq!(
        inbox["tasks"][0]["last_word"]["text"],
        "Add a leap-year test"
    );
    env.run("codex", &["claim", &n]).ok();
    env.run("codex", &["review", &n, "--body", "Leap-year test added"])
        .ok();
    both(vec![id], vec![]);
    env.run("claude", &["approve", &n]).ok();
    both(vec![], vec![]);

    let task = env.run("claude", &["--json", "show", &n]).json();
    assert_eq!(task["status"], "completed");
    assert_eq!(task["result"], "Leap-year test added");
    assert_eq!(
        thread_kinds(&task),
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
    // A finished task moves no more.
    let refused = env.run("codex", &["fail", &n, "--reason", "late"]);
    assert!(
        refused.fails(1).contains("is completed"),
        "{}",
        refused.stderr
    );
}

#[test]
fn refusals_say_which_task_its_status_and_who_may_act() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let id = env
        .send("claude", "codex", "Port the lexer", &[])
        .to_string();
    env.run("codex", &["claim", &id]).ok();
    let run = env.run("claude", &["ask", &id, "--body", "?"]);
    assert_eq!(
        run.fails(1).lines().next().unwrap(),
        "error: T-1 is working, assigned to codex: only codex can ask on it"
    );
    let run = env.run("gemini", &["cancel", &id]);
    assert!(
        run.fails(1).contains("only claude (the sender)"),
        "{}",
        run.stderr
    );
    let run = env.run("codex", &["done", &id]);
    assert!(
        run.fails(1).contains("done needs --result"),
        "{}",
        run.stderr
    );
    let run = env.run("codex", &["claim", "99"]);
    assert!(
        run.fails(1).contains("no task T-99 in project default"),
        "{}",
        run.stderr
    );
    let run = env.run("", &["inbox"]);
    assert!(
        run.fails(1)
            .contains("no identity: pass --as NAME or set BATON_AGENT")
    );
    let run = env.run("claude", &["send", "--to", "nobody", "--subject", "x"]);
    let stderr = run.fails(1);
    assert!(stderr.contains("unknown agent `nobody`"), "{stderr}");
    assert!(
        stderr.contains("claude, codex, gemini"),
        "lists the known agents: {stderr}"
    );
    let run = env.run("claude", &["claim", "T-x"]);
    assert!(run.fails(1).contains("not a task id"), "{}", run.stderr);
    // Nothing refused reached the log.
    assert_eq!(env.activity("default").len(), 2);
}

#[test]
fn blocked_tasks_are_in_no_inbox_until_their_dependencies_complete() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let first = env.send("lead", "dev", "Schema", &[]);
    let second = env.send("lead", "dev", "Migration", &["--after", &first.to_string()]);
    assert_eq!(env.inbox_ids("dev"), vec![first]);
    let board = env.run("lead", &["board"]).ok().to_string();
    assert!(board.contains("blocked by T-1"), "{board}");
    let run = env.run("dev", &["claim", &second.to_string()]);
    assert!(
        run.fails(1).contains("blocked until T-1 is completed"),
        "{}",
        run.stderr
    );
    env.run("dev", &["done", &first.to_string(), "--result", "done"])
        .ok();
    assert_eq!(env.inbox_ids("dev"), vec![second]);
    let run = env.run(
        "lead",
        &["send", "--to", "dev", "--subject", "x", "--after", "42"],
    );
    assert!(run.fails(1).contains("no task T-42"), "{}", run.stderr);
}

#[test]
fn inbox_orders_by_priority_then_age() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let low = env.send("lead", "dev", "low", &["--priority", "low"]);
    let normal = env.send("lead", "dev", "normal", &[]);
    let urgent = env.send("lead", "dev", "urgent", &["--priority", "urgent"]);
    let normal_later = env.send("lead", "dev", "normal later", &[]);
    assert_eq!(
        env.inbox_ids("dev"),
        vec![urgent, normal, normal_later, low]
    );
}

#[test]
fn a_stalled_claim_returns_to_the_sender_and_any_command_renews_the_lease() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let start = "2026-11-29T10:00:00.000Z";
    let at = |minutes: u32| {
        format!(
            "2026-11-29T{:02}:{:02}:00.000Z",
            10 + minutes / 60,
            minutes % 60
        )
    };
    let id = env.send("lead", "dev", "Long job", &[]).to_string();
    env.run_env("dev", &["claim", &id], &[("BATON_NOW", start)])
        .ok();
    let inbox = |agent: &str, minute: u32| -> Vec<Value> {
        let value = env
            .run_env(agent, &["--json", "inbox"], &[("BATON_NOW", &at(minute))])
            .json();
        value["tasks"].as_array().unwrap().clone()
    };
    assert!(inbox("lead", 29).is_empty(), "lease still live");
    // Twenty minutes in, dev runs a command: past half the lease, so it is renewed to 50.
    env.run_env("dev", &["status"], &[("BATON_NOW", &at(20))])
        .ok();
    assert!(inbox("lead", 45).is_empty(), "renewed lease still live");
    let stalled = inbox("lead", 51);
    assert_eq!(stalled.len(), 1);
    assert_eq!(stalled[0]["reason"], "stalled");
    let board = env
        .run_env("lead", &["board"], &[("BATON_NOW", &at(51))])
        .ok()
        .to_string();
    assert!(board.contains("STALLED"), "{board}");
}

#[test]
fn status_is_one_line_and_quiet_says_nothing_when_empty() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    assert_eq!(env.run("dev", &["status", "--quiet"]).ok(), "");
    env.send("lead", "dev", "Write docs", &[]);
    let line = env.run("dev", &["status", "--quiet"]).ok().to_string();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("T-1"), "{line}");
}

#[test]
fn global_flags_work_before_and_after_the_subcommand() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "x", &[]);
    let before = env.run("", &["--as", "dev", "--json", "inbox"]).json();
    let after = env.run("", &["inbox", "--json", "--as", "dev"]).json();
    assert_eq!(before["tasks"], after["tasks"]);
    let from_env = env
        .run_env("", &["--json", "inbox"], &[("BATON_AGENT", "dev")])
        .json();
    assert_eq!(from_env["agent"], "dev");
    let overridden = env
        .run_env("lead", &["--json", "inbox"], &[("BATON_AGENT", "dev")])
        .json();
    assert_eq!(overridden["agent"], "lead", "--as wins over BATON_AGENT");
}

#[test]
fn a_corrupt_board_exits_4_and_is_left_untouched() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "x", &[]);
    let path = env.board_path("default");
    let garbage = b"{\"schema\": 1, \"tasks\": [ oops";
    fs::write(&path, garbage).unwrap();
    for args in [
        vec!["board"],
        vec!["send", "--to", "dev", "--subject", "y"],
        vec!["inbox"],
    ] {
        let run = env.run("lead", &args);
        let stderr = run.fails(4);
        assert!(stderr.contains("board.json is unreadable"), "{stderr}");
        assert!(
            stderr.contains("hint:") && stderr.contains("board.json.bak"),
            "{stderr}"
        );
        assert_eq!(fs::read(&path).unwrap(), garbage, "never rewritten");
    }
    let newer = br#"{"schema": 7, "project": "default", "next_id": 1, "tasks": []}"#;
    fs::write(&path, newer).unwrap();
    let run = env.run("lead", &["send", "--to", "dev", "--subject", "y"]);
    assert!(run.fails(4).contains("schema 7"), "{}", run.stderr);
    assert_eq!(fs::read(&path).unwrap(), newer);
}

#[test]
fn a_held_lock_gives_exit_3_naming_the_holder() {
    if !files_only("looks at a project's files") {
        return;
    }
    use fs4::FileExt;
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "x", &[]);
    let lock_path = env.project_dir("default").join("board.lock");
    let lock = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    FileExt::lock(&lock).unwrap();
    // The holder signs the lock file with its pid; baton names a recorded pid that still
    // runs (one that has exited is not the holder).
    let holder = std::process::id();
    fs::write(&lock_path, holder.to_string()).unwrap();
    let run = env.run_env(
        "lead",
        &["send", "--to", "dev", "--subject", "y"],
        &[("BATON_LOCK_TIMEOUT", "1")],
    );
    let stderr = run.fails(3);
    assert!(
        stderr.contains(&format!("waiting for the board lock held by pid {holder}")),
        "{stderr}"
    );
    assert!(stderr.contains("gave up after 1s"), "{stderr}");
    // Readers never need the lock. (The inbox waits for it up to the lock timeout, to record
    // that its agent looked, and shows the inbox without: one second here, not the suite's 20.)
    env.run_env("dev", &["inbox", "--peek"], &[("BATON_LOCK_TIMEOUT", "1")])
        .ok();
    FileExt::unlock(&lock).unwrap();
    env.run("lead", &["send", "--to", "dev", "--subject", "y"])
        .ok();
}

#[test]
fn names_that_could_escape_the_home_are_refused_before_any_path_is_made() {
    let env = TestEnv::new();
    env.register(&["lead"]);
    let before = snapshot(&env.root.path().to_path_buf());
    for name in ["../x", "a/b", "..", ".", "", "UPPER", "-flag"] {
        let run = env.run_env("", &[&format!("--as={name}"), "whoami"], &[]);
        assert_eq!(run.code, 1, "--as {name:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("invalid agent name") || name.is_empty(),
            "{}",
            run.stderr
        );
        let run = env.run("lead", &[&format!("--project={name}"), "board"]);
        assert_eq!(run.code, 1, "--project {name:?}: {}", run.stderr);
        let run = env.run("lead", &["send", &format!("--to={name}"), "--subject", "x"]);
        assert_eq!(run.code, 1, "--to {name:?}: {}", run.stderr);
    }
    assert_eq!(
        snapshot(&env.root.path().to_path_buf()),
        before,
        "no file or directory appeared"
    );
}

/// Every path under `root`, for comparing before and after.
fn snapshot(root: &std::path::PathBuf) -> Vec<String> {
    let mut paths = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if !name.ends_with(".lock") && !name.contains("agents/lead") {
                paths.push(name);
            }
        }
    }
    paths.sort();
    paths
}

#[test]
fn archived_tasks_leave_the_board_and_show_still_finds_them() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let old = "2026-10-01T09:00:00.000Z";
    let id = env.send("lead", "dev", "Old work", &[]).to_string();
    env.run_env(
        "dev",
        &["done", &id, "--result", "shipped"],
        &[("BATON_NOW", old)],
    )
    .ok();
    env.send("lead", "dev", "New work", &[]);
    let board = env.board("default");
    let ids: Vec<u64> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![2],
        "the week-old finished task moved off on the next write"
    );
    let archived =
        fs::read_to_string(env.project_dir("default").join("archive/2026-10.jsonl")).unwrap();
    assert_eq!(archived.lines().count(), 1);
    let shown = env.run("lead", &["--json", "show", &id]).json();
    assert_eq!(shown["status"], "completed");
    assert_eq!(shown["archived"], true);
    assert_eq!(shown["result"], "shipped");
    let next = env.send("lead", "dev", "Another", &[]);
    assert_eq!(next, 3, "ids are never reused");
}

#[test]
fn the_board_keeps_at_most_200_finished_tasks() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    // Write a board with 205 finished tasks directly, then make one change.
    let mut tasks = Vec::new();
    for n in 1..=205u64 {
        tasks.push(serde_json::json!({
            "id": n, "subject": format!("t{n}"), "from": "lead", "to": "dev", "status": "completed",
            "created_at": "2026-11-29T10:00:00.000Z",
            "updated_at": format!("2026-11-29T10:{:02}:{:02}.000Z", n / 60, n % 60),
        }));
    }
    let board =
        serde_json::json!({"schema": 1, "project": "default", "next_id": 206, "tasks": tasks});
    fs::create_dir_all(env.project_dir("default")).unwrap();
    fs::write(
        env.board_path("default"),
        serde_json::to_vec_pretty(&board).unwrap(),
    )
    .unwrap();
    env.run_env(
        "lead",
        &["note", "tidy"],
        &[("BATON_NOW", "2026-11-29T11:00:00.000Z")],
    )
    .ok();
    let board = env.board("default");
    let kept: Vec<u64> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    assert_eq!(kept.len(), 200);
    assert_eq!(kept[0], 6, "the oldest five left first");
    for id in 1..=5 {
        assert_eq!(status_of(&env, "lead", id), "completed");
    }
}

/// Runs `baton` as `agent` and reports whether it succeeded, with its JSON output.
fn try_run(env: &TestEnv, agent: &str, args: &[&str]) -> (bool, String, String) {
    let run = env.run(agent, args);
    (run.code == 0, run.stdout, run.stderr)
}

#[test]
fn sixteen_senders_and_racing_claimers_lose_nothing() {
    const SENDERS: usize = 16;
    const EACH: usize = 50;
    const CLAIMED: u64 = 120;
    const CLAIMERS: usize = 4;
    let env = Arc::new(TestEnv::new());
    env.register(&["worker"]);
    for sender in 0..SENDERS {
        env.register(&[&format!("s{sender}")]);
    }
    let sent = Arc::new(Mutex::new(Vec::<(u64, String)>::new()));
    let claims = Arc::new(Mutex::new(HashMap::<u64, usize>::new()));
    let mut threads = Vec::new();
    for sender in 0..SENDERS {
        let env = Arc::clone(&env);
        let sent = Arc::clone(&sent);
        threads.push(thread::spawn(move || {
            for n in 0..EACH {
                let subject = format!("s{sender}-n{n}");
                let (ok, stdout, stderr) = try_run(
                    &env,
                    &format!("s{sender}"),
                    &["--json", "send", "--to", "worker", "--subject", &subject],
                );
                assert!(ok, "send failed: {stderr}");
                let value: Value = serde_json::from_str(&stdout).unwrap();
                sent.lock()
                    .unwrap()
                    .push((value["task"]["id"].as_u64().unwrap(), subject));
            }
        }));
    }
    for _ in 0..CLAIMERS {
        let env = Arc::clone(&env);
        let claims = Arc::clone(&claims);
        threads.push(thread::spawn(move || {
            for id in 1..=CLAIMED {
                let deadline = Instant::now() + Duration::from_secs(120);
                loop {
                    let (ok, _, stderr) =
                        try_run(&env, "worker", &["--json", "claim", &id.to_string()]);
                    if ok {
                        *claims.lock().unwrap().entry(id).or_default() += 1;
                        break;
                    }
                    if stderr.contains("is working") {
                        break;
                    }
                    assert!(stderr.contains("no task"), "unexpected refusal: {stderr}");
                    assert!(Instant::now() < deadline, "task {id} never appeared");
                    thread::sleep(Duration::from_millis(5));
                }
            }
        }));
    }
    for thread in threads {
        thread.join().expect("no worker thread panicked");
    }
    let sent = sent.lock().unwrap().clone();
    let claims = claims.lock().unwrap().clone();
    assert_eq!(sent.len(), SENDERS * EACH);
    let board = env.board("default");
    let tasks = board["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), SENDERS * EACH, "no task lost");
    let on_board: HashMap<u64, String> = tasks
        .iter()
        .map(|task| {
            (
                task["id"].as_u64().unwrap(),
                task["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (id, subject) in &sent {
        assert_eq!(
            on_board.get(id),
            Some(subject),
            "reported task {id} is on the board as sent"
        );
    }
    let ids: HashSet<u64> = on_board.keys().copied().collect();
    assert_eq!(
        ids,
        (1..=(SENDERS * EACH) as u64).collect(),
        "ids unique and dense"
    );
    for id in 1..=CLAIMED {
        assert_eq!(
            claims.get(&id),
            Some(&1),
            "T-{id} has exactly one winning claim"
        );
    }
    let working = tasks
        .iter()
        .filter(|task| task["status"] == "working")
        .count();
    assert_eq!(working as u64, CLAIMED);
    let activity = env.activity("default");
    let sends = activity
        .iter()
        .filter(|line| line["action"] == "send")
        .count();
    let claim_lines = activity
        .iter()
        .filter(|line| line["action"] == "claim")
        .count();
    assert_eq!(
        (sends, claim_lines),
        (SENDERS * EACH, CLAIMED as usize),
        "one line per change"
    );
}

/// A small deterministic pseudo-random sequence (no extra crate needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

#[test]
fn writers_killed_at_random_points_never_break_the_board_or_lose_a_reported_change() {
    if !files_only("reads board.json") {
        return;
    }
    let env = Arc::new(TestEnv::new());
    env.register(&["lead", "dev"]);
    // A board with some weight, so a write takes long enough to be interrupted.
    for n in 0..30 {
        env.send("lead", "dev", &format!("seed {n} {}", "x".repeat(200)), &[]);
    }
    // Kill within twice the time a whole send takes here, so the kills land before, during
    // and after the write whatever the speed of the machine. The window then follows what
    // happens: it widens while every send is killed and narrows while none is, so a sudden
    // change of load cannot leave the storm one-sided.
    let started = Instant::now();
    for n in 0..5 {
        env.send("lead", "dev", &format!("timing {n}"), &[]);
    }
    let window = Arc::new(Mutex::new(
        (started.elapsed().as_micros() as u64 / 5 * 2).max(1),
    ));
    let reported = Arc::new(Mutex::new(Vec::<(u64, String)>::new()));
    let killed = Arc::new(Mutex::new(0usize));
    let mut threads = Vec::new();
    for worker in 0..3u64 {
        let env = Arc::clone(&env);
        let reported = Arc::clone(&reported);
        let killed = Arc::clone(&killed);
        let window = Arc::clone(&window);
        threads.push(thread::spawn(move || {
            let mut random = Lcg(worker * 7919 + u64::from(std::process::id()));
            for round in 0..40 {
                let current = *window.lock().unwrap();
                let subject = format!("w{worker}-r{round}");
                let mut child = env
                    .command(&env.work())
                    .args([
                        "--as",
                        "lead",
                        "--json",
                        "send",
                        "--to",
                        "dev",
                        "--subject",
                        &subject,
                    ])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                thread::sleep(Duration::from_micros(random.next(current)));
                let _ = child.kill();
                let output = child.wait_with_output().unwrap();
                let was_killed = output.status.code().is_none();
                if was_killed {
                    *killed.lock().unwrap() += 1;
                }
                let mut window = window.lock().unwrap();
                *window = if was_killed {
                    *window * 5 / 4 + 1
                } else {
                    (*window * 4 / 5).max(1)
                };
                drop(window);
                if output.status.success() {
                    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
                    reported
                        .lock()
                        .unwrap()
                        .push((value["task"]["id"].as_u64().unwrap(), subject));
                }
                let text = fs::read_to_string(env.board_path("default")).unwrap();
                serde_json::from_str::<Value>(&text).expect("the board always parses");
            }
        }));
    }
    for thread in threads {
        thread.join().unwrap();
    }
    let board = env.board("default");
    let on_board: HashMap<u64, String> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["id"].as_u64().unwrap(),
                task["subject"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let reported = reported.lock().unwrap();
    let killed = *killed.lock().unwrap();
    assert!(
        killed > 0 && !reported.is_empty(),
        "both outcomes happened: {killed} killed, {} reported",
        reported.len()
    );
    for (id, subject) in reported.iter() {
        assert_eq!(
            on_board.get(id),
            Some(subject),
            "a change that reported success survived"
        );
    }
    // And the board still takes writes: no lock or temp file was left in the way.
    env.send("lead", "dev", "after the storm", &[]);
    let leftovers: Vec<_> = fs::read_dir(env.project_dir("default"))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temp files do not pile up: {leftovers:?}"
    );
}

#[test]
fn the_demo_walks_the_whole_lifecycle_without_touching_the_real_home() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let run = env.run("", &["demo"]);
    let out = run.ok();
    for step in [
        "send",
        "claim",
        "ask",
        "answer",
        "review",
        "request-changes",
        "approve",
    ] {
        assert!(
            out.contains(&format!("$ baton {step}")),
            "demo shows {step}: {out}"
        );
    }
    assert!(out.contains("T-1 completed"), "{out}");
    assert!(
        out.contains("1 task for codex") && out.contains("1 task for claude"),
        "both inboxes"
    );
    assert!(
        !env.home().join("projects").exists(),
        "the demo used a throwaway home"
    );
}

#[test]
fn log_shows_the_latest_lines_and_filters_by_time() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    for (n, at) in [
        "2026-11-29T08:00:00.000Z",
        "2026-11-29T09:00:00.000Z",
        "2026-11-29T10:00:00.000Z",
    ]
    .iter()
    .enumerate()
    {
        env.run_env(
            "lead",
            &["note", &format!("note {n}")],
            &[("BATON_NOW", at)],
        )
        .ok();
    }
    let texts = |args: &[&str]| -> Vec<String> {
        env.run("lead", args)
            .ok()
            .lines()
            .map(|line| {
                serde_json::from_str::<Value>(line).unwrap()["text"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(texts(&["--json", "log", "-n", "2"]), ["note 1", "note 2"]);
    assert_eq!(
        texts(&["--json", "log", "--since", "2026-11-29T09:00:00Z"]),
        ["note 1", "note 2"]
    );
    let human = env.run("lead", &["log"]).ok().to_string();
    assert!(human.contains("lead note: note 0"), "{human}");
    let run = env.run("lead", &["log", "--since", "yesterday"]);
    assert!(
        run.fails(1).contains("not an RFC 3339 time"),
        "{}",
        run.stderr
    );
}

#[test]
fn log_follow_prints_new_lines_as_they_come() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let mut child = env
        .command(&env.work())
        .args(["--as", "lead", "log", "--follow", "-n", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let arrived = crate::common::stdout_lines(&mut child);
    // A task sent before the follower has looked at the log is behind where it starts: send
    // until one is seen, and give up (failing) rather than wait for ever.
    let mut line = None;
    for _ in 0..40 {
        env.send("lead", "dev", "watched task", &[]);
        if let Ok(seen) = arrived.recv_timeout(std::time::Duration::from_millis(500)) {
            line = Some(seen);
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let line = line.expect("a line arrives within 20 seconds");
    assert!(
        line.contains("send T-") && line.contains("watched task"),
        "{line}"
    );
}

#[test]
fn archive_moves_finished_tasks_on_demand_and_dry_run_moves_nothing() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let done = env.send("lead", "dev", "finished", &[]).to_string();
    env.send("lead", "dev", "open", &[]);
    env.run("dev", &["done", &done, "--result", "ok"]).ok();
    let dry = env
        .run(
            "lead",
            &["--json", "archive", "--older-than", "0", "--dry-run"],
        )
        .json();
    assert_eq!(dry["tasks"], serde_json::json!([1]));
    assert_eq!(
        env.board("default")["tasks"].as_array().unwrap().len(),
        2,
        "dry run moved nothing"
    );
    let moved = env
        .run("lead", &["--json", "archive", "--older-than", "0"])
        .json();
    assert_eq!(moved["tasks"], serde_json::json!([1]));
    assert_eq!(env.board("default")["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(
        env.run("lead", &["--json", "show", &done]).json()["archived"],
        true
    );
}

#[test]
fn help_teaches_and_exits_zero_while_bad_arguments_exit_one() {
    let env = TestEnv::new();
    let help = env.run("", &["--help"]);
    let text = help.ok();
    assert!(
        text.contains("Exit codes") && text.contains("inbox"),
        "{text}"
    );
    let run = env.run("", &["send", "--to", "x"]);
    assert_eq!(
        run.code, 1,
        "missing --subject is a wrong request: {}",
        run.stderr
    );
    let run = env.run("", &["frobnicate"]);
    assert_eq!(run.code, 1);
}

/// `--no-wake` is offered by the commands that hand work over, and by no other; before the
/// command, where a wrapper may pass it to everything it runs, every command takes it.
#[test]
fn no_wake_is_offered_only_where_work_is_handed_over() {
    let env = TestEnv::new();
    let offers = |command: &str| {
        let run = env.run("", &[command, "--help"]);
        run.ok().contains("--no-wake")
    };
    for command in [
        "send",
        "ask",
        "answer",
        "review",
        "approve",
        "request-changes",
        "done",
        "fail",
        "cancel",
        "reassign",
        "msg",
        "mcp",
        "serve",
    ] {
        assert!(offers(command), "{command} --help lacks --no-wake");
    }
    for command in [
        "inbox", "board", "show", "status", "log", "claim", "release", "agents", "whoami",
        "messages", "wait", "watch", "doctor", "note",
    ] {
        assert!(!offers(command), "{command} --help offers --no-wake");
    }
    env.register(&["lead"]);
    let refused = env.run("lead", &["inbox", "--no-wake"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("--no-wake"), "{}", refused.stderr);
    env.run("lead", &["--no-wake", "inbox"]).ok();
}

/// Every command that takes a task says, in its help, what the `<ID>` is and how to write it.
#[test]
fn the_task_id_is_described_in_every_commands_help() {
    let env = TestEnv::new();
    for command in [
        "show",
        "claim",
        "release",
        "ask",
        "answer",
        "review",
        "approve",
        "request-changes",
        "done",
        "fail",
        "cancel",
        "reassign",
    ] {
        let run = env.run("", &[command, "--help"]);
        let help = run.ok();
        let line = help
            .lines()
            .find(|line| line.trim_start().starts_with("<ID>"))
            .unwrap_or_else(|| panic!("{command} --help has no <ID> line:\n{help}"));
        assert!(
            line.contains("The task: 12, T-12 or t-12"),
            "{command} --help: {line}"
        );
    }
}

#[test]
fn a_change_reports_every_inbox_it_fills_including_unblocked_tasks() {
    let env = TestEnv::new();
    env.register(&["lead", "dev", "qa"]);
    let build = env.send("lead", "dev", "Build", &[]).to_string();
    let sent = env
        .run(
            "lead",
            &[
                "--json",
                "send",
                "--to",
                "qa",
                "--subject",
                "Test",
                "--after",
                &build,
            ],
        )
        .json();
    assert_eq!(
        sent["handovers"],
        serde_json::json!([]),
        "a blocked task fills no inbox"
    );
    let done = env
        .run("dev", &["--json", "done", &build, "--result", "built"])
        .json();
    let handovers = done["handovers"].as_array().unwrap();
    assert_eq!(handovers.len(), 1, "{handovers:?}");
    assert_eq!(handovers[0]["agent"], "qa");
    assert_eq!(handovers[0]["task"], 2);
    assert_eq!(handovers[0]["reason"], "assigned");
    let asked = env
        .run("qa", &["--json", "ask", "2", "--body", "Which build?"])
        .json();
    assert_eq!(asked["handovers"][0]["agent"], "lead");
    assert_eq!(asked["handovers"][0]["reason"], "question");
}
