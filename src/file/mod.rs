//! Baton's files, whatever they hold: the one lock ([`lock`]), crash-safe replacement
//! ([`atomic`]), opening only regular files ([`regular`]), what differs between Unix and
//! Windows ([`platform`]), and the text logs of the processes nobody watches
//! ([`text_log`]). They know no hub and no store: the file store builds on them, and so
//! do the domains that keep files of this machine's own.

pub mod atomic;
pub mod lock;
pub mod platform;
pub mod regular;
pub mod text_log;

use std::io;
use std::path::{Path, PathBuf};

/// A failure to read, write or lock one of baton's files, naming its path. The store takes
/// it in as its own error in the same words ([`crate::store::StoreError`]).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
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
}

impl FileError {
    /// The same failure again, for another caller who met it: the same words (an I/O
    /// error's kind and message kept, its inner error let go, as it cannot be cloned).
    pub fn duplicate(&self) -> FileError {
        match self {
            FileError::Io { path, source } => FileError::Io {
                path: path.clone(),
                source: io::Error::new(source.kind(), source.to_string()),
            },
            FileError::LockTimeout {
                path,
                holder,
                seconds,
            } => FileError::LockTimeout {
                path: path.clone(),
                holder: *holder,
                seconds: *seconds,
            },
            FileError::NotRegular { path, kind } => FileError::NotRegular {
                path: path.clone(),
                kind,
            },
        }
    }

    /// Wraps an I/O error with the path it happened on; a refusal of
    /// [`regular::open_with`] becomes [`FileError::NotRegular`].
    pub fn io(path: &Path) -> impl FnOnce(io::Error) -> FileError + '_ {
        move |source| match regular::NotRegularFile::of(&source) {
            Some(found) => FileError::NotRegular {
                path: path.to_path_buf(),
                kind: found.kind,
            },
            None => FileError::Io {
                path: path.to_path_buf(),
                source,
            },
        }
    }
}
