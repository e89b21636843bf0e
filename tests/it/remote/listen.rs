//! `baton listen` on the agent's machine: woken once per burst, catching up after the hub
//! restarts, the wake command it runs, and how it stops.

use super::*;

/// A wake command that appends one line per run to `runs` of the agent's machine.
#[cfg(unix)]
fn counting_wake(env: &TestEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let runs = env.root.path().join("runs.txt");
    let script = env.root.path().join("wake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"run as $BATON_AGENT on ${{BATON_URL:-nowhere}}\" >> '{}'\n\
             cut -d' ' -f6 /proc/$$/stat > '{}.session'\n",
            runs.display(),
            runs.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, runs)
}

#[cfg(unix)]
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(unix)]
#[test]
fn listen_wakes_once_per_burst_and_catches_up_after_the_hub_restarts() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.run("", &["agent", "add", "codex"]).ok();
    let token = add_token(&env, "codex");
    let address = free_address();
    let agent = Agent::new(format!("http://{address}"), token);
    let (script, runs) = counting_wake(&agent.env);
    // Started before its hub, as a service at boot may be: it waits for the hub.
    let mut listen = agent.spawn(&["listen", "--wake", "--", script.to_str().unwrap()], false);
    listen.said("trying again in 1s");
    assert!(
        listen.child.try_wait().unwrap().is_none(),
        "listen waits for its hub"
    );
    let server = Served::start_at(&env, "alice", &address, &[], &[]);
    // It has nothing to do until work arrives; then a burst wakes it once.
    listen.said(&format!(
        "listening to the hub at http://{address} for codex"
    ));
    // The window in which a run for nothing would show: waited out, it is the test.
    std::thread::sleep(Duration::from_secs(2));
    assert!(lines_of(&runs).is_empty(), "woken with nothing to do");
    // One burst whatever the machine's load: the three sends wait on the board lock and
    // commit one after the other the moment it is let go (sent one by one, a loaded
    // machine could space them past the burst's 300 ms).
    env.run("alice", &["status"]).ok();
    let held = crate::common::HeldLock::on(&env.project_dir("default").join("board.lock"));
    let mut sends: Vec<Child> = ["One", "Two", "Three"]
        .iter()
        .map(|subject| {
            env.command(&env.work())
                .args([
                    "--as",
                    "alice",
                    "send",
                    "--to",
                    "codex",
                    "--subject",
                    subject,
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Each says when it waits on the lock (SPEC section 2); then all three are waiting. Its
    // stderr is read to the end, so that nothing it says after meets a closed pipe.
    let said: Vec<_> = sends.iter_mut().map(crate::common::stderr_lines).collect();
    for lines in &said {
        crate::common::line_with(lines, "waiting for the board lock");
    }
    drop(held);
    crate::common::all_succeed(sends);
    eventually("the burst woke codex", || {
        (lines_of(&runs).len() == 1).then_some(())
    });
    // The window in which a second run would show: waited out, it is the test.
    std::thread::sleep(Duration::from_secs(2));
    let after_burst = lines_of(&runs);
    assert_eq!(
        after_burst.len(),
        1,
        "one run for one burst: {after_burst:?}"
    );
    assert_eq!(after_burst[0], format!("run as codex on http://{address}"));
    // The run has a session of its own, not listen's.
    let session_of = |stat: String| stat.split(' ').nth(5).map(str::to_string);
    let listen_session =
        session_of(std::fs::read_to_string(format!("/proc/{}/stat", listen.id())).unwrap());
    let run_session = std::fs::read_to_string(runs.with_extension("txt.session")).unwrap();
    assert_ne!(Some(run_session.trim().to_string()), listen_session);
    let board = env.board("default");
    for id in 1..=3 {
        assert_eq!(task_in(&board["tasks"], id)["delivery"]["state"], "woken");
    }
    // The hub stops; work arrives on its machine meanwhile; it starts again at the same
    // address, and the listener catches up once.
    server.kill();
    env.run(
        "alice",
        &["send", "--to", "codex", "--subject", "While down"],
    )
    .ok();
    // The listener has seen its hub go before it comes back.
    listen.said("connecting again in");
    let server = Served::start_at(&env, "alice", &address, &[], &[]);
    let started = Instant::now();
    eventually("the listener caught up", || {
        (lines_of(&runs).len() == 2).then_some(())
    });
    // The window in which a second catch-up would show: waited out, it is the test.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        lines_of(&runs).len(),
        2,
        "caught up once, after {:?}",
        started.elapsed()
    );
    let board = env.board("default");
    assert_eq!(task_in(&board["tasks"], 4)["delivery"]["state"], "woken");
    drop(listen);
    server.kill();
}

#[test]
fn while_listen_runs_the_hub_tells_a_sender_its_listener_takes_the_work() {
    let hub = Hub::start();
    let agent = hub.agent();
    let unreached = hub
        .env
        .run("alice", &["send", "--to", "codex", "--subject", "Before"]);
    assert!(
        unreached
            .ok()
            .contains("codex has no wake command and no live session"),
        "{}",
        unreached.stdout
    );
    let listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let sent = hub
        .env
        .run("alice", &["send", "--to", "codex", "--subject", "Listened"]);
    assert!(
        !sent.ok().contains("no wake command and no live session"),
        "{}",
        sent.stdout
    );
    assert!(
        sent.stderr
            .contains("codex's listener (`baton listen` on its machine) wakes it for T-2"),
        "{}",
        sent.stderr
    );
    listen.said("work arrived for codex");
    // The listener gone, the hub says so again once it notices the stream closed.
    drop(listen);
    eventually("the hub notices the listener is gone", || {
        let sent = hub
            .env
            .run("alice", &["send", "--to", "codex", "--subject", "After"]);
        // Paces the sends, each of which makes a task: not a wait for anything.
        std::thread::sleep(Duration::from_millis(500));
        sent.ok()
            .contains("no wake command and no live session")
            .then_some(())
    });
}

#[test]
fn a_wake_command_is_shown_to_its_agent_and_the_coordinator_and_runs_only_for_waiting_work() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    hub.env
        .run(
            "",
            &[
                "agent",
                "add",
                "codex",
                "--wake",
                "--",
                "/bin/true",
                "--api-key",
                "sk-secret-1",
            ],
        )
        .ok();
    let token = |name: &str| add_token(&hub.env, name);
    let (alice, mallory) = (token("alice"), token("mallory"));
    // alice coordinates `default`: she sends there first.
    hub.env
        .run(
            "alice",
            &["send", "--to", "alice", "--subject", "Mine", "--no-wake"],
        )
        .ok();
    let record = |path: &str, token: &str| {
        let reply = hub.served.get(path, token);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body
    };
    let hidden = record("/api/v1/agents/codex", &mallory);
    assert!(!hidden.contains("sk-secret"), "{hidden}");
    let hidden: Value = serde_json::from_str(&hidden).unwrap();
    assert_eq!(hidden["wake"], Value::Null);
    assert_eq!(hidden["wake_hidden"], true);
    assert!(record("/api/v1/agents/codex", &hub.token).contains("sk-secret-1"));
    assert!(record("/api/v1/agents/codex?project=default", &alice).contains("sk-secret-1"));
    assert!(!record("/api/v1/agents/codex", &alice).contains("sk-secret"));
    assert!(!record("/api/v1/agents/codex?project=default", &mallory).contains("sk-secret"));
    let shown = Agent {
        token: mallory.clone(),
        ..hub.agent()
    }
    .run(&["agent", "show", "codex"]);
    assert!(
        shown.ok().contains("wake:      set (shown only to"),
        "{}",
        shown.stdout
    );
    // Nothing waits for codex: nobody elsewhere may run its wake command.
    let wake = |token: &str| {
        hub.served.post(
            "/api/v1/projects/default/wake/codex",
            token,
            &serde_json::json!({}),
        )
    };
    let refused = wake(&mallory);
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.body.contains("nothing waits for codex"),
        "{}",
        refused.body
    );
    assert!(!hub.env.home().join("wake/codex.log").exists(), "it ran");
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "Work", "--no-wake"],
        )
        .ok();
    let woken = wake(&mallory);
    assert_eq!(woken.status, 200, "{}", woken.body);
    let outcome: Value = serde_json::from_str(&woken.body).unwrap();
    assert_eq!(outcome["outcome"], "started", "{outcome}");
    assert_eq!(outcome["log"], "wake/codex.log");
    let home = hub.env.home();
    assert!(
        !woken.body.contains(home.to_str().unwrap()),
        "the hub's home: {}",
        woken.body
    );
}

/// A wake command that lists its descriptors in the wake log and then says it is done.
#[cfg(target_os = "linux")]
const DESCRIPTOR_LISTER: &str = r#"
echo "descriptors of the run:"
ls /proc/$$/fd
echo "end of descriptors"
touch "$0"
"#;

#[cfg(target_os = "linux")]
#[test]
fn listens_wake_run_holds_no_descriptor_above_2() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    let agent = hub.agent();
    let done = agent.env.root.path().join("listed");
    // listen is started holding descriptors 7 and 9, as a caller that hands some down would.
    let mut listen = Command::new("/bin/sh")
        .args(["-c", r#"exec "$0" "$@" 7</dev/null 9</dev/null"#])
        .arg(crate::common::baton_bin())
        .args(["listen", "--wake", "--", "/bin/sh", "-c", DESCRIPTOR_LISTER])
        .arg(&done)
        .current_dir(agent.env.work())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("BATON_HOME", agent.env.home())
        .env("BATON_URL", &agent.url)
        .env("BATON_TOKEN", &agent.token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = crate::common::stderr_lines(&mut listen);
    crate::common::line_with(&said, "listening to the hub");
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "List them"],
        )
        .ok();
    eventually("the run listed its descriptors", || {
        done.exists().then_some(())
    });
    let _ = listen.kill();
    let _ = listen.wait();
    let log = std::fs::read_to_string(agent.env.home().join("wake/codex.log")).unwrap();
    let heading = "descriptors of the run:\n";
    let start = log.find(heading).expect("listed") + heading.len();
    let end = start + log[start..].find("end of descriptors").expect("whole");
    let descriptors: Vec<&str> = log[start..end].lines().collect();
    assert_eq!(descriptors, ["0", "1", "2"], "no descriptor above 2: {log}");
}

#[cfg(unix)]
#[test]
fn listen_stops_at_once_on_sigterm_and_says_so() {
    let hub = Hub::start();
    let agent = hub.agent();
    let mut listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let status = Command::new("kill")
        .args(["-TERM", &listen.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stopped = listen.said("stopping");
    assert!(stopped.contains("stopping (SIGTERM)"), "{stopped}");
    let (status, _) = listen.finish();
    assert_eq!(status.code(), Some(0), "stopped as asked");
}

#[cfg(unix)]
#[test]
fn after_three_runs_in_a_row_listen_runs_again_for_what_still_waits() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let hub = Hub::start();
    let agent = hub.agent();
    let runs = agent.env.root.path().join("runs.txt");
    // Each of the first three runs hands codex one more task, from alice on the hub: work
    // that arrives during a run, which the next run is for.
    let script = agent.env.root.path().join("wake.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho run >> '{runs}'\nn=$(wc -l < '{runs}')\n\
             if [ \"$n\" -le 3 ]; then\n\
             env -u BATON_URL -u BATON_TOKEN BATON_HOME='{home}' BATON_NOTIFY=0 \
             '{baton}' --as alice send --to codex --subject \"Next $n\" --no-wake > /dev/null\n\
             fi\n",
            runs = runs.display(),
            home = hub.env.home().display(),
            baton = crate::common::baton_bin().display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let listen = agent.spawn(&["listen", "--wake", "--", script.to_str().unwrap()], false);
    listen.said("listening to the hub");
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "First", "--no-wake"],
        )
        .ok();
    let rested = listen.said("ran 3 times in a row");
    assert!(
        rested.contains("still waiting: T-4 (project default); run for at the next change"),
        "{rested}"
    );
    assert_eq!(lines_of(&runs).len(), 3);
    let board = hub.env.board("default");
    assert_eq!(task_in(&board["tasks"], 4)["delivery"]["state"], "queued");
    // The next change on the hub brings it up, as the line says.
    hub.env.run("alice", &["note", "anything new?"]).ok();
    eventually("a run for T-4", || {
        let board = hub.env.board("default");
        (task_in(&board["tasks"], 4)["delivery"]["state"] == "woken").then_some(())
    });
    eventually("the fourth run", || {
        (lines_of(&runs).len() == 4).then_some(())
    });
    let log = std::fs::read_to_string(agent.env.home().join("wake/codex.log")).unwrap();
    assert!(
        log.contains("run for at the next change on the hub"),
        "{log}"
    );
    drop(listen);
}

/// An agent whose only trace on the hub is the token made for it: `baton listen` on its
/// machine may be its first contact, and a listener looks on its behalf, registering nobody.
/// The token registers it, so the listener is answered and work sent to it is taken.
#[test]
fn an_agent_with_only_a_token_is_listened_for_and_handed_work() {
    let env = TestEnv::new();
    env.run("", &["agent", "add", "alice"]).ok();
    let token = env
        .run("", &["token", "add", "codex"])
        .ok()
        .trim()
        .to_string();
    let registered: Value =
        serde_json::from_str(env.run("", &["--json", "agent", "show", "codex"]).ok()).unwrap();
    assert_eq!(registered["name"], "codex", "{registered}");
    assert!(registered["wake"].is_null(), "{registered}");

    let served = Served::start(&env, "alice");
    let agent = Agent::new(format!("http://{}", served.address), token);
    let mut listen = agent.spawn(&["listen"], false);
    listen.said("listening to the hub");
    let sent = env.run(
        "alice",
        &["send", "--to", "codex", "--subject", "First contact"],
    );
    sent.ok();
    assert!(
        sent.stderr.contains("listener"),
        "the sender is told the listener brings it the work: {}",
        sent.stderr
    );
    let _ = listen.child.kill();
    let _ = listen.child.wait();
    let unknown: Vec<String> = listen
        .stderr
        .try_iter()
        .filter(|line| line.contains("unknown agent"))
        .collect();
    assert!(unknown.is_empty(), "{unknown:?}");
}
