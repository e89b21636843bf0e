//! The wake run's environment (SPEC section 8): a woken agent is a fresh session of its
//! own, not a child of whoever woke it. It gets stdin from /dev/null, no descriptor above
//! 2, a session of its own, and the waker's environment without the client session markers
//! and the waker's BATON_*; and a caller reading the waker's output through a descriptor it
//! handed down is not kept waiting for the agent's run.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::common::{TestEnv, baton_bin, eventually_within, files_only};

/// The wake command: a shell that writes down what it was started with (its descriptors,
/// stdin, session and environment) into $WAKE_ENV_DIR, waits for the file `gate` there,
/// and says `done`. Each record is written aside and renamed into place, so the test never
/// reads one half-written (it waits for the name to appear). Run with `sh -c`, so the shell
/// holds no script file open; it lists its descriptors to its standard output (the wake
/// log) before any redirection, for the shell keeps a copy of what it redirects on a
/// descriptor of its own while it does.
const RECORDER: &str = r#"
d="$WAKE_ENV_DIR"
echo "descriptors of the run:"
ls /proc/$$/fd
echo "end of descriptors"
touch "$d/fds"
readlink /proc/$$/fd/0 > "$d/stdin.part" && mv "$d/stdin.part" "$d/stdin"
sed 's/^.*) //' /proc/$$/stat | cut -d' ' -f4 > "$d/sid.part" && mv "$d/sid.part" "$d/sid"
env > "$d/env.part" && mv "$d/env.part" "$d/env"
i=0
while [ ! -e "$d/gate" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
touch "$d/done"
"#;

/// What the waker has in its environment: every client's session markers, its own baton
/// identity and settings, and configuration that must reach the woken agent.
const WAKER_ENVIRONMENT: &[(&str, &str)] = &[
    ("BATON_AGENT", "lead"),
    ("BATON_PROJECT", "default"),
    ("CLAUDECODE", "1"),
    ("CLAUDE_CODE_ENTRYPOINT", "cli"),
    ("CLAUDE_CODE_SSE_PORT", "41234"),
    ("CODEX_THREAD_ID", "0199-thread"),
    ("CODEX_SANDBOX", "seatbelt"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
    ("GEMINI_CLI", "1"),
    ("GEMINI_CLI_NO_RELAUNCH", "true"),
    ("OPENCODE", "1"),
    ("ANTHROPIC_API_KEY", "sk-test"),
    ("CODEX_HOME", "/opt/codex-home"),
    ("CLAUDE_CONFIG_DIR", "/opt/claude-config"),
    ("GEMINI_CLI_HOME", "/opt/gemini-home"),
    ("OPENCODE_CONFIG", "/opt/opencode.json"),
];

/// A hub where `worker`'s wake command is the recorder, writing into the directory returned.
fn hub() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    env.run(
        "",
        &[
            "agent", "add", "worker", "--wake", "--", "/bin/sh", "-c", RECORDER, "recorder",
        ],
    )
    .ok();
    let dir = env.root.path().join("recorded");
    std::fs::create_dir(&dir).unwrap();
    (env, dir)
}

/// `sh -c 'exec baton send … 7>&1'` with stdout a pipe: the waker holds the pipe on
/// descriptors 1 and 7, as a caller that hands a descriptor down would have it. Returns the
/// waker's output once the pipe reaches its end, or `None` if it has not after 10 seconds.
fn send_with_descriptor_7(env: &TestEnv, dir: &Path) -> Option<String> {
    send_with_descriptor_7_and_path(env, dir, None)
}

/// [`send_with_descriptor_7`] with `path` for the waker's PATH, when given.
fn send_with_descriptor_7_and_path(
    env: &TestEnv,
    dir: &Path,
    path: Option<&Path>,
) -> Option<String> {
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", r#"exec "$0" "$@" 7>&1"#])
        .arg(baton_bin())
        .args(["send", "--to", "worker", "--subject", "Fix the parser"])
        .current_dir(env.work())
        .env("BATON_HOME", env.home())
        .envs(env.store_env())
        .env("BATON_NOTIFY", "0")
        .env("BATON_LOCK_TIMEOUT", "20")
        .env("HOME", env.root.path().join("user-home"))
        .env("WAKE_ENV_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, value) in WAKER_ENVIRONMENT {
        command.env(name, value);
    }
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let mut child = command.spawn().expect("sh runs");
    let mut stdout = child.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        let _ = sender.send(text);
    });
    let status = child.wait().unwrap();
    assert!(status.success(), "the send succeeds");
    receiver.recv_timeout(Duration::from_secs(10)).ok()
}

/// Waits (60 s at most) until the recorder wrote `name`, and returns it.
fn recorded(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    eventually_within(
        Duration::from_secs(60),
        &format!("the recorder wrote {name}"),
        || path.exists().then_some(()),
    );
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// The descriptors the run had, as it listed them in the wake log.
fn descriptors(env: &TestEnv, dir: &Path) -> Vec<String> {
    recorded(dir, "fds");
    let log = std::fs::read_to_string(env.home().join("wake/worker.log")).unwrap();
    let heading = "descriptors of the run:\n";
    let start = log.find(heading).expect("listed") + heading.len();
    let end = start
        + log[start..]
            .find("end of descriptors")
            .expect("listed whole");
    log[start..end].lines().map(str::to_string).collect()
}

/// Lets the recorder end, and waits until it has.
fn finish(dir: &Path) {
    std::fs::write(dir.join("gate"), "go").unwrap();
    recorded(dir, "done");
}

/// The session of this test process (field 6 of /proc/self/stat).
fn own_session() -> String {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after_name = &stat[stat.rfind(") ").unwrap() + 2..];
    after_name.split(' ').nth(3).unwrap().to_string()
}

#[test]
fn a_woken_agent_is_a_fresh_session_without_the_wakers_markers_descriptors_or_identity() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let (env, dir) = hub();
    std::fs::write(dir.join("gate"), "open").unwrap();
    send_with_descriptor_7(&env, &dir);
    let environment: BTreeMap<String, String> = recorded(&dir, "env")
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    finish(&dir);

    for marker in [
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_CODE_SSE_PORT",
        "CODEX_THREAD_ID",
        "CODEX_SANDBOX",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "GEMINI_CLI",
        "GEMINI_CLI_NO_RELAUNCH",
        "OPENCODE",
        "BATON_PROJECT",
        "BATON_NOTIFY",
        "BATON_LOCK_TIMEOUT",
    ] {
        assert!(
            !environment.contains_key(marker),
            "{marker} reached the woken agent: {environment:#?}"
        );
    }
    assert_eq!(environment["BATON_AGENT"], "worker", "its own identity");
    assert_eq!(Path::new(&environment["BATON_HOME"]), env.home());
    for (kept, value) in [
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("CODEX_HOME", "/opt/codex-home"),
        ("CLAUDE_CONFIG_DIR", "/opt/claude-config"),
        ("GEMINI_CLI_HOME", "/opt/gemini-home"),
        ("OPENCODE_CONFIG", "/opt/opencode.json"),
        ("WAKE_ENV_DIR", dir.to_str().unwrap()),
    ] {
        assert_eq!(
            environment.get(kept).map(String::as_str),
            Some(value),
            "{kept}"
        );
    }
    assert!(environment.contains_key("PATH"));

    assert_eq!(
        descriptors(&env, &dir),
        ["0", "1", "2"],
        "no descriptor above 2"
    );
    assert_eq!(recorded(&dir, "stdin").trim(), "/dev/null");
    let session = recorded(&dir, "sid").trim().to_string();
    assert!(!session.is_empty());
    assert_ne!(session, own_session(), "a session of its own");
}

/// The supervisor is started straight from the command that woke the agent, never through
/// setsid(1) (one exec more on every hand-over): it takes a session of its own itself as it
/// starts, and the run it starts is in that session. A setsid(1) first on the PATH that
/// only fails would stop every wake that went through it.
#[cfg(target_os = "linux")]
#[test]
fn a_woken_agent_has_a_session_of_its_supervisor_without_setsid_1() {
    let (env, dir) = hub();
    let bin = env.root.path().join("bin-with-a-failing-setsid");
    std::fs::create_dir(&bin).unwrap();
    let used = env.root.path().join("setsid-was-run");
    let setsid = bin.join("setsid");
    std::fs::write(
        &setsid,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", used.display()),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&setsid).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&setsid, permissions).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    send_with_descriptor_7_and_path(&env, &dir, Some(Path::new(&path)));
    let session = recorded(&dir, "sid").trim().to_string();
    // The run waits at its gate, so its supervisor still runs: the session's leader.
    let leader = std::fs::read(format!("/proc/{session}/cmdline")).unwrap_or_default();
    let descriptors = descriptors(&env, &dir);
    finish(&dir);
    assert!(!used.exists(), "setsid(1) was run");
    assert_ne!(session, own_session(), "a session of its own");
    let leader: Vec<String> = leader
        .split(|byte| *byte == 0)
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect();
    assert!(
        leader.iter().any(|arg| arg == "__wake-supervisor"),
        "the session is led by the supervisor: {leader:?}"
    );
    assert_eq!(descriptors, ["0", "1", "2"], "no descriptor above 2");
}

#[test]
fn a_caller_reading_the_wakers_output_through_descriptor_7_is_not_held_by_the_run() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let (env, dir) = hub();
    // The recorder waits at its gate, so the run outlasts the waker by as long as we like.
    let output = send_with_descriptor_7(&env, &dir);
    let descriptors = descriptors(&env, &dir);
    let still_running = !dir.join("done").exists();
    finish(&dir);
    let output = output.expect("the pipe ends when the waker exits, not when the run does");
    assert!(output.contains("T-1"), "{output}");
    assert!(
        still_running,
        "the run was still going when the caller got its output"
    );
    assert_eq!(descriptors, ["0", "1", "2"]);
    let log = std::fs::read_to_string(env.home().join("wake/worker.log")).unwrap();
    assert!(log.contains("supervisor of worker started"), "{log}");
}
