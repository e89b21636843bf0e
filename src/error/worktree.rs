//! Why a task's worktree could not be made, reviewed or landed (SPEC 18.4, 18.5).

use std::path::PathBuf;

use crate::board::task::TaskId;
use crate::git::plumbing::GitError;
use crate::text;

/// Why a task's worktree could not be made, reviewed or landed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorktreeError {
    #[error(
        "project {project} has no workspace: worktrees need one that is a git repository \
         (`baton project init` in a clone)"
    )]
    NoWorkspace { project: String },
    #[error("{} is not a git repository: worktrees need one", .dir.display())]
    NotRepository { dir: PathBuf },
    #[error("the base branch {} has no commit in {}", text::inline(base), .dir.display())]
    NoBase { base: String, dir: PathBuf },
    #[error("{}", text::inline(&.0.to_string()))]
    Git(GitError),
    #[error("{} exists and is not {task}'s worktree: move it away and claim again", .path.display())]
    PathTaken { task: TaskId, path: PathBuf },
    #[error(
        "{task}'s worktree has uncommitted changes: {}; commit them (or remove them) first",
        named_paths(paths)
    )]
    Unsaved { task: TaskId, paths: Vec<String> },
    #[error("{task}'s worktree {} is gone", .path.display())]
    Gone { task: TaskId, path: PathBuf },
    #[error(
        "{task}'s worktree is on {}, not on this machine: run this there",
        text::inline(host)
    )]
    Elsewhere { task: TaskId, host: String },
    #[error(
        "project {project}'s worktree settings were not set on this machine: run `baton \
         project set --worktrees on` here"
    )]
    NotSignedHere { project: String },
    #[error("cannot {what}: {cause}")]
    Io { what: String, cause: String },
}

impl From<GitError> for WorktreeError {
    fn from(error: GitError) -> Self {
        WorktreeError::Git(error)
    }
}

/// At most this many paths named in one line; the rest are counted.
const MOST_NAMED: usize = 20;

/// `a, b and 3 more`, each shown as text (SPEC section 10).
pub fn named_paths(paths: &[String]) -> String {
    let mut words: Vec<String> = paths
        .iter()
        .take(MOST_NAMED)
        .map(|path| text::inline(path).to_string())
        .collect();
    if paths.len() > MOST_NAMED {
        words.push(format!("{} more", paths.len() - MOST_NAMED));
    }
    words.join(", ")
}
