//! Nothing is lost (SPEC section 18.5), in a real repository made here with the machine's
//! git: `cancel` and `fail` keep a task's worktree and branch; `worktree prune` removes the
//! clean worktree of a finished task and keeps its branch, and keeps, byte for byte, one
//! that holds unsaved work; `doctor` names worktrees without a task, open tasks whose
//! worktree is gone, branches of tasks no longer open, and landings cut short.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::common::git::{git, rev};
use crate::worktrees::{app, claim, commit, send};

/// A task from lead to codex, for review, claimed by codex: its number and its worktree.
fn claimed(env: &TestEnv, dir: &Path, subject: &str) -> (u64, PathBuf) {
    let id = send(env, dir, "codex", subject);
    (id, claim(env, dir, "codex", id))
}

/// `baton --as AGENT ARGS…` in `dir`, which must succeed: what it printed.
fn act(env: &TestEnv, dir: &Path, agent: &str, args: &[&str]) -> String {
    env.run_in(dir, agent, args).ok().to_string()
}

#[test]
fn cancel_and_fail_keep_the_worktree_and_the_branch() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (canceled, canceled_tree) = claimed(&env, &dir, "Rename the parser");
    commit(&env, &canceled_tree, "src/lib.rs", "mod parser;\n");
    let canceled_tip = rev(&env, &canceled_tree, "HEAD");
    act(&env, &dir, "lead", &["cancel", &canceled.to_string()]);

    let (failed, failed_tree) = claimed(&env, &dir, "Speed the parser up");
    commit(
        &env,
        &failed_tree,
        "src/date/parse.rs",
        "fn parse() { fast() }\n",
    );
    fs::write(failed_tree.join("notes.txt"), "half an idea\n").unwrap();
    let failed_tip = rev(&env, &failed_tree, "HEAD");
    act(
        &env,
        &dir,
        "codex",
        &["fail", &failed.to_string(), "--reason", "too slow"],
    );

    for (id, tree, tip) in [
        (canceled, &canceled_tree, &canceled_tip),
        (failed, &failed_tree, &failed_tip),
    ] {
        assert!(
            tree.is_dir(),
            "T-{id}'s worktree {} is kept",
            tree.display()
        );
        assert_eq!(
            &rev(&env, &dir, &format!("refs/heads/baton/T-{id}")),
            tip,
            "T-{id}'s branch is kept at its last commit"
        );
    }
    assert_eq!(
        fs::read_to_string(failed_tree.join("notes.txt")).unwrap(),
        "half an idea\n"
    );
}

#[test]
fn prune_removes_a_clean_finished_worktree_keeps_its_branch_and_keeps_unsaved_work() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    // T-1: landed, then a commit after the one reviewed: the landing keeps its worktree,
    // which is clean.
    let (clean, clean_tree) = claimed(&env, &dir, "Parse dates");
    commit(&env, &clean_tree, "src/date/parse.rs", "fn parse() { 1 }\n");
    act(&env, &dir, "codex", &["review", &clean.to_string()]);
    commit(&env, &clean_tree, "src/date/parse.rs", "fn parse() { 2 }\n");
    let later = rev(&env, &clean_tree, "HEAD");
    act(&env, &dir, "lead", &["approve", &clean.to_string()]);
    assert!(
        clean_tree.is_dir(),
        "the landing keeps a worktree with later commits"
    );

    // T-2: landed with an uncommitted change left in its worktree, bytes no text tool keeps.
    let (dirty, dirty_tree) = claimed(&env, &dir, "Document the app");
    commit(&env, &dirty_tree, "README.md", "# app\nDates.\n");
    act(&env, &dir, "codex", &["review", &dirty.to_string()]);
    let unsaved: &[u8] = b"# app\r\nDates.\r\n\xff\xfe not UTF-8\n";
    fs::write(dirty_tree.join("README.md"), unsaved).unwrap();
    act(&env, &dir, "lead", &["approve", &dirty.to_string()]);
    assert!(
        dirty_tree.is_dir(),
        "the landing keeps a worktree with unsaved work"
    );

    // T-3: canceled with an untracked file that is not ignored.
    let (untracked, untracked_tree) = claimed(&env, &dir, "Try a cache");
    fs::write(untracked_tree.join("cache.rs"), "struct Cache;\n").unwrap();
    act(&env, &dir, "lead", &["cancel", &untracked.to_string()]);

    // T-4: still open: prune does not look at it.
    let (_open, open_tree) = claimed(&env, &dir, "Open work");

    // Every task here finished moments ago: none a day ago.
    let recent = env
        .run_in(
            &dir,
            "",
            &["--json", "worktree", "prune", "--older-than", "1"],
        )
        .json();
    assert_eq!(recent["worktrees"], serde_json::json!([]), "{recent}");
    assert!(clean_tree.is_dir());

    let dry = env.run_in(&dir, "", &["worktree", "prune", "--dry-run"]);
    let dry = dry.ok();
    assert!(
        dry.contains(&format!("would remove T-{clean}'s worktree")),
        "{dry}"
    );
    assert!(clean_tree.is_dir(), "a dry run removes nothing");

    let pruned = env
        .run_in(&dir, "", &["--json", "worktree", "prune"])
        .json();
    let outcomes: Vec<(u64, String)> = pruned["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["task"].as_u64().unwrap(),
                entry["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (clean, "removed".to_string()),
            (dirty, "kept".to_string()),
            (untracked, "kept".to_string()),
        ],
        "{pruned}"
    );
    assert!(!clean_tree.exists(), "the clean worktree is removed");
    assert_eq!(
        rev(&env, &dir, &format!("refs/heads/baton/T-{clean}")),
        later,
        "its branch is kept, with the commit the landing did not take"
    );
    assert_eq!(fs::read(dirty_tree.join("README.md")).unwrap(), unsaved);
    assert_eq!(
        fs::read_to_string(untracked_tree.join("cache.rs")).unwrap(),
        "struct Cache;\n"
    );
    assert!(open_tree.is_dir());

    // Said in words too, naming what is unsaved.
    let again = env.run_in(&dir, "", &["worktree", "prune"]);
    let again = again.ok();
    assert!(
        again.contains(&format!("kept T-{dirty}'s worktree"))
            && again.contains("README.md")
            && again.contains("cache.rs"),
        "{again}"
    );
}

#[test]
fn doctor_names_what_worktrees_and_landings_left_behind() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let doctor = |env: &TestEnv| -> Vec<String> {
        let run = env.run_in(&dir, "", &["doctor"]);
        run.stdout
            .lines()
            .filter(|line| line.contains("worktrees ") && !line.contains("permissions"))
            .map(str::to_string)
            .collect()
    };
    let (open, open_tree) = claimed(&env, &dir, "Open work");
    let seen = doctor(&env);
    assert!(
        seen.len() == 1 && seen[0].starts_with("ok") && seen[0].contains("1 worktree"),
        "{seen:?}"
    );

    // A worktree without a task; an open task whose worktree is gone.
    let stray = env.home().join("worktrees/app/T-99");
    git(
        &env,
        &dir,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "stray",
            stray.to_str().unwrap(),
        ],
        &[],
    )
    .ok();
    fs::remove_dir_all(&open_tree).unwrap();
    // A branch of a task no longer open: T-2, canceled after a commit, its worktree pruned.
    let (canceled, canceled_tree) = claimed(&env, &dir, "Try a cache");
    commit(&env, &canceled_tree, "cache.rs", "struct Cache;\n");
    act(&env, &dir, "lead", &["cancel", &canceled.to_string()]);
    env.run_in(&dir, "", &["worktree", "prune"]).ok();

    // Two landings cut short: T-3's moved main (its commit is main's tip) while T-3 is
    // still in review; T-4's never did (its commit is on no branch of main's).
    let (landed, landed_tree) = claimed(&env, &dir, "Landed work");
    commit(&env, &landed_tree, "landed.txt", "landed\n");
    act(&env, &dir, "codex", &["review", &landed.to_string()]);
    let start = rev(&env, &dir, "main");
    commit(&env, &dir, "landed.txt", "landed\n");
    let moved = rev(&env, &dir, "main");
    let (never, never_tree) = claimed(&env, &dir, "Never landed");
    commit(&env, &never_tree, "never.txt", "never\n");
    act(&env, &dir, "codex", &["review", &never.to_string()]);
    let never_commit = rev(&env, &never_tree, "HEAD");
    let journals = dir.join(".git/baton-landing");
    fs::create_dir_all(&journals).unwrap();
    for (id, to) in [(landed, &moved), (never, &never_commit)] {
        let journal = serde_json::json!({"project": "app", "task": id, "from": start, "to": to});
        fs::write(journals.join(format!("T-{id}.json")), journal.to_string()).unwrap();
    }

    let seen = doctor(&env).join("\n");
    let expected = [
        "worktrees/app/T-99 is a worktree without a task".to_string(),
        format!("T-{open} is working and its worktree"),
        format!("branch baton/T-{canceled} is kept and T-{canceled} is canceled"),
        format!(
            "T-{landed}'s landing moved main to {} but T-{landed} is still in review: approve \
             it again to finish",
            &moved[..7]
        ),
        format!(
            "T-{never}'s landing was cut short and never moved main: nothing to do, approve again"
        ),
    ];
    for words in &expected {
        assert!(seen.contains(words.as_str()), "{words}\nnot in:\n{seen}");
    }
    assert!(
        seen.contains("holds commits main does not"),
        "T-{canceled}'s commit is on its branch alone: {seen}"
    );

    // Approving again finishes T-3's landing, and doctor no longer names it.
    let approved = act(&env, &dir, "lead", &["approve", &landed.to_string()]);
    assert!(approved.contains("completed"), "{approved}");
    assert_eq!(rev(&env, &dir, "main"), moved);
    let seen = doctor(&env).join("\n");
    assert!(!seen.contains(&format!("T-{landed}'s landing")), "{seen}");

    // A journal that outlived its task's completion (killed between the board's change and
    // forgetting it) is named as harmless, with how to remove it.
    let journal = serde_json::json!({"project": "app", "task": landed, "from": start, "to": moved});
    fs::write(
        journals.join(format!("T-{landed}.json")),
        journal.to_string(),
    )
    .unwrap();
    let seen = doctor(&env).join("\n");
    assert!(
        seen.contains(&format!(
            "T-{landed} is completed; the journal it left behind is harmless: remove"
        )) && seen.contains(&format!("baton-landing/T-{landed}.json")),
        "{seen}"
    );
}
