//! The activity log tells only the truth: exactly one line for every change that committed
//! and none for one that did not, whatever kills a writer; `doctor` checks log and board
//! agree; ids are never reused; two tasks with one id are shown, reported and never acted
//! on at random.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use baton::file::platform::file_id;
use serde_json::{Value, json};

use crate::common::{TestEnv, files_only};

/// Every line of the log, oldest first, across its rotated generations. Every line must be
/// a whole record: a torn line would be half a change.
fn log_lines(env: &TestEnv) -> Vec<Value> {
    let dir = env.project_dir("default");
    let mut lines = Vec::new();
    for name in [
        "activity.jsonl.5",
        "activity.jsonl.4",
        "activity.jsonl.3",
        "activity.jsonl.2",
        "activity.jsonl.1",
        "activity.jsonl",
    ] {
        let text = fs::read_to_string(dir.join(name)).unwrap_or_default();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{name}: a torn or bad line ({error}): {line}"));
            lines.push(value);
        }
    }
    lines
}

/// Every task on the board and in the archive: id to subjects (more than one: a reused id).
fn every_task(env: &TestEnv) -> BTreeMap<u64, Vec<String>> {
    let mut tasks: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for task in env.board("default")["tasks"].as_array().unwrap() {
        tasks
            .entry(task["id"].as_u64().unwrap())
            .or_default()
            .push(task["subject"].as_str().unwrap().to_string());
    }
    if let Ok(entries) = fs::read_dir(env.project_dir("default").join("archive")) {
        for entry in entries {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|extension| extension == "jsonl")
            {
                for line in fs::read_to_string(&path).unwrap().lines() {
                    let task: Value = serde_json::from_str(line).unwrap();
                    tasks
                        .entry(task["id"].as_u64().unwrap())
                        .or_default()
                        .push(task["subject"].as_str().unwrap().to_string());
                }
            }
        }
    }
    tasks
}

/// The `send` lines of the log: task id to the subjects they name, in order.
fn send_lines(env: &TestEnv) -> BTreeMap<u64, Vec<String>> {
    let mut sends: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in log_lines(env) {
        if line["action"] == "send" {
            let text = line["text"].as_str().unwrap();
            let subject = text.split_once(": ").map_or(text, |(_, subject)| subject);
            sends
                .entry(line["task"].as_u64().unwrap())
                .or_default()
                .push(subject.to_string());
        }
    }
    sends
}

/// Fills the log with notes to just short of rotating it (10,000 lines), so that a storm
/// crosses a rotation, and so that every append counts the log's lines (what the log does
/// past 640 KB) and takes long enough for a kill to land after it.
fn fill_log(env: &TestEnv, lines: usize) {
    let path = env.project_dir("default").join("activity.jsonl");
    let mut text = fs::read_to_string(&path).unwrap_or_default();
    for n in 0..lines {
        let line = json!({
            "at": "2026-11-29T12:00:00.000Z",
            "project": "default",
            "actor": "lead",
            "action": "note",
            "text": format!("filler note {n} {}", "x".repeat(60)),
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    fs::write(&path, text).unwrap();
}

fn spawn_send(env: &TestEnv, subject: &str) -> Child {
    env.command(&env.work())
        .args([
            "--as",
            "lead",
            "--json",
            "send",
            "--no-wake",
            "--to",
            "dev",
            "--subject",
            subject,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the baton binary runs")
}

#[test]
fn a_sigkill_storm_leaves_exactly_one_line_for_each_change_that_committed() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "before the storm", &[]);
    const WRITERS: usize = 8;
    const ROUNDS: usize = 8;

    // The log is filled until a rotation is 24 changes away once the calibration round
    // below has written its eight: the storm runs first on a log past 640 KB (where every
    // append counts the log's lines, which takes a while), then crosses the rotation.
    fill_log(&env, 10_000 - 24 - WRITERS - log_lines(&env).len());

    // How long a round of writers takes unhindered: the kills land within that (adapted
    // round by round so that some writers finish and some are killed).
    let started = Instant::now();
    let calibration: Vec<Child> = (0..WRITERS)
        .map(|writer| spawn_send(&env, &format!("calibration {writer}")))
        .collect();
    for child in calibration {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    let mut window = started.elapsed().as_micros() as u64 + 1;

    let mut seed = u64::from(std::process::id()) | 1;
    let mut random = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below.max(1)
    };
    let (mut reported, mut killed) = (Vec::new(), 0);
    let rotated = env.project_dir("default").join("activity.jsonl.1");
    let mut round = 0;
    while round < ROUNDS || (!rotated.exists() && round < 3 * ROUNDS) {
        round += 1;
        let mut children: Vec<(String, Child, u64)> = (0..WRITERS)
            .map(|writer| {
                let subject = format!("storm {round}.{writer}");
                let child = spawn_send(&env, &subject);
                (subject, child, random(window / 2))
            })
            .collect();
        children.sort_by_key(|(_, _, kill_at)| *kill_at);
        let round_started = Instant::now();
        for (_, child, kill_at) in &mut children {
            let at = Duration::from_micros(*kill_at);
            if let Some(wait) = at.checked_sub(round_started.elapsed()) {
                std::thread::sleep(wait);
            }
            let _ = child.kill();
        }
        let (reported_before, killed_before) = (reported.len(), killed);
        for (subject, child, _) in children {
            let output = child.wait_with_output().unwrap();
            if output.status.success() {
                let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
                reported.push((answer["task"]["id"].as_u64().unwrap(), subject));
            } else {
                killed += 1;
            }
        }
        if reported.len() == reported_before {
            window = window * 3 / 2;
        } else if killed == killed_before {
            window = window * 2 / 3 + 1;
        }
    }
    eprintln!("{killed} writers killed, {} finished", reported.len());
    assert!(killed > 0, "no writer was killed");
    assert!(!reported.is_empty(), "no writer finished");

    // The killed writers' journals are completed or dropped by the doctor.
    let doctor = env.run("", &["--json", "doctor"]);
    let checks: Value = serde_json::from_str(&doctor.stdout).unwrap();
    let tasks = every_task(&env);
    let sends = send_lines(&env);
    for (id, subject) in &reported {
        assert_eq!(
            tasks.get(id),
            Some(&vec![subject.clone()]),
            "T-{id} reported sent"
        );
    }
    for (id, subjects) in &tasks {
        assert_eq!(subjects.len(), 1, "T-{id} is one task: {subjects:?}");
        assert_eq!(
            sends.get(id),
            Some(subjects),
            "T-{id} has exactly its one send line"
        );
    }
    for (id, subjects) in &sends {
        assert_eq!(
            tasks.get(id),
            Some(subjects),
            "the send line of T-{id} is a task on the board"
        );
    }
    assert!(rotated.exists(), "the storm crossed a rotation");
    assert!(!env.project_dir("default").join("activity.journal").exists());
    for check in checks["checks"].as_array().unwrap() {
        if check["name"] == "activity" {
            assert_ne!(check["status"], "fail", "{check}");
        }
    }
    // A later write after another storm-less round keeps the log whole.
    let id = env.send("lead", "dev", "after the storm", &[]);
    assert_eq!(
        send_lines(&env).get(&id),
        Some(&vec!["after the storm".to_string()])
    );
}

/// Writes a journal as a writer killed after renaming its board (but before appending its
/// lines) leaves it: naming the board now in place, and the log as it is.
fn leave_journal_of_committed_change(env: &TestEnv, records: &[Value]) {
    let dir = env.project_dir("default");
    let board = fs::metadata(dir.join("board.json")).unwrap();
    let log = fs::metadata(dir.join("activity.jsonl")).unwrap();
    let journal = json!({
        "schema": 1,
        "board": {"inode": file_id(&dir.join("board.json"), &board), "length": board.len()},
        "log": {"inode": file_id(&dir.join("activity.jsonl"), &log), "length": log.len()},
        "records": records,
    });
    fs::write(dir.join("activity.journal"), format!("{journal}\n")).unwrap();
}

/// Takes the last line off the log and returns it.
fn cut_last_line(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let last: Value = serde_json::from_str(lines.pop().unwrap()).unwrap();
    fs::write(
        path,
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    )
    .unwrap();
    last
}

#[test]
fn a_change_committed_but_not_logged_is_logged_by_the_next_writer_log_and_doctor() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let log = env.project_dir("default").join("activity.jsonl");

    // The next writer: the missing line comes before its own.
    env.send("lead", "dev", "one", &[]);
    let line = cut_last_line(&log);
    leave_journal_of_committed_change(&env, &[line]);
    env.send("lead", "dev", "two", &[]);
    assert_eq!(
        send_lines(&env),
        BTreeMap::from([(1, vec!["one".into()]), (2, vec!["two".into()])])
    );

    // `log`, which holds no lock, catches up when nobody is writing.
    let line = cut_last_line(&log);
    leave_journal_of_committed_change(&env, &[line]);
    let shown = env.run("lead", &["--json", "log"]).ok().to_string();
    let records: Vec<Value> = shown
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let texts: Vec<&str> = records
        .iter()
        .filter_map(|record| record["text"].as_str())
        .collect();
    assert_eq!(texts.last(), Some(&"lead → dev: two"), "{texts:?}");
    assert_eq!(send_lines(&env).len(), 2);

    // `doctor` too, and says so.
    let line = cut_last_line(&log);
    leave_journal_of_committed_change(&env, &[line]);
    let report = env.run("", &["--json", "doctor"]);
    let report: Value = serde_json::from_str(&report.stdout).unwrap();
    let found = report["checks"].as_array().unwrap().iter().any(|check| {
        check["name"] == "activity"
            && check["status"] == "warn"
            && check["detail"]
                .as_str()
                .unwrap()
                .contains("now added to the log (T-2)")
    });
    assert!(found, "{report:#}");
    assert_eq!(send_lines(&env).len(), 2);
    assert!(!env.project_dir("default").join("activity.journal").exists());

    // A journal of a change that never committed (its board is not in place) is dropped.
    let dir = env.project_dir("default");
    fs::write(dir.join("elsewhere"), "a staged board never renamed").unwrap();
    let staged = fs::metadata(dir.join("elsewhere")).unwrap();
    let log_now = fs::metadata(&log).unwrap();
    let journal = json!({
        "schema": 1,
        "board": {"inode": file_id(&dir.join("elsewhere"), &staged), "length": staged.len()},
        "log": {"inode": file_id(&log, &log_now), "length": log_now.len()},
        "records": [{"at": "2026-11-29T12:00:00.000Z", "project": "default", "actor": "lead",
                     "action": "send", "task": 3, "to_status": "pending",
                     "text": "lead → dev: never"}],
    });
    fs::write(dir.join("activity.journal"), format!("{journal}\n")).unwrap();
    let id = env.send("lead", "dev", "three", &[]);
    assert_eq!(id, 3);
    assert_eq!(send_lines(&env).get(&3), Some(&vec!["three".to_string()]));
    assert!(!dir.join("activity.journal").exists());
}

fn activity_findings(env: &TestEnv) -> (i32, Vec<(String, String)>) {
    let run = env.run("", &["--json", "doctor"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let findings = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|check| check["name"] == "activity" || check["name"] == "boards")
        .map(|check| {
            (
                check["status"].as_str().unwrap().to_string(),
                check["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (run.code, findings)
}

#[test]
fn doctor_reports_a_log_that_disagrees_with_the_board() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    // The oldest line: tasks sent after it must all have their send line.
    env.run("lead", &["note", "start"]).ok();
    env.send("lead", "dev", "one", &[]);
    env.send("lead", "dev", "two", &[]);
    env.run("dev", &["claim", "2"]).ok();
    let (code, findings) = activity_findings(&env);
    assert_eq!(code, 0, "{findings:#?}");
    assert!(
        findings
            .iter()
            .any(|(status, detail)| status == "ok" && detail.contains("agree")),
        "{findings:#?}"
    );

    // A line for a change that never happened, a second send of T-1 as another task, and
    // a claim of T-1 that the board does not show.
    let log = env.project_dir("default").join("activity.jsonl");
    let mut text = fs::read_to_string(&log).unwrap();
    for line in [
        json!({"at": "2026-11-29T12:00:00.000Z", "project": "default", "actor": "lead",
               "action": "send", "task": 9, "to_status": "pending", "text": "lead → dev: ghost"}),
        json!({"at": "2026-11-29T12:00:00.000Z", "project": "default", "actor": "lead",
               "action": "send", "task": 1, "to_status": "pending", "text": "lead → dev: other"}),
        json!({"at": "2026-11-29T12:00:00.000Z", "project": "default", "actor": "dev",
               "action": "claim", "task": 1, "from_status": "pending",
               "to_status": "working"}),
    ] {
        text.push_str(&format!("{line}\n"));
    }
    fs::write(&log, text).unwrap();
    let (code, findings) = activity_findings(&env);
    assert_eq!(code, 1, "{findings:#?}");
    let has = |status: &str, words: &[&str]| {
        findings.iter().any(|(found, detail)| {
            found == status && words.iter().all(|word| detail.contains(word))
        })
    };
    assert!(
        has(
            "fail",
            &["neither the board nor in the archive", "T-9 (send)"]
        ),
        "{findings:#?}"
    );
    assert!(
        has("fail", &["more than once", "T-1", "lead → dev: other"]),
        "{findings:#?}"
    );
    assert!(
        has("warn", &["T-1 is pending", "left it working"]),
        "{findings:#?}"
    );

    // A task whose send line is gone.
    let kept: String = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|line| !line.contains("\"task\":9") && !line.contains("\"task\":1"))
        .map(|line| format!("{line}\n"))
        .collect();
    fs::write(&log, kept).unwrap();
    let (_, findings) = activity_findings(&env);
    assert!(
        findings.iter().any(|(status, detail)| status == "warn"
            && detail.contains("without their send line in the log: T-1")),
        "{findings:#?}"
    );
}

/// Sets `next_id` in board.json by hand.
fn set_next_id(env: &TestEnv, next_id: u64) {
    let path = "projects/default/board.json";
    let text = env.hub_text(path).unwrap();
    let start = text.find("\"next_id\": ").unwrap() + "\"next_id\": ".len();
    let end = start + text[start..].find(',').unwrap();
    env.write_hub_text(
        path,
        &format!("{}{next_id}{}", &text[..start], &text[end..]),
    );
    assert_eq!(env.board("default")["next_id"], next_id);
}

#[test]
fn a_next_id_edited_below_the_highest_id_never_makes_a_duplicate() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    for subject in ["one", "two", "three"] {
        env.send("lead", "dev", subject, &[]);
    }
    set_next_id(&env, 2);
    let (_, findings) = activity_findings(&env);
    assert!(
        findings.iter().any(|(status, detail)| status == "warn"
            && detail.contains("next_id 2, but T-3 is on the board")),
        "{findings:#?}"
    );
    assert_eq!(env.send("lead", "dev", "four", &[]), 4);
    assert_eq!(env.board("default")["next_id"], 5);

    // Below an archived id: every task is finished and archived, the board is empty.
    for id in ["1", "2", "3", "4"] {
        env.run("dev", &["done", id, "--result", "ok"]).ok();
    }
    env.run("lead", &["archive", "--older-than", "0"]).ok();
    assert_eq!(env.board("default")["tasks"], json!([]));
    set_next_id(&env, 3);
    assert_eq!(env.send("lead", "dev", "five", &[]), 5);
    let tasks = every_task(&env);
    assert!(
        tasks.values().all(|subjects| subjects.len() == 1),
        "{tasks:?}"
    );
    assert_eq!(
        env.run("lead", &["--json", "show", "3"]).json()["subject"],
        "three"
    );
}

#[test]
fn two_tasks_with_one_id_are_both_shown_reported_and_never_acted_on() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "alpha", &[]);
    env.send("lead", "dev", "beta", &[]);
    let path = env.board_path("default");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("\"id\": 2,", "\"id\": 1,")).unwrap();
    let before = fs::read(&path).unwrap();

    let listed = env.run("lead", &["--json", "board"]).json();
    let mut subjects: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap_or_else(|| listed.as_array().unwrap())
        .iter()
        .map(|task| task["subject"].as_str().unwrap())
        .collect();
    subjects.sort();
    assert_eq!(subjects, ["alpha", "beta"]);
    let human = env.run("lead", &["board"]).ok().to_string();
    assert!(human.contains("alpha") && human.contains("beta"), "{human}");
    let inbox = env.run("dev", &["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["tasks"].as_array().unwrap().len(), 2, "{inbox}");

    let (code, findings) = activity_findings(&env);
    assert_eq!(code, 1);
    assert!(
        findings.iter().any(|(status, detail)| status == "fail"
            && detail.contains("projects/default/board.json")
            && detail.contains("T-1")
            && detail.contains("alpha")
            && detail.contains("beta")),
        "{findings:#?}"
    );

    for (agent, args) in [
        ("lead", vec!["show", "1"]),
        ("dev", vec!["claim", "1"]),
        ("dev", vec!["done", "T-1", "--result", "r"]),
        (
            "lead",
            vec!["send", "--to", "dev", "--subject", "s", "--after", "1"],
        ),
    ] {
        let run = env.run(agent, &args);
        let stderr = run.fails(4);
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(
            stderr.contains("T-1") && stderr.contains("board.json"),
            "{stderr}"
        );
        assert!(stderr.contains("\nhint: "), "{stderr}");
        assert_eq!(fs::read(&path).unwrap(), before, "{args:?} changed nothing");
    }

    // Other work goes on, and nothing is lost: both tasks stay, the new one takes a new id.
    assert_eq!(env.send("lead", "dev", "gamma", &[]), 3);
    let tasks = every_task(&env);
    assert_eq!(tasks[&1], ["alpha", "beta"]);
    assert_eq!(tasks[&3], ["gamma"]);
}

#[test]
fn a_fifo_where_the_journal_or_the_log_should_be_is_refused_never_a_hang() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "one", &[]);
    let dir = env.project_dir("default");
    for name in ["activity.journal", "activity.jsonl"] {
        let path = dir.join(name);
        let saved = fs::read(&path).ok();
        let _ = fs::remove_file(&path);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let mut child = env
            .command(&env.work())
            .args(["--as", "lead", "send", "--to", "dev", "--subject", "two"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A watchdog: a command that hangs on the FIFO is killed, and fails the test.
        crate::common::exit_within(
            &mut child,
            Duration::from_secs(10),
            &format!("send, {name} a FIFO"),
            String::new,
        );
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{name}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(name),
            "{stderr}"
        );
        fs::remove_file(&path).unwrap();
        if let Some(saved) = saved {
            fs::write(&path, saved).unwrap();
        }
    }
    assert_eq!(env.send("lead", "dev", "two", &[]), 2);
    assert_eq!(send_lines(&env).len(), 2);
}
