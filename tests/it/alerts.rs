//! Alerts (SPEC section 14) through the real binary: a loopback receiver records every
//! request the detached sender makes, in each format.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::http::{CLOSED, Loopback, Request, free_port};
use crate::common::{TestEnv, eventually, eventually_or, eventually_within, files_only};

/// A loopback receiver that answers every request 200.
struct Receiver(Loopback);

impl Receiver {
    fn start() -> Receiver {
        Receiver(Loopback::start(answer_ok))
    }

    fn on(listener: TcpListener) -> Receiver {
        Receiver(Loopback::on(listener, answer_ok))
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.0.address)
    }

    fn received(&self) -> Vec<Request> {
        self.0.requests()
    }
}

fn answer_ok(_: &Request, stream: &mut TcpStream) {
    let _ =
        stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
}

/// HMAC-SHA256 as RFC 2104 writes it, apart from baton's own.
fn hmac_sha256_hex(key: &[u8], message: &[u8]) -> String {
    let mut key_block = if key.len() > 64 {
        Sha256::digest(key).to_vec()
    } else {
        key.to_vec()
    };
    key_block.resize(64, 0);
    let ipad: Vec<u8> = key_block.iter().map(|byte| byte ^ 0x36).collect();
    let opad: Vec<u8> = key_block.iter().map(|byte| byte ^ 0x5c).collect();
    let inner = Sha256::digest([ipad.as_slice(), message].concat());
    let outer = Sha256::digest([opad.as_slice(), inner.as_slice()].concat());
    outer.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A hub with `lead`, a human, and `codex`, an agent.
fn hub() -> TestEnv {
    let env = TestEnv::new();
    env.register(&["lead", "codex"]);
    env.run("lead", &["coordinator", "--human", "lead"]).ok();
    env
}

/// Adds an alert and returns its secret (all `add` prints on stdout).
fn add(env: &TestEnv, args: &[&str]) -> String {
    let mut all = vec!["alert", "add"];
    all.extend_from_slice(args);
    let run = env.run("lead", &all);
    let secret = run.ok().trim().to_string();
    assert!(secret.starts_with("baton_alert_"), "{secret}");
    secret
}

/// Waits until nothing waits in the queue and no sender runs: every alert went out.
fn all_sent(env: &TestEnv) {
    eventually("the queue to empty and the sender to end", || {
        let listed = env.run("lead", &["--json", "alert", "list"]).json();
        let sender_ends = !is_locked(&env.home().join("alerts").join("sender.lock"));
        (listed["queue"]["count"] == 0 && sender_ends).then_some(())
    });
}

/// Whether a process holds the lock at `path` (fs4, as baton takes it).
fn is_locked(path: &Path) -> bool {
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    else {
        return false;
    };
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => {
            let _ = fs4::FileExt::unlock(&file);
            false
        }
        Err(_) => true,
    }
}

/// Hands `lead` one of each kind of work through codex, and codex some that is not for
/// lead. Returns the expected `(kind, task)` of each alert, in no particular order.
fn hand_over_one_of_each(env: &TestEnv) -> Vec<(String, Option<String>)> {
    // To codex: no alert (codex is no human).
    let question = env.send("lead", "codex", "Fix the parser", &[]).to_string();
    env.run("codex", &["claim", &question]).ok();
    // A question back to lead.
    env.run("codex", &["ask", &question, "--body", "Which parser?"])
        .ok();
    // lead's answer goes to codex: no alert.
    env.run("lead", &["answer", &question, "--body", "The JSON one"])
        .ok();
    // A review requested of lead.
    let review = env
        .send("lead", "codex", "Add tests", &["--review"])
        .to_string();
    env.run("codex", &["claim", &review]).ok();
    env.run("codex", &["review", &review]).ok();
    // A task lead sent fails.
    let failed = env
        .send("lead", "codex", "Port to Windows", &[])
        .to_string();
    env.run("codex", &["claim", &failed]).ok();
    env.run("codex", &["fail", &failed, "--reason", "No machine"])
        .ok();
    // A new task for lead, and a message, to lead and to everyone.
    let task = env.send("codex", "lead", "Pick a name", &[]).to_string();
    env.run("codex", &["msg", "--to", "lead", "The benchmarks are in"])
        .ok();
    env.run("codex", &["msg", "--to", "@all", "Lunch"]).ok();
    // lead's own message to codex reaches no human: no alert.
    env.run("lead", &["msg", "--to", "codex", "Thanks"]).ok();
    let t = |id: &str| Some(format!("T-{id}"));
    let mut expected = vec![
        ("question".to_string(), t(&question)),
        ("review".to_string(), t(&review)),
        ("failed".to_string(), t(&failed)),
        ("task".to_string(), t(&task)),
        ("message".to_string(), None),
        ("message".to_string(), None),
    ];
    expected.sort();
    expected
}

#[test]
fn each_format_gets_exactly_one_alert_per_hand_over_to_a_human() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = hub();
    let (json, ntfy, slack) = (Receiver::start(), Receiver::start(), Receiver::start());
    let secret = add(
        &env,
        &[
            "hook",
            "--url",
            &json.url(),
            "--board-url",
            "https://board.example:7878/",
        ],
    );
    add(
        &env,
        &[
            "phone",
            "--url",
            &ntfy.url(),
            "--format",
            "ntfy",
            "--board-url",
            "https://board.example:7878",
        ],
    );
    add(&env, &["chat", "--url", &slack.url(), "--format", "slack"]);
    let expected = hand_over_one_of_each(&env);
    all_sent(&env);

    // JSON: the fields, and a signature that checks out under the secret.
    let mut kinds = Vec::new();
    for request in json.received() {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/hook")
        );
        let expected_signature = format!(
            "sha256={}",
            hmac_sha256_hex(secret.as_bytes(), &request.body)
        );
        assert_eq!(
            request.header("x-baton-signature"),
            Some(expected_signature.as_str())
        );
        assert_eq!(request.header("content-type"), Some("application/json"));
        let body = request.json();
        assert_eq!(body["project"], "default");
        assert_eq!(body["to"], "lead");
        assert_eq!(body["from"], "codex");
        let task = body["task"].as_str().map(str::to_string);
        match &task {
            Some(task) => assert_eq!(
                body["url"],
                format!("https://board.example:7878/#project=default&task={task}")
            ),
            None => assert_eq!(body["url"], "https://board.example:7878/#project=default"),
        }
        if body["kind"] == "question" {
            assert_eq!(body["subject"], "Fix the parser");
        }
        kinds.push((body["kind"].as_str().unwrap().to_string(), task));
    }
    kinds.sort();
    assert_eq!(kinds, expected, "the JSON receiver's alerts");

    // ntfy: its headers, and the subject in the body.
    let received = ntfy.received();
    assert_eq!(received.len(), expected.len());
    let question = received
        .iter()
        .find(|request| request.header("tags") == Some("question,baton"))
        .expect("the question's alert");
    assert_eq!(question.header("priority"), Some("4"));
    let title = question.header("title").unwrap();
    assert!(
        title.starts_with("baton question on T-1: Fix the parser"),
        "{title}"
    );
    assert_eq!(
        question.header("click"),
        Some("https://board.example:7878/#project=default&task=T-1")
    );
    assert!(
        question.text().starts_with("Fix the parser\n"),
        "{}",
        question.text()
    );
    assert!(
        received.iter().all(
            |request| request.header("title").is_some() && request.header("priority").is_some()
        )
    );

    // Slack: one {"text"} each, naming the kind and the subject.
    let received = slack.received();
    assert_eq!(received.len(), expected.len());
    let texts: Vec<String> = received
        .iter()
        .map(|request| request.json()["text"].as_str().unwrap().to_string())
        .collect();
    let review = expected
        .iter()
        .find_map(|(kind, task)| (kind == "review").then(|| task.clone().unwrap()))
        .unwrap();
    let line =
        format!("baton: review requested on {review} for lead in default, from codex: Add tests");
    assert!(texts.contains(&line), "{texts:?}");

    // The secret was printed by `add` and nowhere since.
    let log = std::fs::read_to_string(env.home().join("alerts").join("alerts.log")).unwrap();
    assert_eq!(
        log.matches("delivered").count(),
        3 * expected.len(),
        "{log}"
    );
    assert!(!log.contains(&secret) && !log.contains("/hook"), "{log}");
    let listed = env.run("lead", &["alert", "list"]);
    let listed_json = env.run("lead", &["--json", "alert", "list"]);
    let doctor = env.run("lead", &["doctor"]);
    for output in [
        &listed.stdout,
        &listed_json.stdout,
        &doctor.stdout,
        &doctor.stderr,
    ] {
        assert!(!output.contains(&secret), "{output}");
    }
    assert!(
        doctor.stdout.contains("nothing waits to be sent"),
        "{}",
        doctor.stdout
    );
}

#[test]
fn an_alert_for_one_agent_and_some_kinds_posts_only_those() {
    let env = hub();
    let receiver = Receiver::start();
    add(
        &env,
        &[
            "mine",
            "--url",
            &receiver.url(),
            "--for",
            "codex",
            "--on",
            "task",
        ],
    );
    // To lead (a human, but not whom the alert is for): nothing.
    env.run("codex", &["msg", "--to", "lead", "hello"]).ok();
    env.send("codex", "lead", "For lead", &[]);
    // To codex: a task (posted) and a message (a kind it is not on).
    let id = env.send("lead", "codex", "For codex", &[]);
    env.run("lead", &["msg", "--to", "codex", "hi"]).ok();
    all_sent(&env);
    let received = receiver.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let body = received[0].json();
    assert_eq!(
        (body["kind"].as_str(), body["to"].as_str()),
        (Some("task"), Some("codex"))
    );
    assert_eq!(body["task"], format!("T-{id}"));
    assert_eq!(body["url"], Value::Null);
}

#[test]
fn a_receiver_that_was_down_gets_every_alert_once_it_is_back() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = hub();
    // A port nobody listens on, until the receiver takes it.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/hook");
    let secret = add(&env, &["hook", "--url", &url]);
    let fast = [("BATON_ALERT_RETRY_MS", "100")];
    let subjects = ["One", "Two", "Three"];
    for subject in subjects {
        env.run_env(
            "codex",
            &["send", "--to", "lead", "--subject", subject],
            &fast,
        )
        .ok();
    }
    let log_path = env.home().join("alerts").join("alerts.log");
    eventually("attempts to fail while the receiver is down", || {
        let log = std::fs::read_to_string(&log_path).ok()?;
        (log.matches("failed").count() >= 6).then_some(())
    });
    let listed = env.run("lead", &["--json", "alert", "list"]).json();
    assert_eq!(listed["queue"]["count"], 3, "{listed}");
    assert!(listed["queue"]["last_error"].is_string(), "{listed}");
    let doctor = env.run("lead", &["doctor"]).stdout;
    assert!(doctor.contains("3 alerts to send"), "{doctor}");
    assert!(doctor.contains("last error"), "{doctor}");
    // The sender runs now, retrying: the secret is in no process's arguments.
    #[cfg(target_os = "linux")]
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline);
            assert!(!cmdline.contains(&secret), "{cmdline}");
        }
    }

    let receiver = Receiver::on(TcpListener::bind(("127.0.0.1", port)).expect("the port again"));
    all_sent(&env);
    let mut got: Vec<String> = receiver
        .received()
        .iter()
        .map(|request| request.json()["subject"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    let mut expected: Vec<String> = subjects.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(got, expected, "each alert exactly once");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(log.matches("delivered").count(), 3, "{log}");
    assert!(!log.contains(&secret), "{log}");
}

#[test]
fn a_hostile_subject_reaches_no_receiver_as_markup() {
    let env = hub();
    let (json, ntfy, slack) = (Receiver::start(), Receiver::start(), Receiver::start());
    add(&env, &["hook", "--url", &json.url()]);
    add(&env, &["phone", "--url", &ntfy.url(), "--format", "ntfy"]);
    add(&env, &["chat", "--url", &slack.url(), "--format", "slack"]);
    let markup = "<b>x</b> <!channel> <http://evil|click>";
    let hostile = format!("{markup} \u{1b}[31m \u{202e}");
    // A subject refuses control characters, so they come in a message's first line.
    env.send("codex", "lead", markup, &[]);
    env.run("codex", &["msg", "--to", "lead", &hostile]).ok();
    all_sent(&env);
    let raw = ['\u{1b}', '\u{202e}'];
    for request in json.received() {
        let subject = request.json()["subject"].as_str().unwrap().to_string();
        assert!(!subject.contains(raw), "{subject:?}");
    }
    assert_eq!(json.received().len(), 2);
    for request in ntfy.received() {
        for (name, value) in &request.headers {
            assert!(
                value.bytes().all(|byte| (0x20..0x7f).contains(&byte)),
                "{name}: {value:?}"
            );
        }
        assert!(!request.text().contains(raw), "{:?}", request.text());
        assert_eq!(request.header("markdown"), None);
    }
    assert_eq!(ntfy.received().len(), 2);
    for request in slack.received() {
        let text = request.json()["text"].as_str().unwrap().to_string();
        assert!(
            !text.contains(['<', '>']) && !text.contains(raw),
            "{text:?}"
        );
        assert!(
            text.contains("&lt;b&gt;x&lt;/b&gt; &lt;!channel&gt; &lt;http://evil|click&gt;"),
            "{text:?}"
        );
    }
    assert_eq!(slack.received().len(), 2);
}

#[test]
fn alert_add_refuses_what_is_not_http_and_names_it_once() {
    let env = hub();
    for url in [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "example.com/hook",
    ] {
        let refused = env.run("lead", &["alert", "add", "x", "--url", url]);
        assert!(
            refused.fails(1).starts_with("error: --url"),
            "{}",
            refused.stderr
        );
        assert!(refused.stderr.contains("hint: "), "{}", refused.stderr);
    }
    let refused = env.run(
        "lead",
        &[
            "alert",
            "add",
            "x",
            "--url",
            "http://127.0.0.1:1/",
            "--on",
            "questions",
        ],
    );
    assert!(
        refused
            .fails(1)
            .contains("no alert kind is called questions")
    );
    add(
        &env,
        &[
            "x",
            "--url",
            "https://hooks.slack.com/services/T0/B0/SECRET",
        ],
    );
    let again = env.run(
        "lead",
        &["alert", "add", "x", "--url", "http://127.0.0.1:1/"],
    );
    assert!(
        again
            .fails(1)
            .contains("there is an alert called x already")
    );
    // The list shows the host, not a path that is a secret of its own.
    let listed = env.run("lead", &["alert", "list"]).ok().to_string();
    assert!(listed.contains("https://hooks.slack.com/…"), "{listed}");
    assert!(!listed.contains("SECRET"), "{listed}");
    env.run("lead", &["alert", "rm", "x"]).ok();
    assert!(
        env.run("lead", &["alert", "rm", "x"])
            .fails(1)
            .contains("no alert called x")
    );
}

#[test]
fn alert_test_posts_a_sample_and_reports_the_answer() {
    let env = hub();
    let receiver = Receiver::start();
    let secret = add(&env, &["hook", "--url", &receiver.url()]);
    let tested = env.run("lead", &["alert", "test", "hook"]);
    assert!(
        tested
            .ok()
            .contains("delivered hook: the receiver answered HTTP 200: ok")
    );
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let signature = format!(
        "sha256={}",
        hmac_sha256_hex(secret.as_bytes(), &received[0].body)
    );
    assert_eq!(
        received[0].header("x-baton-signature"),
        Some(signature.as_str())
    );
    // Nobody listens here: the test says so and exits 1.
    add(&env, &["gone", "--url", &format!("http://{}/", CLOSED[0])]);
    let failed = env.run("lead", &["alert", "test", "gone"]);
    assert_eq!(failed.code, 1);
    assert!(
        failed.stdout.contains("not delivered gone"),
        "{}",
        failed.stdout
    );
}

#[test]
fn a_stall_is_told_once_at_the_next_hand_over_after_the_lease_ran_out() {
    let env = hub();
    let receiver = Receiver::start();
    add(&env, &["hook", "--url", &receiver.url(), "--on", "stalled"]);
    let start = "2026-12-03T12:00:00Z";
    let later = "2026-12-03T15:00:00Z";
    let at = |now: &str, agent: &str, args: &[&str]| {
        env.run_env(agent, args, &[("BATON_NOW", now)])
            .ok()
            .to_string()
    };
    let id = env.send("lead", "codex", "Slow work", &[]).to_string();
    at(start, "codex", &["claim", &id]);
    // Within the lease, a hand-over finds no stall.
    at(start, "lead", &["msg", "--to", "codex", "How is it going?"]);
    // Hours later codex has gone quiet: the next hand-over finds the stall, and the one
    // after it does not tell it again.
    at(later, "lead", &["msg", "--to", "codex", "Still there?"]);
    at(later, "lead", &["msg", "--to", "codex", "Hello?"]);
    all_sent(&env);
    let received = receiver.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let body = received[0].json();
    assert_eq!(body["kind"], "stalled");
    assert_eq!(body["task"], format!("T-{id}"));
    assert_eq!(
        (body["to"].as_str(), body["from"].as_str()),
        (Some("lead"), Some("codex"))
    );
    assert_eq!(body["subject"], "Slow work");
}

/// A port nobody listens on: every post to it is refused at once. Port 1 (tcpmux) is below
/// the ephemeral range, so no other test's listener can take it while this one posts there,
/// as a port found free and let go could be (one that never answers holds every post).
fn dead_url() -> String {
    "http://127.0.0.1:1/hook".to_string()
}

#[test]
fn a_flood_fills_the_queue_to_its_limit_and_the_rest_is_counted_and_logged_as_dropped() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = hub();
    let url = dead_url();
    // 20 receivers, each wanting every hand-over to lead: 20 files a send.
    for n in 0..20 {
        add(&env, &[&format!("a{n}"), "--url", &url]);
    }
    // 55 sends would queue 1,100 alerts; the queue holds 1,000.
    for n in 0..55 {
        env.run(
            "codex",
            &["send", "--to", "lead", "--subject", &format!("Flood {n}")],
        )
        .ok();
    }
    let queue_dir = env.home().join("alerts").join("queue");
    // Queued files only: the sender may be rewriting one through its `.tmp` just now.
    let files = std::fs::read_dir(&queue_dir)
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".json")
        })
        .count();
    assert_eq!(files, 1000, "the queue is capped");
    let log_path = env.home().join("alerts").join("alerts.log");
    // The sender logs them when it comes round to the queue again, after a pass over its
    // 1,000 files: on a loaded machine that takes longer than most waits here.
    let line = eventually_or(
        Duration::from_secs(120),
        "the sender to log the drops",
        || {
            let log = std::fs::read_to_string(&log_path).ok()?;
            log.lines()
                .find(|line| line.contains("dropped 100 alerts"))
                .map(str::to_string)
        },
        || {
            let read = |path: &std::path::Path| std::fs::read_to_string(path).unwrap_or_default();
            let log = read(&log_path);
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            format!(
                "dropped.json: {}\nsender lock: {}\nalerts.log (last lines, newest first):\n{}",
                read(&env.home().join("alerts").join("dropped.json")),
                read(&env.home().join("alerts").join("sender.lock")),
                tail.join("\n")
            )
        },
    );
    assert!(line.contains("the queue held its limit of 1000"), "{line}");
    let listed = env.run("lead", &["--json", "alert", "list"]).json();
    assert_eq!(listed["queue"]["count"], 1000, "{listed}");
    assert_eq!(
        listed["queue"]["dropped"], 0,
        "logged, so no longer pending"
    );
    // Once there is room again (the receivers are gone), alerts queue as before.
    for n in 0..20 {
        env.run("lead", &["alert", "rm", &format!("a{n}")]).ok();
    }
    all_sent(&env);
    let receiver = Receiver::start();
    add(&env, &["live", "--url", &receiver.url()]);
    env.send("codex", "lead", "After the flood", &[]);
    all_sent(&env);
    assert_eq!(receiver.received().len(), 1);
}

#[test]
fn drops_are_logged_while_a_receiver_that_never_answers_holds_the_sender() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = hub();
    // Bound and never accepted: each post connects and then waits out the sender's 10 s.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", silent.local_addr().unwrap());
    for n in 0..20 {
        add(&env, &[&format!("a{n}"), "--url", &url]);
    }
    for n in 0..55 {
        env.run(
            "codex",
            &["send", "--to", "lead", "--subject", &format!("Flood {n}")],
        )
        .ok();
    }
    // A round over the 1,000 queued alerts would take hours: the drops are logged within
    // an attempt of their happening all the same.
    let log_path = env.home().join("alerts").join("alerts.log");
    eventually_within(Duration::from_secs(60), "the drops to be logged", || {
        let log = std::fs::read_to_string(&log_path).ok()?;
        log.contains("dropped 100 alerts").then_some(())
    });
    // The sender goes once its alerts do: refused at once, then dropped unposted.
    drop(silent);
    for n in 0..20 {
        env.run("lead", &["alert", "rm", &format!("a{n}")]).ok();
    }
    all_sent(&env);
}

#[test]
fn the_log_stays_bounded_while_a_long_running_sender_writes_it() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = hub();
    let url = dead_url();
    for n in 0..5 {
        add(&env, &[&format!("a{n}"), "--url", &url]);
    }
    // Retrying every few milliseconds against a dead receiver, one sender writes the log
    // for as long as it runs; it must not grow past its limit before the next start.
    let fast = [("BATON_ALERT_RETRY_MS", "1")];
    for n in 0..10 {
        env.run_env(
            "codex",
            &["send", "--to", "lead", "--subject", &format!("Retry {n}")],
            &fast,
        )
        .ok();
    }
    let log_path = env.home().join("alerts").join("alerts.log");
    let limit = 1024 * 1024;
    // About 9,000 attempts write the first megabyte: minutes on a loaded machine.
    eventually_within(
        Duration::from_secs(180),
        "the log to be cut back while the sender runs",
        || {
            let log = std::fs::read(&log_path).ok()?;
            assert!(
                log.len() <= limit + 1024,
                "the log reached {} bytes",
                log.len()
            );
            String::from_utf8_lossy(&log)
                .contains("older lines dropped to keep this log under 1024 KB")
                .then_some(())
        },
    );
    // Watched for two seconds as it goes on being written: the time is the test.
    for _ in 0..20 {
        let length = std::fs::metadata(&log_path).unwrap().len() as usize;
        assert!(length <= limit + 1024, "the log reached {length} bytes");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for n in 0..5 {
        env.run("lead", &["alert", "rm", &format!("a{n}")]).ok();
    }
    all_sent(&env);
}

/// The pids of the alert senders of `env`'s hub now running (a zombie, ended but not yet
/// reaped by whoever adopted it, counts as ended).
#[cfg(target_os = "linux")]
fn senders_of(env: &TestEnv) -> Vec<u32> {
    let home = format!("BATON_HOME={}", env.home().display());
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        let (Ok(cmdline), Ok(environ), Ok(stat)) = (
            std::fs::read(entry.path().join("cmdline")),
            std::fs::read(entry.path().join("environ")),
            std::fs::read_to_string(entry.path().join("stat")),
        ) else {
            continue;
        };
        let is_sender = cmdline
            .split(|byte| *byte == 0)
            .any(|arg| arg == b"__alert-send");
        let of_this_hub = environ
            .split(|byte| *byte == 0)
            .any(|var| var == home.as_bytes());
        // The state follows the command's name, which is in parentheses.
        let is_zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if is_sender && of_this_hub && !is_zombie {
            pids.push(pid);
        }
    }
    pids
}

/// `statements` on the cluster of `env`'s database, connected to another database of it
/// (one cannot rename the database one is connected to); the first error, if any.
#[cfg(target_os = "linux")]
fn on_the_cluster(env: &TestEnv, statements: &str) -> Result<(), String> {
    use crate::common::cluster;
    let url = env.store_url.as_deref().expect("a database");
    let admin = cluster::with_database(url, "postgres");
    cluster::apart(|| {
        let mut client = postgres::Client::connect(&admin, postgres::NoTls)
            .map_err(|error| error.to_string())?;
        client
            .batch_execute(statements)
            .map_err(|error| error.to_string())
    })
}

/// A hub on a database of its own whose one alert goes to a port nobody listens on (until
/// a receiver takes it), with a sender retrying it every 100 ms.
#[cfg(target_os = "linux")]
struct Retrying {
    env: TestEnv,
    port: u16,
    /// The sender's pid.
    sender: u32,
    /// The database's name.
    database: String,
}

#[cfg(target_os = "linux")]
impl Retrying {
    /// `None` where PostgreSQL cannot run.
    fn start() -> Option<Retrying> {
        let env = TestEnv::on_postgres()?;
        env.register(&["lead", "codex"]);
        env.run("lead", &["coordinator", "--human", "lead"]).ok();
        let port = free_port();
        add(
            &env,
            &["hook", "--url", &format!("http://127.0.0.1:{port}/hook")],
        );
        let url = env.store_url.as_deref().unwrap();
        let database = url.rsplit('/').next().unwrap().split('?').next().unwrap();
        let mut retrying = Retrying {
            database: database.to_string(),
            env,
            port,
            sender: 0,
        };
        retrying.send("One");
        retrying.sender = eventually("the sender to retry the alert", || {
            let senders = senders_of(&retrying.env);
            (retrying.log().contains("attempt 2: failed") && senders.len() == 1).then(|| senders[0])
        });
        Some(retrying)
    }

    /// codex hands a task to lead: one alert queued, and a sender started unless one runs.
    fn send(&self, subject: &str) {
        let fast = [("BATON_ALERT_RETRY_MS", "100")];
        self.env
            .run_env(
                "codex",
                &["send", "--to", "lead", "--subject", subject],
                &fast,
            )
            .ok();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.env.home().join("alerts").join("alerts.log"))
            .unwrap_or_default()
    }

    /// Waits for the sender to end with a line of its log that holds `said`.
    fn ends_saying(&self, limit: Duration, said: &str) {
        eventually_or(
            limit,
            "the sender to end, saying why",
            || {
                (!senders_of(&self.env).contains(&self.sender) && self.log().contains(said))
                    .then_some(())
            },
            || {
                format!(
                    "sender {} of {:?} still runs; alerts.log:\n{}",
                    self.sender,
                    senders_of(&self.env),
                    self.log()
                )
            },
        );
    }

    /// How many alerts wait in the queue.
    fn queued(&self) -> Value {
        let listed = self.env.run("lead", &["--json", "alert", "list"]).json();
        listed["queue"]["count"].clone()
    }
}

/// SQL that closes `database` to new connections and cuts those open (the sender's).
#[cfg(target_os = "linux")]
fn closing(database: &str) -> String {
    format!(
        "ALTER DATABASE {database} ALLOW_CONNECTIONS false;
         SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = '{database}' AND pid <> pg_backend_pid();"
    )
}

#[cfg(target_os = "linux")]
#[test]
fn a_sender_whose_database_is_gone_ends_saying_so_and_keeps_the_queue_for_the_next() {
    let Some(retrying) = Retrying::start() else {
        return;
    };
    let env = &retrying.env;
    let database = &retrying.database;
    // The database renamed away under it: closed to new connections first, then its
    // connections (the sender's) cut, then renamed, which no connection may be open for.
    let away = format!("{database}_away");
    eventually("the database to be renamed away", || {
        on_the_cluster(
            env,
            &format!(
                "{} ALTER DATABASE {database} RENAME TO {away};",
                closing(database)
            ),
        )
        .ok()
    });
    on_the_cluster(
        env,
        &format!("ALTER DATABASE {away} ALLOW_CONNECTIONS true"),
    )
    .unwrap();
    // At once, not after its patience: the server said the database does not exist.
    retrying.ends_saying(
        Duration::from_secs(20),
        "does not exist; the sender stopped: that will not pass by itself; 1 alert kept in \
         the queue for the next sender, which the next alert queued starts",
    );
    assert!(
        !retrying.log().contains("could not be read for"),
        "{}",
        retrying.log()
    );

    // Back again: the alert waited in the queue, and the next alert queued starts a sender
    // that sends both.
    on_the_cluster(env, &format!("ALTER DATABASE {away} RENAME TO {database}")).unwrap();
    assert_eq!(retrying.queued(), 1);
    let receiver =
        Receiver::on(TcpListener::bind(("127.0.0.1", retrying.port)).expect("the port again"));
    retrying.send("Two");
    eventually("both alerts to be delivered and the sender to end", || {
        (retrying.queued() == 0 && senders_of(env).is_empty()).then_some(())
    });
    let mut got: Vec<String> = receiver
        .received()
        .iter()
        .map(|request| request.json()["subject"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    assert_eq!(got, ["One", "Two"], "each alert exactly once");
}

#[cfg(target_os = "linux")]
#[test]
fn a_sender_whose_database_is_out_of_reach_ends_after_its_patience_and_keeps_the_queue() {
    let Some(retrying) = Retrying::start() else {
        return;
    };
    let env = &retrying.env;
    let database = &retrying.database;
    // Closed to connections, and the sender's cut: an outage as far as the server says
    // (55000, "not currently accepting connections"), which may pass.
    on_the_cluster(env, &closing(database)).unwrap();
    // The test knob's patience: fifty delays of 100 ms, and at least 5 s.
    retrying.ends_saying(
        Duration::from_secs(40),
        "the sender stopped: the store could not be read for 5 s; 1 alert kept in the queue \
         for the next sender, which the next alert queued starts",
    );
    let log = retrying.log();
    assert!(log.contains("trying again for up to 5 s"), "{log}");
    // Said once per kind of failure, not at each of its ~50 looks.
    let said = log.matches("cannot read the alerts").count();
    assert!(said <= 4, "{said} lines of it:\n{log}");
    on_the_cluster(
        env,
        &format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true"),
    )
    .unwrap();
    assert_eq!(retrying.queued(), 1);
}
