//! Each task in a git worktree of its own, and approval that lands its work (SPEC sections
//! 18.4 and 18.5), on real repositories made with the machine's git: two agents working
//! side by side, a conflict, a verify that fails or hangs, the person's own checkout of the
//! base branch, and landings cut short by SIGKILL.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::git::{git, repository, rev};
use crate::common::{Run, TestEnv};

/// Project `app` on a repository of its own, worktrees on with `settings` besides, and
/// agents codex and gemini known: the workspace.
pub(crate) fn app(env: &TestEnv, settings: &[&str]) -> PathBuf {
    let dir = env.project_beside("lead", "app");
    repository(env, &dir);
    let mut args = vec!["project", "set", "--worktrees", "on"];
    args.extend_from_slice(settings);
    let set = env.run_in(&dir, "lead", &args);
    assert!(
        set.ok().contains("worktrees on, base main, land "),
        "{}",
        set.stdout
    );
    env.register(&["codex", "gemini"]);
    dir
}

/// Lead sends `subject` to `to`, for review: its number.
pub(crate) fn send(env: &TestEnv, dir: &Path, to: &str, subject: &str) -> u64 {
    send_with(env, dir, to, subject, &["--review"])
}

/// Lead sends `subject` to `to` with `extra` (`--touches P`, `--review`), waking nobody:
/// its number.
pub(crate) fn send_with(env: &TestEnv, dir: &Path, to: &str, subject: &str, extra: &[&str]) -> u64 {
    let mut args = vec![
        "--json",
        "send",
        "--to",
        to,
        "--subject",
        subject,
        "--no-wake",
    ];
    args.extend_from_slice(extra);
    let sent = env.run_in(dir, "lead", &args);
    sent.json()["task"]["id"].as_u64().expect("a task id")
}

pub(crate) fn show(env: &TestEnv, dir: &Path, id: u64) -> Value {
    env.run_in(dir, "lead", &["--json", "show", &id.to_string()])
        .json()
}

/// Claims task `id` as `agent`: the directory of its worktree, which the claim names.
pub(crate) fn claim(env: &TestEnv, dir: &Path, agent: &str, id: u64) -> PathBuf {
    let claimed = env.run_in(dir, agent, &["claim", &id.to_string()]);
    let path = show(env, dir, id)["worktree"]["path"]
        .as_str()
        .expect("a claimed task has a worktree")
        .to_string();
    assert!(
        claimed
            .ok()
            .contains(&format!("work in {path} (branch baton/T-{id})")),
        "{}",
        claimed.stdout
    );
    PathBuf::from(path)
}

/// Writes `text` to `file` in `tree` and commits it there.
pub(crate) fn commit(env: &TestEnv, tree: &Path, file: &str, text: &str) -> String {
    fs::write(tree.join(file), text).unwrap();
    git(env, tree, &["add", file], &[]).ok();
    git(
        env,
        tree,
        &["commit", "-q", "-m", &format!("change {file}")],
        &[],
    )
    .ok();
    rev(env, tree, "HEAD")
}

pub(crate) fn review(env: &TestEnv, tree: &Path, agent: &str, id: u64) -> Run {
    env.run_in(tree, agent, &["review", &id.to_string(), "--body", "done"])
}

pub(crate) fn approve(env: &TestEnv, dir: &Path, id: u64) -> Run {
    env.run_in(dir, "lead", &["approve", &id.to_string()])
}

/// `git log --format=%s` of `main`, newest first.
pub(crate) fn subjects(env: &TestEnv, dir: &Path) -> Vec<String> {
    git(env, dir, &["log", "--format=%s", "main"], &[])
        .ok()
        .lines()
        .map(str::to_string)
        .collect()
}

pub(crate) fn branches(env: &TestEnv, dir: &Path) -> String {
    git(env, dir, &["branch", "--list", "baton/*"], &[])
        .ok()
        .to_string()
}

pub(crate) fn status(env: &TestEnv, dir: &Path, id: u64) -> String {
    show(env, dir, id)["status"].as_str().unwrap().to_string()
}

pub(crate) fn last_entry(env: &TestEnv, dir: &Path, id: u64) -> String {
    let task = show(env, dir, id);
    let thread = task["thread"].as_array().unwrap();
    thread.last().unwrap()["text"].as_str().unwrap().to_string()
}

#[test]
fn two_agents_work_in_worktrees_of_their_own_and_approval_lands_each_on_main_in_order() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let one = send(&env, &dir, "codex", "Parse ISO dates");
    let two = send(&env, &dir, "gemini", "Say what the app does");
    let first = claim(&env, &dir, "codex", one);
    let second = claim(&env, &dir, "gemini", two);
    assert_ne!(first, second);
    for tree in [&first, &second] {
        assert!(
            tree.starts_with(env.home().join("worktrees").join("app")),
            "{tree:?}"
        );
        assert!(
            !tree.starts_with(&dir),
            "a worktree is outside the repository"
        );
    }
    commit(&env, &first, "src/date/parse.rs", "fn parse() { iso() }\n");
    commit(&env, &second, "README.md", "# app\nIt parses dates.\n");
    // The workspace is as it was: each agent's work is in its own tree.
    assert_eq!(
        fs::read_to_string(dir.join("src/date/parse.rs")).unwrap(),
        "fn parse() {}\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("README.md")).unwrap(),
        "# app\n"
    );
    // A command in a worktree acts on the project, as one in the workspace does.
    review(&env, &first, "codex", one).ok();
    review(&env, &second, "gemini", two).ok();

    let landed = approve(&env, &dir, one);
    assert!(
        landed.ok().contains("landed on main as"),
        "{}",
        landed.stdout
    );
    approve(&env, &dir, two).ok();

    assert_eq!(
        subjects(&env, &dir),
        [
            "Say what the app does (T-2)",
            "Parse ISO dates (T-1)",
            "start"
        ]
    );
    let (one_landed, two_landed) = (show(&env, &dir, one), show(&env, &dir, two));
    assert_eq!(one_landed["status"], "completed");
    assert_eq!(two_landed["status"], "completed");
    assert_eq!(
        two_landed["landed"]["commit"].as_str().unwrap(),
        rev(&env, &dir, "main")
    );
    // The second was put on the first: main's history is a line.
    assert_eq!(
        one_landed["landed"]["commit"].as_str().unwrap(),
        rev(&env, &dir, "main^")
    );
    // The person's checkout of main was brought forward, clean.
    assert_eq!(
        fs::read_to_string(dir.join("src/date/parse.rs")).unwrap(),
        "fn parse() { iso() }\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("README.md")).unwrap(),
        "# app\nIt parses dates.\n"
    );
    assert_eq!(git(&env, &dir, &["status", "--porcelain"], &[]).ok(), "");
    // Worktrees and branches gone.
    assert!(!first.exists() && !second.exists());
    assert_eq!(branches(&env, &dir), "");
    // Each squash commit names its task.
    let body = git(&env, &dir, &["log", "-1", "--format=%B", "main"], &[]);
    assert!(body.ok().contains("Baton-Task: app/T-2"), "{}", body.stdout);
}

#[test]
fn a_conflict_sends_the_task_back_untouched_and_it_lands_once_resolved() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let one = send(&env, &dir, "codex", "Name the module");
    let two = send(&env, &dir, "gemini", "Rename the module");
    let first = claim(&env, &dir, "codex", one);
    let second = claim(&env, &dir, "gemini", two);
    commit(&env, &first, "src/lib.rs", "mod dates;\n");
    let theirs = commit(&env, &second, "src/lib.rs", "mod calendar;\n");
    review(&env, &first, "codex", one).ok();
    review(&env, &second, "gemini", two).ok();
    approve(&env, &dir, one).ok();
    let main_before = rev(&env, &dir, "main");

    let refused = approve(&env, &dir, two);
    assert!(
        refused.ok().contains("changes_requested"),
        "{}",
        refused.stdout
    );
    assert_eq!(status(&env, &dir, two), "changes_requested");
    let why = last_entry(&env, &dir, two);
    assert!(why.contains("conflicts in src/lib.rs"), "{why}");
    // Nothing of the second's was touched, and main did not move.
    assert_eq!(rev(&env, &dir, "main"), main_before);
    assert_eq!(rev(&env, &dir, "baton/T-2"), theirs);
    assert_eq!(
        fs::read_to_string(second.join("src/lib.rs")).unwrap(),
        "mod calendar;\n"
    );

    // Gemini brings its branch up to date, resolves, and asks again.
    let merged = git(&env, &second, &["merge", "-q", "main"], &[]);
    assert_ne!(merged.code, 0, "the merge conflicts");
    fs::write(second.join("src/lib.rs"), "mod calendar;\nmod dates;\n").unwrap();
    git(&env, &second, &["commit", "-qam", "resolve"], &[]).ok();
    review(&env, &second, "gemini", two).ok();
    approve(&env, &dir, two).ok();
    assert_eq!(status(&env, &dir, two), "completed");
    assert_eq!(
        fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        "mod calendar;\nmod dates;\n"
    );
    assert_eq!(
        subjects(&env, &dir),
        ["Rename the module (T-2)", "Name the module (T-1)", "start"]
    );
}

#[test]
fn a_failed_verify_sends_the_task_back_with_its_output_and_a_hanging_one_is_stopped() {
    let env = TestEnv::new();
    let dir = app(
        &env,
        &[
            "--verify",
            "echo checking the build; echo it is broken >&2; exit 3",
        ],
    );
    let one = send(&env, &dir, "codex", "Break the build");
    let tree = claim(&env, &dir, "codex", one);
    commit(&env, &tree, "src/lib.rs", "broken\n");
    review(&env, &tree, "codex", one).ok();
    let main_before = rev(&env, &dir, "main");
    approve(&env, &dir, one).ok();
    assert_eq!(status(&env, &dir, one), "changes_requested");
    let why = last_entry(&env, &dir, one);
    assert!(why.contains("the project's verify failed"), "{why}");
    assert!(
        why.contains("checking the build") && why.contains("it is broken"),
        "{why}"
    );
    assert_eq!(rev(&env, &dir, "main"), main_before);
    assert!(tree.exists(), "its worktree is kept");

    env.run_in(
        &dir,
        "lead",
        &[
            "project",
            "set",
            "--verify",
            "sleep 600",
            "--verify-timeout",
            "2s",
        ],
    )
    .ok();
    review(&env, &tree, "codex", one).ok();
    let started = Instant::now();
    approve(&env, &dir, one).ok();
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "a verify past its bound is stopped"
    );
    assert_eq!(status(&env, &dir, one), "changes_requested");
    let why = last_entry(&env, &dir, one);
    assert!(why.contains("ran past its time and was stopped"), "{why}");
    assert_eq!(rev(&env, &dir, "main"), main_before);
}

#[test]
fn the_persons_checkout_keeps_its_unsaved_changes_and_a_landing_never_overwrites_one() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let one = send(&env, &dir, "codex", "Parse dates");
    let tree = claim(&env, &dir, "codex", one);
    commit(&env, &tree, "src/date/parse.rs", "fn parse() { iso() }\n");
    review(&env, &tree, "codex", one).ok();

    // An unsaved change in a file the landing changes stops it before main moves.
    let mine = "fn parse() { my_own() }\n// not saved yet\n";
    fs::write(dir.join("src/date/parse.rs"), mine).unwrap();
    let main_before = rev(&env, &dir, "main");
    let stopped = approve(&env, &dir, one);
    let said = stopped.fails(1);
    assert!(
        said.contains("has uncommitted changes in src/date/parse.rs"),
        "{said}"
    );
    assert_eq!(rev(&env, &dir, "main"), main_before);
    assert_eq!(
        fs::read_to_string(dir.join("src/date/parse.rs")).unwrap(),
        mine
    );
    assert_eq!(status(&env, &dir, one), "review_requested");

    // The person commits theirs to main meanwhile, and leaves another file unsaved: the
    // landing starts from their commit, and their unsaved file is kept byte for byte.
    fs::write(dir.join("src/date/parse.rs"), "fn parse() {}\n").unwrap();
    fs::write(dir.join("NOTES.md"), "mine\n").unwrap();
    git(&env, &dir, &["add", "NOTES.md"], &[]).ok();
    git(&env, &dir, &["commit", "-qm", "notes"], &[]).ok();
    let persons = rev(&env, &dir, "main");
    let unsaved = "# app\n\u{1b}[31m half-written\r\n";
    fs::write(dir.join("README.md"), unsaved).unwrap();
    approve(&env, &dir, one).ok();
    assert_eq!(status(&env, &dir, one), "completed");
    assert_eq!(
        rev(&env, &dir, "main^"),
        persons,
        "landed on the person's commit"
    );
    assert_eq!(fs::read_to_string(dir.join("README.md")).unwrap(), unsaved);
    assert_eq!(fs::read_to_string(dir.join("NOTES.md")).unwrap(), "mine\n");
    assert_eq!(
        fs::read_to_string(dir.join("src/date/parse.rs")).unwrap(),
        "fn parse() { iso() }\n"
    );
    assert_eq!(
        git(&env, &dir, &["status", "--porcelain"], &[]).ok(),
        " M README.md\n"
    );
}

#[test]
fn review_refuses_unsaved_work_and_done_without_review_lands_too() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let id = send_with(&env, &dir, "codex", "Tidy", &[]);
    let tree = claim(&env, &dir, "codex", id);
    fs::write(tree.join("src/lib.rs"), "mod date; // tidy\n").unwrap();
    let refused = env.run_in(&tree, "codex", &["review", &id.to_string()]);
    let said = refused.fails(1);
    assert!(said.contains("uncommitted changes: src/lib.rs"), "{said}");
    git(&env, &tree, &["commit", "-qam", "tidy"], &[]).ok();
    let done = env.run_in(
        &tree,
        "codex",
        &["done", &id.to_string(), "--result", "tidied"],
    );
    assert!(done.ok().contains("landed on main"), "{}", done.stdout);
    assert_eq!(subjects(&env, &dir), ["Tidy (T-1)", "start"]);
}

#[test]
fn a_task_with_a_worktree_completes_only_by_landing() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let id = send(&env, &dir, "codex", "Work");
    let tree = claim(&env, &dir, "codex", id);
    commit(&env, &tree, "src/lib.rs", "work\n");
    review(&env, &tree, "codex", id).ok();
    // Worktrees off: the task that has one still lands.
    env.run_in(&dir, "lead", &["project", "set", "--worktrees", "off"])
        .ok();
    approve(&env, &dir, id).ok();
    assert_eq!(
        show(&env, &dir, id)["landed"]["commit"].as_str().unwrap(),
        rev(&env, &dir, "main")
    );
}

#[test]
fn worktrees_need_a_repository_and_settings_refuse_what_they_cannot_hold() {
    let env = TestEnv::new();
    let plain = env.project_beside("lead", "plain");
    let refused = env.run_in(&plain, "lead", &["project", "set", "--worktrees", "on"]);
    assert!(
        refused.fails(1).contains("is not a git repository"),
        "{}",
        refused.stderr
    );
    let dir = app(&env, &[]);
    let bad = env.run_in(&dir, "lead", &["project", "set", "--remote", "nowhere"]);
    assert!(
        bad.fails(1).contains("has no remote nowhere"),
        "{}",
        bad.stderr
    );
    let bad = env.run_in(&dir, "lead", &["project", "set", "--verify", "make\ntest"]);
    assert!(bad.fails(1).contains("one line"), "{}", bad.stderr);
    let bad = env.run_in(&dir, "lead", &["project", "set", "--base", "a..b"]);
    assert!(bad.fails(1).contains("not a branch name"), "{}", bad.stderr);
    let bad = env.run_in(&dir, "lead", &["project", "set", "--land", "octopus"]);
    assert!(
        bad.fails(1).contains("squash, rebase or merge"),
        "{}",
        bad.stderr
    );
    // Only whoever may change the project's settings: lead coordinates, once it sends.
    send(&env, &dir, "codex", "Anything");
    let other = env.run_in(&dir, "codex", &["project", "set", "--worktrees", "off"]);
    assert_eq!(other.code, 1, "{}", other.stderr);
}

#[cfg(unix)]
/// A verify that says it started, then waits while `hold` exists in the workspace's
/// parent, then passes.
fn held_verify(hold: &Path) -> String {
    let hold = hold.display();
    format!("touch '{hold}.started'; while [ -f '{hold}' ]; do sleep 0.05; done")
}

#[cfg(unix)]
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "waited for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
#[test]
fn a_landing_killed_at_any_step_loses_nothing_and_approving_again_finishes_it() {
    if !crate::common::files_only("holds the board's lock with flock(1)") {
        return;
    }
    let env = TestEnv::new();
    let hold = env.root.path().join("hold");
    let dir = app(&env, &["--verify", &held_verify(&hold)]);
    let id = send(&env, &dir, "codex", "Parse dates");
    let tree = claim(&env, &dir, "codex", id);
    commit(&env, &tree, "src/date/parse.rs", "fn parse() { iso() }\n");
    review(&env, &tree, "codex", id).ok();
    let main_before = rev(&env, &dir, "main");
    let started = PathBuf::from(format!("{}.started", hold.display()));

    // Killed while its verify runs (the result built, nothing moved).
    fs::write(&hold, "").unwrap();
    let mut approving = env.command(&dir);
    let mut child = approving
        .args(["--as", "lead", "approve", &id.to_string()])
        .spawn()
        .unwrap();
    wait_for("the verify to start", || started.exists());
    child.kill().unwrap();
    child.wait().unwrap();
    fs::remove_file(&hold).unwrap();
    assert_eq!(rev(&env, &dir, "main"), main_before);
    assert_eq!(status(&env, &dir, id), "review_requested");

    // Killed after main moved, waiting for the board's lock to record it.
    let lock = env.project_dir("app").join("board.lock");
    // flock(1) holds the lock itself (-o: not the command it runs), in a group of its own.
    let mut holder = std::process::Command::new("flock");
    std::os::unix::process::CommandExt::process_group(&mut holder, 0);
    let mut holder = holder
        .arg("-o")
        .arg(&lock)
        .args(["sleep", "600"])
        .spawn()
        .expect("flock(1) runs");
    std::thread::sleep(Duration::from_millis(300));
    let mut approving = env.command(&dir);
    let mut child = approving
        .args(["--as", "lead", "approve", &id.to_string()])
        .spawn()
        .unwrap();
    wait_for("main to move", || rev(&env, &dir, "main") != main_before);
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let group = nix::unistd::Pid::from_raw(holder.id() as i32);
    nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL).unwrap();
    holder.wait().unwrap();
    let moved = rev(&env, &dir, "main");
    assert_eq!(status(&env, &dir, id), "review_requested");
    assert_eq!(rev(&env, &dir, "main^"), main_before);
    // doctor names the landing cut short, and what finishes it.
    let doctor = env.run_in(&dir, "", &["doctor"]).stdout;
    let cut_short = format!(
        "T-{id}'s landing moved main to {} but T-{id} is still in review: approve it again \
         to finish",
        &moved[..7]
    );
    assert!(doctor.contains(&cut_short), "{doctor}");

    // Approving again finishes the job: the commit is on main once.
    approve(&env, &dir, id).ok();
    assert_eq!(status(&env, &dir, id), "completed");
    assert_eq!(rev(&env, &dir, "main"), moved);
    assert_eq!(subjects(&env, &dir), ["Parse dates (T-1)", "start"]);
    assert_eq!(
        show(&env, &dir, id)["landed"]["commit"].as_str().unwrap(),
        moved
    );
    assert_eq!(
        fs::read_to_string(dir.join("src/date/parse.rs")).unwrap(),
        "fn parse() { iso() }\n"
    );
    assert_eq!(git(&env, &dir, &["status", "--porcelain"], &[]).ok(), "");
    assert!(!tree.exists());
    let doctor = env.run_in(&dir, "", &["doctor"]).stdout;
    assert!(!doctor.contains(&format!("T-{id}'s landing")), "{doctor}");
}
