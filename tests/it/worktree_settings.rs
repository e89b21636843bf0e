//! A project's worktree settings at work (SPEC sections 18.4 and 18.5): files copied into a
//! new worktree and its setup run there, landing by rebase and by merge, two approvals at
//! once, the scope a worktree's review is held to, and settings written into the store by
//! anyone but the workspace's machine, which that machine does not act on.

use std::fs;

use crate::common::TestEnv;
use crate::common::git::{git, rev};
use crate::worktrees::{
    app, approve, claim, commit, last_entry, review, send, send_with, show, status, subjects,
};

#[test]
fn a_new_worktree_gets_the_copied_files_and_its_setup_runs_there_with_a_log() {
    let env = TestEnv::new();
    let dir = app(
        &env,
        &[
            "--copy",
            ".env,config/*.local",
            "--setup",
            "echo set up > ready.txt; echo done",
        ],
    );
    fs::write(dir.join(".gitignore"), ".env\n*.local\nready.txt\n").unwrap();
    git(&env, &dir, &["add", ".gitignore"], &[]).ok();
    git(&env, &dir, &["commit", "-qm", "ignore"], &[]).ok();
    fs::write(dir.join(".env"), "SECRET=1\n").unwrap();
    fs::create_dir_all(dir.join("config")).unwrap();
    fs::write(dir.join("config/db.local"), "db\n").unwrap();
    fs::write(dir.join("untracked.txt"), "not copied\n").unwrap();
    let id = send(&env, &dir, "codex", "Use the env");
    let tree = claim(&env, &dir, "codex", id);
    assert_eq!(fs::read_to_string(tree.join(".env")).unwrap(), "SECRET=1\n");
    assert_eq!(
        fs::read_to_string(tree.join("config/db.local")).unwrap(),
        "db\n"
    );
    assert!(
        !tree.join("untracked.txt").exists(),
        "only what --copy names"
    );
    assert_eq!(
        fs::read_to_string(tree.join("ready.txt")).unwrap(),
        "set up\n"
    );
    let log = env.home().join("worktrees/.logs/app/T-1-setup.log");
    assert_eq!(fs::read_to_string(log).unwrap(), "done\n");
    // Copied and ignored files are no unsaved work: the review goes ahead.
    commit(&env, &tree, "src/lib.rs", "mod env;\n");
    review(&env, &tree, "codex", id).ok();
    approve(&env, &dir, id).ok();
    assert!(
        !tree.exists(),
        "a landed task's worktree goes, ignored files and all"
    );
}

#[test]
fn a_failing_setup_is_said_and_the_claim_stands() {
    let env = TestEnv::new();
    let dir = app(&env, &["--setup", "echo no network >&2; exit 7"]);
    let id = send(&env, &dir, "codex", "Work");
    let claimed = env.run_in(&dir, "codex", &["claim", &id.to_string()]);
    claimed.ok();
    assert!(
        claimed
            .stderr
            .contains("the project's setup failed (exit 7)"),
        "{}",
        claimed.stderr
    );
    assert_eq!(status(&env, &dir, id), "working");
}

#[test]
fn rebase_keeps_each_commit_and_merge_makes_a_merge_commit() {
    let env = TestEnv::new();
    let dir = app(&env, &["--land", "rebase"]);
    let id = send(&env, &dir, "codex", "Two steps");
    let tree = claim(&env, &dir, "codex", id);
    commit(&env, &tree, "src/lib.rs", "mod date;\nmod one;\n");
    commit(&env, &tree, "README.md", "# app, two\n");
    review(&env, &tree, "codex", id).ok();
    approve(&env, &dir, id).ok();
    assert_eq!(
        subjects(&env, &dir),
        ["change README.md", "change src/lib.rs", "start"]
    );
    let body = git(&env, &dir, &["log", "-1", "--format=%B", "main^"], &[]);
    assert!(body.ok().contains("Baton-Task: app/T-1"), "{}", body.stdout);

    env.run_in(&dir, "lead", &["project", "set", "--land", "merge"])
        .ok();
    let id = send(&env, &dir, "gemini", "Merged");
    let tree = claim(&env, &dir, "gemini", id);
    let head = commit(&env, &tree, "NOTES.md", "notes\n");
    review(&env, &tree, "gemini", id).ok();
    approve(&env, &dir, id).ok();
    let parents = git(&env, &dir, &["log", "-1", "--format=%P", "main"], &[]);
    let parents: Vec<&str> = parents.ok().split_whitespace().collect();
    assert_eq!(parents.len(), 2, "a merge commit");
    assert_eq!(parents[1], head);
    assert_eq!(fs::read_to_string(dir.join("NOTES.md")).unwrap(), "notes\n");
}

#[test]
fn two_approvals_at_once_land_one_after_the_other() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let mut ids = Vec::new();
    for (agent, file) in [("codex", "src/lib.rs"), ("gemini", "README.md")] {
        let id = send(&env, &dir, agent, &format!("Change {file}"));
        let tree = claim(&env, &dir, agent, id);
        commit(&env, &tree, file, &format!("{agent} was here\n"));
        review(&env, &tree, agent, id).ok();
        ids.push(id);
    }
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            env.command(&dir)
                .args(["--as", "lead", "approve", &id.to_string()])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    for id in &ids {
        assert_eq!(status(&env, &dir, *id), "completed");
    }
    let log = subjects(&env, &dir);
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(git(&env, &dir, &["status", "--porcelain"], &[]).ok(), "");
}

#[test]
fn a_worktrees_review_names_what_its_branch_changed_outside_its_scope() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let id = send_with(
        &env,
        &dir,
        "codex",
        "Dates",
        &["--touches", "src/date/**", "--review"],
    );
    let tree = claim(&env, &dir, "codex", id);
    commit(&env, &tree, "src/date/parse.rs", "fn parse() { iso() }\n");
    commit(&env, &tree, "src/lib.rs", "mod date; mod more;\n");
    review(&env, &tree, "codex", id).ok();
    let said = last_entry(&env, &dir, id);
    assert!(said.contains("outside its scope: src/lib.rs"), "{said}");
    assert!(!said.contains("parse.rs"), "{said}");
}

#[test]
fn settings_written_by_anyone_but_the_workspaces_machine_are_not_acted_on() {
    let env = TestEnv::new();
    let dir = app(&env, &["--verify", "true"]);
    let id = send(&env, &dir, "codex", "Work");
    let tree = claim(&env, &dir, "codex", id);
    commit(&env, &tree, "src/lib.rs", "work\n");
    review(&env, &tree, "codex", id).ok();
    // Whoever can write the store changes the verify command, keeping the signature.
    let file = "projects/app/project.json";
    let text = env.hub_text(file).unwrap();
    let planted = env.root.path().join("planted");
    let changed = text.replace(
        "\"verify\": \"true\"",
        &format!("\"verify\": \"touch {}\"", planted.display()),
    );
    assert_ne!(changed, text, "the verify is in the record: {text}");
    env.write_hub_text(file, &changed);
    let before = rev(&env, &dir, "main");
    let refused = approve(&env, &dir, id);
    assert!(
        refused.fails(1).contains("were not set on this machine"),
        "{}",
        refused.stderr
    );
    assert!(!planted.exists(), "nothing of theirs ran");
    assert_eq!(rev(&env, &dir, "main"), before);
    // Set again here, it lands.
    env.run_in(&dir, "lead", &["project", "set", "--verify", "true"])
        .ok();
    approve(&env, &dir, id).ok();
    assert!(show(&env, &dir, id)["landed"]["commit"].is_string());
}
