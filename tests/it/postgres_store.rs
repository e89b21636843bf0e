//! The store on PostgreSQL end to end, whatever store the rest of the suite runs on: on a
//! cluster of the test's own, which it stops and starts under a running hub (SPEC 16).

use std::time::{Duration, Instant};

use crate::common::{TestEnv, cluster};
use crate::http::Served;

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
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reply = served.get(board, &token);
        if reply.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the hub did not come back: {} {}",
            reply.status,
            reply.body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
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
