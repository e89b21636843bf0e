//! Faults: a full disk, and stored files that are truncated, garbage or of the wrong shape.
//! baton must answer with a clear error or warning naming the file, never panic, and never
//! rewrite what it could not read.

use std::fs;
use std::process::Command;

use crate::common::{TestEnv, files_only};

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
    if !files_only("reads board.json") {
        return;
    }
    if !is_root() {
        // CI runs as root; a developer without root cannot mount the tiny disk.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test as root"
        );
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
    if !files_only("reads board.json") {
        return;
    }
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

/// A task damaged deep inside (a thread entry of an unknown kind) is found when a command
/// reads that task whole: that command fails naming the file and the task, while commands
/// on other tasks go on and carry the damaged task's text over unchanged for a repair.
#[test]
fn a_task_damaged_deep_inside_is_named_when_read_and_never_lost() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    for subject in ["one", "two", "three"] {
        env.send("lead", "dev", subject, &[]);
    }
    env.run("dev", &["ask", "2", "--body", "which way?"]).ok();
    let path = env.board_path("default");
    let text = fs::read_to_string(&path).unwrap();
    let damaged = text.replacen("\"kind\": \"question\"", "\"kind\": \"musing\"", 1);
    assert_ne!(damaged, text, "the question entry is there to damage");
    fs::write(&path, &damaged).unwrap();
    let start = damaged.find("\"id\": 2").unwrap();
    let task_two = &damaged[start..damaged[start..].find("\n    }").unwrap() + start];

    let show = env.run("lead", &["show", "2"]);
    assert_eq!(show.code, 4, "{}", show.stderr);
    assert!(show.stderr.contains("board.json"), "{}", show.stderr);
    assert!(show.stderr.contains("T-2"), "{}", show.stderr);
    assert!(show.stderr.contains("musing"), "{}", show.stderr);
    assert_eq!(
        env.run("lead", &["inbox"]).code,
        4,
        "T-2 waits in lead's inbox"
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        damaged,
        "reads change nothing"
    );

    env.run("dev", &["claim", "1"]).ok();
    env.send("lead", "dev", "four", &[]);
    let after = fs::read_to_string(&path).unwrap();
    assert!(
        after.contains(task_two),
        "T-2 carried over as it was:\n{after}"
    );
    assert!(after.contains("\"subject\": \"four\""));
    let doctor = env.run("", &["doctor"]);
    assert_eq!(doctor.code, 1, "{}", doctor.stdout);
    assert!(doctor.stdout.contains("T-2"), "{}", doctor.stdout);
}

#[test]
fn bad_project_and_agent_records_are_reported_by_name_and_never_rewritten() {
    if !files_only("looks at a project's files") {
        return;
    }
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
    if !files_only("looks at a project's files") {
        return;
    }
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

/// Runs `baton` with `args(round)` again and again, killing each run at a random moment in a
/// window that adapts until both killed and finished runs happen. Returns the rounds whose
/// run finished successfully, with their stdout, after checking `still_parses` after every
/// kill.
fn kill_storm(
    env: &TestEnv,
    rounds: usize,
    args: impl Fn(usize) -> Vec<String>,
    still_parses: impl Fn(&TestEnv),
) -> Vec<(usize, String)> {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let started = Instant::now();
    env.command(&env.work())
        .args(args(usize::MAX))
        .output()
        .unwrap();
    let mut window = (started.elapsed().as_micros() as u64 * 2).max(1);
    let mut seed = u64::from(std::process::id()) | 1;
    let (mut finished, mut killed) = (Vec::new(), 0);
    for round in 0..rounds {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut child = env
            .command(&env.work())
            .args(args(round))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros((seed >> 33) % window));
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        if output.status.success() {
            finished.push((round, String::from_utf8_lossy(&output.stdout).into_owned()));
            window = (window * 4 / 5).max(1);
        } else {
            killed += 1;
            window = window * 5 / 4 + 1;
        }
        still_parses(env);
    }
    assert!(
        killed > 0 && !finished.is_empty(),
        "{killed} killed, {} finished",
        finished.len()
    );
    finished
}

#[test]
fn killed_mail_writers_leave_mail_readable_and_lose_no_reported_message() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let finished = kill_storm(
        &env,
        80,
        |round| {
            [
                "--as",
                "lead",
                "--json",
                "msg",
                "--to",
                "dev",
                &format!("message {round}"),
            ]
            .map(String::from)
            .to_vec()
        },
        |env| {
            // Readers take every whole line; a torn last one is skipped, never fatal.
            env.run("dev", &["--json", "messages", "--peek"]).json();
        },
    );
    let all = env
        .run("dev", &["--json", "messages", "--all", "--peek"])
        .json();
    let bodies: Vec<String> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["body"].as_str().unwrap().to_string())
        .collect();
    for (round, _) in &finished {
        assert!(
            bodies.contains(&format!("message {round}")),
            "message {round} was reported sent"
        );
    }
    let seqs: Vec<u64> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_u64().unwrap())
        .collect();
    let mut sorted = seqs.clone();
    sorted.dedup();
    assert_eq!(seqs, sorted, "sequence numbers stay unique and in order");
    // Mail still takes new messages after the storm.
    env.run("lead", &["msg", "--to", "dev", "after the storm"])
        .ok();
}

#[test]
fn killed_registry_writers_leave_every_record_readable_with_the_last_reported_change() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead"]);
    let finished = kill_storm(
        &env,
        80,
        |round| {
            [
                "--json",
                "agent",
                "add",
                "dev",
                "--strengths",
                &format!("round {round}"),
                "--skills",
                "rust,go",
            ]
            .map(String::from)
            .to_vec()
        },
        |env| {
            let path = env.home().join("agents/dev.json");
            if path.exists() {
                let text = fs::read_to_string(&path).unwrap();
                serde_json::from_str::<serde_json::Value>(&text).expect("the record always parses");
            }
        },
    );
    let record = env.run("", &["--json", "agent", "show", "dev"]).json();
    let (last, _) = finished.last().unwrap();
    // Runs are one at a time: the last to report success wrote last, unless a later killed
    // run got its write in before dying.
    let strengths = record["strengths"].as_str().unwrap();
    let round: usize = strengths.trim_start_matches("round ").parse().unwrap();
    assert!(
        round >= *last,
        "the record holds round {round}, older than reported round {last}"
    );
    assert_eq!(record["skills"], serde_json::json!(["rust", "go"]));
    let temp_files: Vec<_> = fs::read_dir(env.home().join("agents"))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(
        temp_files.len() <= 1,
        "at most the one temp file a killed writer left"
    );
}

#[test]
fn bad_mail_files_and_archives_are_named_or_skipped_never_rewritten() {
    if !files_only("looks at a project's files") {
        return;
    }
    for (label, contents) in BAD_CONTENTS {
        let env = TestEnv::new();
        env.register(&["lead", "dev"]);
        env.run("lead", &["msg", "--to", "dev", "hello"]).ok();
        env.run("dev", &["inbox"]).ok();
        let positions = env.project_dir("default").join("mail.read.json");
        fs::write(&positions, contents).unwrap();
        let run = env.run("dev", &["inbox"]);
        assert_eq!(run.code, 4, "{label}: {}", run.stderr);
        assert!(
            run.stderr.contains("mail.read.json"),
            "{label}: {}",
            run.stderr
        );
        assert_eq!(
            &fs::read(&positions).unwrap(),
            contents,
            "{label}: never rewritten"
        );
        let run = env.run("lead", &["msg", "--to", "dev", "again"]);
        assert!(run.code == 0 || run.code == 4, "{label}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{label}: {}", run.stderr);
        assert_eq!(
            &fs::read(&positions).unwrap(),
            contents,
            "{label}: never rewritten"
        );
    }
    // Garbage beside a good archived task: the good one is still found.
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let id = env.send("lead", "dev", "old", &[]).to_string();
    env.run("dev", &["done", &id, "--result", "ok"]).ok();
    env.run("lead", &["archive", "--older-than", "0"]).ok();
    let archive = fs::read_dir(env.project_dir("default").join("archive"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            !path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mail-")
        })
        .unwrap();
    let mut text = b"\x00garbage\n[1,2]\n".to_vec();
    text.extend(fs::read(&archive).unwrap());
    text.extend_from_slice(b"{\"torn");
    fs::write(&archive, &text).unwrap();
    let shown = env.run("lead", &["--json", "show", &id]).json();
    assert_eq!(shown["archived"], true);
    assert_eq!(shown["result"], "ok");
    let run = env.run("lead", &["show", "99"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(fs::read(&archive).unwrap(), text, "never rewritten");
}
