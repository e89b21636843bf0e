//! Messages: sending, read positions, notifications, the mail archive, and many processes
//! reading and writing mail at once.

use std::collections::{BTreeMap, BTreeSet};
use std::thread;

use serde_json::Value;

use crate::common::{TestEnv, files_only};

/// The texts of `agent`'s unread messages, marking them read.
fn read_texts(env: &TestEnv, agent: &str) -> Vec<String> {
    texts(&env.run(agent, &["--json", "inbox"]).json())
}

fn texts(inbox: &Value) -> Vec<String> {
    inbox["messages"]
        .as_array()
        .expect("a messages list")
        .iter()
        .map(|message| message["body"].as_str().unwrap().to_string())
        .collect()
}

fn mail_lines(env: &TestEnv) -> Vec<Value> {
    env.hub_text("projects/default/mail.jsonl")
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a mail line parses"))
        .collect()
}

#[test]
fn a_broadcast_reaches_every_other_agent_exactly_once_and_not_the_sender() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini"]);
    let sent = env
        .run(
            "claude",
            &["--json", "msg", "--to", "@all", "stand-up", "in", "five"],
        )
        .json();
    let mut reached: Vec<&str> = sent["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|delivery| delivery["agent"].as_str().unwrap())
        .collect();
    reached.sort();
    assert_eq!(reached, ["codex", "gemini"]);

    let lines = mail_lines(&env);
    assert_eq!(lines.len(), 1, "one record for a broadcast: {lines:?}");
    assert_eq!(lines[0]["to"], "@all");
    assert_eq!(lines[0]["from"], "claude");
    assert_eq!(lines[0]["type"], "text");
    assert_eq!(lines[0]["seq"], 1);

    for agent in ["codex", "gemini"] {
        assert_eq!(read_texts(&env, agent), ["stand-up in five"], "{agent}");
        assert!(read_texts(&env, agent).is_empty(), "{agent} saw it twice");
    }
    assert!(read_texts(&env, "claude").is_empty(), "the sender got it");

    // An agent that arrives later was not there to hear it.
    env.register(&["opencode"]);
    assert!(read_texts(&env, "opencode").is_empty());
}

#[test]
fn peek_and_status_leave_messages_unread_and_inbox_marks_them_read() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    env.run(
        "claude",
        &[
            "msg",
            "--to",
            "codex",
            "--summary",
            "parser",
            "look at the lexer",
        ],
    )
    .ok();
    env.run(
        "claude",
        &[
            "msg",
            "--to",
            "codex",
            "--type",
            "shutdown_request",
            "wrap up",
        ],
    )
    .ok();

    let status = env.run("codex", &["status"]).ok().to_string();
    assert!(status.contains("2 unread messages"), "{status}");
    let peeked = env.run("codex", &["--json", "inbox", "--peek"]).json();
    assert_eq!(texts(&peeked), ["look at the lexer", "wrap up"]);
    assert_eq!(peeked["messages"][0]["summary"], "parser");
    assert_eq!(peeked["messages"][1]["type"], "shutdown_request");
    assert_eq!(peeked["messages"][1]["summary"], "wrap up");

    let shown = env.run("codex", &["inbox"]).ok().to_string();
    assert!(shown.contains("look at the lexer"), "{shown}");
    assert!(shown.contains("[shutdown_request]"), "{shown}");
    assert!(
        read_texts(&env, "codex").is_empty(),
        "inbox marked them read"
    );
    assert_eq!(env.run("codex", &["status", "--quiet"]).ok(), "");

    let positions: Value = serde_json::from_str(
        &std::fs::read_to_string(env.project_dir("default").join("mail.read.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(positions["schema"], 1);
    assert_eq!(positions["positions"]["codex"], 2);

    // `messages --all` still lists them, now read, with what codex sent.
    env.run("codex", &["msg", "--to", "claude", "on it"]).ok();
    let all = env.run("codex", &["--json", "messages", "--all"]).json();
    let listed: Vec<(u64, bool)> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["seq"].as_u64().unwrap(),
                entry["unread"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, [(1, false), (2, false), (3, false)]);
    let unread = env.run("claude", &["--json", "messages"]).json();
    assert_eq!(unread["messages"][0]["body"], "on it");
    assert_eq!(unread["messages"][0]["unread"], true);
    assert!(
        env.run("claude", &["--json", "messages"]).json()["messages"]
            .as_array()
            .unwrap()
            .is_empty(),
        "messages marks what it showed as read"
    );
}

#[test]
fn marking_mail_read_takes_the_mail_lock_only_when_there_is_mail_to_mark() {
    if !files_only("looks at a project's files") {
        return;
    }
    use fs4::FileExt;
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    env.run("claude", &["msg", "--to", "codex", "the lexer"])
        .ok();
    assert_eq!(read_texts(&env, "codex"), ["the lexer"]);
    env.run("codex", &["msg", "--to", "claude", "on it"]).ok();
    // Now codex has nothing unread and claude one message.

    let lock_path = env.project_dir("default").join("mail.lock");
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    FileExt::lock(&lock).unwrap();
    let timeout = [("BATON_LOCK_TIMEOUT", "1")];
    // Nothing unread: the look marks nothing, so a held lock does not stand in its way.
    env.run_env("codex", &["inbox"], &timeout).ok();
    env.run_env("codex", &["--json", "messages"], &timeout).ok();
    // Something to mark: that waits for the lock, and gives up when it is not freed.
    let run = env.run_env("claude", &["inbox"], &timeout);
    assert!(run.fails(3).contains("the mail lock"), "{}", run.stderr);
    FileExt::unlock(&lock).unwrap();
    assert_eq!(
        read_texts(&env, "claude"),
        ["on it"],
        "still unread, then read"
    );
    assert!(read_texts(&env, "claude").is_empty());
}

#[test]
fn unknown_types_and_recipients_are_refused() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let stderr = env
        .run("claude", &["msg", "--to", "codex", "--type", "memo", "hi"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("unknown message type `memo`"), "{stderr}");
    assert!(stderr.contains("plan_approval_request"), "{stderr}");

    let stderr = env
        .run(
            "claude",
            &["msg", "--to", "codex", "--type", "notification", "hi"],
        )
        .fails(1)
        .to_string();
    assert!(stderr.contains("written by baton itself"), "{stderr}");

    let stderr = env
        .run("claude", &["msg", "--to", "ghost", "hi"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("unknown agent `ghost`"), "{stderr}");
    assert!(
        stderr.contains("claude, codex"),
        "names the known agents: {stderr}"
    );

    env.run("claude", &["msg", "--to", "codex", " "]).fails(1);
    assert!(mail_lines(&env).is_empty(), "nothing refused was written");
}

#[test]
fn only_the_coordinator_answers_a_plan() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    // The first sender of a task becomes the coordinator.
    env.send("claude", "codex", "plan the parser", &[]);
    env.run(
        "codex",
        &[
            "msg",
            "--to",
            "claude",
            "--type",
            "plan_approval_request",
            "my plan",
        ],
    )
    .ok();
    let stderr = env
        .run(
            "codex",
            &[
                "msg",
                "--to",
                "claude",
                "--type",
                "plan_approval_response",
                "ok",
            ],
        )
        .fails(1)
        .to_string();
    assert!(stderr.contains("only the coordinator"), "{stderr}");
    assert!(stderr.contains("(claude)"), "{stderr}");
    env.run(
        "claude",
        &[
            "msg",
            "--to",
            "codex",
            "--type",
            "plan-approval-response",
            "approved",
        ],
    )
    .ok();
    let lines = mail_lines(&env);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["type"], "plan_approval_response");
}

/// The notifications in `agent`'s inbox, as (summary, body), marking them read.
fn notifications(env: &TestEnv, agent: &str) -> Vec<(String, String)> {
    let inbox = env.run(agent, &["--json", "inbox"]).json();
    inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            assert_eq!(message["type"], "notification");
            assert_eq!(message["from"], "baton");
            (
                message["summary"].as_str().unwrap().to_string(),
                message["body"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn baton_tells_the_sender_and_the_assignee_what_happened_to_their_tasks() {
    let env = TestEnv::new();
    env.register(&["claude", "codex", "gemini", "boss"]);
    // boss sends first, so boss is the coordinator.
    env.send("boss", "gemini", "warm up", &[]);

    let done = env.send("claude", "codex", "fix the lexer", &[]);
    env.run("codex", &["claim", &done.to_string()]).ok();
    let changed = env
        .run(
            "codex",
            &["--json", "done", &done.to_string(), "--result", "tabs work"],
        )
        .json();
    assert_eq!(changed["notifications"][0]["agent"], "claude");
    assert!(
        notifications(&env, "codex").is_empty(),
        "not told of its own act"
    );
    let told = notifications(&env, "claude");
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].0, format!("T-{done} completed: fix the lexer"));
    assert!(told[0].1.contains("Result: tabs work"), "{told:?}");

    let failed = env.send("claude", "codex", "port to windows", &[]);
    env.run(
        "codex",
        &["fail", &failed.to_string(), "--reason", "no machine"],
    )
    .ok();
    let told = notifications(&env, "claude");
    assert_eq!(told[0].0, format!("T-{failed} failed: port to windows"));
    assert!(told[0].1.contains("Reason: no machine"), "{told:?}");

    let canceled = env.send("claude", "codex", "write docs", &[]);
    env.run(
        "claude",
        &["cancel", &canceled.to_string(), "--reason", "not needed"],
    )
    .ok();
    assert!(notifications(&env, "claude").is_empty(), "the canceler");
    let told = notifications(&env, "codex");
    assert_eq!(told[0].0, format!("T-{canceled} canceled: write docs"));
    assert!(told[0].1.contains("Reason: not needed"), "{told:?}");

    let by_boss = env.send("claude", "codex", "bench it", &[]);
    env.run("boss", &["cancel", &by_boss.to_string()]).ok();
    assert_eq!(notifications(&env, "claude").len(), 1, "sender told");
    assert_eq!(notifications(&env, "codex").len(), 1, "assignee told");

    let moved = env.send("claude", "codex", "profile it", &[]);
    env.run(
        "claude",
        &[
            "reassign",
            &moved.to_string(),
            "--to",
            "gemini",
            "--body",
            "codex is busy",
        ],
    )
    .ok();
    let told = notifications(&env, "codex");
    assert_eq!(
        told[0].0,
        format!("T-{moved} reassigned to gemini: profile it")
    );
    assert!(told[0].1.contains("codex is busy"), "{told:?}");
    assert!(
        notifications(&env, "gemini").is_empty(),
        "the task itself tells gemini"
    );
    assert_eq!(env.inbox_ids("gemini"), [1, moved]);
}

#[test]
fn old_mail_everyone_has_read_moves_to_the_archive_and_numbering_goes_on() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    let then = [("BATON_NOW", "2026-10-01T09:00:00.000Z")];
    let later = [("BATON_NOW", "2026-10-09T09:00:00.000Z")];
    for agent in ["claude", "codex", "gemini"] {
        env.run_env(agent, &["whoami"], &then).ok();
    }
    let send = |from: &str, to: &str, text: &str, at: &[(&str, &str)]| {
        env.run_env(from, &["msg", "--to", to, text], at).ok();
    };
    send("claude", "codex", "one", &then);
    send("claude", "@all", "two", &then);
    send("codex", "claude", "three", &then);
    // codex and gemini read everything; claude never reads "three".
    env.run_env("codex", &["inbox"], &then).ok();
    env.run_env("gemini", &["inbox"], &then).ok();

    // Eight days on, the next send sweeps what every recipient has read.
    send("gemini", "codex", "four", &later);
    let left: Vec<Value> = mail_lines(&env).iter().map(|m| m["body"].clone()).collect();
    assert_eq!(left, ["three", "four"]);
    let archive = env
        .project_dir("default")
        .join("archive/mail-2026-10.jsonl");
    let archived: Vec<Value> = std::fs::read_to_string(&archive)
        .expect("the mail archive exists")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["body"].clone())
        .collect();
    assert_eq!(archived, ["one", "two"]);

    // Once claude has read "three" and codex "four", both leave too; numbering goes on.
    env.run_env("claude", &["inbox"], &later).ok();
    env.run_env("codex", &["inbox"], &later).ok();
    let much_later = [("BATON_NOW", "2026-11-20T09:00:00.000Z")];
    send("claude", "gemini", "five", &much_later);
    let left = mail_lines(&env);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["body"], "five");
    assert_eq!(left[0]["seq"], 5);
    let all_archived = std::fs::read_to_string(&archive).unwrap();
    assert_eq!(all_archived.lines().count(), 4, "nothing is deleted");
    let texts = read_texts(&env, "gemini");
    assert_eq!(texts, ["five"]);
    send("codex", "gemini", "six", &much_later);
    let seqs: Vec<Value> = mail_lines(&env).iter().map(|m| m["seq"].clone()).collect();
    assert_eq!(seqs, [5, 6]);
}

/// What one worker of the concurrency test did.
struct Worker {
    me: &'static str,
    /// Every message text its `inbox` runs showed.
    seen: Vec<String>,
    /// (to, text) of every message it sent.
    sent: Vec<(String, String)>,
}

#[test]
fn read_positions_survive_eight_processes_reading_and_writing_at_once() {
    let env = TestEnv::new();
    let agents = ["ann", "bob", "cat", "dan"];
    env.register(&agents);
    const ROUNDS: usize = 8;

    // Eight workers, two per agent, each sending and reading in turn: up to eight baton
    // processes at once, two of them often reading for the same agent.
    let workers: Vec<Worker> = thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|worker| {
                let env = &env;
                scope.spawn(move || {
                    let me = agents[worker % agents.len()];
                    let mut sent = Vec::new();
                    let mut seen = Vec::new();
                    for round in 0..ROUNDS {
                        let to = if round % 3 == 0 {
                            "@all".to_string()
                        } else {
                            agents[(worker + round) % agents.len()].to_string()
                        };
                        let text = format!("w{worker}-r{round} {me}->{to}");
                        env.run(me, &["msg", "--to", &to, &text]).ok();
                        sent.push((to, text));
                        seen.extend(read_texts(env, me));
                    }
                    Worker { me, seen, sent }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a worker"))
            .collect()
    });

    let mut expected: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut shown: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for Worker { me, seen, sent } in &workers {
        shown.entry(me).or_default().extend(seen.iter().cloned());
        for (to, text) in sent {
            for agent in agents {
                if (to == "@all" && agent != *me) || to == agent {
                    expected.entry(agent).or_default().insert(text.clone());
                }
            }
        }
    }
    // What nobody read yet comes now, once.
    for agent in agents {
        shown
            .entry(agent)
            .or_default()
            .extend(read_texts(&env, agent));
        assert!(read_texts(&env, agent).is_empty());
    }
    for agent in agents {
        let shown = &shown[agent];
        let unique: BTreeSet<String> = shown.iter().cloned().collect();
        assert_eq!(
            unique.len(),
            shown.len(),
            "{agent} was shown a message twice"
        );
        assert_eq!(
            &unique, &expected[agent],
            "{agent} missed or got another's mail"
        );
    }
    let seqs: Vec<u64> = mail_lines(&env)
        .iter()
        .map(|line| line["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=8 * ROUNDS as u64).collect::<Vec<_>>());
}
