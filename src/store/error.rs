//! The store's error, and what it names: the thing kept ([`Stored`]), which chooses what a
//! user is told to do about it, and where it is ([`Place`]), a file or a database's row.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::{Document, Store};
use crate::board::BoardError;
use crate::file::{FileError, lock};
use crate::home::Home;

/// A failure to read or write stored data.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file of the store that could not be read, written or locked, in the file's own
    /// words.
    #[error(transparent)]
    File(#[from] FileError),
    /// A lock of a store kept elsewhere than in files (a database's advisory lock), named
    /// in words, that stayed busy past the lock timeout.
    #[error("gave up after {seconds}s waiting for the lock {lock} held by {holder}")]
    LockTimeout {
        lock: String,
        holder: lock::Holder,
        seconds: f64,
    },
    /// Something kept that does not read as what it should be.
    #[error("{} is unreadable: {detail}", origin.place)]
    Corrupt { origin: Origin, detail: String },
    /// A board the model cannot use as it is (a task that does not decode, an id two tasks
    /// have), named as its store keeps it.
    #[error("{}", board_words(origin, refused))]
    Board { origin: Origin, refused: BoardError },
    /// A change the store took in but never finished (its batch ended without a word on
    /// it); nothing of it was written.
    #[error("the change was not written")]
    Unfinished,
    #[error(
        "{} has schema {found}, newer than this baton understands ({known}); upgrade baton",
        origin.place
    )]
    NewerSchema {
        origin: Origin,
        found: u64,
        known: u32,
    },
    /// A database store that cannot be reached now: its server down or restarting, the
    /// network, the login refused. `store` is its address without the password. `lasting`
    /// when the server itself said no in words that hold until someone changes something
    /// (the database does not exist, the login is refused or not allowed): no outage, so
    /// trying again later is no use to a process that waits alone (the alert sender).
    #[error("store {store} unreachable: {detail}")]
    Unreachable {
        store: String,
        detail: String,
        lasting: bool,
    },
    /// A database store that refused what baton asked of it.
    #[error("store {store}: {detail}")]
    Database { store: String, detail: String },
    /// A database whose schema a newer baton made.
    #[error(
        "store {store} has schema {found}, newer than this baton understands ({known}); \
         upgrade baton"
    )]
    NewerDatabase {
        store: String,
        found: i64,
        known: i64,
    },
}

/// What a store keeps, named for what it is rather than where: what an error says is
/// damaged, and so what the user is told to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// The board of a project.
    Board { project: String },
    /// The board of a project before its last change, kept to bring back.
    PreviousBoard { project: String },
    /// The archive of a project's finished tasks.
    Archive { project: String },
    /// How far each agent has read a project's mail.
    ReadPositions { project: String },
    /// One of the small versioned documents.
    Document(Document),
    /// Anything else: a log's journal, a value on its way to be written.
    Other,
}

impl Stored {
    /// The thing's name in a store that names things rather than files (a database's):
    /// `projects/app/board`, `agent/bob`, `tokens`.
    pub fn name(&self) -> String {
        match self {
            Stored::Board { project } => format!("projects/{project}/board"),
            Stored::PreviousBoard { project } => format!("projects/{project}/previous board"),
            Stored::Archive { project } => format!("projects/{project}/archive"),
            Stored::ReadPositions { project } => format!("projects/{project}/read positions"),
            Stored::Document(document) => document.name(),
            Stored::Other => String::new(),
        }
    }
}

/// Where a stored thing is, as an error names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A file.
    File(PathBuf),
    /// A database store's: its address (without the password) and the thing's name in it.
    Database { store: String, name: String },
    /// Nowhere yet: a value being made to be written.
    Unwritten,
}

impl fmt::Display for Place {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::File(path) => write!(formatter, "{}", path.display()),
            Place::Database { store, name } => write!(formatter, "{store}#{name}"),
            Place::Unwritten => formatter.write_str("(a value being written)"),
        }
    }
}

/// A stored thing and where it is: what an error about it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub what: Stored,
    pub place: Place,
}

impl Origin {
    /// `what`, kept in the file at `path`.
    pub fn file(what: Stored, path: &Path) -> Origin {
        Origin {
            what,
            place: Place::File(path.to_path_buf()),
        }
    }

    /// A value being made to be written, which does not encode.
    pub fn unwritten() -> Origin {
        Origin {
            what: Stored::Other,
            place: Place::Unwritten,
        }
    }

    /// The file this is kept in, if a file.
    pub fn path(&self) -> Option<&Path> {
        match &self.place {
            Place::File(path) => Some(path),
            Place::Database { .. } | Place::Unwritten => None,
        }
    }
}

/// The board of `project` in `store`, as errors name it: its file, or its name in a
/// database.
pub fn board_origin(store: &dyn Store, project: &str) -> Origin {
    let what = Stored::Board {
        project: project.to_string(),
    };
    origin_in(store, what, |home| home.board_file(project))
}

/// The board of `project` before its last change, in `store`, as errors name it.
pub fn previous_board_origin(store: &dyn Store, project: &str) -> Origin {
    let what = Stored::PreviousBoard {
        project: project.to_string(),
    };
    origin_in(store, what, |home| home.board_backup(project))
}

/// `what` in `store`: in the file `file` names in the home whose files hold the state, else
/// by its name in the database.
fn origin_in(store: &dyn Store, what: Stored, file: impl FnOnce(&Home) -> PathBuf) -> Origin {
    match store.readable_files() {
        Some(home) => Origin::file(what, &file(home)),
        None => Origin {
            place: Place::Database {
                store: store.location(),
                name: what.name(),
            },
            what,
        },
    }
}

/// What a board the model refuses says: unreadable, as any damage; for an id two tasks
/// have, which one the command means.
fn board_words(origin: &Origin, refused: &BoardError) -> String {
    let place = &origin.place;
    match refused {
        BoardError::DuplicateId { task } => format!(
            "{task} is the id of more than one task in {place}; baton will not guess which is \
             meant"
        ),
        BoardError::Undecodable { .. } | BoardError::NoTaskAt { .. } => {
            format!("{place} is unreadable: {refused}")
        }
    }
}

impl StoreError {
    /// A board the model refuses, as the store that keeps it at `origin` names it.
    pub fn board(origin: Origin, refused: BoardError) -> StoreError {
        StoreError::Board { origin, refused }
    }

    /// `origin` does not read, for the reason `detail` gives.
    pub fn corrupt(origin: &Origin) -> impl FnOnce(String) -> StoreError + '_ {
        move |detail| StoreError::Corrupt {
            origin: origin.clone(),
            detail,
        }
    }

    /// The same failure again, for another caller who met it (every change of a batch
    /// whose write failed): the same words and the same exit code.
    pub fn duplicate(&self) -> StoreError {
        match self {
            StoreError::File(failed) => StoreError::File(failed.duplicate()),
            StoreError::LockTimeout {
                lock,
                holder,
                seconds,
            } => StoreError::LockTimeout {
                lock: lock.clone(),
                holder: *holder,
                seconds: *seconds,
            },
            StoreError::Corrupt { origin, detail } => StoreError::Corrupt {
                origin: origin.clone(),
                detail: detail.clone(),
            },
            StoreError::Board { origin, refused } => StoreError::Board {
                origin: origin.clone(),
                refused: refused.clone(),
            },
            StoreError::Unfinished => StoreError::Unfinished,
            StoreError::NewerSchema {
                origin,
                found,
                known,
            } => StoreError::NewerSchema {
                origin: origin.clone(),
                found: *found,
                known: *known,
            },
            StoreError::Unreachable {
                store,
                detail,
                lasting,
            } => StoreError::Unreachable {
                store: store.clone(),
                detail: detail.clone(),
                lasting: *lasting,
            },
            StoreError::Database { store, detail } => StoreError::Database {
                store: store.clone(),
                detail: detail.clone(),
            },
            StoreError::NewerDatabase {
                store,
                found,
                known,
            } => StoreError::NewerDatabase {
                store: store.clone(),
                found: *found,
                known: *known,
            },
        }
    }

    /// Whether a lock (a file's or a database's) stayed busy past the lock timeout.
    pub fn is_lock_timeout(&self) -> bool {
        matches!(
            self,
            StoreError::File(FileError::LockTimeout { .. }) | StoreError::LockTimeout { .. }
        )
    }

    /// Whether what failed will fail the same way until someone changes something, rather
    /// than an outage that passes: the database gone or the login refused, or data a newer
    /// baton wrote. A process with nobody waiting on it (the alert sender) stops on it
    /// rather than try again.
    pub fn is_lasting(&self) -> bool {
        matches!(
            self,
            StoreError::Unreachable { lasting: true, .. }
                | StoreError::NewerSchema { .. }
                | StoreError::NewerDatabase { .. }
        )
    }

    /// Wraps an I/O error with the path it happened on, as [`FileError::io`] does.
    pub fn io(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
        move |source| StoreError::File(FileError::io(path)(source))
    }
}
