//! `diff ID [--stat]` (SPEC section 18.4) through real repositories made here with the
//! machine's git: two tasks in worktrees of their own, each agent committing in its own;
//! uncommitted and untracked changes marked; commits after the review named; a task with
//! no worktree refused; a hostile file shown as text; a hub at `BATON_URL` answering it.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::common::git::{git, repository};
use crate::common::remote::Hub;
use crate::worktrees::{app, approve, claim, review, send};

/// Commits everything in `dir` with `message`.
fn commit_all(env: &TestEnv, dir: &Path, message: &str) {
    git(env, dir, &["add", "-A"], &[]).ok();
    git(env, dir, &["commit", "-q", "-m", message], &[]).ok();
}

/// A task sent by lead to `to` and claimed by it: its number and its worktree.
fn claimed(env: &TestEnv, dir: &Path, to: &str, subject: &str) -> (u64, PathBuf) {
    let id = send(env, dir, to, subject);
    (id, claim(env, dir, to, id))
}

fn diff_json(env: &TestEnv, dir: &Path, id: u64, extra: &[&str]) -> Value {
    let mut args = vec!["diff".to_string(), id.to_string(), "--json".to_string()];
    args.extend(extra.iter().map(|arg| arg.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run_in(dir, "lead", &args).json()
}

fn paths(diff: &Value) -> Vec<String> {
    diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap().to_string())
        .collect()
}

fn file<'a>(diff: &'a Value, path: &str) -> &'a Value {
    diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|file| file["path"] == path)
        .unwrap_or_else(|| panic!("{path} in {diff:#}"))
}

#[test]
fn each_tasks_diff_holds_its_own_changes_and_marks_the_uncommitted_ones() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (one, codex_tree) = claimed(&env, &dir, "codex", "Dates");
    let (two, gemini_tree) = claimed(&env, &dir, "gemini", "Docs");

    fs::write(codex_tree.join("src/clock.rs"), "pub fn tick() {}\n").unwrap();
    fs::write(codex_tree.join("src/lib.rs"), "mod date;\nmod clock;\n").unwrap();
    commit_all(&env, &codex_tree, "dates");
    fs::write(gemini_tree.join("README.md"), "# app\n\nRead me.\n").unwrap();
    commit_all(&env, &gemini_tree, "docs");
    // Not committed: a change to a tracked file and a new file.
    fs::write(
        gemini_tree.join("src/lib.rs"),
        "mod date;\npub fn two() {}\n",
    )
    .unwrap();
    fs::write(gemini_tree.join("NOTES.md"), "draft\n").unwrap();

    let codex_diff = diff_json(&env, &dir, one, &[]);
    assert_eq!(
        paths(&codex_diff),
        ["src/clock.rs", "src/lib.rs"],
        "{codex_diff:#}"
    );
    assert_eq!(codex_diff["uncommitted"]["state"], "included");
    let lib = file(&codex_diff, "src/lib.rs");
    assert_eq!(
        (lib["added"].as_u64(), lib["removed"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(
        lib["hunks"].as_str().unwrap().contains("+mod clock;\n"),
        "{lib:#}"
    );
    assert_eq!(lib["uncommitted"], false);

    let gemini_diff = diff_json(&env, &dir, two, &[]);
    assert_eq!(
        paths(&gemini_diff),
        ["README.md", "src/lib.rs", "NOTES.md"],
        "committed first, then uncommitted: {gemini_diff:#}"
    );
    assert_eq!(file(&gemini_diff, "README.md")["uncommitted"], false);
    assert_eq!(file(&gemini_diff, "src/lib.rs")["uncommitted"], true);
    assert_eq!(file(&gemini_diff, "NOTES.md")["untracked"], true);
    let commits: Vec<&str> = gemini_diff["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|commit| commit["subject"].as_str().unwrap())
        .collect();
    assert_eq!(commits, ["docs"]);

    let words = env.run_in(&dir, "lead", &["diff", &two.to_string()]);
    let text = words.ok();
    assert!(text.contains(" README.md | +2 -0\n"), "{text}");
    assert!(
        text.contains(" src/lib.rs [uncommitted] | +1 -0\n"),
        "{text}"
    );
    assert!(text.contains(" NOTES.md [untracked] | +1 -0\n"), "{text}");
    assert!(
        text.contains("+pub fn two() {}\n"),
        "the hunks follow: {text}"
    );
    assert!(
        !text.contains("clock"),
        "codex's work is not in gemini's diff: {text}"
    );

    // --stat: the files and their counts, no hunks.
    let stat = env.run_in(&dir, "lead", &["diff", &two.to_string(), "--stat"]);
    let stat = stat.ok();
    assert!(stat.contains(" README.md | +2 -0\n"), "{stat}");
    assert!(
        stat.contains("3 files changed, 4 added, 0 removed"),
        "{stat}"
    );
    assert!(!stat.contains("@@"), "no hunks with --stat: {stat}");
    let stat_json = diff_json(&env, &dir, two, &["--stat"]);
    assert!(
        stat_json["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f.get("hunks").is_none())
    );
}

#[test]
fn commits_after_the_review_are_named_as_not_reviewed() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (id, tree) = claimed(&env, &dir, "codex", "Dates");
    fs::write(tree.join("src/date.rs"), "pub fn parse() {}\n").unwrap();
    commit_all(&env, &tree, "dates");
    env.run_in(&tree, "codex", &["review", &id.to_string()])
        .ok();
    fs::write(tree.join("src/date.rs"), "pub fn parse() { todo!() }\n").unwrap();
    commit_all(&env, &tree, "after the review");

    let diff = diff_json(&env, &dir, id, &[]);
    let marks: Vec<(String, bool)> = diff["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|commit| {
            (
                commit["subject"].as_str().unwrap().to_string(),
                commit["not_reviewed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            ("dates".to_string(), false),
            ("after the review".to_string(), true)
        ]
    );
    let late = diff["commits"][1]["id"].as_str().unwrap()[..12].to_string();
    let text = env.run_in(&dir, "lead", &["diff", &id.to_string()]);
    let text = text.ok();
    assert!(
        text.contains(&format!("{late} after the review  [not reviewed]")),
        "{text}"
    );
    assert!(
        text.contains(&format!("not reviewed: {late} (made after the review of")),
        "{text}"
    );
}

#[test]
fn a_task_without_a_worktree_is_refused_in_one_line() {
    let env = TestEnv::new();
    env.register(&["codex"]);
    let dir = env.project_beside("lead", "app");
    repository(&env, &dir);
    let id = send(&env, &dir, "codex", "No worktrees here");
    env.run_in(&dir, "codex", &["claim", &id.to_string()]).ok();
    let refused = env.run_in(&dir, "lead", &["diff", &id.to_string()]);
    let said = refused.fails(1);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(said.contains(&format!("T-{id} has no worktree")), "{said}");
}

#[test]
fn a_hostile_file_is_shown_as_text() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (id, tree) = claimed(&env, &dir, "codex", "Hostile");
    let hostile = "\u{1b}[2J\u{1b}]0;owned\u{7}red \u{202e}evil</script><b>\r\n";
    fs::write(tree.join("evil\u{1b}[31m.txt"), hostile).unwrap();
    fs::write(
        tree.join("logo.png"),
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    )
    .unwrap();
    commit_all(&env, &tree, "evil \u{1b}[31msubject\u{202e}");

    let shown = env.run_in(&dir, "lead", &["diff", &id.to_string()]);
    let text = shown.ok();
    for raw in ['\u{1b}', '\u{7}', '\u{202e}', '\r'] {
        assert!(
            !text.contains(raw),
            "{raw:?} reached the terminal raw: {text:?}"
        );
    }
    assert!(text.contains("\\u{1b}[2J"), "{text}");
    assert!(text.contains("\\u{202e}evil</script><b>"), "{text}");
    assert!(text.contains("evil \\u{1b}[31msubject\\u{202e}"), "{text}");
    assert!(text.contains(" logo.png | binary\n"), "{text}");
    assert!(
        !text.contains("IHDR"),
        "a binary file's content is not dumped: {text}"
    );
}

#[test]
fn from_elsewhere_the_branch_is_read_and_the_uncommitted_part_is_not_seen() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (id, tree) = claimed(&env, &dir, "codex", "Dates");
    fs::write(tree.join("src/date.rs"), "pub fn parse() {}\n").unwrap();
    commit_all(&env, &tree, "dates");
    fs::write(tree.join("UNSAVED.md"), "not committed\n").unwrap();
    // The worktree is not here any more (as one on another machine is not).
    let away = env.root.path().join("away");
    fs::rename(&tree, &away).unwrap();

    let diff = diff_json(&env, &dir, id, &[]);
    assert_eq!(paths(&diff), ["src/date.rs"], "{diff:#}");
    assert_eq!(diff["uncommitted"]["state"], "not_visible");
    let text = env.run_in(&dir, "lead", &["diff", &id.to_string()]);
    assert!(
        text.ok()
            .contains("its uncommitted changes are not visible from here"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_hub_at_baton_url_answers_diff() {
    let hub = Hub::start();
    let app = app(&hub.env, &[]);
    let (id, tree) = claimed(&hub.env, &app, "codex", "Dates");
    fs::write(tree.join("src/date.rs"), "pub fn parse() {}\n").unwrap();
    commit_all(&hub.env, &tree, "dates");

    let agent = hub.agent();
    let clone = agent.env.work().join("app");
    fs::create_dir_all(&clone).unwrap();
    agent
        .run(&["project", "map", "app", clone.to_str().unwrap()])
        .ok();
    let shown = agent.run_in(&clone, &["diff", &id.to_string(), "--stat"]);
    let text = shown.ok();
    assert!(text.contains(" src/date.rs | +1 -0\n"), "{text}");
    let refused = agent.run_in(&clone, &["diff", "99"]);
    assert!(refused.fails(1).contains("T-99"), "{}", refused.stderr);
}

#[test]
fn a_large_diff_is_cut_and_says_what_it_left_out() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (id, tree) = claimed(&env, &dir, "codex", "Many files");
    // 600 KiB of hunks in the first file, past the 512 KiB bound, then 310 small files, past
    // the bound of 300 files.
    let big: String = (0..20_000).map(|n| format!("line {n:024}\n")).collect();
    fs::write(tree.join("a-big.txt"), big).unwrap();
    fs::create_dir_all(tree.join("many")).unwrap();
    for n in 0..310 {
        fs::write(tree.join(format!("many/{n:03}.txt")), "one\n").unwrap();
    }
    commit_all(&env, &tree, "many");

    let diff = diff_json(&env, &dir, id, &[]);
    assert_eq!(diff["files"].as_array().unwrap().len(), 300);
    assert_eq!(diff["left_out"]["files"], 11, "{}", diff["left_out"]);
    let first = file(&diff, "a-big.txt");
    assert_eq!(
        (&first["cut"], first["added"].as_u64()),
        (&Value::Bool(true), Some(20_000))
    );
    assert!(first.get("hunks").is_none());
    let text = env.run_in(&dir, "lead", &["diff", &id.to_string()]);
    let text = text.ok();
    assert!(
        text.contains("the diff is large: 11 more files not listed"),
        "{}",
        &text[..2000]
    );
    assert!(text.contains("hunks left out: the diff is large"));
}

#[test]
fn a_landed_tasks_diff_names_the_commit_that_landed_it() {
    let env = TestEnv::new();
    let dir = app(&env, &[]);
    let (id, tree) = claimed(&env, &dir, "codex", "Dates");
    fs::write(tree.join("src/clock.rs"), "pub fn tick() {}\n").unwrap();
    commit_all(&env, &tree, "clock");
    review(&env, &tree, "codex", id).ok();
    approve(&env, &dir, id).ok();
    let refused = env.run_in(&dir, "lead", &["diff", &id.to_string()]);
    let said = refused.fails(1);
    assert!(
        said.contains(&format!("T-{id} was landed on main as commit ")),
        "{said}"
    );
    assert!(said.contains("`git show "), "{said}");
}
