//! `baton serve` commits the changes that arrive together in one write (group commit) and
//! keeps the boards it read: rules, not times. Every request gets exactly its own answer, a
//! refusal refuses only its own request, the CLI keeps writing beside the server, a server
//! killed mid-batch keeps every change it acknowledged (with one log line each), and what it
//! keeps is never older than the file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use serde_json::{Value, json};

use crate::common::http::{Served, add_token, try_send};
use crate::common::{TestEnv, task_in};

/// A POST on a connection of its own; `None` when the server is not there to answer
/// (killed), so that a test can go on past it.
fn try_post(address: &str, token: &str, path: &str, body: &Value) -> Option<(u16, Value)> {
    let headers = [
        ("Host".to_string(), address.to_string()),
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let reply = try_send(address, "POST", path, &headers, Some(&body.to_string())).ok()?;
    Some((reply.status, serde_json::from_str(&reply.body).ok()?))
}

/// Each task id in the activity log, with the actions logged for it in order.
fn logged(env: &TestEnv) -> BTreeMap<u64, Vec<String>> {
    let mut logged: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in env.activity("default") {
        if let Some(id) = line["task"].as_u64() {
            let action = line["action"].as_str().unwrap().to_string();
            logged.entry(id).or_default().push(action);
        }
    }
    logged
}

#[test]
fn twenty_claimers_of_one_task_at_once_one_wins() {
    let env = TestEnv::new();
    let names: Vec<String> = (0..10).map(|n| format!("rival{n}")).collect();
    env.register(&["alice", "dev"]);
    let id = env.send("alice", "dev", "one task, many hands", &[]);
    let mut tokens = vec![add_token(&env, "dev"); 10];
    tokens.extend(names.iter().map(|name| add_token(&env, name)));
    let served = Served::start(&env, "alice");
    let start = Barrier::new(tokens.len());
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let claims: Vec<_> = tokens
            .iter()
            .map(|token| {
                let (address, start) = (&served.address, &start);
                scope.spawn(move || {
                    start.wait();
                    let path = format!("/api/v1/projects/default/tasks/{id}/claim");
                    try_post(address, token, &path, &json!({})).expect("an answer")
                })
            })
            .collect();
        claims
            .into_iter()
            .map(|claim| claim.join().unwrap())
            .collect()
    });
    let won: Vec<&Value> = answers
        .iter()
        .filter(|(status, _)| *status == 200)
        .map(|(_, body)| body)
        .collect();
    assert_eq!(won.len(), 1, "{answers:?}");
    assert_eq!(won[0]["task"]["status"], "working");
    assert_eq!(won[0]["task"]["to"], "dev");
    for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
        assert_eq!(*status, 400, "{body}");
        assert_eq!(
            body["code"], 1,
            "a refused claim is the CLI's refusal: {body}"
        );
    }
    assert_eq!(logged(&env)[&id], ["send", "claim"]);
    let board = env.board("default");
    assert_eq!(task_in(&board["tasks"], id)["status"], "working");
}

#[test]
fn every_request_of_a_batch_gets_its_own_answer_and_the_cli_writes_beside_it() {
    let env = TestEnv::new();
    let senders: Vec<String> = (0..8).map(|n| format!("sender{n}")).collect();
    env.register(&["alice", "dev"]);
    let tokens: Vec<String> = senders.iter().map(|name| add_token(&env, name)).collect();
    let served = Served::start(&env, "alice");
    let start = Barrier::new(tokens.len() + 1);
    // Every third request names no agent and is refused; the others must each come back
    // with their own subject, and a task number nobody else got.
    let answers: Vec<(String, bool, u16, Value)> = std::thread::scope(|scope| {
        let cli = scope.spawn(|| {
            start.wait();
            (0..6)
                .map(|n| env.send("alice", "dev", &format!("from the cli {n}"), &[]))
                .collect::<Vec<u64>>()
        });
        let requests: Vec<_> = tokens
            .iter()
            .enumerate()
            .map(|(sender, token)| {
                let (address, start) = (&served.address, &start);
                scope.spawn(move || {
                    start.wait();
                    (0..6)
                        .map(|n| {
                            let subject = format!("sender {sender} task {n}");
                            let is_good = (sender + n) % 3 != 0;
                            let to = if is_good { "dev" } else { "no such agent!" };
                            let (status, body) = try_post(
                                address,
                                token,
                                "/api/v1/projects/default/tasks",
                                &json!({"to": to, "subject": subject}),
                            )
                            .expect("an answer");
                            (subject, is_good, status, body)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut answers: Vec<_> = requests
            .into_iter()
            .flat_map(|request| request.join().unwrap())
            .collect();
        for id in cli.join().unwrap() {
            answers.push((String::new(), true, 0, json!({"task": {"id": id}})));
        }
        answers
    });
    let mut ids = BTreeSet::new();
    let mut expected = BTreeMap::new();
    for (subject, is_good, status, body) in &answers {
        if !is_good {
            assert_eq!(*status, 400, "{subject}: {body}");
            assert!(
                body["error"].as_str().unwrap().contains("no such agent!"),
                "{body}"
            );
            continue;
        }
        let id = body["task"]["id"].as_u64().unwrap();
        assert!(ids.insert(id), "T-{id} was answered twice: {body}");
        if *status != 0 {
            assert_eq!(*status, 200, "{subject}: {body}");
            assert_eq!(body["task"]["subject"], subject.as_str(), "{body}");
            assert_eq!(body["task"]["to"], "dev");
            expected.insert(id, subject.clone());
        }
    }
    let board = env.board("default");
    let on_board: BTreeSet<u64> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["id"].as_u64().unwrap())
        .collect();
    assert_eq!(on_board, ids, "every answered task, and nothing else");
    for (id, subject) in &expected {
        assert_eq!(task_in(&board["tasks"], *id)["subject"], subject.as_str());
    }
    let logged = logged(&env);
    assert_eq!(logged.keys().copied().collect::<BTreeSet<_>>(), ids);
    assert!(
        logged.values().all(|actions| actions == &["send"]),
        "{logged:?}"
    );
}

#[test]
fn a_cli_change_is_seen_by_the_very_next_api_read() {
    let env = TestEnv::new();
    env.register(&["alice", "dev"]);
    let dev = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    for n in 0..12 {
        let id = env.send("alice", "dev", &format!("look {n}"), &[]);
        let board = served.get("/api/v1/projects/default/board", &dev).ok();
        assert_eq!(task_in(&board, id)["status"], "pending", "look {n}");
        env.run("dev", &["claim", &id.to_string()]).ok();
        let shown = served
            .get(&format!("/api/v1/projects/default/tasks/{id}"), &dev)
            .ok();
        assert_eq!(shown["status"], "working", "look {n}: {shown}");
        // And the other way: a change through the API, then the CLI and the API again.
        served
            .post(
                &format!("/api/v1/projects/default/tasks/{id}/done"),
                &dev,
                &json!({"text": "ok"}),
            )
            .ok();
        let shown = env
            .run("alice", &["--json", "show", &id.to_string()])
            .json();
        assert_eq!(shown["status"], "completed");
        let board = served
            .get("/api/v1/projects/default/board?all=true", &dev)
            .ok();
        assert_eq!(task_in(&board, id)["status"], "completed");
    }
}

#[test]
fn a_server_killed_mid_batch_keeps_every_change_it_acknowledged_once() {
    let env = TestEnv::new();
    let senders: Vec<String> = (0..8).map(|n| format!("sender{n}")).collect();
    env.register(&["alice", "dev"]);
    let tokens: Vec<String> = senders.iter().map(|name| add_token(&env, name)).collect();
    let served = Served::start(&env, "alice");
    let address = served.address.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(Mutex::new(BTreeMap::<u64, String>::new()));
    let threads: Vec<_> = tokens
        .into_iter()
        .enumerate()
        .map(|(sender, token)| {
            let (address, stop, acknowledged) =
                (address.clone(), stop.clone(), acknowledged.clone());
            std::thread::spawn(move || {
                for n in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let subject = format!("sender {sender} task {n}");
                    let body = json!({"to": "dev", "subject": subject});
                    match try_post(&address, &token, "/api/v1/projects/default/tasks", &body) {
                        Some((200, answer)) => {
                            let id = answer["task"]["id"].as_u64().unwrap();
                            acknowledged.lock().unwrap().insert(id, subject);
                        }
                        Some((status, answer)) => panic!("{status}: {answer}"),
                        None => break,
                    }
                }
            })
        })
        .collect();
    crate::common::eventually("60 changes acknowledged", || {
        (acknowledged.lock().unwrap().len() >= 60).then_some(())
    });
    served.kill();
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    // The next writer completes or drops what the killed one left half-logged.
    env.send("alice", "dev", "after the crash", &[]);
    let board = env.board("default");
    let logged = logged(&env);
    for (id, subject) in acknowledged.lock().unwrap().iter() {
        assert_eq!(task_in(&board["tasks"], *id)["subject"], subject.as_str());
    }
    for task in board["tasks"].as_array().unwrap() {
        let id = task["id"].as_u64().unwrap();
        assert_eq!(
            logged.get(&id).map(Vec::as_slice),
            Some(&["send".to_string()][..])
        );
    }
    assert_eq!(
        logged.len(),
        board["tasks"].as_array().unwrap().len(),
        "a line for every task on the board and none for a task that is not"
    );
}
