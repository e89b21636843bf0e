//! What a transition needs from the machine where a task's work is (SPEC sections 18.4
//! and 18.5), asked before the board is locked: a claim's worktree made, a review's head
//! commit read (refused while the worktree holds uncommitted changes), an approval's or a
//! `done`'s work landed on the base branch. After the change: a refused claim's fresh
//! worktree removed, a landed task's worktree and branch removed where nothing would be
//! lost.

use std::path::{Path, PathBuf};

use super::Session;
use crate::board::Board;
use crate::board::action::ActionKind;
use crate::board::task::{Landed, Task, TaskId};
use crate::board::transition::{Action, Place};
use crate::error::{Error, Result};
use crate::git::{self, plumbing};
use crate::project::worktrees::{WorktreeChange, Worktrees};
use crate::secret::machine_key::MachineKey;
use crate::text::{self, LineField};
use crate::worktree::diff::TaskDiff;
use crate::worktree::land::{self, Landing, Outcome};
use crate::worktree::prune::{self, Pruned};
use crate::worktree::{self, Made, WorktreeError};

/// What `worktree prune` did, or would do.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pruning {
    pub project: String,
    pub dry_run: bool,
    /// Each finished task's worktree found on this machine, in task order.
    pub worktrees: Vec<Pruned>,
}

/// An action made ready by the machine of the work, and what to do once it is taken.
pub(super) struct Placed {
    pub action: Action,
    pub made: Option<Made>,
    /// The landing it carries: its journal is forgotten and the worktree tidied once the
    /// task is completed.
    pub landed: bool,
    pub warnings: Vec<String>,
}

impl Placed {
    fn as_is(action: Action) -> Placed {
        Placed {
            action,
            made: None,
            landed: false,
            warnings: Vec::new(),
        }
    }
}

impl Session {
    /// `project set --worktrees on|off --base --copy --setup --land --verify
    /// --verify-timeout --remote`: by whoever may change the project's settings, on the
    /// machine of its workspace, which must be a git repository; signed by this machine.
    pub fn set_worktrees(&self, change: &WorktreeChange) -> Result<crate::project::Project> {
        let actor = self.agent()?.to_string();
        let workspace = self.workspace()?;
        let root = worktree::repository(&workspace)?;
        let current = plumbing::checked_out_branch(&root)
            .map_err(WorktreeError::from)?
            .unwrap_or_default();
        check_change(&root, change)?;
        let key = MachineKey::load_or_make(&self.hub.home.machine_key_file())?;
        self.update_project(|project| {
            super::agents::check_may_change_settings(project, &actor, "the worktree settings")?;
            let next = change.apply(project.settings.worktrees.as_ref(), &current);
            if next.base.is_empty() {
                return Err(Error::invalid_with_hint(
                    "the workspace has no branch checked out to take as the base",
                    "name it: `baton project set --worktrees on --base main`",
                ));
            }
            if !plumbing::is_branch_name(&root, &next.base) {
                return Err(Error::invalid(format!(
                    "{} is not a branch name git takes",
                    text::inline(&next.base)
                )));
            }
            project.settings.worktrees = Some(next);
            project.sign_worktrees(&key)?;
            Ok(project.clone())
        })
    }

    /// `worktree prune [--older-than DAYS] [--dry-run]`: the worktrees on this machine of
    /// the project's finished tasks (finished at least `older_than_days` ago) removed where
    /// they hold nothing unsaved; their branches kept. Changes no task.
    pub fn prune_worktrees(&self, older_than_days: Option<u32>, dry_run: bool) -> Result<Pruning> {
        let workspace = self.workspace()?;
        let root = worktree::repository(&workspace)?;
        let older_than = chrono::Duration::days(i64::from(older_than_days.unwrap_or(0)));
        let board = self.board()?;
        let mut worktrees = Vec::new();
        for task in board.tasks() {
            let task = task.map_err(self.refused())?;
            let Some(tree) = task.worktree.as_ref() else {
                continue;
            };
            if !task.status.is_finished() || task.updated_at.until(self.now) < older_than {
                continue;
            }
            worktrees.extend(prune::prune_one(&root, task.id, tree, dry_run));
        }
        if !dry_run {
            // git forgets the worktrees whose directories are gone.
            let _ = plumbing::prune_worktrees(&root);
        }
        Ok(Pruning {
            project: self.project.id.clone(),
            dry_run,
            worktrees,
        })
    }

    /// The project's worktree settings, when this machine set them (so may act on them).
    pub(super) fn worktree_settings(&self) -> Option<Worktrees> {
        settings_signed_here(&self.hub, &self.project)
    }

    /// The workspace's directory, where worktrees come from and work lands.
    fn workspace(&self) -> Result<PathBuf> {
        self.project.workspace.clone().ok_or_else(|| {
            WorktreeError::NoWorkspace {
                project: self.project.id.clone(),
            }
            .into()
        })
    }

    /// `diff ID [--stat]`: task `id`'s changes against its base (SPEC section 18.4), read in
    /// its worktree when that is on this machine, else from the workspace's repository.
    /// Refused for a task without a worktree.
    pub fn diff(&self, id: TaskId, stat_only: bool) -> Result<TaskDiff> {
        let task = self.show(id)?.task;
        let Some(tree) = task.worktree.as_ref() else {
            return Err(Error::invalid(format!(
                "{id} has no worktree, so no diff: a task gets one when it is claimed in a \
                 project with `project set --worktrees on`"
            )));
        };
        let settings = self.worktree_settings();
        let remote = settings
            .as_ref()
            .and_then(|settings| settings.remote.clone());
        let workspace = self.project.workspace.clone();
        let read = worktree::diff::diff(&worktree::diff::Asked {
            task: id,
            worktree: tree,
            workspace: workspace.as_deref(),
            remote: remote.as_deref(),
            stat_only,
        });
        match (read, &task.landed) {
            (Err(WorktreeError::NoBranch { .. }), Some(landed)) => Err(Error::invalid(format!(
                "{id} was landed on {} as commit {}, and its branch is gone: `git show {}` \
                 shows what it changed",
                text::inline(&tree.base),
                short(&landed.commit),
                short(&landed.commit)
            ))),
            (read, _) => Ok(read?),
        }
    }

    /// `action` on task `id` as the machine of the work completes it; an approval may
    /// become a request for changes (its work conflicts, or fails the project's verify).
    pub(super) fn placing(&self, id: TaskId, action: Action) -> Result<Placed> {
        let kind = action.kind();
        if let Some(place) = action.place() {
            self.check_sent(id, place)?;
            return Ok(Placed::as_is(action));
        }
        if !matches!(
            kind,
            ActionKind::Claim | ActionKind::Review | ActionKind::Approve | ActionKind::Done
        )
            // A project that never had worktrees has no task with one: no read for it.
            || self.project.settings.worktrees.is_none()
        {
            return Ok(Placed::as_is(action));
        }
        let board = self.board()?;
        let Some(task) = board.task_owned(id).map_err(self.refused())? else {
            return Ok(Placed::as_is(action));
        };
        match kind {
            ActionKind::Claim => self.claiming(&board, &task, action),
            ActionKind::Review => self.reviewing(&board, &task, action),
            _ => self.landing(&board, &task, action),
        }
    }

    /// Refuses what another machine says of task `id`'s action (a remote agent's claim
    /// brings the worktree it made, its review the commit it asks review of: SPEC section
    /// 18.4) unless it could be so, before anything changes: one line saying why.
    fn check_sent(&self, id: TaskId, place: &Place) -> Result<()> {
        let refused = |why: String| Error::invalid(format!("{id}: {why}"));
        match place {
            Place::Worktree(sent) => {
                let Some(settings) = self.project.settings.worktrees.as_ref().filter(|s| s.on)
                else {
                    return Err(refused(format!(
                        "project {} gives its tasks no worktrees",
                        self.project.id
                    )));
                };
                worktree::check_sent(id, sent, &settings.base).map_err(refused)
            }
            Place::Reviewed(commit) if !worktree::is_commit_id(commit) => Err(refused(format!(
                "the reviewed commit {} is no commit's id",
                text::excerpt(commit, 80)
            ))),
            Place::Reviewed(_) | Place::Landed(_) => Ok(()),
        }
    }

    /// Refuses `action` now, before any slow work, if `board` (as just read) would refuse it.
    fn check_allowed(&self, board: &Board, task: &Task, action: &Action) -> Result<()> {
        let actor = self.agent()?;
        let coordinator = self.project.coordinator.as_deref();
        if let Some(Err(refused)) = board
            .check(
                task.id,
                action,
                actor,
                coordinator,
                self.project.lease(),
                self.now,
            )
            .map_err(self.refused())?
        {
            return Err(refused.into());
        }
        Ok(())
    }

    fn claiming(&self, board: &Board, task: &Task, action: Action) -> Result<Placed> {
        let Some(settings) = self.worktree_settings().filter(|settings| settings.on) else {
            return Ok(Placed::as_is(action));
        };
        if task.worktree.is_some() {
            return Ok(Placed::as_is(action));
        }
        self.check_allowed(board, task, &action)?;
        let made = worktree::make(
            &self.workspace()?,
            &self.hub.home.worktrees_dir(&self.project.id),
            &self.hub.home.worktree_logs(&self.project.id),
            &settings,
            task.id,
        )?;
        let warnings = made.warnings.clone();
        Ok(Placed {
            action: action.with_place(Place::Worktree(made.worktree.clone())),
            made: Some(made),
            landed: false,
            warnings,
        })
    }

    fn reviewing(&self, board: &Board, task: &Task, action: Action) -> Result<Placed> {
        let Some(tree) = task
            .worktree
            .as_ref()
            .filter(|tree| worktree::is_here(tree))
        else {
            return Ok(Placed::as_is(action));
        };
        self.check_allowed(board, task, &action)?;
        let head = worktree::reviewed_head(task.id, tree)?;
        if let Some(remote) = self
            .project
            .settings
            .worktrees
            .as_ref()
            .and_then(|s| s.remote.as_deref())
        {
            worktree::push_branch(tree, remote)?;
        }
        Ok(Placed::as_is(action.with_place(Place::Reviewed(head))))
    }

    fn landing(&self, board: &Board, task: &Task, action: Action) -> Result<Placed> {
        let Some(tree) = task.worktree.as_ref() else {
            return Ok(Placed::as_is(action));
        };
        let sample = action.clone().with_place(Place::Landed(Landed {
            commit: String::new(),
            at: self.now,
        }));
        self.check_allowed(board, task, &sample)?;
        let settings = self
            .worktree_settings()
            .ok_or_else(|| WorktreeError::NotSignedHere {
                project: self.project.id.clone(),
            })?;
        let workspace = self.workspace()?;
        let outcome = land::land(&Landing {
            workspace: &workspace,
            settings: &settings,
            project: &self.project.id,
            task: task.id,
            subject: &task.subject,
            worktree: tree,
            scratch: &self.hub.home.worktrees_dir(&self.project.id),
            logs: &self.hub.home.worktree_logs(&self.project.id),
        })?;
        let done = action.kind() == ActionKind::Done;
        let back = |body: String| -> Result<Placed> {
            if done {
                return Err(Error::invalid_with_hint(
                    format!("{} was not landed: {body}", task.id),
                    "fix it on the task's branch, then run done again",
                ));
            }
            Ok(Placed::as_is(Action::new(ActionKind::RequestChanges, body)))
        };
        match outcome {
            Outcome::Landed {
                commit, warnings, ..
            } => Ok(Placed {
                action: action.with_place(Place::Landed(Landed {
                    commit,
                    at: self.now,
                })),
                made: None,
                landed: true,
                warnings,
            }),
            Outcome::Conflict { paths } => back(format!(
                "landing on {} conflicts in {}: bring {} up to date with {} and resolve them, \
                 then ask for review again",
                text::inline(&settings.base),
                worktree::named(&paths),
                text::inline(&tree.branch),
                text::inline(&settings.base),
            )),
            Outcome::VerifyFailed { tail, timed_out } => {
                let how = match timed_out {
                    true => "ran past its time and was stopped",
                    false => "failed",
                };
                let head = format!("the project's verify {how} on the landed result:\n");
                let room = text::LONG_TEXT_LIMIT.saturating_sub(head.len() + 8);
                let tail = match tail.len() > room {
                    true => {
                        let mut cut = tail.len() - room;
                        while !tail.is_char_boundary(cut) {
                            cut += 1;
                        }
                        tail[cut..].to_string()
                    }
                    false => tail,
                };
                back(format!("{head}{tail}"))
            }
            Outcome::Unsaved { checkout, paths } => Err(Error::invalid_with_hint(
                format!(
                    "{} was not landed: {} has uncommitted changes in {}, which the landing \
                     changes; {} did not move and the task stays in review",
                    task.id,
                    checkout.display(),
                    worktree::named(&paths),
                    text::inline(&settings.base),
                ),
                "commit or stash those changes there, then approve again",
            )),
        }
    }

    /// After `placed`'s action was taken (`Ok`) or refused: a refused claim's fresh
    /// worktree removed; a landed task's journal forgotten and its worktree and branch
    /// removed where that loses nothing. Words for what was kept.
    pub(super) fn after_placing(&self, placed: &Placed, taken: Option<&Task>) -> Vec<String> {
        let mut warnings = placed.warnings.clone();
        let Ok(workspace) = self.workspace() else {
            return warnings;
        };
        if let Some(made) = &placed.made {
            let kept = taken
                .and_then(|task| task.worktree.as_ref())
                .is_some_and(|tree| tree.path == made.worktree.path);
            if !kept {
                worktree::discard_fresh(&workspace, made);
            }
        }
        if placed.landed
            && let Some(task) = taken.filter(|task| task.landed.is_some())
        {
            land::forget(&workspace, task.id);
            if let Some(words) = tidy(&workspace, task) {
                warnings.push(words);
            }
        }
        warnings
    }
}

/// `project`'s worktree settings, when this machine (`hub`'s home) set them.
pub(super) fn settings_signed_here(
    hub: &super::Hub,
    project: &crate::project::Project,
) -> Option<Worktrees> {
    project.settings.worktrees.as_ref()?;
    let key = MachineKey::load_or_make(&hub.home.machine_key_file()).ok()?;
    project.worktrees_signed_by(&key).cloned()
}

/// Refuses what a worktree setting cannot hold: text that is not one line, a remote the
/// repository does not have.
fn check_change(root: &Path, change: &WorktreeChange) -> Result<()> {
    let lines = [
        change.base.as_deref(),
        change.setup.as_deref(),
        change.verify.as_deref(),
        change.remote.as_deref(),
    ];
    for value in lines.into_iter().flatten() {
        text::check_line(LineField::Setting, value)?;
    }
    for pattern in change.copy.iter().flatten() {
        text::check_line(LineField::Pattern, pattern)?;
        if pattern.split('/').any(|part| part == "..") {
            return Err(Error::invalid(format!(
                "--copy takes patterns inside the workspace, not {}",
                text::inline(pattern)
            )));
        }
    }
    if let Some(remote) = change
        .remote
        .as_deref()
        .filter(|remote| !remote.trim().is_empty())
    {
        let remote = remote.trim();
        if remote.starts_with('-')
            || plumbing::output(root, &["remote", "get-url", "--", remote]).is_err()
        {
            return Err(Error::invalid_with_hint(
                format!(
                    "the workspace's repository has no remote {}",
                    text::inline(remote)
                ),
                "`git remote -v` lists them",
            ));
        }
    }
    Ok(())
}

/// Removes a landed task's worktree and branch when they hold nothing the landing did not
/// take: no uncommitted change, no commit after the one landed. Words for what was kept.
fn tidy(workspace: &Path, task: &Task) -> Option<String> {
    let tree = task.worktree.as_ref()?;
    let root = worktree::repository(workspace).ok()?;
    let branch_ref = format!("refs/heads/{}", tree.branch);
    let tip = plumbing::commit_of(&root, &branch_ref).ok().flatten();
    let path = Path::new(&tree.path);
    // A remote agent's worktree is of its own clone, not of this repository: its machine
    // keeps it.
    let here = worktree::is_here(tree)
        && plumbing::worktrees(&root).is_ok_and(|entries| {
            let path = crate::project::canonical(path);
            entries.iter().any(|entry| {
                crate::project::canonical(&entry.path) == path
                    && entry.branch.as_deref() == Some(tree.branch.as_str())
            })
        });
    if here {
        match git::changed(path) {
            Some(unsaved) if unsaved.is_empty() => {}
            Some(unsaved) => {
                return Some(format!(
                    "kept {}'s worktree {}: it has uncommitted changes ({})",
                    task.id,
                    path.display(),
                    worktree::named(&unsaved)
                ));
            }
            None => return None,
        }
    }
    let later = match (&tip, &tree.reviewed) {
        (Some(tip), Some(reviewed)) => tip != reviewed,
        _ => false,
    };
    if later {
        return Some(format!(
            "kept {}'s worktree and branch {}: it has commits after the one reviewed and landed",
            task.id,
            text::inline(&tree.branch)
        ));
    }
    if here && let Err(error) = plumbing::remove_worktree(&root, path) {
        return Some(format!(
            "kept {}'s worktree {}: {error}",
            task.id,
            path.display()
        ));
    }
    if let Some(tip) = tip {
        let _ = plumbing::delete_branch(&root, &tree.branch, &tip);
    }
    None
}

/// The first 12 characters of a commit's id.
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
