//! `worktree prune` (SPEC section 18.5): the worktrees of finished tasks that hold nothing
//! unsaved removed, their branches kept.

use clap::{Args, Subcommand};

use super::{Context, output};
use baton::error::Error;
use baton::session::Pruning;
use baton::text::inline;
use baton::worktree::prune::PruneOutcome;

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// Remove the worktrees (on this machine) of finished tasks that hold nothing unsaved,
    /// keeping their branches; a worktree with uncommitted changes or untracked files is
    /// kept and named
    #[command(
        after_help = "Examples:\n  baton worktree prune --dry-run\n  baton worktree \
                            prune --older-than 7"
    )]
    Prune(PruneArgs),
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Only tasks finished at least this many days ago (default: every finished task)
    #[arg(long, value_name = "DAYS")]
    pub older_than: Option<u32>,
    /// Show what would be removed, remove nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(context: &Context, command: WorktreeCommand) -> Result<i32, Error> {
    let WorktreeCommand::Prune(args) = command;
    // Only on the hub's own machine (a remote hub refuses it before this).
    let pruning = context
        .session()?
        .prune_worktrees(args.older_than, args.dry_run)?;
    output::emit(context.global.json, &pruning, pruned);
    Ok(0)
}

/// One line a worktree: removed (or would be), or kept and why.
fn pruned(pruning: &Pruning) -> String {
    if pruning.worktrees.is_empty() {
        return format!(
            "project {}: no finished task has a worktree on this machine",
            pruning.project
        );
    }
    let mut lines = Vec::new();
    for entry in &pruning.worktrees {
        let branch = inline(&entry.branch);
        let path = inline(&entry.path);
        lines.push(match &entry.outcome {
            PruneOutcome::Removed => {
                format!(
                    "removed {}'s worktree {path}; branch {branch} kept",
                    entry.task
                )
            }
            PruneOutcome::WouldRemove => format!(
                "would remove {}'s worktree {path}; branch {branch} kept",
                entry.task
            ),
            PruneOutcome::Kept { unsaved } => format!(
                "kept {}'s worktree {path}: it holds unsaved work ({})",
                entry.task,
                baton::worktree::named(unsaved)
            ),
            PruneOutcome::Failed { error } => {
                format!("kept {}'s worktree {path}: {}", entry.task, inline(error))
            }
        });
    }
    lines.join("\n")
}
