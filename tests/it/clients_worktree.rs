//! Real clients, scripted models, in a project with worktrees on (SPEC section 18.4): each
//! client, woken by the wake command `baton setup` registered for a task sent to it, runs in
//! the task's worktree, which the wake made before any claim; its model writes a file where
//! the prompt says to work (`tests/clients/model_server.py --edit-root work-in`), and the
//! file lands in the worktree, not in the workspace. Codex's model then commits it there
//! from its sandboxed shell, which only works when the run may write the repository's git
//! directories.
//!
//! Like `clients_woken.rs`, they need `BATON_TEST_CLIENTS` (see `common/clients.rs`), and
//! python3.

use std::fs;
use std::path::{Path, PathBuf};

use crate::clients_woken::WAKE_TIMEOUT;
use crate::common::clients::{Dialect, PROJECT, WiredClient, clients_bin, configure_codex_model};
use crate::common::eventually_or;
use crate::common::git::{git, repository, rev};
use crate::common::machine::Machine;

const NOTE: &str = "NOTE.md";
/// What Codex's model runs once it has written the note: a commit on the worktree's branch.
const COMMIT: &str = "git add -A && git -c user.name=Dev -c user.email=dev@example.com \
                      commit -q -m 'Write the note' && echo COMMITTED";

fn prove(dialect: Dialect, commits: bool) {
    let Some(bin) = clients_bin() else {
        return;
    };
    // Away from /tmp, which Codex's sandbox lets every shell command write.
    let machine = Machine::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut model = vec!["--edit", NOTE, "--edit-root", "work-in"];
    if commits {
        model.extend(["--then-run", COMMIT]);
    }
    let wired = WiredClient::new(machine, bin, &dialect, &model);
    let env = &wired.machine.env;
    let workspace = fs::canonicalize(env.work()).unwrap();
    repository(env, &workspace);
    let start = rev(env, &workspace, "HEAD");
    wired
        .lead(&["project", "set", "--worktrees", "on"], &[])
        .ok();

    let agent = dialect.client;
    let sent = wired.lead(
        &["send", "--to", agent, "--subject", "Write the note"],
        &(dialect.env)(&wired.server),
    );
    assert!(sent.ok().contains("T-1"), "{}", sent.stdout);
    assert!(
        sent.stderr.contains(&format!("woke {agent}")),
        "{}",
        sent.stderr
    );
    let log_path = env.home().join(format!("wake/{agent}.log"));
    let log = || fs::read_to_string(&log_path).unwrap_or_default();
    let seen = || {
        format!(
            "wake log:\n{}\nmodel answers:\n{}",
            log(),
            wired.server.answers(0)
        )
    };
    eventually_or(
        WAKE_TIMEOUT,
        &format!("the end of {agent}'s wake"),
        || {
            log()
                .contains(&format!("supervisor of {agent} ends"))
                .then_some(())
        },
        seen,
    );
    let tree: PathBuf = fs::canonicalize(env.home().join(format!("worktrees/{PROJECT}/T-1")))
        .unwrap_or_else(|error| panic!("no worktree ({error}): {}", seen()));
    assert!(
        log().contains(&format!(
            "run 1 of at most 3 in project {PROJECT} ({})",
            tree.display()
        )),
        "the run did not start in the worktree: {}",
        seen()
    );
    assert_eq!(
        fs::read_to_string(tree.join(NOTE)).ok().as_deref(),
        Some("EDITED\n"),
        "the note in the worktree: {}",
        seen()
    );
    assert!(
        !workspace.join(NOTE).exists(),
        "the note landed in the workspace: {}",
        seen()
    );
    if commits {
        let said = wired.server.sent_text(0);
        assert!(said.contains("COMMITTED"), "the commit failed:\n{said}");
        let subject = git(env, &tree, &["log", "-1", "--format=%s"], &[]);
        assert_eq!(subject.ok().trim(), "Write the note");
        let branch = git(env, &tree, &["branch", "--show-current"], &[]);
        assert_eq!(branch.ok().trim(), "baton/T-1");
        let status = git(env, &tree, &["status", "--porcelain"], &[]);
        assert_eq!(status.ok(), "", "everything committed");
        assert_eq!(
            rev(env, &workspace, "main"),
            start,
            "main is the landing's to move"
        );
    }
}

#[test]
fn claude_code_woken_for_a_task_works_in_its_worktree() {
    prove(Dialect::claude(), false);
}

#[test]
fn codex_woken_for_a_task_works_and_commits_in_its_worktree() {
    let dialect = Dialect {
        configure: |machine, server| configure_codex_model(machine, server, "gpt-5.5"),
        ..Dialect::codex("apply_patch")
    };
    prove(dialect, true);
}

#[test]
fn gemini_cli_woken_for_a_task_works_in_its_worktree() {
    prove(Dialect::gemini(), false);
}

#[test]
fn opencode_woken_for_a_task_works_in_its_worktree() {
    prove(Dialect::opencode(), false);
}
