//! Where a task's work is done (SPEC section 18.4), in a project with worktrees on, over a
//! real repository (the machine's git): the wake run for a task starts in its worktree,
//! made before the claim and kept by it; `inbox`, `show` and the hook's context name it;
//! and the guards before an edit and before a commit take paths in it as the workspace's
//! (18.2). MCP's part is in `mcp/worktree.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::common::git::git;
use crate::common::{Run, TestEnv, eventually_within, recording_where_woken};

/// How long a wake may take to run (a hang check, not a measure of speed).
const DEADLINE: Duration = Duration::from_secs(60);

/// Project `app` bound to a repository of its own (one commit of `src/date/parse.rs`,
/// `src/lib.rs`, `README.md`) with worktrees on (`worktrees::app`), and `dev` woken by a
/// command that writes down where it ran: the workspace.
pub fn worktrees_app(env: &TestEnv) -> PathBuf {
    let workspace = crate::worktrees::app(env, &[]);
    env.register(&["dev"]);
    let script = recording_where_woken(env.root.path());
    env.run("", &["agent", "add", "dev", "--wake", "--", "sh", &script])
        .ok();
    fs::canonicalize(workspace).unwrap()
}

/// Sends `dev` a task, which wakes it: its number and the directory its wake ran in.
pub fn send_and_wake(env: &TestEnv, workspace: &Path, subject: &str) -> (u64, PathBuf) {
    let before = woken(env).len();
    let sent = env.run_in(
        workspace,
        "lead",
        &["--json", "send", "--to", "dev", "--subject", subject],
    );
    let id = sent.json()["task"]["id"].as_u64().expect("a task id");
    let ran = eventually_within(DEADLINE, "dev's wake run", || {
        woken(env).get(before).cloned()
    });
    let (agent, dir) = ran.split_once(' ').expect("AGENT DIR");
    assert_eq!(agent, "dev");
    (id, PathBuf::from(dir))
}

fn woken(env: &TestEnv) -> Vec<String> {
    fs::read_to_string(env.root.path().join("woken"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Where baton makes task `id`'s worktree of project `app` on this machine.
pub fn worktree_of(env: &TestEnv, id: u64) -> PathBuf {
    fs::canonicalize(env.home().join(format!("worktrees/app/T-{id}"))).unwrap()
}

fn wake_log(env: &TestEnv) -> String {
    fs::read_to_string(env.home().join("wake/dev.log")).unwrap_or_default()
}

#[test]
fn a_woken_task_is_worked_in_its_worktree_and_every_face_says_so() {
    let env = TestEnv::new();
    let workspace = worktrees_app(&env);
    let (id, ran_in) = send_and_wake(&env, &workspace, "Fix the date parser");
    let tree = worktree_of(&env, id);
    assert_eq!(ran_in, tree, "the wake run starts in T-{id}'s worktree");
    let place = format!("work in {} (branch baton/T-{id})", tree.display());
    let task = env
        .run_in(&workspace, "lead", &["--json", "show", "1"])
        .json();
    assert_eq!(task["worktree"]["path"], json!(tree.display().to_string()));
    assert_eq!(task["status"], "pending", "made before any claim");
    let activity: Vec<(String, String)> = env
        .activity("app")
        .iter()
        .map(|line| {
            (
                line["actor"].as_str().unwrap().to_string(),
                line["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        activity,
        [
            ("lead".to_string(), "send".to_string()),
            ("dev".to_string(), "worktree".to_string())
        ]
    );
    assert!(
        wake_log(&env).contains(&format!(
            "run 1 of at most 3 in project app ({})",
            tree.display()
        )),
        "{}",
        wake_log(&env)
    );

    // Everything that tells dev about its task says where to work.
    let inbox = env.run_in(&workspace, "dev", &["inbox"]);
    assert!(
        inbox.ok().contains(&format!("\n  {place}\n")),
        "{}",
        inbox.stdout
    );
    let shown = env.run_in(&workspace, "dev", &["show", "1"]);
    assert!(
        shown.ok().contains(&format!("  worktree: {place}\n")),
        "{}",
        shown.stdout
    );
    let mut hook = env.command(&workspace);
    hook.args(["--as", "dev", "hook", "prompt", "--client", "claude"]);
    let hook = env.run_piped(hook, "{}");
    let context = hook.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(context.contains(&place), "{}", hook.stdout);

    // The claim, in the worktree, keeps the worktree the wake made.
    let claimed = env.run_in(&tree, "dev", &["claim", &id.to_string()]);
    assert!(
        claimed.ok().contains(&format!("\n  {place}")),
        "{}",
        claimed.stdout
    );
    let task = env
        .run_in(&workspace, "lead", &["--json", "show", "1"])
        .json();
    assert_eq!(task["worktree"]["path"], json!(tree.display().to_string()));
    assert_eq!(env.actions("app"), ["send", "worktree", "claim"]);
    let listed = git(&env, &workspace, &["worktree", "list"], &[]);
    assert_eq!(listed.ok().lines().count(), 2, "{}", listed.stdout);
}

#[test]
fn a_wake_whose_worktree_cannot_be_made_runs_in_the_workspace_and_says_why() {
    let env = TestEnv::new();
    let workspace = worktrees_app(&env);
    // Something that is not T-1's worktree stands where it would be made.
    let taken = env.home().join("worktrees/app/T-1");
    fs::create_dir_all(&taken).unwrap();
    fs::write(taken.join("notes.txt"), "mine\n").unwrap();
    let (id, ran_in) = send_and_wake(&env, &workspace, "Fix the date parser");
    assert_eq!(ran_in, workspace);
    eventually_within(DEADLINE, "the wake log's reason", || {
        wake_log(&env)
            .contains(&format!(
                "T-{id}'s worktree could not be made: {} exists and is not T-{id}'s worktree",
                taken.display()
            ))
            .then_some(())
    });
    assert!(wake_log(&env).contains("the run starts in the workspace"));
    assert_eq!(
        fs::read_to_string(taken.join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(env.actions("app"), ["send"]);
}

#[test]
fn the_guards_take_paths_in_a_task_s_worktree_as_the_workspace_s() {
    let env = TestEnv::new();
    let workspace = worktrees_app(&env);
    let installed = env.run_in(&workspace, "", &["setup", "--git"]);
    assert!(installed.ok().contains("installed baton's commit guard"));
    let (id, tree) = send_and_wake(&env, &workspace, "Tidy the README");
    assert_eq!(tree, worktree_of(&env, id));
    env.run_in(&tree, "dev", &["claim", &id.to_string()]).ok();
    env.run_in(&workspace, "lead", &["reserve", "src/date/parse.rs"])
        .ok();

    // Before the edit: the reserved file, named in the worktree (absolute, or relative to
    // a directory in it), is refused; another is let through.
    let edit = |path: &str, cwd: &Path| {
        let mut command = env.command(&tree);
        command.args(["--as", "dev", "hook", "pre-edit", "--client", "claude"]);
        let call = json!({
            "tool_name": "Write",
            "tool_input": {"file_path": path, "content": "x"},
            "cwd": cwd,
        });
        env.run_piped(command, &call.to_string())
    };
    // Claude's hook says nothing to let an edit through.
    let reason = |run: &Run| {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let answer: serde_json::Value = serde_json::from_str(&run.stdout).ok()?;
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .map(str::to_string)
    };
    let absolute = tree.join("src/date/parse.rs").display().to_string();
    for (path, cwd) in [
        (absolute.as_str(), tree.clone()),
        ("parse.rs", tree.join("src/date")),
    ] {
        let run = edit(path, &cwd);
        let said = reason(&run).unwrap_or_else(|| panic!("not refused: {}", run.stdout));
        assert!(
            said.starts_with("src/date/parse.rs is reserved by lead"),
            "{said}"
        );
    }
    let free = edit("src/free.rs", &tree);
    assert_eq!(free.stdout, "", "let through without a word");

    // Before the commit: the same, from the worktree's index.
    let commit = |path: &str| {
        fs::write(tree.join(path), "// changed\n").unwrap();
        git(&env, &tree, &["add", path], &[]).ok();
        git(
            &env,
            &tree,
            &["commit", "-q", "-m", "work"],
            &[("BATON_AGENT", "dev")],
        )
    };
    let refused = commit("src/date/parse.rs");
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("src/date/parse.rs") && refused.stderr.contains("lead"),
        "{}",
        refused.stderr
    );
    git(&env, &tree, &["reset", "-q", "--hard"], &[]).ok();
    commit("src/free.rs").ok();
}
