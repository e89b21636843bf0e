//! Someone holding a shared store's credentials (an agent on another machine, which `setup`
//! gives them) writes an agent's wake command for machine A's hub to run (SPEC 16): a hub
//! runs only a wake command that its own machine signed when it was registered there, so a
//! command registered on another machine under A's name, or a signed record whose command
//! was changed in the database, runs nowhere, and the wake log on A says why.

use std::time::Duration;

use crate::common::http::Served;
use crate::common::{TestEnv, cluster, eventually};
use crate::hubs::counting_host_wake;

/// A wake command that leaves a mark that it ran.
#[cfg(unix)]
fn marking_wake(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let mark = env.root.path().join("forged-ran");
    let script = env.root.path().join("forged.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho ran >> '{}'\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, mark)
}

#[cfg(unix)]
#[test]
fn a_wake_command_another_machine_wrote_runs_nowhere() {
    let machine_a = TestEnv::new();
    let machine_b = TestEnv::new();
    let (url, made_here) = match &machine_a.store_url {
        Some(url) => (url.clone(), false),
        None if cluster::runs_here() => (cluster::fresh_database(None), true),
        None => return,
    };
    let on_a = [("BATON_STORE", url.as_str()), ("BATON_HOST", "machine-a")];
    let on_b = [("BATON_STORE", url.as_str()), ("BATON_HOST", "machine-b")];
    // B claims to be A when it registers (a host name is only a label anyone can write).
    let b_as_a = [("BATON_STORE", url.as_str()), ("BATON_HOST", "machine-a")];
    let (forged, forged_ran) = marking_wake(&machine_b);
    let (genuine, genuine_runs) = counting_host_wake(&machine_a);
    machine_a
        .run_env("", &["agent", "add", "alice"], &on_a)
        .ok();
    let wake_log_a = machine_a.home().join("wake").join("codex.log");

    // 1. Registered from machine B under A's name: signed with B's key, not A's.
    machine_b
        .run_env(
            "",
            &[
                "agent",
                "add",
                "codex",
                "--wake",
                "--",
                forged.to_str().unwrap(),
            ],
            &b_as_a,
        )
        .ok();
    let hub_a = Served::start_with_vars(&machine_a, "alice", &[], &on_a);
    machine_b
        .run_env(
            "alice",
            &["send", "--to", "codex", "--subject", "one"],
            &on_b,
        )
        .ok();
    eventually("hub A says why it did not run codex's command", || {
        std::fs::read_to_string(&wake_log_a)
            .ok()
            .filter(|log| log.contains("codex's wake command was not registered on this machine"))
    });

    // 2. Registered on A (signed there), then changed in the database by B: the signature
    // no longer holds for the new command.
    machine_a
        .run_env(
            "",
            &[
                "agent",
                "add",
                "codex",
                "--wake",
                "--",
                genuine.to_str().unwrap(),
            ],
            &on_a,
        )
        .ok();
    cluster::apart(|| {
        let home = baton::store::paths::Home::new(machine_b.home());
        let lock = baton::store::lock::LockPolicy::silent(Duration::from_secs(20));
        let store = baton::store::open(&url, &home, lock).unwrap();
        baton::registry::update(&*store, "codex", baton::time::now(), |record, _| {
            record.wake = Some(vec![forged.to_str().unwrap().to_string()]);
            Ok(())
        })
        .unwrap();
    });
    let before = std::fs::read_to_string(&wake_log_a).unwrap().len();
    machine_b
        .run_env(
            "alice",
            &["send", "--to", "codex", "--subject", "two"],
            &on_b,
        )
        .ok();
    eventually("hub A refuses the changed command too", || {
        std::fs::read_to_string(&wake_log_a).ok().filter(|log| {
            log[before..].contains("codex's wake command was not registered on this machine")
        })
    });
    // By hand on A, the same refusal.
    let by_hand = machine_a.run_env("alice", &["wake", "codex"], &on_a);
    assert!(
        by_hand
            .fails(1)
            .contains("codex's wake command was not registered on this machine"),
        "{}",
        by_hand.stderr
    );

    // 3. Registered on A again: it runs there, as before.
    machine_a
        .run_env(
            "",
            &[
                "agent",
                "add",
                "codex",
                "--wake",
                "--",
                genuine.to_str().unwrap(),
            ],
            &on_a,
        )
        .ok();
    machine_b
        .run_env(
            "alice",
            &["send", "--to", "codex", "--subject", "three"],
            &on_b,
        )
        .ok();
    eventually("hub A runs the command it signed", || {
        std::fs::read_to_string(&genuine_runs)
            .ok()
            .filter(|runs| !runs.is_empty())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!forged_ran.exists(), "the forged command ran");
    drop(hub_a);
    if made_here {
        cluster::drop_database(&url);
    }
}
