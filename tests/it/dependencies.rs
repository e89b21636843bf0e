//! Dependencies that can no longer complete (SPEC sections 3 and 4): `send --after` a failed
//! or canceled task is refused; a task whose dependency ends failed or canceled goes back to
//! its sender, who is told, woken and can cancel or reassign it; and a blocked task cannot
//! be finished by any road that claiming is refused on.

use std::time::Duration;

use serde_json::Value;

use crate::common::{TestEnv, eventually_within, recording_wake_command, task_in};

/// A hub where `lead` sends to `worker`.
fn team() -> TestEnv {
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    env
}

fn status_of(env: &TestEnv, id: u64) -> String {
    let task = task_in(&env.board("default")["tasks"], id);
    task["status"].as_str().unwrap().to_string()
}

#[test]
fn send_after_a_failed_or_canceled_task_is_refused_and_adds_nothing() {
    let env = team();
    let canceled = env.send("lead", "worker", "Build it", &[]);
    env.run("lead", &["cancel", &canceled.to_string()]).ok();
    let failed = env.send("lead", "worker", "Test it", &[]);
    env.run("worker", &["fail", &failed.to_string(), "--reason", "no"])
        .ok();
    let before = env.board("default");
    for (id, status) in [(canceled, "canceled"), (failed, "failed")] {
        for after in [id.to_string(), format!("T-{id}")] {
            let run = env.run(
                "lead",
                &[
                    "send",
                    "--to",
                    "worker",
                    "--subject",
                    "Ship",
                    "--after",
                    &after,
                ],
            );
            let stderr = run.fails(1);
            assert!(
                stderr.starts_with(&format!("error: T-{id} is {status}")),
                "{stderr}"
            );
            assert!(stderr.contains("hint: "), "{stderr}");
        }
    }
    assert_eq!(env.board("default"), before, "nothing was added");

    // Archived, it is refused all the same; an archived completed task is a fine dependency.
    let completed = env.send("lead", "worker", "Lint it", &[]);
    env.run(
        "worker",
        &["done", &completed.to_string(), "--result", "ok"],
    )
    .ok();
    env.run("lead", &["archive", "--older-than", "0"]).ok();
    let board = env.board("default");
    assert!(board["tasks"].as_array().unwrap().is_empty(), "{board:#}");
    let stderr = env
        .run(
            "lead",
            &[
                "send",
                "--to",
                "worker",
                "--subject",
                "Ship",
                "--after",
                &canceled.to_string(),
            ],
        )
        .fails(1)
        .to_string();
    assert!(
        stderr.contains(&format!("T-{canceled} is canceled")),
        "{stderr}"
    );
    let shipped = env.send(
        "lead",
        "worker",
        "Ship",
        &["--after", &completed.to_string()],
    );
    assert_eq!(env.inbox_ids("worker"), vec![shipped]);
}

/// Sends T-1 and T-2 (after T-1) from lead to worker, then ends T-1 as `end` does, and checks
/// that every view tells lead that T-2 waits on T-1, which ended `status`.
fn dependency_ends_and_the_sender_is_told(end: &[&str], status: &str) {
    let env = team();
    let first = env.send("lead", "worker", "Build it", &[]);
    let second = env.send("lead", "worker", "Ship it", &["--after", "1"]);
    assert_eq!((first, second), (1, 2));
    assert_eq!(env.inbox_ids("worker"), vec![1], "T-2 is blocked");
    assert!(env.inbox_ids("lead").is_empty());

    let actor = end[0];
    let mut args = vec!["--json"];
    args.extend_from_slice(&end[1..]);
    let changed = env.run(actor, &args).json();
    // A hand-over to the sender (what wakes and notifies it), unless lead did it itself.
    let handovers = changed["handovers"].as_array().unwrap();
    if actor == "lead" {
        assert!(
            handovers.is_empty(),
            "nobody is woken for their own change: {changed:#}"
        );
    } else {
        assert_eq!(handovers.len(), 1, "{changed:#}");
        assert_eq!(handovers[0]["agent"], "lead");
        assert_eq!(handovers[0]["task"], 2);
        assert_eq!(handovers[0]["reason"], format!("dependency_{status}"));
    }

    let words = match status {
        "failed" => "waits on T-1, which failed",
        _ => "waits on T-1, which was canceled",
    };
    // In exactly one inbox: the sender's.
    assert_eq!(env.inbox_ids("lead"), vec![2]);
    assert!(env.inbox_ids("worker").is_empty());
    let inbox = env.run("lead", &["--json", "inbox", "--peek"]).json();
    assert_eq!(inbox["tasks"][0]["reason"], format!("dependency_{status}"));
    let text = env.run("lead", &["inbox", "--peek"]).ok().to_string();
    assert!(text.contains(words), "{text}");
    assert!(text.contains("baton cancel 2"), "the next step: {text}");
    let board = env.run("lead", &["board"]).ok().to_string();
    assert!(board.contains(words), "{board}");
    let show = env.run("lead", &["show", "2"]).ok().to_string();
    assert!(show.contains(words), "{show}");
    let shown: Value = env.run("lead", &["--json", "show", "2"]).json();
    assert_eq!(shown["turn"], "lead");
    assert_eq!(shown["reason"], format!("dependency_{status}"));
    let status_line = env.run("lead", &["status"]).ok().to_string();
    assert!(
        status_line.contains(&format!("T-2 {words}")),
        "{status_line}"
    );
    let hook = env
        .run("lead", &["hook", "session-start", "--client", "claude"])
        .ok()
        .to_string();
    assert!(hook.contains(words), "{hook}");
    assert!(
        hook.contains("baton cancel 2"),
        "the hook's next step: {hook}"
    );

    // It can go no further as it is: worker can neither claim nor finish it.
    for refused in [vec!["claim", "2"], vec!["done", "2", "--result", "shipped"]] {
        let stderr = env.run("worker", &refused).fails(1).to_string();
        assert!(stderr.contains(words), "{stderr}");
    }
    assert_eq!(status_of(&env, 2), "pending");

    // Reassigned, even to the same agent, it goes ahead without what ended.
    env.run("lead", &["reassign", "2", "--to", "worker"]).ok();
    assert_eq!(env.inbox_ids("worker"), vec![2]);
    assert!(env.inbox_ids("lead").is_empty());
    let shown = env.run("worker", &["--json", "show", "2"]).json();
    assert_eq!(shown["after"], serde_json::json!([]));
    env.run("worker", &["claim", "2"]).ok();
    env.run("worker", &["done", "2", "--result", "shipped"])
        .ok();
    assert_eq!(status_of(&env, 2), "completed");
}

#[test]
fn a_task_whose_dependency_fails_goes_to_its_senders_inbox_marked_so() {
    dependency_ends_and_the_sender_is_told(
        &["worker", "fail", "1", "--reason", "broken"],
        "failed",
    );
}

#[test]
fn a_task_whose_dependency_is_canceled_goes_to_its_senders_inbox_marked_so() {
    dependency_ends_and_the_sender_is_told(&["lead", "cancel", "1"], "canceled");
}

#[test]
fn the_sender_can_cancel_a_task_whose_dependency_ended() {
    let env = team();
    env.send("lead", "worker", "Build it", &[]);
    env.send("lead", "worker", "Ship it", &["--after", "1"]);
    env.run("lead", &["cancel", "1"]).ok();
    assert_eq!(env.inbox_ids("lead"), vec![2]);
    env.run("lead", &["cancel", "2", "--reason", "nothing to ship"])
        .ok();
    assert!(env.inbox_ids("lead").is_empty());
    assert_eq!(status_of(&env, 2), "canceled");
}

#[test]
fn done_and_review_on_a_blocked_task_are_refused_as_claim_is() {
    let env = team();
    env.send("lead", "worker", "Build it", &[]);
    env.send("lead", "worker", "Ship it", &["--after", "1"]);
    env.send(
        "lead",
        "worker",
        "Announce it",
        &["--after", "1", "--review"],
    );
    for (id, refused) in [
        ("2", vec!["claim", "2"]),
        ("2", vec!["done", "2", "--result", "shipped"]),
        ("3", vec!["review", "3", "--body", "ready"]),
    ] {
        let stderr = env.run("worker", &refused).fails(1).to_string();
        assert!(
            stderr.starts_with(&format!(
                "error: T-{id} is pending, assigned to worker: it is blocked until T-1 is completed"
            )),
            "{stderr}"
        );
    }
    assert_eq!(status_of(&env, 2), "pending");
    assert_eq!(status_of(&env, 3), "pending");
    env.run("worker", &["done", "1", "--result", "built"]).ok();
    env.run("worker", &["done", "2", "--result", "shipped"])
        .ok();
    assert_eq!(status_of(&env, 2), "completed");
}

#[test]
fn the_sender_is_woken_when_a_dependency_of_its_task_fails() {
    let env = team();
    env.register(&["builder"]);
    let script = recording_wake_command(env.root.path());
    env.run(
        "",
        &["agent", "add", "lead", "--wake", "--", "/bin/sh", &script],
    )
    .ok();
    // T-1 is builder's, so that lead hears of its failure only through T-2 (baton's
    // notification that T-1 failed goes to builder).
    env.send("builder", "worker", "Build it", &["--no-wake"]);
    env.send("lead", "worker", "Ship it", &["--after", "1", "--no-wake"]);
    // Wake is on for this one command.
    env.run("worker", &["fail", "1", "--reason", "broken"]).ok();
    let woken = env.root.path().join("woken");
    eventually_within(Duration::from_secs(60), "a run of the wake command", || {
        woken.exists().then_some(())
    });
    let record = std::fs::read_to_string(&woken).unwrap_or_default();
    assert_eq!(
        record.lines().next(),
        Some("lead"),
        "lead was woken: {record:?}"
    );
}
