//! One change of a project's board as a store hands it over: the board read under the
//! project's lock, what the change records for the activity log, the tasks it moves to the
//! archive, and the project's own record if the change rewrote it. The session lets the
//! model change the board; the store then commits the transaction whole, or nothing of it.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use super::StoreError;
use super::group::Work;
use crate::board::finished::{self, KEEP_FINISHED_FOR};
use crate::board::record::ActivityRecord;
use crate::board::task::{Task, TaskId};
use crate::board::undo::Mark as BoardMark;
use crate::board::{Board, BoardError};
use crate::time::Timestamp;

/// A change in progress, under the project's lock. Record one activity line per change
/// made.
#[derive(Debug)]
pub struct Transaction {
    pub board: Board,
    pub now: Timestamp,
    records: Vec<ActivityRecord>,
    /// Tasks moved off the board in this change, for the archive.
    archived: Vec<Task>,
    /// The project's record as this change rewrote it (its versioned document), to be
    /// written with the board.
    project: Option<Vec<u8>>,
    is_changed: bool,
    /// The project's archive as this change sees it: read under the same lock (or in the
    /// same database transaction) as the board.
    stored_archive: Option<Arc<dyn Archive>>,
}

/// The archive of the project a [`Transaction`] changes, read where the change is made: the
/// file store reads its files under the board lock, a database in the change's own
/// transaction.
pub trait Archive: fmt::Debug + Send + Sync {
    /// The archived task `id`; the last copy if a crash left two.
    fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError>;
    /// Every archived task, oldest first.
    fn tasks(&self) -> Result<Vec<Task>, StoreError>;
    /// The highest id in the archive (0 for none).
    fn highest_id(&self) -> Result<u64, StoreError>;
    /// The text of the project's record as the change sees it, where the store reads it in
    /// the change's own transaction (on its connection, rather than another); `None` where
    /// the store reads it as any document.
    fn project_record(&self) -> Option<Result<Option<Vec<u8>>, StoreError>> {
        None
    }
}

/// What a store writes of a committed [`Transaction`].
#[derive(Debug)]
pub struct Committed {
    /// The board, when the change changed it.
    pub board: Option<Board>,
    pub records: Vec<ActivityRecord>,
    pub archived: Vec<Task>,
    pub project: Option<Vec<u8>>,
}

impl Transaction {
    /// A change of `board`, read under the lock, at `now`.
    pub fn new(board: Board, now: Timestamp) -> Self {
        Transaction {
            board,
            now,
            records: Vec::new(),
            archived: Vec::new(),
            project: None,
            is_changed: false,
            stored_archive: None,
        }
    }

    /// Applies `change` at `now`, the time of its own request, in a transaction that commits
    /// several changes together (a group commit's batch): the archive sweep that ends the
    /// batch goes by the latest of their times.
    pub fn apply_at<T>(&mut self, now: Timestamp, change: impl FnOnce(&mut Self) -> T) -> T {
        let swept_at = self.now.max(now);
        self.now = now;
        let result = change(self);
        self.now = swept_at;
        result
    }

    /// This change reads the project's archive through `archive`, as its store keeps it.
    pub fn with_archive(mut self, archive: Arc<dyn Archive>) -> Self {
        self.stored_archive = Some(archive);
        self
    }

    /// Notes a change for the activity log; a transaction with none writes nothing.
    pub fn record(&mut self, record: ActivityRecord) {
        self.records.push(record);
        self.is_changed = true;
    }

    /// Marks the board changed without an activity line (lease renewals).
    pub fn touch(&mut self) {
        self.is_changed = true;
    }

    /// Moves the tasks `ids` off the board, to the archive: it gets them before the board
    /// is written. How many moved.
    pub fn archive(&mut self, ids: &[TaskId]) -> Result<usize, BoardError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let wanted: HashSet<TaskId> = ids.iter().copied().collect();
        let leaving = self.board.remove(&wanted)?;
        let moved = leaving.len();
        self.archived.extend(leaving);
        self.is_changed = true;
        Ok(moved)
    }

    /// Task `id` as this change (or one committed together with it) moved it to the
    /// archive; the store's archive has the others.
    pub fn archived_task(&self, id: TaskId) -> Option<&Task> {
        self.archived.iter().rev().find(|task| task.id == id)
    }

    /// Task `id` as archived: by this change (or one committed together with it), else in
    /// the store's archive as this change sees it.
    pub fn find_archived(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        if let Some(task) = self.archived_task(id) {
            return Ok(Some(task.clone()));
        }
        match &self.stored_archive {
            Some(archive) => archive.task(id),
            None => Ok(None),
        }
    }

    /// The text of the project's record as stored, read where the change is made when the
    /// store reads it there ([`Archive::project_record`]); `None` where it does not.
    pub fn stored_project(&self) -> Option<Result<Option<Vec<u8>>, StoreError>> {
        self.stored_archive.as_ref()?.project_record()
    }

    /// Every task of the store's archive as this change sees it, oldest first, then those
    /// this change moved there.
    pub fn archived_tasks(&self) -> Result<Vec<Task>, StoreError> {
        let mut tasks = match &self.stored_archive {
            Some(archive) => archive.tasks()?,
            None => Vec::new(),
        };
        tasks.extend(self.archived.iter().cloned());
        Ok(tasks)
    }

    /// The highest id in the archive as this change sees it, its own moves included (0 for
    /// none), so that no new task reuses one.
    pub fn highest_archived_id(&self) -> Result<u64, StoreError> {
        let stored = match &self.stored_archive {
            Some(archive) => archive.highest_id()?,
            None => 0,
        };
        let moved = self
            .archived
            .iter()
            .map(|task| task.id.0)
            .max()
            .unwrap_or(0);
        Ok(stored.max(moved))
    }

    /// The project's record as this change left it (its versioned document), if the change
    /// rewrote it.
    pub fn project(&self) -> Option<&[u8]> {
        self.project.as_deref()
    }

    /// Rewrites the project's record (its versioned document), with the board: a project
    /// change and a board change never interleave.
    pub fn save_project(&mut self, document: Vec<u8>) {
        self.project = Some(document);
    }

    /// What is to be written, with the finished tasks past their time moved to the archive
    /// (every write keeps the board small), as a store commits it.
    pub fn commit(mut self) -> Result<Committed, BoardError> {
        if self.is_changed {
            let leaving = finished::select(&self.board, self.now, KEEP_FINISHED_FOR);
            self.archive(&leaving)?;
        }
        // What undoes its changes goes with the transaction, not with the board written.
        self.board.unmark();
        Ok(Committed {
            board: self.is_changed.then_some(self.board),
            records: self.records,
            archived: self.archived,
            project: self.project,
        })
    }
}

/// A failed change is rolled back to the transaction as it was before it.
impl Work for Transaction {
    type Mark = (BoardMark, usize, usize, Option<Vec<u8>>, bool, Timestamp);

    fn mark(&mut self) -> Self::Mark {
        (
            self.board.mark(),
            self.records.len(),
            self.archived.len(),
            self.project.clone(),
            self.is_changed,
            self.now,
        )
    }

    fn roll_back(&mut self, (board, records, archived, project, is_changed, now): Self::Mark) {
        self.board.roll_back(board);
        self.records.truncate(records);
        self.archived.truncate(archived);
        self.project = project;
        self.is_changed = is_changed;
        self.now = now;
    }
}
