//! Each project's board with its activity log and its archive: read without a lock, changed
//! by one closure run under the project's lock (or in one transaction) and committed whole
//! ([`Boards::change_board`], whose typed form is [`super::change_board`]).

use std::collections::HashMap;
use std::fmt;

use super::document::Version;
use super::transaction::Transaction;
use super::{GaveUp, StoreError};
use crate::board::Board;
use crate::board::record::ActivityRecord;
use crate::board::search::Search;
use crate::board::task::{Task, TaskId};
use crate::time::Timestamp;

/// Where each project's board, activity log and archive are kept.
pub trait Boards: fmt::Debug + Send + Sync {
    /// The board of `project` as it is now, read without the lock; a project with no board
    /// yet has an empty one.
    fn board(&self, project: &str) -> Result<Board, StoreError>;

    /// The version of the board of `project` now: it differs after any change of the board,
    /// whoever made it (this process, another, another hub), so that what was worked out from
    /// one version (a server's encoded answer) can be kept until the next. Taken before a
    /// read, it is that read's version or an older one, never a newer: what is kept under it
    /// can only be thrown away too soon. `None` when it cannot be told (no board yet, or a
    /// store that keeps none), and then nothing is kept.
    fn board_version(&self, _project: &str) -> Option<Version> {
        None
    }

    /// One change of the board of `project`, at `now`: the board is read under the
    /// project's lock (after completing what a writer killed half-way left), `change` is
    /// run on it once, and what it did is committed whole (with the finished tasks past
    /// their time moved to the archive), unless it gave up, when nothing is written. A
    /// store that serves many callers at once may commit the changes that arrive together
    /// in one write, each still applied alone, in order, on the board the one before left.
    fn change_board(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError>;

    /// The board and log of `project` as they stand between changes, for a look that must
    /// see no change half made (`doctor`): read under the project's lock, after completing
    /// (or dropping) what a writer killed half-way left, which is told. `None` when a
    /// change is being written now: a look does not wait for it.
    fn snapshot(&self, project: &str) -> Result<Option<Snapshot>, StoreError>;

    /// The board of `project` before its last change (every write keeps it): what `doctor
    /// --restore` brings back. `None` when there is none. Its tasks are decoded when used.
    fn previous_board(&self, project: &str) -> Result<Option<Board>, StoreError>;

    /// Brings a previous board of `project` back, under the project's lock, after
    /// completing what a killed writer left: `plan` gets the previous board, the current
    /// one and the log, as they stand under the lock, and returns the board to write with
    /// the records that log it, or gives up. The board replaced becomes the previous one,
    /// as on every write. With `dry_run`, `plan` sees them as they are now, with no lock,
    /// and nothing is written.
    fn restore_board(
        &self,
        project: &str,
        dry_run: bool,
        plan: &mut dyn FnMut(Restoring) -> Result<(Board, Vec<ActivityRecord>), GaveUp>,
    ) -> Result<(), StoreError>;

    /// The activity records of `project`, oldest first: those at or after `since`, and of
    /// them the last `last`.
    fn log(
        &self,
        project: &str,
        since: Option<Timestamp>,
        last: Option<usize>,
    ) -> Result<Vec<ActivityRecord>, StoreError>;

    /// The log of `project` read on as it grows, from its end now: what `log --follow`
    /// prints.
    fn tail_log(&self, project: &str) -> Result<Box<dyn LogTail>, StoreError>;

    /// Logs a change whose writer was killed after it committed but before it was logged
    /// (or drops what a change that never committed left), unless a writer is at work on
    /// the project: that writer does it first itself.
    fn catch_up_log(&self, project: &str) -> Result<(), StoreError>;

    /// The archived task `id` of `project`; the last copy if a crash left two.
    fn archived_task(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError>;

    /// Every archived task of `project`, oldest first.
    fn archived_tasks(&self, project: &str) -> Result<Vec<Task>, StoreError>;

    /// The archived tasks of `project` that `search` asks for (SPEC section 19), oldest
    /// first, each once (its last copy, if a crash left two). Answered without decoding
    /// every task: the files look for the words in each stored line first, a database
    /// asks an index.
    fn search_archive(&self, project: &str, search: &Search) -> Result<Vec<Task>, StoreError>;

    /// The highest id in the archive of `project` (0 for none), so that no new task reuses
    /// one. Asked under the project's lock, in a change.
    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError>;
}

/// `tasks` with each id once, where it came last, in the order of those last copies.
pub(crate) fn last_copies(tasks: Vec<Task>) -> Vec<Task> {
    let mut last: HashMap<TaskId, usize> = HashMap::with_capacity(tasks.len());
    for (place, task) in tasks.iter().enumerate() {
        last.insert(task.id, place);
    }
    tasks
        .into_iter()
        .enumerate()
        .filter(|(place, task)| last.get(&task.id) == Some(place))
        .map(|(_, task)| task)
        .collect()
}

/// A project's activity log read on as it grows ([`Boards::tail_log`]).
pub trait LogTail: Send {
    /// The records logged since the last call (since the tail was made, for the first),
    /// oldest first, each as the JSON line the log holds.
    fn fresh_lines(&mut self) -> Result<Vec<String>, StoreError>;
}

/// A project's board and log as they stand between changes ([`Boards::snapshot`]).
#[derive(Debug)]
pub struct Snapshot {
    /// What a writer killed half-way had left, now completed or dropped; `None` for nothing.
    pub recovered: Option<Recovered<ActivityRecord>>,
    /// The board; `None` when the project has none yet.
    pub board: Result<Option<Board>, StoreError>,
    pub log: Result<Vec<ActivityRecord>, StoreError>,
}

/// What the activity lines of a change left by a writer killed half-way turned out to hold
/// (on the files, its journal: `files::journal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered<R> {
    /// The change had committed: its lines are in the log now (once).
    Completed(Vec<R>),
    /// The change never committed: its lines were dropped.
    Dropped(Vec<R>),
    /// The writer was killed while writing the journal, so before its change committed.
    Torn,
}

/// What a restore of a board is planned from ([`Boards::restore_board`]).
#[derive(Debug)]
pub struct Restoring {
    /// The board before the last change; `None` when there is none.
    pub previous: Result<Option<Board>, StoreError>,
    /// The board now; `None` when the project has none.
    pub current: Result<Option<Board>, StoreError>,
    pub log: Vec<ActivityRecord>,
}
