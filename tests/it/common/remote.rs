//! An agent's machine acting on a hub elsewhere: a home of its own, the hub's address (or
//! several) in `BATON_URL` and its token in `BATON_TOKEN` for every command it runs.

#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;

use super::http::{Served, add_token};
use super::{Run, TestEnv, line_with, run, stderr_lines, stdout_lines};

/// A hub's home, not served yet: `codex` and `alice` registered, and a token for `codex`,
/// which a machine elsewhere acts with.
pub struct HubHome {
    pub env: TestEnv,
    pub token: String,
}

impl HubHome {
    pub fn new() -> HubHome {
        let env = TestEnv::new();
        env.run("", &["agent", "add", "codex"]).ok();
        env.run("", &["agent", "add", "alice"]).ok();
        let token = add_token(&env, "codex");
        HubHome { env, token }
    }

    /// Served on loopback, `alice` its human.
    pub fn serve(self) -> Hub {
        let served = Served::start(&self.env, "alice");
        Hub {
            env: self.env,
            served,
            token: self.token,
        }
    }
}

/// The hub's machine: a [`HubHome`] served on loopback.
pub struct Hub {
    pub env: TestEnv,
    pub served: Served,
    pub token: String,
}

impl Hub {
    pub fn start() -> Hub {
        HubHome::new().serve()
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.served.address)
    }

    /// A machine of its own acting on this hub as `codex`.
    pub fn agent(&self) -> Agent {
        Agent::new(self.url(), self.token.clone())
    }
}

/// The agent's machine.
pub struct Agent {
    pub env: TestEnv,
    /// `BATON_URL`: one hub, or several comma-separated.
    pub url: String,
    pub token: String,
}

impl Agent {
    /// A machine of its own acting on the hub at `url` with `token`.
    pub fn new(url: String, token: String) -> Agent {
        Agent {
            env: TestEnv::new(),
            url,
            token,
        }
    }

    /// `baton` in `cwd` of this machine, the hub and the token in its environment.
    pub fn command(&self, cwd: &Path) -> Command {
        let mut command = self.env.command(cwd);
        command
            .env("BATON_URL", &self.url)
            .env("BATON_TOKEN", &self.token);
        command
    }

    /// `baton ARGS…` in `cwd`, to its end; its output is checked for the token, which never
    /// shows.
    #[track_caller]
    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let ran = run(self.command(cwd).args(args));
        assert!(
            !ran.stdout.contains(&self.token) && !ran.stderr.contains(&self.token),
            "the token shows: {ran:?}"
        );
        ran
    }

    /// `baton ARGS…` in the workspace (see [`Agent::run_in`]).
    #[track_caller]
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_in(&self.env.work(), args)
    }

    /// `baton hook EVENT --client claude` with `input` on its stdin.
    pub fn hook(&self, event: &str, input: &Value) -> Run {
        let mut command = self.command(&self.env.work());
        command.args(["hook", event, "--client", "claude"]);
        self.env.run_piped(command, &input.to_string())
    }

    /// `baton ARGS…` left running, its stdout and stderr read line by line as they come
    /// (its stdin piped too with `stdin_open`, for a process that lives as long as it).
    pub fn spawn(&self, args: &[&str], stdin_open: bool) -> Spawned {
        let mut child = self
            .command(&self.env.work())
            .args(args)
            .stdin(if stdin_open {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the baton binary runs");
        Spawned {
            stdin: child.stdin.take(),
            stdout: stdout_lines(&mut child),
            stderr: stderr_lines(&mut child),
            child,
        }
    }
}

/// A process of the agent's machine left running, killed when dropped.
pub struct Spawned {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: Receiver<String>,
    pub stderr: Receiver<String>,
}

impl Spawned {
    /// The next line on stderr that holds `words` (the lines before it read; see
    /// [`line_with`]): what a process says once it has got somewhere (`listening to the
    /// hub`) is the sign to go on.
    #[track_caller]
    pub fn said(&self, words: &str) -> String {
        line_with(&self.stderr, words)
    }

    /// Waits for it to end: its status, and what it printed on stdout that was not read.
    pub fn finish(&mut self) -> (ExitStatus, String) {
        let status = self.child.wait().expect("the child can be waited for");
        // Its stdout closed with it: the lines end.
        let stdout: Vec<String> = self.stdout.iter().collect();
        (status, stdout.join("\n"))
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
