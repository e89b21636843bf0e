//! Real clients on another machine: each agent client, wired to a hub elsewhere by `baton
//! setup --url URL --token-env HUB_TOKEN` and woken on its own machine by `baton listen
//! --wake -- …`, takes its tasks through the hub and finishes them there, and the token is
//! in no file of its machine and in no process's arguments.
//!
//! Two homes stand for two machines, as in `remote.rs`. The hub's: a real `baton serve
//! --listen 127.0.0.1:0` over a home with project `app`, its human `lead`, and the agent
//! registered with a token (`baton agent add NAME && baton token add NAME`, as docs/remote.md's
//! hub does it). The agent's: a `BATON_HOME`, user home and workspace of its own, where the
//! user does what docs/remote.md's "One agent on another machine" says: the remote setup, `baton
//! project map app DIR`, and the `baton listen` line setup printed, run by a shell that holds
//! the token in `HUB_TOKEN` and the model's variables. The client is pointed at the scripted
//! model as in `clients_woken.rs` and goes through the same rounds ([`prove_rounds`]), the
//! lead acting on the hub's machine, every wake a run of the listener.
//!
//! Like `clients.rs`, they need `BATON_TEST_CLIENTS` (see there), and python3.

use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::clients_woken::{WAKE_TIMEOUT, Woken, prove_rounds};
use crate::common::clients::{
    Dialect, ModelServer, PROJECT, RemoteRig, TOKEN_ENV, clients_bin, hub_with_project,
};
use crate::common::machine::Machine;
use crate::common::{
    HeldLock, Run, TestEnv, baton_bin, eventually_or, files_only, line_with, stderr_lines,
};

/// What the remote setup prints as the next step, before the line to run.
const NEXT_STEP: &str = "next, to wake the agent when work arrives: ";
/// What follows that line.
const OR_THE_SERVICE: &str = " (or run setup again with --listen-service)";

/// A client wired by the remote setup on the agent's machine, woken there by `baton listen`,
/// its model scripted.
struct Elsewhere {
    rig: RemoteRig,
    server: ModelServer,
    dialect: Dialect,
    /// The shell running setup's `baton listen` line, leader of a process group of its own.
    listen: Child,
    /// Where the listener's standard error goes, on the agent's machine.
    said: PathBuf,
    /// Runs of the wake command that have ended so far.
    ended: usize,
    /// The model's own directory: the model is on neither machine.
    model_dir: tempfile::TempDir,
    /// Watches every process's arguments from before the listener starts.
    #[cfg(target_os = "linux")]
    watch: argv_watch::ArgvWatch,
}

impl Elsewhere {
    /// The hub, the agent's machine wired to it, and the listener started there; the wake
    /// command is the one setup printed, which is returned too.
    fn start(bin: PathBuf, dialect: Dialect) -> (Elsewhere, Vec<String>) {
        let model_dir = tempfile::tempdir().unwrap();
        let server = ModelServer::start(model_dir.path(), &[]);

        let hub = hub_with_project();
        let machine = Machine::new();
        (dialect.configure)(&machine, &server);
        let rig = RemoteRig::wire(machine, hub, dialect.client, "lead");

        // Setup's last word is the line to run; the user runs it as it is.
        let printed = format!("{}{}", rig.setup.stdout, rig.setup.stderr);
        let line = printed
            .lines()
            .find_map(|line| line.strip_prefix(NEXT_STEP))
            .and_then(|line| line.strip_suffix(OR_THE_SERVICE))
            .unwrap_or_else(|| panic!("setup printed no `baton listen` line:\n{printed}"))
            .to_string();
        let start = format!(
            "BATON_URL={} BATON_TOKEN=\"${TOKEN_ENV}\" baton listen --wake -- ",
            rig.url()
        );
        let wake_words: Vec<String> = line
            .strip_prefix(&start)
            .unwrap_or_else(|| panic!("not the line expected: {line}"))
            .split(' ')
            .map(str::to_string)
            .collect();

        // The checkout on this machine stands for the hub's project.
        let machine = &rig.machine;
        let url = rig.url();
        machine
            .baton(
                &[
                    "project",
                    "map",
                    PROJECT,
                    machine.env.work().to_str().unwrap(),
                ],
                &[
                    ("BATON_URL", Path::new(&url)),
                    ("BATON_TOKEN_ENV", Path::new(TOKEN_ENV)),
                    (TOKEN_ENV, Path::new(&rig.token)),
                ],
            )
            .ok();

        // `baton` is found on PATH, as the line says it.
        std::os::unix::fs::symlink(baton_bin(), machine.bin().join("baton")).unwrap();
        let said = machine.env.root.path().join("listen.stderr");
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(&line);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("BATON_") {
                command.env_remove(name);
            }
        }
        machine.client_env(&mut command, &bin);
        let path = std::env::join_paths([machine.bin(), bin.clone()].into_iter().chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        command
            .env("PATH", path)
            .env("BATON_HOME", machine.env.home())
            .env("BATON_NOTIFY", "0")
            .env(TOKEN_ENV, &rig.token)
            .envs((dialect.env)(&server))
            // From the user's home: the map, not this directory, gives the runs theirs.
            .current_dir(machine.user())
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&said).unwrap());
        #[cfg(target_os = "linux")]
        let watch = argv_watch::ArgvWatch::start(rig.token.clone(), machine.env.home());
        let listen = command.spawn().expect("sh runs setup's listen line");
        let elsewhere = Elsewhere {
            rig,
            server,
            dialect,
            listen,
            said,
            ended: 0,
            model_dir,
            #[cfg(target_os = "linux")]
            watch,
        };
        let listening = format!(
            "baton listen: listening to the hub at {url} for {}",
            elsewhere.dialect.client
        );
        elsewhere.until("the listener is listening", |said, _| {
            said.contains(&listening)
        });
        (elsewhere, wake_words)
    }

    fn listener_said(&self) -> String {
        fs::read_to_string(&self.said).unwrap_or_default()
    }

    fn runs_log(&self) -> String {
        fs::read_to_string(
            self.rig
                .machine
                .env
                .home()
                .join(format!("wake/{}.log", self.agent())),
        )
        .unwrap_or_default()
    }

    /// Waits until `done(what the listener said, the wake log)`; on the deadline, stops
    /// everything and fails with all there is to see.
    fn until(&self, what: &str, done: impl Fn(&str, &str) -> bool) {
        eventually_or(
            WAKE_TIMEOUT,
            what,
            || done(&self.listener_said(), &self.runs_log()).then_some(()),
            || {
                self.stop();
                format!(
                    "{}\nmodel answers:\n{}",
                    self.wake_log(),
                    self.server.answers(0)
                )
            },
        );
    }

    /// Waits until one more run of the wake command has ended (or could not start: what
    /// the test checks next fails, showing why).
    fn until_run_ends(&mut self) {
        let ended = self.ended;
        self.until("a wake run ends", |_, log| {
            log.matches(" ended after ").count() > ended || log.contains("baton wake: cannot start")
        });
        self.ended += 1;
    }

    /// Stops the listener and whatever of the agent's machine still runs (a client whose
    /// run a failing test left behind).
    fn stop(&self) {
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.listen.id())])
            .status();
        #[cfg(target_os = "linux")]
        for pid in argv_watch::processes_with_home(&self.rig.machine.env.home()) {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
    }
}

impl Drop for Elsewhere {
    fn drop(&mut self) {
        self.stop();
        let _ = self.listen.wait();
    }
}

impl Woken for Elsewhere {
    fn dialect(&self) -> &Dialect {
        &self.dialect
    }

    fn server(&self) -> &ModelServer {
        &self.server
    }

    fn hub(&self) -> &TestEnv {
        &self.rig.hub
    }

    /// On the hub's machine, with nothing of the agent's: no client, no model.
    fn lead(&self, args: &[&str]) -> Run {
        self.rig.hub.run("lead", args)
    }

    fn woke(&mut self, run: &Run) {
        let taken = format!(
            "{}'s listener (`baton listen` on its machine) wakes it",
            self.agent()
        );
        assert!(
            run.stderr.contains(&taken),
            "the hub did not hand the work to the listener: {}",
            run.stderr
        );
        self.until_run_ends();
    }

    /// Both while the board's lock is held, so that they land together: the listener takes
    /// them as one burst and runs once.
    fn send_two_for_one_wake(&mut self, one: (&str, &str), two: (&str, &str)) -> (u64, u64) {
        let hub = &self.rig.hub;
        let held = HeldLock::on(&hub.project_dir(PROJECT).join("board.lock"));
        let mut sends: Vec<Child> = [one, two]
            .into_iter()
            .map(|(subject, body)| {
                hub.command(&hub.work())
                    .args(["--as", "lead", "--json", "send", "--to", self.agent()])
                    .args(["--subject", subject, "--body", body])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // Each says when it waits on the lock (SPEC section 2): then both are waiting.
        let said: Vec<_> = sends.iter_mut().map(stderr_lines).collect();
        for lines in &said {
            line_with(lines, "waiting for the board lock");
        }
        drop(held);
        let runs: Vec<Run> = sends
            .into_iter()
            .zip(said)
            .map(|(send, said)| {
                let output = send.wait_with_output().unwrap();
                Run {
                    code: output.status.code().unwrap_or(-1),
                    stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                    // The rest of what it said, its stderr closed with it.
                    stderr: said.iter().map(|line| line + "\n").collect(),
                }
            })
            .collect();
        let ids: Vec<u64> = runs
            .iter()
            .map(|run| run.json()["task"]["id"].as_u64().expect("a task id"))
            .collect();
        // Each send is told the listener takes it; the wake waited for is the one run.
        self.woke(&runs[1]);
        (ids[0], ids[1])
    }

    /// The runs' log on the agent's machine, then what the listener said.
    fn wake_log(&self) -> String {
        format!(
            "{}--- baton listen said:\n{}",
            self.runs_log(),
            self.listener_said()
        )
    }
}

/// Watching the arguments of every process: Linux has them all in /proc.
#[cfg(target_os = "linux")]
mod argv_watch {
    use std::collections::BTreeSet;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::JoinHandle;
    use std::time::Duration;

    /// Reads every process's arguments (`/proc/PID/cmdline`) again and again until finished,
    /// keeping those that hold a secret; and, to show what it looked at, the arguments of the
    /// processes of the agent's machine (their environment names its home).
    pub struct ArgvWatch {
        stop: Arc<AtomicBool>,
        thread: Option<JoinHandle<ArgvSeen>>,
    }

    #[derive(Default)]
    pub struct ArgvSeen {
        /// Every argument list that held the secret.
        pub holding: BTreeSet<String>,
        /// The distinct argument lists of the agent's machine's processes, words joined by
        /// spaces.
        pub of_machine: BTreeSet<String>,
        /// How many times every process was looked at.
        pub looks: usize,
    }

    impl ArgvWatch {
        pub fn start(secret: String, home: PathBuf) -> ArgvWatch {
            let stop = Arc::new(AtomicBool::new(false));
            let stopped = Arc::clone(&stop);
            let thread = std::thread::spawn(move || {
                let marker = format!("BATON_HOME={}", home.display());
                let mut seen = ArgvSeen::default();
                while !stopped.load(Ordering::Relaxed) {
                    for entry in fs::read_dir("/proc").unwrap().flatten() {
                        let Ok(argv) = fs::read(entry.path().join("cmdline")) else {
                            continue;
                        };
                        let argv = String::from_utf8_lossy(&argv).replace('\0', " ");
                        if argv.contains(&secret) {
                            seen.holding.insert(argv.clone());
                        }
                        let environment =
                            fs::read(entry.path().join("environ")).unwrap_or_default();
                        if environment
                            .split(|byte| *byte == 0)
                            .any(|variable| variable == marker.as_bytes())
                        {
                            seen.of_machine.insert(argv.trim_end().to_string());
                        }
                    }
                    seen.looks += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                seen
            });
            ArgvWatch {
                stop,
                thread: Some(thread),
            }
        }

        /// What it saw, once it has stopped looking.
        pub fn finish(&mut self) -> ArgvSeen {
            self.stop.store(true, Ordering::Relaxed);
            self.thread
                .take()
                .expect("finished once")
                .join()
                .expect("the watch of the arguments ends")
        }
    }

    impl Drop for ArgvWatch {
        /// A test that fails leaves no thread looking for the rest of the run.
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// The processes whose environment names `home` as theirs.
    pub fn processes_with_home(home: &Path) -> Vec<String> {
        let marker = format!("BATON_HOME={}", home.display());
        let mine = std::process::id().to_string();
        fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.chars().all(|c| c.is_ascii_digit()) && name != mine
            })
            .filter(|entry| {
                fs::read(entry.path().join("environ"))
                    .unwrap_or_default()
                    .split(|byte| *byte == 0)
                    .any(|variable| variable == marker.as_bytes())
            })
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect()
    }
}

/// The whole proof for one client on another machine.
fn prove_elsewhere(dialect: Dialect) {
    let Some(bin) = clients_bin() else {
        return;
    };
    let started = Instant::now();
    let (mut elsewhere, wake_words) = Elsewhere::start(bin, dialect);
    let token = elsewhere.rig.token.clone();

    prove_rounds(&mut elsewhere, &wake_words);

    // The runs went to the mapped checkout of the agent's machine.
    let log = elsewhere.runs_log();
    let workspace = elsewhere.rig.machine.env.work();
    assert!(
        log.contains(&format!(
            "run 1 of at most 3 in project {PROJECT} ({}):",
            workspace.display()
        )),
        "{log}"
    );
    // The token: in no file of the agent's machine, nowhere the model was shown, in no
    // process's arguments.
    elsewhere.rig.assert_token_in_no_file();
    assert!(
        !fs::read_to_string(elsewhere.model_dir.path().join("model-requests.jsonl"))
            .unwrap()
            .contains(&token),
        "the client showed the model the token"
    );
    #[cfg(target_os = "linux")]
    {
        let seen = elsewhere.watch.finish();
        assert!(
            seen.holding.is_empty(),
            "the token is in the arguments of: {:#?}",
            seen.holding
        );
        let client_ran = |argv: &String| {
            !argv.contains("setsid")
                && argv.contains(&format!("{} You are ", wake_words[1..].join(" ")))
        };
        assert!(
            seen.of_machine
                .iter()
                .any(|argv| argv.contains("listen --wake"))
                && seen.of_machine.iter().any(client_ran),
            "the watch never saw the listener and the client run ({} looks): {:#?}",
            seen.looks,
            seen.of_machine
        );
        eprintln!(
            "{}: the arguments of every process looked at {} times; {} distinct ones of the \
             agent's machine, {} of them baton hooks",
            wake_words[0],
            seen.looks,
            seen.of_machine.len(),
            seen.of_machine
                .iter()
                .filter(|argv| argv.contains(" hook "))
                .count()
        );
    }
    eprintln!(
        "{}: proven on another machine in {:.0?}",
        wake_words[0],
        started.elapsed()
    );
}

#[test]
fn claude_code_on_another_machine_woken_by_listen_finishes_its_tasks_through_the_hub() {
    if !files_only("holds the hub's board.lock so that two sends land as one burst") {
        return;
    }
    prove_elsewhere(Dialect::claude());
}

#[test]
fn codex_on_another_machine_woken_by_listen_finishes_its_tasks_through_the_hub() {
    prove_elsewhere(Dialect::codex("mcp__baton__claim"));
}

#[test]
fn gemini_cli_on_another_machine_woken_by_listen_finishes_its_tasks_through_the_hub() {
    if !files_only("holds the hub's board.lock so that two sends land as one burst") {
        return;
    }
    prove_elsewhere(Dialect::gemini());
}

#[test]
fn opencode_on_another_machine_woken_by_listen_finishes_its_tasks_through_the_hub() {
    prove_elsewhere(Dialect::opencode());
}
