//! Baton's commit guard (SPEC section 18.3) through real `git commit`s: `setup --git` in a
//! repository made here, reservations taken through baton, and commits by an agent, by a
//! person, with a hook that was there before, with `core.hooksPath`, and from a second home
//! against a hub at `BATON_URL`. And `review`, which names the changed paths outside its
//! task's scope.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::git::{git, repository, rev};
use crate::common::remote::Hub;
use crate::common::{Run, TestEnv};

/// Project `app` bound to a repository of its own, with the guard installed: its directory.
fn guarded_app(env: &TestEnv) -> PathBuf {
    let dir = env.project_beside("", "app");
    repository(env, &dir);
    let installed = env.run_in(&dir, "", &["setup", "--git"]);
    assert!(
        installed.ok().contains("installed baton's commit guard"),
        "{}",
        installed.stdout
    );
    dir
}

/// Changes `path` in `dir` and stages it.
fn change(env: &TestEnv, dir: &Path, path: &str) {
    let file = dir.join(path);
    let mut text = fs::read_to_string(&file).unwrap_or_default();
    text.push_str("// changed\n");
    fs::write(&file, text).unwrap();
    git(env, dir, &["add", path], &[]).ok();
}

fn commit(env: &TestEnv, dir: &Path, agent: Option<&str>) -> Run {
    let vars: Vec<(&str, &str)> = agent
        .map(|agent| ("BATON_AGENT", agent))
        .into_iter()
        .collect();
    git(env, dir, &["commit", "-q", "-m", "work"], &vars)
}

fn head(env: &TestEnv, dir: &Path) -> String {
    rev(env, dir, "HEAD")
}

/// The lines baton said on stderr.
fn batons_lines(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|line| line.starts_with("baton:"))
        .collect()
}

/// Claude's task `Fix the date parser`, touching `src/date/**`, claimed by codex: T-1.
fn codex_holds_the_dates(env: &TestEnv, dir: &Path) {
    env.register(&["codex"]);
    let sent = env.run_in(
        dir,
        "claude",
        &[
            "send",
            "--to",
            "codex",
            "--subject",
            "Fix the date parser",
            "--touches",
            "src/date/**",
            "--review",
            "--no-wake",
        ],
    );
    sent.ok();
    env.run_in(dir, "codex", &["claim", "1"]).ok();
}

#[test]
fn an_agents_commit_of_a_path_another_holds_is_refused_and_a_free_one_goes_through() {
    let env = TestEnv::new();
    let dir = guarded_app(&env);
    codex_holds_the_dates(&env, &dir);

    change(&env, &dir, "src/date/parse.rs");
    let before = head(&env, &dir);
    let refused = commit(&env, &dir, Some("claude"));
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stderr.contains(
            "baton: src/date/parse.rs is reserved by codex for T-1 \"Fix the date parser\""
        ),
        "path, holder and task are named: {}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("commit refused"),
        "{}",
        refused.stderr
    );
    assert_eq!(head(&env, &dir), before, "nothing was committed");

    // The holder's own commit of it goes through, saying nothing.
    let own = commit(&env, &dir, Some("codex"));
    own.ok();
    assert_eq!(batons_lines(&own), Vec::<&str>::new(), "{}", own.stderr);

    // A free path: claude's commit goes through, saying nothing.
    change(&env, &dir, "src/lib.rs");
    let free = commit(&env, &dir, Some("claude"));
    free.ok();
    assert_eq!(batons_lines(&free), Vec::<&str>::new(), "{}", free.stderr);

    // A rename out of the reserved directory changes a path codex holds.
    git(
        &env,
        &dir,
        &["mv", "src/date/parse.rs", "src/parse.rs"],
        &[],
    )
    .ok();
    let renamed = commit(&env, &dir, Some("claude"));
    assert_ne!(renamed.code, 0, "{renamed:?}");
    assert!(
        renamed
            .stderr
            .contains("src/date/parse.rs is reserved by codex"),
        "{}",
        renamed.stderr
    );

    // A person's commit (no BATON_AGENT) goes through, with one warning line.
    let person = commit(&env, &dir, None);
    person.ok();
    let said = batons_lines(&person);
    assert_eq!(said.len(), 1, "{}", person.stderr);
    assert!(
        said[0].contains("src/date/parse.rs is reserved by codex") && said[0].contains("person"),
        "{}",
        said[0]
    );
    assert_ne!(head(&env, &dir), before);
}

#[test]
fn a_commit_the_store_cannot_answer_for_goes_through_with_one_warning() {
    let env = TestEnv::new();
    let dir = guarded_app(&env);
    codex_holds_the_dates(&env, &dir);
    change(&env, &dir, "src/date/parse.rs");
    // A hub that is not there (nothing listens on port 9 of loopback).
    let unreachable = git(
        &env,
        &dir,
        &["commit", "-q", "-m", "work"],
        &[
            ("BATON_AGENT", "claude"),
            ("BATON_URL", "http://127.0.0.1:9"),
            ("BATON_TOKEN", "baton_tok_x"),
        ],
    );
    unreachable.ok();
    let said = batons_lines(&unreachable);
    assert_eq!(said.len(), 1, "{}", unreachable.stderr);
    assert!(said[0].contains("not checked"), "{}", said[0]);
}

#[cfg(unix)]
#[test]
fn the_hook_that_was_there_still_runs_and_uninstall_puts_it_back_byte_for_byte() {
    use std::os::unix::fs::PermissionsExt;

    let env = TestEnv::new();
    let dir = env.project_beside("", "app");
    repository(&env, &dir);
    let hook = dir.join(".git/hooks/pre-commit");
    let ran = dir.join("lint-ran");
    let theirs = format!(
        "#!/bin/sh\n# the team's lint\ntouch '{}'\n[ -z \"$LINT_FAILS\" ]\n",
        ran.display()
    );
    fs::write(&hook, &theirs).unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o750)).unwrap();

    let installed = env.run_in(&dir, "", &["setup", "--git"]);
    assert!(
        installed.ok().contains("runs after it"),
        "{}",
        installed.stdout
    );
    let chained = dir.join(".git/hooks/pre-commit.baton-chained");
    assert_eq!(fs::read_to_string(&chained).unwrap(), theirs);
    // Twice is once.
    let again = env.run_in(&dir, "", &["setup", "--git"]);
    assert!(again.ok().contains("nothing to change"), "{}", again.stdout);
    assert_eq!(fs::read_to_string(&chained).unwrap(), theirs);

    change(&env, &dir, "src/lib.rs");
    commit(&env, &dir, Some("claude")).ok();
    assert!(ran.exists(), "the hook that was there ran");

    // Its failure still stops the commit.
    change(&env, &dir, "src/lib.rs");
    let before = head(&env, &dir);
    let failed = git(
        &env,
        &dir,
        &["commit", "-q", "-m", "work"],
        &[("LINT_FAILS", "1")],
    );
    assert_ne!(failed.code, 0, "{failed:?}");
    assert_eq!(head(&env, &dir), before);

    let removed = env.run_in(&dir, "", &["setup", "--git", "--uninstall"]);
    assert!(removed.ok().contains("put back"), "{}", removed.stdout);
    assert_eq!(fs::read(&hook).unwrap(), theirs.as_bytes());
    let mode = fs::metadata(&hook).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750);
    assert!(!chained.exists());
    let nothing = env.run_in(&dir, "", &["setup", "--git", "--uninstall"]);
    assert!(
        nothing.ok().contains("nothing to remove"),
        "{}",
        nothing.stdout
    );

    // A hook that is no regular file is left alone, saying why.
    fs::remove_file(&hook).unwrap();
    std::os::unix::fs::symlink(&ran, &hook).unwrap();
    let refused = env.run_in(&dir, "", &["setup", "--git"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("is a symbolic link"),
        "{}",
        refused.stderr
    );
    assert!(
        fs::symlink_metadata(&hook)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn the_guard_goes_where_core_hooks_path_says_git_looks() {
    let env = TestEnv::new();
    let dir = env.project_beside("", "app");
    repository(&env, &dir);
    git(&env, &dir, &["config", "core.hooksPath", ".githooks"], &[]).ok();
    let dry = env.run_in(&dir, "", &["setup", "--git", "--dry-run"]);
    assert!(dry.ok().contains("would install"), "{}", dry.stdout);
    assert!(!dir.join(".githooks").exists(), "a dry run writes nothing");
    let installed = env.run_in(&dir, "", &["setup", "--git"]);
    assert!(
        installed.ok().contains(".githooks/pre-commit"),
        "{}",
        installed.stdout
    );
    assert!(dir.join(".githooks/pre-commit").is_file());
    assert!(!dir.join(".git/hooks/pre-commit").exists());

    codex_holds_the_dates(&env, &dir);
    change(&env, &dir, "src/date/parse.rs");
    let refused = commit(&env, &dir, Some("claude"));
    assert_ne!(refused.code, 0, "git ran the guard: {refused:?}");

    env.run_in(&dir, "", &["setup", "--git", "--uninstall"])
        .ok();
    assert!(
        !dir.join(".githooks").exists(),
        "the directory setup made for it goes with it"
    );
    commit(&env, &dir, Some("claude")).ok();
}

#[test]
fn the_guard_asks_a_hub_at_baton_url_from_a_second_home() {
    let hub = Hub::start();
    let hub_app = hub.env.work().join("app");
    fs::create_dir_all(&hub_app).unwrap();
    hub.env.init_project("alice", "app", &hub_app);
    hub.env
        .run_in(
            &hub_app,
            "claude",
            &["reserve", "src/date/**", "--reason", "dates"],
        )
        .ok();

    // The agent's machine: its own clone, mapped to the hub's project.
    let agent = hub.agent();
    let clone = agent.env.work().join("app");
    repository(&agent.env, &clone);
    agent
        .run(&["project", "map", "app", clone.to_str().unwrap()])
        .ok();
    let installed = agent.run_in(&clone, &["setup", "--git"]);
    assert!(
        installed.ok().contains("installed baton's commit guard"),
        "{}",
        installed.stdout
    );

    let url = agent.url.clone();
    let token = agent.token.clone();
    let on_the_hub = |agent_name: &str| {
        vec![
            ("BATON_AGENT", agent_name.to_string()),
            ("BATON_URL", url.clone()),
            ("BATON_TOKEN", token.clone()),
        ]
    };
    let commit_as = |name: &str| {
        let vars = on_the_hub(name);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        git(&agent.env, &clone, &["commit", "-q", "-m", "work"], &vars)
    };

    change(&agent.env, &clone, "src/date/parse.rs");
    let refused = commit_as("codex");
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("src/date/parse.rs is reserved by claude (dates)"),
        "{}",
        refused.stderr
    );
    git(&agent.env, &clone, &["reset", "-q"], &[]).ok();
    change(&agent.env, &clone, "src/lib.rs");
    let free = commit_as("codex");
    free.ok();
    assert_eq!(batons_lines(&free), Vec::<&str>::new(), "{}", free.stderr);
}

#[test]
fn review_names_the_changed_paths_outside_the_tasks_scope() {
    let env = TestEnv::new();
    let dir = env.project_beside("", "app");
    repository(&env, &dir);
    codex_holds_the_dates(&env, &dir);
    // Within the scope, outside it, and a new file outside it.
    fs::write(dir.join("src/date/parse.rs"), "fn parse() { todo!() }\n").unwrap();
    fs::write(dir.join("src/lib.rs"), "mod date;\nmod more;\n").unwrap();
    env.run_in(&dir, "codex", &["review", "1", "--body", "ready"])
        .ok();

    let shown = env.run_in(&dir, "claude", &["show", "1"]);
    assert!(
        shown.ok().contains("outside its scope: src/lib.rs"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("parse.rs"), "{}", shown.stdout);
    let inbox = env.run_in(&dir, "claude", &["inbox"]);
    assert!(
        inbox.ok().contains("outside its scope: src/lib.rs"),
        "the reviewer's inbox shows it: {}",
        inbox.stdout
    );
    let thread = env.run_in(&dir, "claude", &["--json", "show", "1"]).json();
    let entry = thread["thread"]
        .as_array()
        .and_then(|thread| thread.last())
        .cloned()
        .unwrap();
    assert_eq!(entry["text"], "ready\noutside its scope: src/lib.rs");
}

#[test]
fn review_outside_a_repository_names_nothing() {
    let env = TestEnv::new();
    let dir = env.project_beside("", "app");
    fs::write(dir.join("README.md"), "# app\n").unwrap();
    codex_holds_the_dates(&env, &dir);
    env.run_in(&dir, "codex", &["review", "1", "--body", "ready"])
        .ok();
    let shown = env.run_in(&dir, "claude", &["show", "1"]);
    assert!(
        !shown.ok().contains("outside its scope"),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_workspace_inside_the_repository_is_guarded_by_its_own_paths() {
    let env = TestEnv::new();
    let root = env.root.path().join("mono");
    repository(&env, &root);
    let app = root.join("app");
    fs::create_dir_all(app.join("src")).unwrap();
    fs::write(app.join("src/x.rs"), "x\n").unwrap();
    env.init_project("", "app", &app);
    let installed = env.run_in(&app, "", &["setup", "--git"]);
    assert!(
        installed.ok().contains("mono/.git/hooks/pre-commit"),
        "{}",
        installed.stdout
    );
    env.run_in(&app, "codex", &["reserve", "src/x.rs"]).ok();

    git(&env, &root, &["add", "app/src/x.rs"], &[]).ok();
    let refused = commit(&env, &root, Some("claude"));
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("baton: src/x.rs is reserved by codex"),
        "named as the workspace names it: {}",
        refused.stderr
    );
    git(&env, &root, &["reset", "-q"], &[]).ok();
    // src/lib.rs of the repository is not the workspace's src/… at all.
    change(&env, &root, "src/lib.rs");
    let free = commit(&env, &root, Some("claude"));
    free.ok();
    assert_eq!(batons_lines(&free), Vec::<&str>::new(), "{}", free.stderr);
}
