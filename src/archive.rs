//! Finished tasks move off the board into `archive/<YYYY-MM>.jsonl`, so a board stays small
//! however long its project runs. Nothing is deleted: `show` still finds archived tasks.

use std::collections::HashSet;
use std::fs;
use std::io::ErrorKind;

use chrono::Duration;

use crate::board::Board;
use crate::board::task::{Head, Task, TaskId};
use crate::store::paths::Home;
use crate::store::{StoreError, jsonl};
use crate::time::Timestamp;

/// Finished tasks older than this leave the board.
pub const KEEP_FINISHED_FOR: Duration = Duration::days(7);
/// At most this many finished tasks stay on the board; the oldest go first.
pub const KEEP_FINISHED_AT_MOST: usize = 200;

/// Which finished tasks should leave the board: older than `older_than`, or beyond the
/// newest [`KEEP_FINISHED_AT_MOST`]. A task some open task waits on stays, so blocking
/// can always be read from the board.
pub fn select(board: &Board, now: Timestamp, older_than: Duration) -> Vec<TaskId> {
    let waited_on: HashSet<TaskId> = board
        .open_heads()
        .flat_map(|task| task.after.iter().copied())
        .collect();
    let mut finished: Vec<&Head> = board
        .heads()
        .filter(|task| task.status.is_finished() && !waited_on.contains(&task.id))
        .collect();
    finished.sort_by_key(|task| std::cmp::Reverse((task.updated_at, task.id)));
    finished
        .iter()
        .enumerate()
        .filter(|(rank, task)| {
            *rank >= KEEP_FINISHED_AT_MOST || task.updated_at.until(now) >= older_than
        })
        .map(|(_, task)| task.id)
        .collect()
}

/// Moves the selected tasks off `board` into the archive. The archive is appended (and
/// synced) before the board is written, so a crash in between leaves a task in both places,
/// never in neither; readers take the board's copy.
pub fn move_off(home: &Home, board: &mut Board, ids: &[TaskId]) -> Result<usize, StoreError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let wanted: HashSet<TaskId> = ids.iter().copied().collect();
    let leaving = board.remove(&wanted)?;
    let mut by_month: Vec<(String, Vec<&Task>)> = Vec::new();
    for task in &leaving {
        let month = task.updated_at.month();
        match by_month.iter_mut().find(|(name, _)| *name == month) {
            Some((_, tasks)) => tasks.push(task),
            None => by_month.push((month, vec![task])),
        }
    }
    let dir = home.archive_dir(&board.project);
    for (month, tasks) in by_month {
        jsonl::append(&dir.join(format!("{month}.jsonl")), &tasks)?;
    }
    Ok(leaving.len())
}

/// The automatic sweep run on every board write.
pub fn sweep(home: &Home, board: &mut Board, now: Timestamp) -> Result<usize, StoreError> {
    let ids = select(board, now, KEEP_FINISHED_FOR);
    move_off(home, board, &ids)
}

/// Finds an archived task; the last copy wins (a crash can leave two).
pub fn find(home: &Home, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
    let dir = home.archive_dir(project);
    let mut files: Vec<_> = match fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.ends_with(".jsonl") && !name.starts_with("mail-"))
            })
            .collect(),
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(&dir)(error)),
    };
    files.sort();
    let mut found = None;
    for file in files.iter().rev() {
        let lines = jsonl::read_all::<Task>(file)?;
        if let Some(task) = lines.records.into_iter().rev().find(|task| task.id == id) {
            found = Some(task);
            break;
        }
    }
    Ok(found)
}
