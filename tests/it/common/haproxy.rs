//! haproxy in front of a test's hubs, on loopback, as docs/load-balancer.md configures it: the
//! page's configuration is the one run here (only its addresses and name are the test's), so
//! the page cannot say what was not tested.
//!
//! `.ci/run` installs Debian's `haproxy`; `BATON_TEST_HAPROXY` names another. Without one a
//! test that needs it says it was not run, except in CI, where it fails.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::Value;

use super::TestEnv;
use super::http::{Reply, Served, free_address, free_port, try_request};
use super::{eventually_or, stderr_lines};

/// The page whose `haproxy` block is the configuration.
const PAGE: &str = include_str!("../../../docs/load-balancer.md");
/// The name the page's hubs answer and its health check sends, which a test's hubs answer as
/// `127.0.0.1` (see [`HUB_ARGS`]).
const PAGE_NAME: &str = "baton.example.com";

/// What a hub behind [`Haproxy`] is started with: it answers the balancer's address, which
/// is not its own (`127.0.0.1` at another port), as a hub answers the balancer's name.
pub const HUB_ARGS: [&str; 2] = ["--allow-host", "127.0.0.1"];

/// The `haproxy` block of docs/load-balancer.md, as written there.
pub fn page_config() -> String {
    let start = PAGE
        .find("```haproxy\n")
        .expect("docs/load-balancer.md has a haproxy block");
    let block = &PAGE[start + "```haproxy\n".len()..];
    block[..block.find("```").expect("the block ends")].to_string()
}

/// The page's configuration for haproxy listening on `listen` in front of `hubs`
/// (`127.0.0.1:PORT` each): its `bind` line and `server` lines replaced, the name its health
/// check sends `127.0.0.1`; and a log of every request on stderr, for a test to read.
pub fn config(listen: &str, hubs: &[&str]) -> String {
    let mut text = String::from("global\n    log stderr format raw local0\n\n");
    let mut servers_written = false;
    for line in page_config().lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("bind") => text.push_str(&format!("    bind {listen}\n")),
            Some("server") => {
                if !servers_written {
                    for (index, hub) in hubs.iter().enumerate() {
                        text.push_str(&format!("    server hub{} {hub}\n", index + 1));
                    }
                    servers_written = true;
                }
            }
            Some("defaults") => {
                text.push_str(line);
                text.push_str("\n    log global\n    option httplog\n");
            }
            _ => {
                text.push_str(&line.replace(PAGE_NAME, "127.0.0.1"));
                text.push('\n');
            }
        }
    }
    assert!(servers_written, "the page's backend names its servers");
    text
}

/// The haproxy to run; `None` (after saying why) when the test is not to run.
pub fn program() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BATON_TEST_HAPROXY").filter(|path| !path.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join("haproxy"))
        .find(|path| path.is_file());
    if found.is_none() {
        // CI must run them: a CI run that forgot to install haproxy fails here, loudly.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but there is no haproxy: .ci/run must install Debian's haproxy \
             (or set BATON_TEST_HAPROXY)"
        );
        eprintln!(
            "NOT RUN: the load balancer's tests need haproxy (Debian's haproxy) on the PATH, in \
             /usr/sbin, or in BATON_TEST_HAPROXY"
        );
    }
    found
}

/// haproxy in the foreground (`-db`), its configuration in a test's directory; killed when
/// dropped.
pub struct Haproxy {
    child: Child,
    /// `127.0.0.1:PORT`, where it listens.
    pub address: String,
    /// Its log's lines as they come, and every one read so far.
    log: Mutex<(Receiver<String>, Vec<String>)>,
}

impl Haproxy {
    /// haproxy on a free loopback port in front of `hubs` (`127.0.0.1:PORT` each, started
    /// with [`HUB_ARGS`]; a hub may be down, or come later), its configuration written in
    /// `dir`; once it answers `/healthz` through a hub. `None` when there is no haproxy
    /// (see [`program`]).
    pub fn start(dir: &Path, hubs: &[&str]) -> Option<Haproxy> {
        let program = program()?;
        let address = format!("127.0.0.1:{}", free_port());
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config(&address, hubs)).unwrap();
        let mut child = Command::new(&program)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("{} starts: {error}", program.display()));
        let log = stderr_lines(&mut child);
        let haproxy = Haproxy {
            child,
            address,
            log: Mutex::new((log, Vec::new())),
        };
        eventually_or(
            Duration::from_secs(30),
            "haproxy answers /healthz through a hub",
            || (haproxy.try_get("/healthz").ok()?.status == 200).then_some(()),
            || haproxy.log().join("\n"),
        );
        Some(haproxy)
    }

    /// `http://127.0.0.1:PORT`, for `BATON_URL` or a browser.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// A request through it with `token` as its bearer (none when empty), `Host` its own;
    /// what went wrong on the way as an error.
    pub fn try_request(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> std::io::Result<Reply> {
        try_request(&self.address, method, path, token, body)
    }

    fn try_get(&self, path: &str) -> std::io::Result<Reply> {
        self.try_request("GET", path, "", None)
    }

    pub fn request(&self, method: &str, path: &str, token: &str, body: Option<&Value>) -> Reply {
        self.try_request(method, path, token, body)
            .unwrap_or_else(|error| panic!("{method} {path} through haproxy: {error}"))
    }

    pub fn get(&self, path: &str, token: &str) -> Reply {
        self.request("GET", path, token, None)
    }

    pub fn post(&self, path: &str, token: &str, body: &Value) -> Reply {
        self.request("POST", path, token, Some(body))
    }

    /// Every line haproxy has logged so far (one per request, `option httplog`, and its
    /// health checks' changes of a server's state).
    pub fn log(&self) -> Vec<String> {
        let mut log = self
            .log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (arriving, seen) = &mut *log;
        seen.extend(arriving.try_iter());
        seen.clone()
    }

    /// Waits until haproxy has logged a line holding `needle` (e.g. `hubs/hub1 is DOWN`)
    /// after its first `since` lines.
    pub fn logged(&self, since: usize, needle: &str) -> String {
        eventually_or(
            Duration::from_secs(30),
            &format!("haproxy logs {needle:?}"),
            || {
                let log = self.log();
                log.get(since..)?
                    .iter()
                    .find(|line| line.contains(needle))
                    .cloned()
            },
            || self.log().join("\n"),
        )
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("haproxy's log:\n{}", self.log().join("\n"));
        }
    }
}

/// Two hubs of one home (one database on PostgreSQL) on addresses they can come back on,
/// and haproxy in front of both; `None` when there is no haproxy.
pub struct Balanced {
    pub env: TestEnv,
    pub hubs: [Option<Served>; 2],
    pub addresses: [String; 2],
    pub haproxy: Haproxy,
}

impl Balanced {
    pub fn start(env: TestEnv) -> Option<Balanced> {
        let addresses = [free_address(), free_address()];
        let hubs = [0, 1].map(|index| Some(Balanced::serve(&env, &addresses[index])));
        let haproxy = Haproxy::start(
            env.root.path(),
            &[addresses[0].as_str(), addresses[1].as_str()],
        )?;
        Some(Balanced {
            env,
            hubs,
            addresses,
            haproxy,
        })
    }

    /// `alice`'s hub on `address`, answering the balancer's address.
    pub fn serve(env: &TestEnv, address: &str) -> Served {
        Served::start_at(env, "alice", address, &HUB_ARGS, &[])
    }

    /// Hub `index` (0 or 1), running.
    pub fn hub(&self, index: usize) -> &Served {
        self.hubs[index].as_ref().expect("the hub runs")
    }

    /// Hub `index` SIGKILLed, as a crash or the OOM killer ends it.
    pub fn kill(&mut self, index: usize) {
        self.hubs[index].take().expect("the hub runs").kill();
    }

    /// Hub `index` sent SIGTERM, once it has exited: its exit status and stderr.
    pub fn stop(&mut self, index: usize) -> (std::process::ExitStatus, String) {
        self.hubs[index].take().expect("the hub runs").stop()
    }

    /// Hub `index` started again on its address, once haproxy's health check sees it up.
    pub fn restart(&mut self, index: usize) {
        assert!(self.hubs[index].is_none(), "hub {index} is down");
        let since = self.haproxy.log().len();
        self.hubs[index] = Some(Balanced::serve(&self.env, &self.addresses[index]));
        self.haproxy
            .logged(since, &format!("Server hubs/hub{} is UP", index + 1));
    }
}
