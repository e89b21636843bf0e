//! A user's machine for the tests of what baton writes into the agent clients' settings:
//! a hub home, and a user's home with each client's config directory where its variables
//! say (`CODEX_HOME`, `XDG_CONFIG_HOME`), none of them the real user's.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{Run, TestEnv, run, write_password_file};

/// A hub plus a user's home with each client's config directory where its variables say.
pub struct Machine {
    pub env: TestEnv,
}

impl Machine {
    pub fn new() -> Machine {
        Machine::with_env(TestEnv::new())
    }

    /// A machine under `parent` rather than in /tmp.
    pub fn new_in(parent: &Path) -> Machine {
        Machine::with_env(TestEnv::new_in(parent))
    }

    fn with_env(env: TestEnv) -> Machine {
        for dir in ["user", "codex-home", "xdg-config", "bin"] {
            fs::create_dir_all(env.root.path().join(dir)).unwrap();
        }
        if let Some(url) = &env.store_url {
            // setup gives the clients' baton the store without its password, which the user
            // keeps in ~/.pgpass: Codex passes its MCP servers no PGPASSWORD.
            write_password_file(&env.root.path().join("user"), url);
        }
        Machine { env }
    }

    pub fn user(&self) -> PathBuf {
        self.env.root.path().join("user")
    }

    /// `CODEX_HOME`, deliberately not `~/.codex`.
    pub fn codex_home(&self) -> PathBuf {
        self.env.root.path().join("codex-home")
    }

    /// `XDG_CONFIG_HOME`, deliberately not `~/.config`.
    pub fn xdg_config(&self) -> PathBuf {
        self.env.root.path().join("xdg-config")
    }

    /// The only directory on `PATH`: empty unless a test puts a program there.
    pub fn bin(&self) -> PathBuf {
        self.env.root.path().join("bin")
    }

    /// Sets what a client run on this machine sees: its home, each client's config and data
    /// directories, `bin` first on `PATH` and the system's after it (the clients are Node
    /// programs, and need `node`), and no colours.
    pub fn client_env<'c>(&self, command: &'c mut Command, bin: &Path) -> &'c mut Command {
        let root = self.env.root.path();
        let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        command
            .env("HOME", self.user())
            .env("CODEX_HOME", self.codex_home())
            .env("XDG_CONFIG_HOME", self.xdg_config())
            .env("XDG_DATA_HOME", root.join("xdg-data"))
            .env("XDG_STATE_HOME", root.join("xdg-state"))
            .env("XDG_CACHE_HOME", root.join("xdg-cache"))
            .env("PATH", path)
            .env("NO_COLOR", "1")
    }

    pub fn setup(&self, args: &[&str]) -> Run {
        self.setup_env(args, &[])
    }

    pub fn setup_env(&self, args: &[&str], extra: &[(&str, &Path)]) -> Run {
        let mut all = vec!["setup"];
        all.extend_from_slice(args);
        self.baton(&all, extra)
    }

    /// Runs `baton ARGS…` with the machine's home, client variables and `PATH`.
    pub fn baton(&self, args: &[&str], extra: &[(&str, &Path)]) -> Run {
        let mut command = self.env.command(&self.env.work());
        command
            .env("HOME", self.user())
            .env("CODEX_HOME", self.codex_home())
            .env("XDG_CONFIG_HOME", self.xdg_config())
            .env("PATH", self.bin())
            .args(args);
        for (key, value) in extra {
            command.env(key, value);
        }
        run(&mut command)
    }

    pub fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    pub fn agent(&self, name: &str) -> Value {
        self.env.run("", &["--json", "agent", "show", name]).json()
    }
}
