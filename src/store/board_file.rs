//! The one way to change a board: lock `board.lock`, re-read `board.json`, change it, write
//! it atomically (keeping `board.json.bak`), append the activity lines, release.
//! Readers never lock: [`read`] sees the whole old board or the whole new one.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use serde::Deserialize;

use super::lock::{FileLock, LockPolicy};
use super::paths::Home;
use super::{StoreError, atomic};
use crate::activity::{self, ActivityRecord};
use crate::archive;
use crate::board::{BOARD_SCHEMA, Board};
use crate::error::Result;
use crate::time::Timestamp;

/// Reads a project's board without locking; a project with no board yet has an empty one.
pub fn read(home: &Home, project: &str) -> Result<Board, StoreError> {
    let path = home.board_file(project);
    match fs::read(&path) {
        Ok(bytes) => parse(&path, &bytes),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(Board::new(project)),
        Err(error) => Err(StoreError::io(&path)(error)),
    }
}

/// Parses board bytes, refusing anything that does not parse or has a newer schema.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Board, StoreError> {
    #[derive(Deserialize)]
    struct SchemaOnly {
        schema: u64,
    }
    // Checking the whole text as UTF-8 once lets the parser skip checking each string, a
    // tenth of the cost of reading a large board.
    let text = std::str::from_utf8(bytes).map_err(|error| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: format!("not UTF-8 text ({error})"),
    })?;
    match serde_json::from_str::<Board>(text) {
        Ok(board) if board.schema > BOARD_SCHEMA => Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: u64::from(board.schema),
            known: BOARD_SCHEMA,
        }),
        Ok(board) => Ok(board),
        Err(error) => match serde_json::from_str::<SchemaOnly>(text) {
            Ok(probe) if probe.schema > u64::from(BOARD_SCHEMA) => Err(StoreError::NewerSchema {
                path: path.to_path_buf(),
                found: probe.schema,
                known: BOARD_SCHEMA,
            }),
            _ => Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: error.to_string(),
            }),
        },
    }
}

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
/// fails, nothing is written.
pub fn update<T>(
    home: &Home,
    project: &str,
    lock: LockPolicy,
    now: Timestamp,
    change: impl FnOnce(&mut Transaction) -> Result<T>,
) -> Result<T> {
    let _guard = FileLock::acquire(&home.board_lock(project), "the board lock", lock)?;
    let board = read(home, project)?;
    let mut transaction = Transaction {
        board,
        now,
        records: Vec::new(),
        is_changed: false,
    };
    let result = change(&mut transaction)?;
    if transaction.is_changed {
        archive::sweep(home, &mut transaction.board, now)?;
        persist(home, project, &transaction.board, &transaction.records)?;
    }
    Ok(result)
}

/// Writes the board and its activity lines so that a failure (a full disk, say) leaves both
/// as they were: the new board is staged and synced first, then the log is appended, then
/// the board is renamed into place; if that rename fails the log is cut back. (A crash
/// between the append and the rename can leave a log line for a change that never landed:
/// the board, not the log, is the record of what happened.) The caller holds the board lock.
pub fn persist(
    home: &Home,
    project: &str,
    board: &Board,
    records: &[ActivityRecord],
) -> Result<(), StoreError> {
    let path = home.board_file(project);
    let staged = atomic::stage(&path, &encode(&path, board)?)?;
    let log = home.activity_file(project);
    let log_length = match fs::metadata(&log) {
        Ok(metadata) => metadata.len(),
        Err(error) if error.kind() == ErrorKind::NotFound => 0,
        Err(error) => {
            staged.discard();
            return Err(StoreError::io(&log)(error));
        }
    };
    if let Err(error) = activity::append(&log, records) {
        staged.discard();
        activity::truncate(&log, log_length);
        return Err(error);
    }
    staged
        .commit(Some(&home.board_backup(project)))
        .inspect_err(|_| {
            activity::truncate(&log, log_length);
        })
}

fn encode(path: &Path, board: &Board) -> Result<Vec<u8>, StoreError> {
    // A pretty task takes well under 2 KiB unless it carries a long thread; reserving that
    // up front spares the repeated regrowing that otherwise shows in profiles of big boards.
    let mut text = Vec::with_capacity(4096 + board.tasks.len() * 2048);
    serde_json::to_writer_pretty(&mut text, board).map_err(|error| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    text.push(b'\n');
    Ok(text)
}

/// Writes the board atomically, keeping the previous one as `board.json.bak`, with no
/// activity line (restores and repairs). The caller holds the board lock.
pub fn write(home: &Home, project: &str, board: &Board) -> Result<(), StoreError> {
    let path = home.board_file(project);
    atomic::replace(
        &path,
        &encode(&path, board)?,
        Some(&home.board_backup(project)),
    )
}
