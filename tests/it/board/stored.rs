//! Stored data through the real binary: a damaged board, a held lock, names that could
//! escape the home, the archive and the log.

use std::fs;
use std::process::Stdio;

use serde_json::Value;

use super::status_of;
use crate::common::{TestEnv, files_only};

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
