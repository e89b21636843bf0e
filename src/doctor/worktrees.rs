//! The worktrees check (SPEC section 18.5, "Nothing is lost"): on this machine, worktrees
//! under `$BATON_HOME/worktrees/<project>/` without a task, open tasks whose worktree is
//! gone, branches `baton/T-*` of tasks that are no longer open, and landings cut short (a
//! journal left in the repository's `baton-landing/`), each named with what to do.

use std::path::Path;

use super::{Check, Inspection, read_dir_sorted};
use crate::board::Board;
use crate::board::task::{Status, TaskId, worktree_branch};
use crate::git::plumbing;
use crate::plural::count;
use crate::process;
use crate::project::{self, Project};
use crate::text::inline;
use crate::worktree::{self, land};

const NAME: &str = "worktrees";

pub(super) fn check_worktrees(inspection: &Inspection<'_>) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut worktrees = 0;
    let mut settings = 0;
    for (_, board, prefix) in inspection.readable_boards() {
        let Ok(Some(project)) = project::load(inspection.store, &board.project) else {
            continue;
        };
        settings += usize::from(project.settings.worktrees.is_some());
        let dir = inspection.home.worktrees_dir(&project.id);
        worktrees += without_task(inspection, &board, &dir, &prefix, &mut checks);
        gone(&board, &prefix, &project, &mut checks);
        let Some(root) = project
            .workspace
            .as_deref()
            .filter(|workspace| workspace.is_dir())
            .and_then(|workspace| worktree::repository(workspace).ok())
        else {
            continue;
        };
        branches(&root, &board, &prefix, &project, &mut checks);
        landings(&root, &board, &prefix, &project, &mut checks);
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            match worktrees {
                0 if settings == 0 => "no project keeps its tasks in worktrees".into(),
                0 => "no task has a worktree on this machine; no landing was cut short".into(),
                _ => format!(
                    "{} on this machine, each of its task; no landing was cut short",
                    count(worktrees, "worktree")
                ),
            },
        ));
    }
    checks
}

/// The directories under the project's worktrees directory that are no task's worktree:
/// named; how many are a task's.
fn without_task(
    inspection: &Inspection<'_>,
    board: &Board,
    dir: &Path,
    prefix: &str,
    checks: &mut Vec<Check>,
) -> usize {
    let mut owned = 0;
    for path in read_dir_sorted(dir) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        // `.verify-T-<n>`: a landing's scratch worktree, removed by the next one.
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        let task = name
            .parse::<TaskId>()
            .ok()
            .and_then(|id| board.task(id).ok().flatten());
        let ours = task
            .and_then(|task| task.worktree.as_ref())
            .is_some_and(|tree| {
                project::canonical(Path::new(&tree.path)) == project::canonical(&path)
            });
        if ours {
            owned += 1;
            continue;
        }
        let whose = match task {
            Some(task) => format!("{} has no worktree there", task.id),
            None => "no task on the board has it".to_string(),
        };
        checks.push(Check::warn(
            NAME,
            format!(
                "{prefix}{} is a worktree without a task ({whose}); look at what it holds, \
                 then `git worktree remove` it",
                inspection.show(&path)
            ),
        ));
    }
    owned
}

/// Open tasks whose worktree, made on this machine, is gone.
fn gone(board: &Board, prefix: &str, project: &Project, checks: &mut Vec<Check>) {
    let here = process::this_host();
    for task in board.tasks().flatten() {
        let Some(tree) = task.worktree.as_ref() else {
            continue;
        };
        let on_this_machine = match (&tree.host, &here) {
            (Some(theirs), Some(ours)) => theirs == ours,
            _ => true,
        };
        if !task.status.is_open() || !on_this_machine || Path::new(&tree.path).is_dir() {
            continue;
        }
        let workspace = project
            .workspace
            .as_deref()
            .map_or_else(|| "WORKSPACE".to_string(), |dir| dir.display().to_string());
        checks.push(Check::warn(
            NAME,
            format!(
                "{prefix}{} is {} and its worktree {} is gone; bring it back with `git -C {} \
                 worktree prune` and `git -C {} worktree add {} {}`",
                task.id,
                task.status.as_str(),
                inline(&tree.path),
                inline(&workspace),
                inline(&workspace),
                inline(&tree.path),
                inline(&tree.branch),
            ),
        ));
    }
}

/// Branches `baton/T-<n>` of tasks that are not open (finished, or not on the board).
fn branches(root: &Path, board: &Board, prefix: &str, project: &Project, checks: &mut Vec<Check>) {
    let Ok(listed) = plumbing::output(
        root,
        &[
            "for-each-ref",
            "--format=%(refname:lstrip=2) %(objectname)",
            "refs/heads/baton/",
        ],
    ) else {
        return;
    };
    let base = project
        .settings
        .worktrees
        .as_ref()
        .map(|settings| settings.base.clone());
    let base_tip = base.as_ref().and_then(|base| {
        plumbing::commit_of(root, &format!("refs/heads/{base}"))
            .ok()
            .flatten()
    });
    for line in String::from_utf8_lossy(&listed).lines() {
        let Some((branch, tip)) = line.split_once(' ') else {
            continue;
        };
        let Some(id) = branch
            .strip_prefix("baton/")
            .and_then(|name| name.parse::<TaskId>().ok())
            .filter(|id| worktree_branch(*id) == branch)
        else {
            continue;
        };
        let task = board.task(id).ok().flatten();
        if task.is_some_and(|task| task.status.is_open()) {
            continue;
        }
        let state = match task {
            Some(task) => format!("{} is {}", task.id, task.status.as_str()),
            None => format!("{id} is not on the board"),
        };
        let merged = match (&base, &base_tip) {
            (Some(base), Some(base_tip)) => plumbing::is_ancestor(root, tip, base_tip)
                .ok()
                .map(|merged| (base, merged)),
            _ => None,
        };
        let kept_worktree = task
            .and_then(|task| task.worktree.as_ref())
            .filter(|tree| worktree::is_here(tree));
        let advice = match merged {
            _ if kept_worktree.is_some() => format!(
                "its worktree {} is kept too: `baton worktree prune` removes it once it holds \
                 nothing unsaved",
                inline(
                    &kept_worktree
                        .map(|tree| tree.path.clone())
                        .unwrap_or_default()
                )
            ),
            Some((base, true)) => format!(
                "every commit on it is on {}: `git branch -d {branch}` removes it",
                inline(base)
            ),
            Some((base, false)) => format!(
                "it holds commits {} does not: look at them (`git log {}..{branch}`) before \
                 `git branch -D {branch}`",
                inline(base),
                inline(base)
            ),
            None => format!("`git branch -d {branch}` removes it once nothing on it is wanted"),
        };
        checks.push(Check::warn(
            NAME,
            format!("{prefix}branch {branch} is kept and {state}; {advice}"),
        ));
    }
}

/// Landings cut short: a journal left behind, and whether its commit reached the base
/// branch.
fn landings(root: &Path, board: &Board, prefix: &str, project: &Project, checks: &mut Vec<Check>) {
    let Some(settings) = project.settings.worktrees.as_ref() else {
        return;
    };
    let Ok(journals) = land::journals(root) else {
        return;
    };
    let base = inline(&settings.base);
    for journal in journals
        .iter()
        .filter(|journal| journal.project == project.id)
    {
        let id = journal.task;
        let short: String = journal.to.chars().take(7).collect();
        let status = board.task(id).ok().flatten().map(|task| task.status);
        let landed = land::journal_landed(root, settings, journal);
        let words = match (landed, status) {
            (true, Some(Status::Completed)) => format!(
                "{id}'s landing moved {base} to {short} and {id} is completed; the journal it \
                 left behind is harmless: remove {}",
                land::landing_dir(root)
                    .map(|dir| dir.join(format!("{id}.json")).display().to_string())
                    .unwrap_or_default()
            ),
            (true, Some(Status::ReviewRequested)) => format!(
                "{id}'s landing moved {base} to {short} but {id} is still in review: approve \
                 it again to finish"
            ),
            (true, Some(Status::Working)) => format!(
                "{id}'s landing moved {base} to {short} but {id} is still working: run done \
                 again to finish"
            ),
            (true, Some(status)) => format!(
                "{id}'s landing moved {base} to {short} but {id} is {}: its work is on {base}",
                status.as_str()
            ),
            (true, None) => {
                format!("{id}'s landing moved {base} to {short}, and {id} is not on the board")
            }
            (false, Some(Status::Working)) => format!(
                "{id}'s landing was cut short and never moved {base}: nothing to do, run done \
                 again"
            ),
            (false, _) => format!(
                "{id}'s landing was cut short and never moved {base}: nothing to do, approve \
                 again"
            ),
        };
        checks.push(Check::warn(NAME, format!("{prefix}{words}")));
    }
}
