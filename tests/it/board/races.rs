//! Concurrency and crashes through the real binary: many senders and claimers at once, and
//! writers killed at random points.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{TestEnv, files_only};

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
