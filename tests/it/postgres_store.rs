//! The store on PostgreSQL end to end, whatever store the rest of the suite runs on: on a
//! cluster of the test's own, which it stops and starts under a running hub (SPEC 16).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::http::{Served, add_token, try_send};
use crate::common::remote::Agent;
use crate::common::{TestEnv, cluster, eventually_seeing, task_in};

/// The hub's words name the store as `postgres://postgres@127.0.0.1:PORT/DB`: no password.
fn assert_no_password(words: &str) {
    assert!(
        !words.contains(cluster::password()),
        "the password shows in: {words}"
    );
}

#[test]
fn a_hub_whose_database_goes_away_answers_503_and_carries_on_when_it_is_back() {
    if !cluster::runs_here() {
        return;
    }
    let cluster = cluster::private();
    let url = cluster::fresh_database(Some(&cluster.url("postgres", "sslmode=disable")));
    let database = url
        .rsplit('/')
        .next()
        .and_then(|tail| tail.split('?').next())
        .unwrap()
        .to_string();
    let shown = format!("postgres://postgres@127.0.0.1:{}/{database}", cluster.port);
    let env = TestEnv::new();
    let store = [("BATON_STORE", url.as_str())];
    let token = env
        .run_env("", &["token", "add", "codex"], &store)
        .ok()
        .trim()
        .to_string();
    let served = Served::start_with_vars(&env, "lead", &[], &store);
    let board = "/api/v1/projects/default/board";
    served.get(board, &token).ok();

    cluster.stop();
    let refused = served.get(board, &token);
    assert_eq!(refused.status, 503, "{}", refused.body);
    let error = refused.json();
    let words = error["error"].as_str().unwrap();
    assert!(
        words.starts_with(&format!("store {shown} unreachable: ")),
        "{words}"
    );
    assert_eq!(error["code"], 6);
    assert_no_password(&refused.body);
    // A command says the same, and exits 6.
    let run = env.run_env("codex", &["status"], &store);
    let stderr = run.fails(6);
    assert!(
        stderr.starts_with(&format!("error: store {shown} unreachable: ")),
        "{stderr}"
    );
    assert_no_password(&run.stderr);
    assert_no_password(&run.stdout);

    cluster.start();
    // The hub connects again by itself: the next request after the server is back works.
    eventually_seeing(Duration::from_secs(30), "the hub back", || {
        let reply = served.get(board, &token);
        if reply.status == 200 {
            Ok(())
        } else {
            Err(format!("{} {}", reply.status, reply.body))
        }
    });
    let sent = env.run_env(
        "lead",
        &["--json", "send", "--to", "codex", "--subject", "after"],
        &store,
    );
    let id = sent.json()["task"]["id"].as_u64().unwrap();
    let tasks = served.get(board, &token).ok();
    assert_eq!(crate::common::task_in(&tasks, id)["subject"], "after");
    let (_, stderr) = served.stop();
    assert_no_password(&stderr);
}

/// `serve --store URL` with the password in the URL is refused before anything is opened:
/// an argument is in the process list for every user of the machine. The refusal does not
/// repeat the password either.
#[test]
fn serve_refuses_a_store_url_that_holds_a_password_in_its_argument() {
    let env = TestEnv::new();
    for url in [
        "postgres://baton:hunter2@127.0.0.1:1/baton",
        "postgresql://baton@127.0.0.1:1/baton?sslmode=disable&password=hunter2",
    ] {
        let refused = env.run(
            "lead",
            &["serve", "--listen", "127.0.0.1:0", "--store", url],
        );
        assert_eq!(refused.code, 1, "{refused:?}");
        assert!(
            refused.stderr.contains("holds a password")
                && refused.stderr.contains("PGPASSWORD")
                && refused.stderr.contains("postgres"),
            "{}",
            refused.stderr
        );
        let said = format!("{}{}", refused.stdout, refused.stderr);
        assert!(!said.contains("hunter2"), "the password shows in: {said}");
    }
}

/// A swarm of senders spread over hubs: each sends tasks through the hubs in turn until told
/// to stop, and keeps what each hub acknowledged (the id and the subject). A hub that does not
/// answer, or answers 503, is only counted out for that attempt: every attempt has a subject
/// of its own, so a change whose answer was lost is never sent twice.
struct Swarm {
    stop: Arc<AtomicBool>,
    acknowledged: Arc<Mutex<Vec<(String, u64, String)>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Swarm {
    fn start(hubs: &[String], tokens: Vec<String>) -> Swarm {
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(Mutex::new(Vec::new()));
        let threads = tokens
            .into_iter()
            .enumerate()
            .map(|(sender, token)| {
                let (stop, acknowledged, hubs) =
                    (stop.clone(), acknowledged.clone(), hubs.to_vec());
                std::thread::spawn(move || {
                    for n in 0.. {
                        let hub = (sender + n) % hubs.len();
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let subject = format!("sender {sender} attempt {n}");
                        let body = json!({"to": "dev", "subject": subject});
                        match post(&hubs[hub], &token, &body) {
                            Some((200, answer)) => {
                                let id = answer["task"]["id"].as_u64().unwrap();
                                acknowledged
                                    .lock()
                                    .unwrap()
                                    .push((hubs[hub].clone(), id, subject));
                            }
                            Some((503, answer)) => {
                                assert_eq!(answer["code"], 6, "{answer}");
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            Some((status, answer)) => panic!("{status}: {answer}"),
                            None => std::thread::sleep(Duration::from_millis(20)),
                        }
                    }
                })
            })
            .collect();
        Swarm {
            stop,
            acknowledged,
            threads,
        }
    }

    /// How many changes `hub` acknowledged so far.
    fn by(&self, hub: &str) -> usize {
        let acknowledged = self.acknowledged.lock().unwrap();
        acknowledged.iter().filter(|(by, _, _)| by == hub).count()
    }

    fn until(&self, what: &str, mut done: impl FnMut(&Swarm) -> bool) {
        crate::common::eventually_within(Duration::from_secs(60), what, || {
            done(self).then_some(())
        });
    }

    fn stop(self) -> Vec<(String, u64, String)> {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            thread.join().unwrap();
        }
        Arc::try_unwrap(self.acknowledged)
            .unwrap()
            .into_inner()
            .unwrap()
    }
}

fn post(address: &str, token: &str, body: &Value) -> Option<(u16, Value)> {
    let headers = [
        ("Host".to_string(), address.to_string()),
        ("Authorization".to_string(), format!("Bearer {token}")),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    let reply = try_send(
        address,
        "POST",
        "/api/v1/projects/default/tasks",
        &headers,
        Some(&body.to_string()),
    )
    .ok()?;
    Some((reply.status, serde_json::from_str(&reply.body).ok()?))
}

/// What the database holds after a swarm: every acknowledged task once, with its subject;
/// one `send` record for every task on the board and none for a task not on it; the
/// project's activity numbers gapless from 1.
pub fn assert_each_acknowledged_change_once(env: &TestEnv, acknowledged: &[(String, u64, String)]) {
    let board = env.board("default");
    let tasks = board["tasks"].as_array().unwrap();
    for (hub, id, subject) in acknowledged {
        assert_eq!(
            task_in(&board["tasks"], *id)["subject"],
            subject.as_str(),
            "T-{id}, acknowledged by {hub}"
        );
    }
    let mut logged: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for record in env.activity("default") {
        if let Some(id) = record["task"].as_u64() {
            let action = record["action"].as_str().unwrap().to_string();
            logged.entry(id).or_default().push(action);
        }
    }
    for task in tasks {
        let id = task["id"].as_u64().unwrap();
        assert_eq!(
            logged.get(&id).map(Vec::as_slice),
            Some(&["send".to_string()][..]),
            "T-{id}"
        );
    }
    assert_eq!(
        logged.len(),
        tasks.len(),
        "a record for every task, none for another"
    );
    // The numbers are the rows' own, which no face of baton shows: read from the table.
    let numbers: Vec<i64> = env
        .in_database(|client| {
            client
                .query(
                    "SELECT seq FROM activity WHERE project = 'default' ORDER BY seq",
                    &[],
                )
                .unwrap()
                .iter()
                .map(|row| row.get(0))
                .collect()
        })
        .expect("a database");
    assert_eq!(
        numbers,
        (1..=numbers.len() as i64).collect::<Vec<_>>(),
        "gapless"
    );
}

/// An environment on the database `store_url` (else the suite's own, or one on the shared
/// test cluster when the suite runs on the files), with `dev` and eight senders, each with a
/// token.
fn swarm_env(store_url: Option<String>) -> (TestEnv, Vec<String>) {
    let mut env = TestEnv::new();
    match store_url {
        Some(url) => {
            if let Some(suite_s) = env.store_url.replace(url) {
                cluster::drop_database(&suite_s);
            }
        }
        None if env.store_url.is_none() => env.store_url = Some(cluster::fresh_database(None)),
        None => {}
    }
    env.register(&["alice", "dev"]);
    let tokens = (0..8)
        .map(|n| crate::common::http::add_token(&env, &format!("sender{n}")))
        .collect();
    (env, tokens)
}

/// Two hubs on one database under a swarm (SPEC 16): hub A is SIGKILLed in the middle of
/// it, its senders carry on through hub B, and every change either hub acknowledged is there
/// once, the log agreeing.
#[test]
fn two_hubs_under_a_swarm_one_killed_lose_nothing_acknowledged_and_write_each_once() {
    if !cluster::runs_here() {
        return;
    }
    let (env, tokens) = swarm_env(None);
    let store = env.store_env();
    let vars: Vec<(&str, &str)> = store.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let a = Served::start_with_vars(&env, "alice", &[], &vars);
    let b = Served::start_with_vars(&env, "alice", &[], &vars);
    let (a_address, b_address) = (a.address.clone(), b.address.clone());
    let swarm = Swarm::start(&[a_address.clone(), b_address.clone()], tokens);
    swarm.until("both hubs acknowledged 40 changes", |swarm| {
        swarm.by(&a_address) >= 40 && swarm.by(&b_address) >= 40
    });
    a.kill();
    let after_kill = swarm.by(&b_address);
    swarm.until("hub B acknowledged 80 more after the kill", |swarm| {
        swarm.by(&b_address) >= after_kill + 80
    });
    let acknowledged = swarm.stop();
    assert_each_acknowledged_change_once(&env, &acknowledged);
    drop(b);
}

/// PostgreSQL restarted under a swarm through two hubs (SPEC 16): while it is down the hubs
/// answer 503 and nothing is acknowledged; when it is back both reconnect by themselves and
/// acknowledge again; every change acknowledged before, during or after is there once.
#[test]
fn postgresql_restarted_under_a_swarm_through_two_hubs_loses_nothing_acknowledged() {
    if !cluster::runs_here() {
        return;
    }
    let cluster = cluster::private();
    let admin = cluster.url("postgres", "sslmode=disable");
    let (env, tokens) = swarm_env(Some(cluster::fresh_database(Some(&admin))));
    let store = [("BATON_STORE", env.store_url.clone().unwrap())];
    let vars: Vec<(&str, &str)> = store.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let a = Served::start_with_vars(&env, "alice", &[], &vars);
    let b = Served::start_with_vars(&env, "alice", &[], &vars);
    let (a_address, b_address) = (a.address.clone(), b.address.clone());
    let swarm = Swarm::start(&[a_address.clone(), b_address.clone()], tokens);
    swarm.until("both hubs acknowledged 30 changes", |swarm| {
        swarm.by(&a_address) >= 30 && swarm.by(&b_address) >= 30
    });
    cluster.stop();
    // The database is away for a while: the outage is the test.
    std::thread::sleep(Duration::from_millis(500));
    cluster.start();
    let (before_a, before_b) = (swarm.by(&a_address), swarm.by(&b_address));
    swarm.until(
        "both hubs acknowledged 30 more after the restart",
        |swarm| swarm.by(&a_address) >= before_a + 30 && swarm.by(&b_address) >= before_b + 30,
    );
    let acknowledged = swarm.stop();
    assert_each_acknowledged_change_once(&env, &acknowledged);
    let (_, stderr_a) = a.stop();
    let (_, stderr_b) = b.stop();
    assert_no_password(&stderr_a);
    assert_no_password(&stderr_b);
}

/// Twenty agents in four groups (`n % 4`), each on a machine of its own, ask at once through
/// two hubs on one database (SPEC 18.2) for their group's directory and a file of their own:
/// exactly one of each group holds its directory, the others are refused naming it, and
/// `reserved` names one holder for a path of each.
#[test]
fn of_twenty_agents_reserving_overlapping_patterns_through_two_hubs_one_holds_each_path() {
    if !cluster::runs_here() {
        return;
    }
    let mut env = TestEnv::new();
    if env.store_url.is_none() {
        env.store_url = Some(cluster::fresh_database(None));
    }
    let names: Vec<String> = (0..20).map(|n| format!("agent{n}")).collect();
    env.register(&["alice"]);
    for name in &names {
        env.register(&[name]);
    }
    let hubs = [Served::start(&env, "alice"), Served::start(&env, "alice")];
    let agents: Vec<Agent> = names
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let url = format!("http://{}", hubs[n % 2].address);
            Agent::new(url, add_token(&env, name))
        })
        .collect();
    let start = std::sync::Barrier::new(agents.len());
    let runs: Vec<crate::common::Run> = std::thread::scope(|scope| {
        let threads: Vec<_> = agents
            .iter()
            .enumerate()
            .map(|(n, agent)| {
                let start = &start;
                scope.spawn(move || {
                    let patterns = format!("src/part{}/**,notes/agent{n}.md", n % 4);
                    start.wait();
                    agent.run(&["--json", "reserve", &patterns, "--for", "1h"])
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    // Who holds each group's directory, as anyone is told.
    let held = env.run("alice", &["--json", "reservations"]).json();
    let held = held.as_array().unwrap();
    let holders: Vec<String> = (0..4)
        .map(|group| {
            let pattern = format!("src/part{group}/**");
            let of: Vec<&str> = held
                .iter()
                .filter(|reservation| reservation["pattern"] == pattern.as_str())
                .map(|reservation| reservation["agent"].as_str().unwrap())
                .collect();
            assert_eq!(of.len(), 1, "{pattern}: {held:?}");
            let path = format!("src/part{group}/lib.rs");
            let run = env.run("alice", &["reserved", &path]);
            run.fails(1);
            let named: Vec<&str> = run.stdout.lines().collect();
            assert_eq!(named.len(), 1, "{}", run.stdout);
            assert!(
                named[0].contains(&format!("{path} is reserved by {}", of[0])),
                "{}",
                run.stdout
            );
            of[0].to_string()
        })
        .collect();
    for (n, run) in runs.iter().enumerate() {
        let (name, holder) = (&names[n], &holders[n % 4]);
        if name == holder {
            let taken = run.json();
            assert_eq!(
                taken["reservations"].as_array().unwrap().len(),
                2,
                "{taken}"
            );
        } else {
            let refused = run.fails(1);
            assert!(
                refused.contains(&format!("is held: src/part{}/** by {holder}", n % 4)),
                "{name}: {refused}"
            );
        }
    }
    // Nothing else: each holder's two patterns, no part of what was refused.
    assert_eq!(held.len(), 8, "{held:?}");
    for reservation in held {
        assert!(
            holders
                .iter()
                .any(|holder| reservation["agent"] == holder.as_str()),
            "{reservation}"
        );
    }
}

/// A command remembers the schema it found (under the home's `cache/`), so the next ones
/// skip the check; a schema a newer baton made since is still refused by the next command,
/// with the same words as ever, before it writes a thing.
#[test]
fn a_command_remembers_the_schema_and_the_next_still_refuses_one_a_newer_baton_made() {
    if !cluster::runs_here() {
        return;
    }
    let given = match crate::common::test_store() {
        crate::common::TestStore::Postgres(Some(url)) => Some(url),
        _ => None,
    };
    let url = cluster::fresh_database(given.as_deref());
    let tamper = |sql: &str| {
        cluster::apart(|| {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            client.batch_execute(sql).expect(sql)
        })
    };
    let env = TestEnv::new();
    let store = [("BATON_STORE", url.as_str())];
    env.run_env("lead", &["whoami"], &store).ok();
    env.run_env("dev", &["whoami"], &store).ok();
    env.run_env(
        "lead",
        &["send", "--to", "dev", "--subject", "first"],
        &store,
    )
    .ok();
    let cache = env.home().join("cache");
    let remembered: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    assert_eq!(remembered.len(), 1, "{remembered:?}");
    let version = std::fs::read_to_string(&remembered[0]).unwrap();
    let version: i64 = version.trim().parse().unwrap();
    assert!(
        env.run_env("dev", &["board"], &store)
            .ok()
            .contains("first")
    );

    // Another baton, newer, migrates the database: the next command refuses it.
    tamper(&format!(
        "UPDATE baton_schema SET version = {}",
        version + 1
    ));
    let refused = env.run_env(
        "lead",
        &["send", "--to", "dev", "--subject", "second"],
        &store,
    );
    let stderr = refused.fails(4);
    assert!(
        stderr.contains(&format!(
            "has schema {}, newer than this baton understands ({version}); upgrade baton",
            version + 1
        )),
        "{stderr}"
    );
    assert!(!remembered[0].exists(), "forgotten once found wrong");
    assert_eq!(env.run_env("dev", &["status"], &store).fails(4), stderr);

    // Nothing of the refused command was written.
    tamper(&format!("UPDATE baton_schema SET version = {version}"));
    let board = env.run_env("dev", &["board"], &store).ok().to_string();
    assert!(
        board.contains("first") && !board.contains("second"),
        "{board}"
    );
    assert!(remembered[0].exists(), "remembered again once checked");
}
