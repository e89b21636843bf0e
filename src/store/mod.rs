//! Everything that touches the disk: where files live, the one lock, atomic writes, and the
//! locked read-change-write of a board.

pub mod atomic;
pub mod board_file;
pub mod board_layout;
pub mod board_source;
pub mod cache;
pub mod journal;
pub mod jsonl;
pub mod lock;
pub mod log;
pub mod paths;
pub mod platform;
pub mod presence;
pub mod regular;
pub mod tail;
pub mod text_log;
pub mod versioned;

use std::io;
use std::path::{Path, PathBuf};

/// A failure to read or write stored data.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}", path = path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "gave up after {seconds}s waiting for the lock {path} held by {holder}",
        path = path.display()
    )]
    LockTimeout {
        path: PathBuf,
        holder: lock::Holder,
        seconds: f64,
    },
    /// A directory, FIFO, socket or device where a baton file should be.
    #[error("{path} is {kind}, not a regular file", path = path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{path} is unreadable: {detail}", path = path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "{path} has schema {found}, newer than this baton understands ({known}); upgrade baton",
        path = path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: u64,
        known: u32,
    },
    #[error(
        "{task} is the id of more than one task in {path}; baton will not guess which is meant",
        path = path.display()
    )]
    /// `task` is the id as shown.
    DuplicateId { path: PathBuf, task: String },
}

/// A setting from the environment (`BATON_HOME`, `BATON_LOCK_TIMEOUT`) the store cannot
/// use: what is wrong, and how to put it right where there is a way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SettingError {
    pub message: String,
    pub hint: Option<String>,
}

impl SettingError {
    pub fn new(message: impl Into<String>, hint: Option<String>) -> Self {
        SettingError {
            message: message.into(),
            hint,
        }
    }
}

impl StoreError {
    /// The same failure again, for another caller who met it (every change of a batch
    /// whose write failed): the same words and the same exit code.
    pub fn duplicate(&self) -> StoreError {
        match self {
            StoreError::Io { path, source } => StoreError::Io {
                path: path.clone(),
                source: io::Error::new(source.kind(), source.to_string()),
            },
            StoreError::LockTimeout {
                path,
                holder,
                seconds,
            } => StoreError::LockTimeout {
                path: path.clone(),
                holder: *holder,
                seconds: *seconds,
            },
            StoreError::NotRegular { path, kind } => StoreError::NotRegular {
                path: path.clone(),
                kind,
            },
            StoreError::Corrupt { path, detail } => StoreError::Corrupt {
                path: path.clone(),
                detail: detail.clone(),
            },
            StoreError::NewerSchema { path, found, known } => StoreError::NewerSchema {
                path: path.clone(),
                found: *found,
                known: *known,
            },
            StoreError::DuplicateId { path, task } => StoreError::DuplicateId {
                path: path.clone(),
                task: task.clone(),
            },
        }
    }

    /// Wraps an I/O error with the path it happened on; a refusal of
    /// [`regular::open_with`] becomes [`StoreError::NotRegular`].
    pub fn io(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
        move |source| match regular::NotRegularFile::of(&source) {
            Some(found) => StoreError::NotRegular {
                path: path.to_path_buf(),
                kind: found.kind,
            },
            None => StoreError::Io {
                path: path.to_path_buf(),
                source,
            },
        }
    }
}
