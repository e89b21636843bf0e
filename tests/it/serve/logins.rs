//! Logins of the web board: kept across restarts and kills, refused once unused for their
//! time to live, ended by `token rm` and by logging out; the page told what the caller may do.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::ends;
use crate::common::http::{Served, add_token};
use crate::common::{TestEnv, task_in};

#[test]
fn sigterm_stops_it_cleanly_and_its_login_survives_the_restart() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let address = served.address.clone();
    assert_eq!(served.get("/api/v1/whoami", &login).status, 200);
    // An open event stream does not keep it from stopping.
    let _events = served.events(&login);
    let (status, stderr) = served.stop();
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
    assert!(
        TcpStream::connect(&address).is_err(),
        "nothing listens after it stopped"
    );
    assert!(
        !stderr.contains(&login),
        "the token is never logged: {stderr}"
    );
    let logins = |env: &TestEnv| -> usize {
        let listed = env.run("", &["--json", "token", "list"]).json();
        listed
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["login"] == true && row["name"] == "alice")
            .count()
    };
    assert_eq!(logins(&env), 1, "the login stays in the file");

    // The next server takes it: the tab that held it stays logged in (SPEC section 13).
    let next = Served::start(&env, "alice");
    assert_eq!(
        next.get("/api/v1/whoami", &login).ok(),
        json!({"agent": "alice"})
    );
    assert_eq!(next.get("/api/v1/whoami", &next.login).status, 200);
    assert_eq!(logins(&env), 2);
}

/// The findings of `baton doctor --json`: (name, status, detail).
fn doctor_findings(env: &TestEnv) -> Vec<(String, String, String)> {
    let run = env.run("", &["--json", "doctor"]);
    let value: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("doctor --json ({error}): {run:?}"));
    value["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| {
            let field = |name: &str| check[name].as_str().unwrap().to_string();
            (field("name"), field("status"), field("detail"))
        })
        .collect()
}

#[test]
fn the_page_is_told_what_the_caller_may_do_and_other_readers_get_the_cli_shape() {
    let env = TestEnv::new();
    env.register(&["alice", "dev", "rev"]);
    let dev = add_token(&env, "dev");
    let served = Served::start(&env, "alice");
    let login = served.login.clone();
    let id = env.send("alice", "dev", "reviewed by rev", &["--reviewer", "rev"]);
    let offered = |token: &str| -> Value {
        served
            .get(
                &format!("/api/v1/projects/default/tasks/{id}?offered=true"),
                token,
            )
            .ok()["offered"]
            .clone()
    };
    assert_eq!(offered(&dev), json!(["claim", "ask", "review", "fail"]));
    assert_eq!(offered(&login), json!(["cancel", "reassign", "edit"]));
    env.run("dev", &["claim", &id.to_string()]).ok();
    env.run("dev", &["review", &id.to_string()]).ok();
    // Review requested of rev: the sender may not approve, nor reassign before the verdict.
    assert_eq!(offered(&login), json!(["cancel"]));
    assert_eq!(offered(&dev), json!(["fail"]));
    let board = served
        .get("/api/v1/projects/default/board?offered=true", &login)
        .ok();
    assert_eq!(task_in(&board, id)["offered"], json!(["cancel"]));

    // Unasked, the answers are the CLI's `--json`, with no field of the page's.
    let shown = served
        .get(&format!("/api/v1/projects/default/tasks/{id}"), &login)
        .ok();
    assert_eq!(
        shown,
        env.run("alice", &["--json", "show", &id.to_string()])
            .json()
    );
    let board = served.get("/api/v1/projects/default/board", &login).ok();
    assert_eq!(board, env.run("alice", &["--json", "board"]).json());

    // A task that waits on an unfinished one cannot be claimed, so claim is not offered.
    let waiting = env.send(
        "alice",
        "dev",
        "after the first",
        &["--after", &id.to_string()],
    );
    let offered_waiting = served
        .get(
            &format!("/api/v1/projects/default/tasks/{waiting}?offered=true"),
            &dev,
        )
        .ok();
    assert!(
        !offered_waiting["offered"]
            .as_array()
            .unwrap()
            .contains(&json!("claim")),
        "{offered_waiting}"
    );
}

#[test]
fn the_page_opens_on_the_project_serve_runs_in_and_logs_out_its_login_alone() {
    let env = TestEnv::new();
    let work = env.work();
    env.init_project("alice", "api", &work);
    env.project_beside("alice", "aaa");
    // `Served` runs the server in the work directory, which belongs to `api`.
    let served = Served::start(&env, "alice");
    assert_eq!(
        served.get("/api/v1/page", &served.login).ok(),
        json!({"agent": "alice", "project": "api"})
    );
    let named = Served::start_with(&env, "alice", &["--project", "aaa"]);
    assert_eq!(
        named.get("/api/v1/page", &named.login).ok()["project"],
        "aaa"
    );
    let unknown = env.run(
        "alice",
        &["serve", "--project", "nowhere", "--listen", "127.0.0.1:0"],
    );
    assert!(unknown.fails(1).contains("nowhere"), "{}", unknown.stderr);

    // Logging out removes the login it presents, and no other token.
    let dev = add_token(&env, "dev");
    let out = served
        .post("/api/v1/logout", &served.login, &json!({}))
        .ok();
    assert_eq!(out, json!({"removed": true}));
    assert_eq!(served.get("/api/v1/whoami", &served.login).status, 401);
    assert_eq!(named.get("/api/v1/whoami", &named.login).status, 200);
    let out = served.post("/api/v1/logout", &dev, &json!({})).ok();
    assert_eq!(
        out,
        json!({"removed": false}),
        "an agent's token is not a login"
    );
    assert_eq!(served.get("/api/v1/whoami", &dev).status, 200);
}

#[test]
fn a_login_survives_a_killed_server_and_ends_at_token_rm() {
    let env = TestEnv::new();
    let served = Served::start(&env, "alice");
    let old_login = served.login.clone();
    assert_eq!(served.get("/api/v1/whoami", &old_login).status, 200);
    // SIGKILL: the server does nothing on its way out, and its login stays good.
    served.kill();
    let next = Served::start(&env, "alice");
    assert_eq!(
        next.get("/api/v1/whoami", &old_login).ok(),
        json!({"agent": "alice"})
    );
    let expired = |findings: &[(String, String, String)]| {
        findings
            .iter()
            .filter(|(name, status, _)| name == "tokens" && status == "warn")
            .count()
    };
    assert_eq!(expired(&doctor_findings(&env)), 0, "nothing expired");

    // `token rm` ends every login of alice at once, and the refusal says how to log in.
    let events = next.events(&next.login);
    env.run("", &["token", "rm", "alice"]).ok();
    for login in [&old_login, &next.login] {
        let refused = next.get("/api/v1/whoami", login);
        assert_eq!(refused.status, 401, "{}", refused.body);
        let body = refused.json();
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("removed (`baton token rm`)"),
            "{body}"
        );
        assert!(
            body["hint"]
                .as_str()
                .unwrap()
                .contains("URL `baton serve` prints"),
            "{body}"
        );
    }
    // Its open event stream ends with it.
    ends(&events, "a token that is gone");
}

#[test]
fn a_login_unused_for_its_time_to_live_is_refused_then_dropped() {
    let env = TestEnv::new();
    let served = Served::start_with(&env, "alice", &["--login-ttl", "2s"]);
    let login = served.login.clone();
    assert_eq!(served.get("/api/v1/whoami", &login).status, 200);
    let used = Instant::now();
    // Unused for longer than 2 seconds: however slow the machine, it is past its time.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(used.elapsed() > Duration::from_secs(2));
    let refused = served.get("/api/v1/whoami", &login);
    assert_eq!(refused.status, 401, "{}", refused.body);
    let body = refused.json();
    assert_eq!(
        body["error"],
        "this web login expired: it went unused for more than 2s"
    );
    assert!(
        body["hint"]
            .as_str()
            .unwrap()
            .contains("restart it for a new one"),
        "{body}"
    );
    assert_eq!(
        refused.header("www-authenticate"),
        Some("Bearer"),
        "{:?}",
        refused.headers
    );
    let findings = doctor_findings(&env);
    assert!(
        findings
            .iter()
            .any(|(name, status, detail)| name == "tokens"
                && status == "warn"
                && detail.contains("web login of alice")
                && detail.contains("expired")),
        "{findings:#?}"
    );
    // The next start drops it from the file, and its own login works.
    drop(served);
    let next = Served::start(&env, "alice");
    let listed = env.run("", &["--json", "token", "list"]).json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(next.get("/api/v1/whoami", &next.login).status, 200);
    assert_eq!(next.get("/api/v1/whoami", &login).status, 401);
}

#[test]
fn a_bad_login_ttl_is_refused_in_one_line() {
    let env = TestEnv::new();
    for (ttl, words) in [
        ("12", "a number and a unit"),
        ("0s", "from 1s to 365d"),
        ("2w", "90s, 30m, 12h or 7d"),
    ] {
        let run = env.run(
            "alice",
            &["serve", "--listen", "127.0.0.1:0", "--login-ttl", ttl],
        );
        let stderr = run.fails(1);
        assert!(stderr.contains(words), "{ttl}: {stderr}");
        assert_eq!(
            stderr
                .lines()
                .filter(|line| line.starts_with("error:"))
                .count(),
            1,
            "{stderr}"
        );
    }
}
