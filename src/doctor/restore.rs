//! `doctor --restore`: what bringing a board back from its backup would change, and doing
//! it, through the store, under the board's lock.

use serde::Serialize;

use crate::activity::{ActivityRecord, LogAction};
use crate::board::Board;
use crate::board::task::{Status, TaskId};
use crate::error::{ProjectError, Result};
use crate::names::{self, NameKind};
use crate::store::{self, GaveUp, Origin, Restoring, Store, StoreError};
use crate::time::Timestamp;

use super::count;

/// What `doctor --restore` does, or would do, to a board.
#[derive(Debug, Clone, Serialize)]
pub struct RestorePlan {
    pub project: String,
    /// Why board.json cannot be read, when it cannot; then `changes` cannot list what the
    /// current board holds beyond the backup, and `recent_activity` hints at it.
    pub current_error: Option<String>,
    pub current_tasks: Option<usize>,
    pub backup_tasks: usize,
    /// Every task that restoring changes.
    pub changes: Vec<TaskChange>,
    /// The last lines of the activity log, when the current board cannot be read.
    pub recent_activity: Vec<ActivityRecord>,
    /// The id the next task gets after restoring: past every id already handed out, so a
    /// lost task's number is never reused.
    pub next_id: u64,
    pub restored: bool,
}

/// One task that restoring changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskChange {
    pub task: TaskId,
    pub subject: String,
    /// Its status in board.json now (none: not on the current board).
    pub current: Option<Status>,
    /// Its status once restored (none: it vanishes).
    pub restored: Option<Status>,
    /// Thread entries (questions, answers, notes) that would be lost.
    pub lost_thread_entries: usize,
}

impl TaskChange {
    /// What restoring does to this task, in words.
    pub fn describe(&self) -> String {
        let lost = match self.lost_thread_entries {
            0 => String::new(),
            1 => "; 1 thread entry lost".to_string(),
            entries => format!("; {entries} thread entries lost"),
        };
        match (self.current, self.restored) {
            (Some(current), None) => format!("vanishes (it is {current} now){lost}"),
            (None, Some(restored)) => format!("comes back as {restored}{lost}"),
            (Some(current), Some(restored)) if current != restored => {
                format!("goes back from {current} to {restored}{lost}")
            }
            _ => format!("loses its latest edits{lost}"),
        }
    }
}

/// The tasks that differ between the current board and the backup.
pub fn compare(current: &Board, backup: &Board) -> Vec<TaskChange> {
    let mut ids: Vec<TaskId> = current
        .heads()
        .chain(backup.heads())
        .map(|task| task.id)
        .collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .filter_map(|id| {
            // Both boards were read whole by `read_board`, so every task decodes.
            let now = current.task(id).ok().flatten();
            let then = backup.task(id).ok().flatten();
            if now == then {
                return None;
            }
            let subject = now.or(then).map(|task| task.subject.clone())?;
            let lost_thread_entries = match (now, then) {
                (Some(now), Some(then)) => now.thread.len().saturating_sub(then.thread.len()),
                (Some(now), None) => now.thread.len(),
                _ => 0,
            };
            Some(TaskChange {
                task: id,
                subject,
                current: now.map(|task| task.status),
                restored: then.map(|task| task.status),
                lost_thread_entries,
            })
        })
        .collect()
}

/// Works out what restoring the backup of `project` would do, from `restoring` (both boards
/// and the log). Refuses when there is no backup or it does not read: it would not be worth
/// restoring.
fn plan(store: &dyn Store, project: &str, restoring: Restoring) -> Result<(RestorePlan, Board)> {
    let previous = store::previous_board_origin(store, project);
    let backup = whole(restoring.previous, &previous)?.ok_or_else(|| ProjectError::NoBackup {
        project: project.to_string(),
    })?;
    let current = store::board_origin(store, project);
    let (current, current_error) = match whole(restoring.current, &current) {
        Ok(current) => (current, None),
        Err(error) => (None, Some(error.to_string())),
    };
    let activity = restoring.log;
    let highest_logged = activity
        .iter()
        .filter_map(|record| record.task)
        .map(|id| id.0)
        .max()
        .unwrap_or(0);
    let next_id = backup
        .next_id
        .max(current.as_ref().map_or(0, |board| board.next_id))
        .max(highest_logged + 1);
    let changes = match &current {
        Some(current) => compare(current, &backup),
        None if current_error.is_none() => compare(&Board::new(project), &backup),
        None => Vec::new(),
    };
    let recent_activity = if current_error.is_some() {
        let skip = activity.len().saturating_sub(5);
        activity[skip..].to_vec()
    } else {
        Vec::new()
    };
    let plan = RestorePlan {
        project: project.to_string(),
        current_error,
        current_tasks: current.as_ref().map(Board::len),
        backup_tasks: backup.len(),
        changes,
        recent_activity,
        next_id,
        restored: false,
    };
    Ok((plan, backup))
}

/// A board read with every task of it decoded (commands decode only the tasks they touch;
/// the doctor looks at all).
/// `origin` names it in errors.
fn whole(board: Result<Option<Board>, StoreError>, origin: &Origin) -> Result<Option<Board>> {
    let board = board?;
    if let Some(board) = &board {
        board
            .tasks()
            .try_for_each(|task| task.map(drop))
            .map_err(|refused| StoreError::board(origin.clone(), refused))?;
    }
    Ok(board)
}

/// Runs [`plan`] through the store's restore, with the plan's error kept as it was.
fn restore_with(
    store: &dyn Store,
    project: &str,
    dry_run: bool,
    now: Timestamp,
    actor: &str,
) -> Result<RestorePlan> {
    names::check(NameKind::Project, project)?;
    let mut outcome = None;
    store.restore_board(project, dry_run, &mut |restoring| {
        let planned = plan(store, project, restoring);
        let (plan, mut board) = match planned {
            Ok(planned) => planned,
            Err(error) => {
                outcome = Some(Err(error));
                return Err(GaveUp);
            }
        };
        board.next_id = plan.next_id;
        let record = ActivityRecord {
            at: now,
            project: project.to_string(),
            actor: actor.to_string(),
            action: LogAction::Restore,
            task: None,
            from_status: None,
            to_status: None,
            text: Some(format!(
                "board.json brought back from board.json.bak ({} changed)",
                count(plan.changes.len(), "task")
            )),
        };
        outcome = Some(Ok(plan));
        Ok((board, vec![record]))
    })?;
    let mut plan = outcome.unwrap_or(Err(StoreError::Unfinished.into()))?;
    plan.restored = !dry_run;
    Ok(plan)
}

/// What `restore` would do, changing nothing.
pub fn plan_restore(store: &dyn Store, project: &str) -> Result<RestorePlan> {
    restore_with(store, project, true, crate::time::now(), "baton")
}

/// Puts `board.json.bak` back as the board, under the board lock, and logs it. The board it
/// replaces becomes the backup (as every write does), so running it again undoes it until
/// the next change. Returns the plan as it stood under the lock.
pub fn restore(
    store: &dyn Store,
    project: &str,
    now: Timestamp,
    actor: &str,
) -> Result<RestorePlan> {
    restore_with(store, project, false, now, actor)
}
