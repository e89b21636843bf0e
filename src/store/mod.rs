//! The seam between baton and where its state is kept: the [`Store`] trait, for a hub's
//! state read under a lock or in a transaction and committed whole, and its implementation
//! on the files of the hub home ([`files::FileStore`]): where files live, the one lock,
//! atomic writes, the board's layout and the group commit of a resident server.
//!
//! The store lays out the model's values (`crate::board`) and knows no domain's rules: a
//! change is decided by the closure handed to it, which the session writes.

pub mod cache;
pub mod copy;
pub mod document;
pub mod duty;
mod error;
pub mod feed;
pub mod files;
pub mod group;
pub mod mailbox;
pub mod postgres;
pub mod presence;
pub mod transaction;
pub mod versioned;

use std::fmt;

use crate::board::Board;
use crate::board::mail::{Message, ReadPositions};
use crate::board::record::ActivityRecord;
use crate::board::task::{Task, TaskId};
use crate::file::lock;
use crate::home::Home;
use crate::setting::SettingError;
use crate::time::Timestamp;

pub use document::{Collection, Document, Documents, Edit, Version, Wait};
pub use duty::{Duty, Held};
pub use error::{Origin, Place, StoreError, Stored, board_origin, previous_board_origin};
pub use feed::{Change, ChangeFeed, FeedWaker, Scope, What};
pub use mailbox::Mailbox;
pub use transaction::{Archive, Transaction};

/// A hub's state, wherever it is kept (the files of the hub home now, PostgreSQL next):
/// each project's board, its activity log, its archive, its mail and read positions; the
/// small versioned documents ([`Documents`]: projects, agents, tokens and logins, alerts,
/// the alert queue); presence (live sessions, listeners). A reader takes no lock and sees
/// every change whole or not at all; a change runs under the project's lock (or in one
/// transaction) and is committed whole, or nothing of it is.
///
/// Object-safe, so a hub holds an `Arc<dyn Store>`: a change is a closure over a
/// [`Transaction`] (or a [`Mailbox`], or a document's text) that says whether to keep what
/// it did ([`GaveUp`] to undo it); the typed wrappers ([`change_board`], [`change_mail`],
/// [`versioned::update`]) carry the caller's result and error through it.
pub trait Store: Documents + fmt::Debug + Send + Sync {
    /// This store, waiting for a busy lock as `policy` says (a hook waits briefly), and
    /// sharing whatever this one keeps between changes.
    fn with_lock(&self, policy: lock::LockPolicy) -> std::sync::Arc<dyn Store>;

    /// The hub home whose files hold this state, where a human (or `doctor`, or `store copy`
    /// before it reads) looks at the files themselves; `None` where it is kept elsewhere (a
    /// database), to be looked at through the store alone.
    fn readable_files(&self) -> Option<&Home>;

    /// Whether several machines may share this store (a database, SPEC section 16): then a
    /// wake command runs only on the machine it names, signed with that machine's key, and
    /// setup registers the wake command made for a shared store. A home of files is one
    /// machine's.
    fn is_shared_by_machines(&self) -> bool;

    /// Where the state is kept, as a user may be told: the hub home's path, or the
    /// database's address (without its password).
    fn location(&self) -> String;

    /// Whether the store answers now, for a health check (`/healthz`): a database is asked
    /// the least of questions (on a connection whose start and statements are bounded, so
    /// this ends even when the server never answers); the files need no asking.
    fn check_answers(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// This store for a process that serves many callers at once (`baton serve`): it may
    /// keep what it read between changes (checked against the store before each use) and
    /// commit the changes that arrive together in one write. A store with nothing to keep
    /// gives itself.
    fn resident(&self) -> std::sync::Arc<dyn Store>;

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

    /// The highest id in the archive of `project` (0 for none), so that no new task reuses
    /// one. Asked under the project's lock, in a change.
    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError>;

    /// Every message of the mail of `project`, oldest first, read without the lock. A
    /// message that does not read (torn by a crashed writer, or from a newer baton) is
    /// skipped, and kept as it is.
    fn mail(&self, project: &str) -> Result<Vec<Message>, StoreError>;

    /// How far each agent has read the mail of `project`, read without the lock.
    fn read_positions(&self, project: &str) -> Result<ReadPositions, StoreError>;

    /// One change of the mail of `project`, at `now`: the messages and read positions are
    /// read under the mail's lock (never the board's: a message never waits for a board
    /// change), `change` is run once, and what it did is committed whole, unless it gave
    /// up. As for a board, a store may commit changes that arrive together in one write.
    fn change_mail(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError>;

    /// For a store kept in a database: that it answers now, and the version of its schema
    /// (brought up to this baton's if it was older, refused if newer, as every command does):
    /// what `doctor` says of it. `None` for the files, whose every file carries its own.
    fn schema_version(&self) -> Result<Option<SchemaVersion>, StoreError> {
        Ok(None)
    }

    /// Everything `project` holds here but its presence, with no change half made (its
    /// board, log, archive and record read together under the board lock, its mail under
    /// the mail lock; or all in one transaction): what `store copy` carries
    /// ([`copy::ProjectImage`]). A project this store does not hold is an empty image.
    fn export_project(&self, project: &str) -> Result<copy::ProjectImage, StoreError>;

    /// Makes `project` here hold exactly `image`, whatever it held before (under the
    /// project's locks, or whole in one transaction), logging nothing of its own: how
    /// `store copy` writes a project. What `doctor --restore` would bring back is the board
    /// replaced (files) or nothing (a database).
    fn import_project(&self, project: &str, image: &copy::ProjectImage) -> Result<(), StoreError>;

    /// Records `mark` (a name of the caller's making); false when it was recorded already,
    /// by this process or any other: how a thing is told once, whoever looks first (a
    /// stall's alert).
    fn mark_once(&self, mark: &str) -> Result<bool, StoreError>;

    /// Announces that `agent` has a live session of `client` in `project` (a process that
    /// can take work into a running session), for as long as the returned value is kept.
    fn announce_session(
        &self,
        project: &str,
        agent: &str,
        client: &str,
    ) -> Result<presence::Presence, StoreError>;

    /// Announces a listener of `agent` (`baton listen` on its machine) whose event stream
    /// this process serves, for as long as the returned value is kept.
    fn announce_listener(&self, agent: &str) -> Result<presence::Presence, StoreError>;

    /// Whether a listener of `agent` is announced now.
    fn is_listened(&self, agent: &str) -> bool;

    /// The clients of `agent`'s live sessions in `project`, one entry a session, sorted.
    fn live_clients(&self, project: &str, agent: &str) -> Vec<String>;

    /// A feed of the changes of `scope` committed from now on, by this process or any other
    /// sharing this store ([`feed`]). Made before a look at the state, it tells every change
    /// committed after that look, so a waiter that looks and then waits misses none.
    fn changes(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError>;

    /// Takes up `duty` if no process sharing this store holds it ([`duty`]), for as long as
    /// the returned value is kept; `None` when another holds it: it is doing the job
    /// already, so waiting would be pointless.
    fn try_hold(&self, duty: &Duty) -> Result<Option<Held>, StoreError>;

    /// Whether a process holds `duty` now, looked at without taking it up (a look that took
    /// it, even for an instant, would make a holder starting then give up as if another
    /// held it). A peek, not a promise: the holder may let go right after.
    fn is_held(&self, duty: &Duty) -> bool;

    /// Records that the MCP session `session` (the id a hub handed out at `initialize`) was
    /// opened with the token whose stored hash is `token`, so that whichever hub it reaches
    /// answers it to that token alone (SPEC section 13).
    fn record_mcp_session(&self, session: &str, token: &str) -> Result<(), StoreError>;

    /// The stored hash of the token that opened the MCP session `session`; `None` for a
    /// session never recorded, or forgotten.
    fn mcp_session_owner(&self, session: &str) -> Result<Option<String>, StoreError>;

    /// Forgets the MCP sessions `sessions`: they ended (closed by their client, idle, or
    /// their token gone).
    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError>;
}

/// A project's activity log read on as it grows ([`Store::tail_log`]).
pub trait LogTail: Send {
    /// The records logged since the last call (since the tail was made, for the first),
    /// oldest first, each as the JSON line the log holds.
    fn fresh_lines(&mut self) -> Result<Vec<String>, StoreError>;
}

/// The store `BATON_STORE` names for the hub at `home`: unset (or empty), the files under
/// it; a `postgres://` (or `postgresql://`) URL, that database, with this machine's own
/// documents still files under `home`.
pub fn from_environment(
    home: &Home,
    lock: lock::LockPolicy,
) -> Result<std::sync::Arc<dyn Store>, SettingError> {
    match std::env::var("BATON_STORE") {
        Err(std::env::VarError::NotPresent) => Ok(files_at(home, lock)),
        Ok(value) if value.is_empty() => Ok(files_at(home, lock)),
        Ok(value) => open(&value, home, lock),
        Err(std::env::VarError::NotUnicode(_)) => Err(SettingError::new(
            "BATON_STORE is not valid UTF-8",
            Some(store_hint()),
        )),
    }
}

/// The store at `address` (a `postgres://` URL) for the hub at `home`.
pub fn open(
    address: &str,
    home: &Home,
    lock: lock::LockPolicy,
) -> Result<std::sync::Arc<dyn Store>, SettingError> {
    if !postgres::address::is_postgres_url(address) {
        return Err(SettingError::new(
            format!(
                "BATON_STORE must be a postgres:// URL, not `{}`",
                postgres::url::shown_form(address).escape_debug()
            ),
            Some(store_hint()),
        ));
    }
    let address = postgres::address::Address::parse(address)?;
    Ok(std::sync::Arc::new(postgres::PgStore::new(
        address,
        home.clone(),
        lock,
    )))
}

fn files_at(home: &Home, lock: lock::LockPolicy) -> std::sync::Arc<dyn Store> {
    std::sync::Arc::new(files::FileStore::new(home.clone(), lock))
}

fn store_hint() -> String {
    "e.g. BATON_STORE=postgres://baton@db.example:5432/baton?sslmode=verify-full; unset, the \
     hub's state is the files under BATON_HOME"
        .to_string()
}

/// The schema of a database store ([`Store::schema_version`]): the version it holds, and
/// the one this baton writes (and the highest it reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaVersion {
    pub found: i64,
    pub known: i64,
}

/// A project's board and log as they stand between changes ([`Store::snapshot`]).
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

/// What a restore of a board is planned from ([`Store::restore_board`]).
#[derive(Debug)]
pub struct Restoring {
    /// The board before the last change; `None` when there is none.
    pub previous: Result<Option<Board>, StoreError>,
    /// The board now; `None` when the project has none.
    pub current: Result<Option<Board>, StoreError>,
    pub log: Vec<ActivityRecord>,
}

/// What a change handed to a store returns to have what it did undone and nothing written;
/// why it gave up is the caller's to tell (see [`change_board`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaveUp;

/// [`Store::change_board`] for a change with a result and an error of its own: its result
/// when it is committed, its error when it fails (nothing written), the store's when the
/// store fails.
pub fn change_board<T, E: From<StoreError>>(
    store: &dyn Store,
    project: &str,
    now: Timestamp,
    change: impl FnOnce(&mut Transaction) -> Result<T, E>,
) -> Result<T, E> {
    run_once(change, |change| store.change_board(project, now, change))
}

/// [`Store::change_mail`] for a change with a result and an error of its own, as
/// [`change_board`].
pub fn change_mail<T, E: From<StoreError>>(
    store: &dyn Store,
    project: &str,
    now: Timestamp,
    change: impl FnOnce(&mut Mailbox) -> Result<T, E>,
) -> Result<T, E> {
    run_once(change, |change| store.change_mail(project, now, change))
}

/// Hands `change` to `commit` as the closure a store runs, and gives back what it returned
/// (or the store's failure).
fn run_once<W, T, E: From<StoreError>>(
    change: impl FnOnce(&mut W) -> Result<T, E>,
    commit: impl FnOnce(&mut dyn FnMut(&mut W) -> Result<(), GaveUp>) -> Result<(), StoreError>,
) -> Result<T, E> {
    let mut change = Some(change);
    let mut outcome = None;
    let committed = commit(&mut |work| {
        // A store runs a change once; were it asked again, the change has nothing to give.
        let change = change.take().ok_or(GaveUp)?;
        let result = change(work);
        let gave_up = result.is_err();
        outcome = Some(result);
        if gave_up { Err(GaveUp) } else { Ok(()) }
    });
    match (committed, outcome) {
        (_, Some(Err(refused))) => Err(refused),
        (Err(failed), _) => Err(failed.into()),
        (Ok(()), Some(Ok(result))) => Ok(result),
        (Ok(()), None) => Err(StoreError::Unfinished.into()),
    }
}

/// `work(n)` for each `n` below `count`, each on a thread of its own, all let go at once; the
/// answers in the order of `n`: the stores' tests of changes made at the same moment.
#[cfg(test)]
pub(crate) fn at_once<T: Send>(count: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let start = std::sync::Barrier::new(count);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..count)
            .map(|n| {
                let (start, work) = (&start, &work);
                scope.spawn(move || {
                    start.wait();
                    work(n)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}
