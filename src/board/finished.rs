//! Which finished tasks leave the board for the archive, so a board stays small however
//! long its project runs: a rule of the model, which a store applies on every write.

use std::collections::HashSet;

use chrono::Duration;

use super::Board;
use super::task::{Head, TaskId};
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
