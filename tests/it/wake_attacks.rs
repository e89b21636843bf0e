//! Someone holding a shared store's credentials (an agent on another machine, which `setup`
//! gives them) writes an agent's wake command for machine A's hub to run (SPEC 16): a hub
//! runs only a wake command that its own machine signed when it was registered there, so a
//! command registered on another machine under A's name, or a signed record whose command
//! was changed in the database, runs nowhere, and the wake log on A says why.

use std::time::Duration;

use crate::common::http::Served;
use crate::common::{TestEnv, cluster, eventually};
use crate::hubs::counting_host_wake;

/// Two machines' homes sharing one database (the suite's, or one made here), each named by
/// `BATON_HOST`; the database made here is dropped with it.
struct TwoMachines {
    a: TestEnv,
    b: TestEnv,
    url: String,
    made_here: bool,
}

impl TwoMachines {
    /// `None` where PostgreSQL cannot run (the test then says NOT RUN). The human `alice`
    /// is registered.
    fn new() -> Option<TwoMachines> {
        let a = TestEnv::new();
        let b = TestEnv::new();
        let (url, made_here) = match &a.store_url {
            Some(url) => (url.clone(), false),
            None if cluster::runs_here() => (cluster::fresh_database(None), true),
            None => return None,
        };
        let machines = TwoMachines {
            a,
            b,
            url,
            made_here,
        };
        // The human who hands work over, known to the hub.
        let on_a = machines.on("machine-a");
        machines
            .a
            .run_env("", &["agent", "add", "alice"], &on_a)
            .ok();
        Some(machines)
    }

    /// The environment of a command on the machine named `host`.
    fn on<'v>(&'v self, host: &'v str) -> [(&'v str, &'v str); 2] {
        [("BATON_STORE", self.url.as_str()), ("BATON_HOST", host)]
    }

    /// The shared store as the library opens it, from machine B's home.
    fn store_of_b(&self) -> std::sync::Arc<dyn baton::store::Store> {
        let home = baton::home::Home::new(self.b.home());
        let lock = baton::file::lock::LockPolicy::silent(Duration::from_secs(20));
        baton::store::open(&self.url, &home, lock).unwrap()
    }

    /// `agent add codex --wake -- PROGRAM` on machine A.
    fn wake_codex_on_a(&self, program: &std::path::Path) {
        let on_a = self.on("machine-a");
        self.a
            .run_env(
                "",
                &[
                    "agent",
                    "add",
                    "codex",
                    "--wake",
                    "--",
                    program.to_str().unwrap(),
                ],
                &on_a,
            )
            .ok();
    }

    /// Machine A's wake log of codex.
    fn wake_log_a(&self) -> std::path::PathBuf {
        self.a.home().join("wake").join("codex.log")
    }

    /// Waits until A's wake log of codex, past its first `from` bytes, holds `words`.
    fn wait_for_log_a(&self, what: &str, from: usize, words: &[&str]) {
        let log = self.wake_log_a();
        eventually(what, || {
            std::fs::read_to_string(&log)
                .ok()
                .filter(|text| words.iter().all(|word| text[from..].contains(word)))
        });
    }
}

impl Drop for TwoMachines {
    fn drop(&mut self) {
        if self.made_here {
            cluster::drop_database(&self.url);
        }
    }
}

/// What A's wake log says of a command this machine did not sign.
const NOT_SIGNED_HERE: &str = "codex's wake command was not registered on this machine";

/// A wake command named `name` in `env`'s root that appends what `says` prints to a file,
/// each run a line: (the script, the file).
#[cfg(unix)]
fn wake_script(env: &TestEnv, name: &str, says: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let said = env.root.path().join(format!("{name}.out"));
    let script = env.root.path().join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!("#!/bin/sh\n{says} >> '{}'\n", said.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, said)
}

#[cfg(unix)]
#[test]
fn a_wake_command_another_machine_wrote_runs_nowhere() {
    let Some(machines) = TwoMachines::new() else {
        return;
    };
    let (on_a, on_b) = (machines.on("machine-a"), machines.on("machine-b"));
    // B claims to be A when it registers (a host name is only a label anyone can write).
    let b_as_a = machines.on("machine-a");
    let (forged, forged_ran) = wake_script(&machines.b, "forged", "echo ran");
    let (genuine, genuine_runs) = counting_host_wake(&machines.a);

    // 1. Registered from machine B under A's name: signed with B's key, not A's.
    machines
        .b
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
    let hub_a = Served::start_with_vars(&machines.a, "alice", &[], &on_a);
    let send_from_b = |subject: &str| {
        machines
            .b
            .run_env(
                "alice",
                &["send", "--to", "codex", "--subject", subject],
                &on_b,
            )
            .ok();
    };
    send_from_b("one");
    machines.wait_for_log_a(
        "hub A says why it did not run codex's command",
        0,
        &[NOT_SIGNED_HERE],
    );

    // 2. Registered on A (signed there), then changed in the database by B: the signature
    // no longer holds for the new command.
    machines.wake_codex_on_a(&genuine);
    cluster::apart(|| {
        baton::registry::update(
            &*machines.store_of_b(),
            "codex",
            baton::time::now(),
            |record, _| {
                record.wake = Some(vec![forged.to_str().unwrap().to_string()]);
                Ok(())
            },
        )
        .unwrap();
    });
    let before = std::fs::read_to_string(machines.wake_log_a())
        .unwrap()
        .len();
    send_from_b("two");
    machines.wait_for_log_a(
        "hub A refuses the changed command too",
        before,
        &[NOT_SIGNED_HERE],
    );
    // By hand on A, the same refusal.
    let by_hand = machines.a.run_env("alice", &["wake", "codex"], &on_a);
    assert!(
        by_hand.fails(1).contains(NOT_SIGNED_HERE),
        "{}",
        by_hand.stderr
    );

    // 3. Registered on A again: it runs there, as before.
    machines.wake_codex_on_a(&genuine);
    send_from_b("three");
    eventually("hub A runs the command it signed", || {
        std::fs::read_to_string(&genuine_runs)
            .ok()
            .filter(|runs| !runs.is_empty())
    });
    // The window in which the forged command would run too: it is the test.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!forged_ran.exists(), "the forged command ran");
    drop(hub_a);
}

/// The store holds where a project's agents run (its workspace): bound from another machine
/// (a directory where the attacker left an agent client's settings, say), no wake command
/// of A's runs there; bound on A, it does.
#[cfg(unix)]
#[test]
fn a_workspace_bound_from_another_machine_runs_no_wake_command() {
    let Some(machines) = TwoMachines::new() else {
        return;
    };
    let (on_a, on_b) = (machines.on("machine-a"), machines.on("machine-b"));
    let (script, ran_in) = wake_script(&machines.a, "where", "pwd");
    machines.wake_codex_on_a(&script);
    let hub_a = Served::start_with_vars(&machines.a, "alice", &[], &on_a);

    let lure = machines.b.root.path().join("lure");
    std::fs::create_dir_all(&lure).unwrap();
    let bind = [
        "project",
        "init",
        "--name",
        "lure",
        "--workspace",
        lure.to_str().unwrap(),
    ];
    machines.b.run_with(&lure, "", &bind, &on_b).ok();
    let send_from_b = |subject: &str| {
        machines
            .b
            .run_with(
                &lure,
                "alice",
                &["send", "--to", "codex", "--subject", subject],
                &on_b,
            )
            .ok();
    };
    send_from_b("one");
    machines.wait_for_log_a(
        "hub A says why codex was not run in the lure",
        0,
        &["project lure's workspace", "was not bound on this machine"],
    );
    assert!(
        !ran_in.exists(),
        "codex's command ran in a directory bound from elsewhere"
    );

    // Bound on A as well (signed there): the work runs there.
    let bound = machines.a.run_with(&lure, "", &bind, &on_a);
    assert!(
        bound.ok().contains("signed for this machine: project lure"),
        "{}",
        bound.stdout
    );
    send_from_b("two");
    eventually("codex runs in the workspace A bound", || {
        std::fs::read_to_string(&ran_in)
            .ok()
            .filter(|runs| !runs.is_empty())
    });
    let canonical = lure.canonicalize().unwrap();
    assert_eq!(
        std::fs::read_to_string(&ran_in).unwrap().trim(),
        canonical.to_str().unwrap()
    );
    drop(hub_a);
}

/// A record machine A once signed, removed on A and written back into the store (a replay):
/// the signature checks, but is no longer the one A stands by, so nothing runs.
#[cfg(unix)]
#[test]
fn a_removed_wake_command_written_back_runs_nowhere() {
    let Some(machines) = TwoMachines::new() else {
        return;
    };
    let (on_a, on_b) = (machines.on("machine-a"), machines.on("machine-b"));
    let (script, ran) = wake_script(&machines.a, "marking", "echo ran");
    machines.wake_codex_on_a(&script);
    let saved = cluster::apart(|| {
        baton::registry::load(&*machines.store_of_b(), "codex")
            .unwrap()
            .unwrap()
    });
    machines
        .a
        .run_env("", &["agent", "add", "codex", "--no-wake-command"], &on_a)
        .ok();
    cluster::apart(|| {
        baton::registry::update(
            &*machines.store_of_b(),
            "codex",
            baton::time::now(),
            |record, _| {
                *record = saved.clone();
                Ok(())
            },
        )
        .unwrap();
    });
    let hub_a = Served::start_with_vars(&machines.a, "alice", &[], &on_a);
    machines
        .b
        .run_env(
            "alice",
            &["send", "--to", "codex", "--subject", "replayed"],
            &on_b,
        )
        .ok();
    machines.wait_for_log_a("hub A refuses the replayed record", 0, &[NOT_SIGNED_HERE]);
    // The window in which the removed command would run: it is the test.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!ran.exists(), "the removed command ran again");
    drop(hub_a);
}
