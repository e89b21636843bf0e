//! The one way to change a board, for the session layer: lock `board.lock`, complete what a
//! killed writer left, re-read `board.json`, change it, move finished tasks to the archive,
//! write it with its activity lines (`store::board_file::persist`), release. The store
//! below knows the files; what a change does to the board, and the sweep that follows it,
//! are decided here.

use crate::activity::ActivityRecord;
use crate::archive;
use crate::board::Board;
use crate::error::Result;
use crate::store::board_file;
use crate::store::lock::{FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::time::Timestamp;

/// A change in progress, holding the lock. Record one activity line per change made.
pub struct Transaction {
    pub board: Board,
    pub now: Timestamp,
    records: Vec<ActivityRecord>,
    is_changed: bool,
}

impl Transaction {
    /// Notes a change for the activity log; a transaction with none writes nothing.
    pub fn record(&mut self, record: ActivityRecord) {
        self.records.push(record);
        self.is_changed = true;
    }

    /// Marks the board changed without an activity line (lease renewals).
    pub fn touch(&mut self) {
        self.is_changed = true;
    }
}

/// Runs `change` on the board under the lock and persists what it did. When `change`
/// fails, nothing is written. A change a killed writer left half-logged is completed (or
/// dropped) first, so its lines come before this change's.
pub fn update<T>(
    home: &Home,
    project: &str,
    lock: LockPolicy,
    now: Timestamp,
    change: impl FnOnce(&mut Transaction) -> Result<T>,
) -> Result<T> {
    let _guard = FileLock::acquire(&home.board_lock(project), "the board lock", lock)?;
    board_file::recover_log::<ActivityRecord>(home, project)?;
    let board = board_file::read(home, project)?;
    let mut transaction = Transaction {
        board,
        now,
        records: Vec::new(),
        is_changed: false,
    };
    let result = change(&mut transaction)?;
    if transaction.is_changed {
        // Every write keeps the board small: finished tasks past their time leave it in
        // the same change (the archive is appended before the board is written).
        archive::sweep(home, &mut transaction.board, now)?;
        board_file::persist(home, project, &transaction.board, &transaction.records)?;
    }
    Ok(result)
}
