//! What every store promises, written once against the traits and run on each store (jj
//! runs its tests over the local and the git backend): on a [`FileStore`] in a temporary
//! home always, and on a [`PgStore`] in a database of its own wherever PostgreSQL's tests
//! run (`BATON_TEST_STORE=postgres://…` naming a cluster, or the server installed here: see
//! `postgres::cluster::runs_here`).
//!
//! Each test is a function of a [`Hub`], which hands out as many stores on one hub's state
//! as the test asks for, each as another process (or another hub) would have it. What only
//! one store has to say (a torn file, a cut connection, TLS) stays in that store's tests.
//!
//! [`FileStore`]: super::files::FileStore
//! [`PgStore`]: super::postgres::PgStore

mod boards;
pub(crate) mod copy;
mod documents;
mod feeds;
mod mail;
mod presence;
mod reservations;
mod search;

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::files::FileStore;
use super::{Store, StoreError, change_board};
use crate::board::mail::{Draft, MessageType};
use crate::board::record::ActivityRecord;
use crate::board::task::{Status, Task, TaskId};
use crate::file::lock::LockPolicy;
use crate::home::Home;
use crate::time::Timestamp;

/// One hub's state in a store of one kind, for one test.
pub(crate) enum Hub {
    /// In the files of a temporary home.
    Files(tempfile::TempDir),
    /// In a fresh PostgreSQL database (with a temporary home for this machine's own files).
    #[cfg(unix)]
    Postgres(super::postgres::tests::Fixture),
}

impl Hub {
    /// A hub on the files of a temporary home.
    pub(crate) fn files() -> Hub {
        Hub::Files(tempfile::tempdir().unwrap())
    }

    /// A hub in a fresh PostgreSQL database; `None` where PostgreSQL's tests do not run.
    #[cfg(unix)]
    pub(crate) fn postgres() -> Option<Hub> {
        super::postgres::cluster::runs_here()
            .then(|| Hub::Postgres(super::postgres::tests::Fixture::new()))
    }

    /// A new store on this hub's state, as another process (or another hub) would open it:
    /// its own connections, its own handles on the files.
    pub(crate) fn store(&self) -> Arc<dyn Store> {
        match self {
            Hub::Files(_) => Arc::new(FileStore::new(
                self.home(),
                LockPolicy::silent(Duration::from_secs(30)),
            )),
            #[cfg(unix)]
            Hub::Postgres(database) => Arc::new(database.store()),
        }
    }

    /// This machine's hub home, where its own documents are files whatever the store.
    pub(crate) fn home(&self) -> Home {
        match self {
            Hub::Files(home) => Home::new(home.path().to_path_buf()),
            #[cfg(unix)]
            Hub::Postgres(database) => Home::new(database.home.path().to_path_buf()),
        }
    }
}

/// Runs each test named on a hub of each store: `files::<test>` and `postgres::<test>`.
macro_rules! on_each_store {
    ($($test:ident),* $(,)?) => {
        mod files {
            $(
                #[test]
                fn $test() {
                    super::$test(&$crate::store::conformance::Hub::files());
                }
            )*
        }

        #[cfg(unix)]
        mod postgres {
            $(
                #[test]
                fn $test() {
                    if let Some(hub) = $crate::store::conformance::Hub::postgres() {
                        super::$test(&hub);
                    }
                }
            )*
        }
    };
}
use on_each_store;

pub(crate) fn now() -> Timestamp {
    crate::time::now()
}

/// An activity record of `actor`'s `action` on `task` in project `p`.
pub(crate) fn record(actor: &str, action: &str, task: u64) -> ActivityRecord {
    ActivityRecord {
        at: now(),
        project: "p".into(),
        actor: actor.to_string(),
        action: action.into(),
        task: Some(TaskId(task)),
        from_status: None,
        to_status: None,
        text: None,
    }
}

/// A message from alice to codex.
fn draft(summary: &str) -> Draft {
    Draft {
        from: "alice".into(),
        to: "codex".into(),
        kind: MessageType::Text,
        summary: summary.to_string(),
        body: String::new(),
        payload: serde_json::Value::Null,
    }
}

/// Puts a pending task on the board of `p`, logged, as `send` would; its id.
fn send(store: &dyn Store, subject: &str) -> TaskId {
    change_board(store, "p", now(), |tx| {
        let id = tx.board.next_free_id(tx.highest_archived_id()?);
        tx.board.next_id = id.0 + 1;
        let mut task = Task::example(Status::Pending, tx.now);
        task.id = id;
        task.subject = subject.to_string();
        tx.board.push(task);
        tx.record(record("alice", "send", id.0));
        Ok::<_, StoreError>(id)
    })
    .unwrap()
}

/// Waits (up to ten seconds) until `holds`: for what a store carries out a moment later
/// (a database's presence let go by the thread that holds it).
fn eventually(what: &str, mut holds: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !holds() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A change's own refusal, or the store's failure in its words.
#[derive(Debug, PartialEq)]
struct Refused(String);

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        Refused(error.to_string())
    }
}
