//! Leases seen from the agent's machine: what renews a claim and what only looks.

use super::*;

/// The time `seconds` from now (before it, for a negative number), as baton writes times:
/// for a claim made in the past, whose lease is then near its end.
pub fn seconds_from_now(seconds: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let at = now.as_secs() as i64 + seconds;
    let (days, rest) = (at.div_euclid(86_400), at.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        now.subsec_millis()
    )
}

/// Sets the project's lease in its `project.json` (SPEC section 3).
fn set_lease_minutes(env: &TestEnv, project: &str, minutes: u64) {
    let path = format!("projects/{project}/project.json");
    let mut value: Value = serde_json::from_str(&env.hub_text(&path).unwrap()).unwrap();
    value["settings"]["lease_minutes"] = minutes.into();
    env.write_hub_text(&path, &serde_json::to_string_pretty(&value).unwrap());
}

/// A hub where codex has claimed T-1 50 seconds ago under a one-minute lease: 10 seconds
/// are left, less than half, so any renewal would move it.
fn hub_with_a_claim_near_its_end() -> (TestEnv, String, String) {
    let HubHome { env, token } = HubHome::new();
    env.send("alice", "codex", "Long job", &["--no-wake"]);
    set_lease_minutes(&env, "default", 1);
    env.run_env(
        "codex",
        &["claim", "1"],
        &[("BATON_NOW", &seconds_from_now(-50))],
    )
    .ok();
    let lease = task_in(&env.board("default")["tasks"], 1)["lease_expires_at"]
        .as_str()
        .unwrap()
        .to_string();
    (env, token, lease)
}

fn lease_of(env: &TestEnv) -> String {
    task_in(&env.board("default")["tasks"], 1)["lease_expires_at"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_claim_stalls_on_time_while_listen_and_watch_look_and_the_agents_own_command_renews_it() {
    let (env, token, lease) = hub_with_a_claim_near_its_end();
    let served = Served::start(&env, "alice");
    let agent = Agent::new(format!("http://{}", served.address), token);
    let listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let watch = agent.spawn(&["--json", "watch"], false);
    let boards = &watch.stdout;
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board");
    // A hand-over makes the listener look at the inbox, and the board be drawn again.
    env.send("alice", "codex", "More work", &["--no-wake"]);
    listen.said("work arrived for codex: T-2");
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board again");
    assert_eq!(
        lease_of(&env),
        lease,
        "a look on codex's behalf renewed its lease"
    );
    eventually("the claim stalls and goes back to its sender", || {
        let inbox = env.run("alice", &["--json", "inbox", "--peek"]).json();
        let tasks = inbox["tasks"].as_array().unwrap().clone();
        tasks
            .iter()
            .any(|task| task["id"] == 1 && task["reason"] == "stalled")
            .then_some(())
    });
    assert_eq!(lease_of(&env), lease);
    // codex's own command, from its machine, shows it alive: the lease is renewed.
    agent.run(&["status"]).ok();
    assert_ne!(
        lease_of(&env),
        lease,
        "the agent's own command renews its lease"
    );
    drop((listen, watch));
}

#[test]
fn a_board_watched_on_the_hubs_machine_renews_no_lease_and_records_no_heartbeat() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let (env, _token, lease) = hub_with_a_claim_near_its_end();
    let seen = |env: &TestEnv| {
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(env.home().join("agents/codex.json")).unwrap(),
        )
        .unwrap();
        record["last_seen"].clone()
    };
    let last_seen = seen(&env);
    let mut watch = env
        .command(&env.work())
        .args(["--as", "codex", "--json", "watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let boards = crate::common::stdout_lines(&mut watch);
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board");
    env.send("alice", "codex", "More work", &["--no-wake"]);
    boards
        .recv_timeout(Duration::from_secs(60))
        .expect("watch drew the board again");
    let _ = watch.kill();
    let _ = watch.wait();
    assert_eq!(lease_of(&env), lease, "watching renewed the lease");
    assert_eq!(seen(&env), last_seen, "watching recorded a heartbeat");
    env.run("codex", &["status"]).ok();
    assert_ne!(lease_of(&env), lease, "codex's own command renews it");
}
