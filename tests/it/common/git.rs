//! The machine's `git`, as the tests run it: real repositories made in a test's own
//! directory, with none of the machine's or the user's git configuration.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::{Run, TestEnv, run};

/// `git ARGS…` in `dir`, with no configuration of the machine's or the user's, baton's
/// home (and store) in its environment as the hub's commands have them, and `vars`.
pub fn git(env: &TestEnv, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", env.root.path().join("user-home"))
        .env("BATON_HOME", env.home())
        .env("BATON_NOTIFY", "0")
        .env_remove("BATON_AGENT")
        .env_remove("BATON_URL")
        .env_remove("BATON_TOKEN")
        .env_remove("BATON_TOKEN_FILE")
        .env_remove("BATON_STORE");
    for (name, value) in env.store_env() {
        command.env(name, value);
    }
    for (name, value) in vars {
        command.env(name, value);
    }
    run(&mut command)
}

/// A repository in `dir` with one commit of `src/date/parse.rs`, `src/lib.rs` and
/// `README.md`, on branch `main`.
pub fn repository(env: &TestEnv, dir: &Path) {
    fs::create_dir_all(dir.join("src/date")).unwrap();
    fs::write(dir.join("src/date/parse.rs"), "fn parse() {}\n").unwrap();
    fs::write(dir.join("src/lib.rs"), "mod date;\n").unwrap();
    fs::write(dir.join("README.md"), "# app\n").unwrap();
    git(env, dir, &["init", "-q"], &[]).ok();
    git(env, dir, &["add", "."], &[]).ok();
    git(env, dir, &["commit", "-q", "-m", "start"], &[]).ok();
}

/// The commit `rev` names in `dir`.
pub fn rev(env: &TestEnv, dir: &Path, rev: &str) -> String {
    git(env, dir, &["rev-parse", rev], &[])
        .ok()
        .trim()
        .to_string()
}
