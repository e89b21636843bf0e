//! `worktree prune` (SPEC section 18.5, "Nothing is lost"): the worktrees of finished tasks
//! that hold nothing unsaved are removed, their branches kept; a worktree with uncommitted
//! changes, or untracked files git does not ignore, is kept and named.

use std::path::Path;

use serde::Serialize;

use super::is_here;
use crate::board::task::{TaskId, Worktree};
use crate::git::{self, plumbing};

/// What became, or would become, of one finished task's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pruned {
    pub task: TaskId,
    pub path: String,
    /// Kept whatever becomes of the worktree.
    pub branch: String,
    #[serde(flatten)]
    pub outcome: PruneOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PruneOutcome {
    Removed,
    /// `--dry-run`: it holds nothing unsaved and would be removed.
    WouldRemove,
    /// It holds work that is not committed: these paths.
    Kept {
        unsaved: Vec<String>,
    },
    /// git could not read it, or would not remove it: kept.
    Failed {
        error: String,
    },
}

/// Removes task `task`'s worktree `tree` from the repository `repo` is in, when it is on
/// this machine and holds nothing unsaved; `None` when it is not here (gone already, or on
/// another machine). Its branch is never touched.
pub fn prune_one(repo: &Path, task: TaskId, tree: &Worktree, dry_run: bool) -> Option<Pruned> {
    if !is_here(tree) {
        return None;
    }
    let path = Path::new(&tree.path);
    let outcome = match git::changed(path) {
        None => PruneOutcome::Failed {
            error: "git cannot read it as a worktree".to_string(),
        },
        Some(unsaved) if !unsaved.is_empty() => PruneOutcome::Kept { unsaved },
        Some(_) if dry_run => PruneOutcome::WouldRemove,
        Some(_) => match super::repository(repo)
            .map_err(|error| error.to_string())
            .and_then(|root| {
                plumbing::remove_worktree(&root, path).map_err(|error| error.to_string())
            }) {
            Ok(()) => PruneOutcome::Removed,
            Err(error) => PruneOutcome::Failed { error },
        },
    };
    Some(Pruned {
        task,
        path: tree.path.clone(),
        branch: tree.branch.clone(),
        outcome,
    })
}
