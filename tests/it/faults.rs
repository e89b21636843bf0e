//! Faults: a full disk, and stored files that are truncated, garbage or of the wrong shape.
//! baton must answer with a clear error or warning naming the file, never panic, and never
//! rewrite what it could not read.

use std::fs;
use std::process::Command;

use crate::common::TestEnv;

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("Uid:"))
                .map(|line| line.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct TinyDisk(std::path::PathBuf);

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_fails_changes_clearly_and_leaves_the_board_as_it_was() {
    if !is_root() {
        // CI runs as root; a developer without root cannot mount the tiny disk.
        eprintln!("SKIPPED a_full_disk_fails_changes_clearly: needs root to mount a tmpfs");
        return;
    }
    let env = TestEnv::new();
    let mount_point = env.home();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs"])
        .arg(&mount_point)
        .status()
        .expect("mount runs");
    assert!(mounted.success(), "as root, mounting a tmpfs must work");
    let _disk = TinyDisk(mount_point.clone());
    env.register(&["lead", "dev"]);
    for n in 0..20 {
        env.send("lead", "dev", &format!("task {n} {}", "x".repeat(300)), &[]);
    }
    let board_before = fs::read(env.board_path("default")).unwrap();
    let log_before = fs::read(env.project_dir("default").join("activity.jsonl")).unwrap();
    // Fill what is left of the disk.
    let filler = mount_point.join("filler");
    let mut size = 1 << 20;
    while size > 0 {
        let chunk = vec![0u8; size];
        let mut content = fs::read(&filler).unwrap_or_default();
        content.extend_from_slice(&chunk);
        if fs::write(&filler, &content).is_err() {
            size /= 2;
        }
    }
    for args in [
        vec!["send", "--to", "dev", "--subject", "one more"],
        vec!["claim", "1"],
        vec!["note", "hello"],
    ] {
        let agent = if args[0] == "claim" { "dev" } else { "lead" };
        let run = env.run(agent, &args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert!(
            run.stderr.contains("No space left on device"),
            "{}",
            run.stderr
        );
        assert_eq!(
            run.stderr
                .lines()
                .filter(|line| line.starts_with("error:"))
                .count(),
            1
        );
        assert_eq!(
            fs::read(env.board_path("default")).unwrap(),
            board_before,
            "board unchanged"
        );
        let log_now = fs::read(env.project_dir("default").join("activity.jsonl")).unwrap();
        assert_eq!(
            log_now, log_before,
            "no activity line for a change that did not happen"
        );
    }
    // Reads still work on a full disk, and once space is back so do writes.
    assert_eq!(env.inbox_ids("dev").len(), 20);
    fs::remove_file(&filler).unwrap();
    env.send("lead", "dev", "after the disk was freed", &[]);
    assert_eq!(env.inbox_ids("dev").len(), 21);
}

/// Contents that must never crash baton or be silently replaced.
const BAD_CONTENTS: &[(&str, &[u8])] = &[
    ("empty", b""),
    (
        "truncated",
        b"{\"schema\": 1, \"project\": \"default\", \"next_id\": 3, \"tas",
    ),
    ("garbage", b"\x00\xff\xfe not json at all \x01"),
    ("wrong type", b"[1, 2, 3]"),
    (
        "wrong field type",
        b"{\"schema\": \"one\", \"project\": 5, \"next_id\": -1, \"tasks\": {}}",
    ),
];

#[test]
fn a_bad_board_is_reported_by_name_and_never_rewritten() {
    for (label, contents) in BAD_CONTENTS {
        let env = TestEnv::new();
        env.register(&["lead", "dev"]);
        env.send("lead", "dev", "x", &[]);
        let path = env.board_path("default");
        fs::write(&path, contents).unwrap();
        for (agent, args) in [
            ("lead", vec!["board"]),
            ("dev", vec!["inbox"]),
            ("dev", vec!["claim", "1"]),
            ("lead", vec!["send", "--to", "dev", "--subject", "y"]),
            ("lead", vec!["show", "1"]),
        ] {
            let run = env.run(agent, &args);
            assert_eq!(run.code, 4, "{label} {args:?}: {}", run.stderr);
            assert!(
                run.stderr.contains("board.json"),
                "{label}: names the file: {}",
                run.stderr
            );
            assert!(!run.stderr.contains("panicked"), "{label}: {}", run.stderr);
            assert_eq!(
                &fs::read(&path).unwrap(),
                contents,
                "{label}: never rewritten"
            );
        }
    }
}

#[test]
fn bad_project_and_agent_records_are_reported_by_name_and_never_rewritten() {
    for (label, contents) in BAD_CONTENTS {
        let env = TestEnv::new();
        env.register(&["lead", "dev"]);
        env.send("lead", "dev", "x", &[]);
        let project = env.project_dir("default").join("project.json");
        fs::write(&project, contents).unwrap();
        let run = env.run("lead", &["board"]);
        assert_eq!(run.code, 4, "{label}: {}", run.stderr);
        assert!(
            run.stderr.contains("project.json"),
            "{label}: {}",
            run.stderr
        );
        assert_eq!(&fs::read(&project).unwrap(), contents);
        fs::remove_file(&project).unwrap();

        let record = env.home().join("agents/dev.json");
        fs::write(&record, contents).unwrap();
        for (agent, args) in [
            ("dev", vec!["inbox"]),
            ("lead", vec!["send", "--to", "dev", "--subject", "y"]),
        ] {
            let run = env.run(agent, &args);
            assert_eq!(run.code, 4, "{label} {args:?}: {}", run.stderr);
            assert!(run.stderr.contains("dev.json"), "{label}: {}", run.stderr);
            assert!(!run.stderr.contains("panicked"), "{label}: {}", run.stderr);
            assert_eq!(
                &fs::read(&record).unwrap(),
                contents,
                "{label}: never rewritten"
            );
        }
    }
}

#[test]
fn torn_and_garbage_log_lines_are_skipped_and_later_lines_still_read() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "first", &[]);
    let log = env.project_dir("default").join("activity.jsonl");
    let mut content = fs::read(&log).unwrap();
    content.extend_from_slice(b"\x00garbage line\n{\"at\": 5}\n{\"torn");
    fs::write(&log, &content).unwrap();
    env.send("lead", "dev", "second", &[]);
    let run = env.run("lead", &["--json", "log"]);
    let lines: Vec<serde_json::Value> = run
        .ok()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let texts: Vec<&str> = lines
        .iter()
        .filter_map(|line| line["text"].as_str())
        .collect();
    assert_eq!(texts, ["lead → dev: first", "lead → dev: second"]);
}
