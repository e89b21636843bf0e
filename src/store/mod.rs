//! The seam between baton and where its state is kept: the [`Store`] trait, for a hub's
//! state read under a lock or in a transaction and committed whole, put together from one
//! trait a concern ([`Boards`], [`Mailboxes`], [`Documents`], [`Presences`], [`Feeds`],
//! [`McpSessions`]), and its implementations on the files of the hub home
//! ([`files::FileStore`]: where files live, the one lock, atomic writes, the board's layout
//! and the group commit of a resident server) and in PostgreSQL ([`postgres::PgStore`]).
//! One conformance suite (`conformance`, in the unit tests) holds both to the same promises.
//!
//! The store lays out the model's values (`crate::board`) and knows no domain's rules: a
//! change is decided by the closure handed to it, which the session writes.

pub mod boards;
pub mod cache;
#[cfg(test)]
pub(crate) mod conformance;
pub mod copy;
pub mod document;
pub mod duty;
mod error;
pub mod feed;
pub mod files;
pub mod group;
pub mod head;
pub mod mailbox;
pub mod mcp_sessions;
pub mod postgres;
pub mod presence;
pub mod transaction;
pub mod versioned;

use std::fmt;

use crate::file::lock;
use crate::home::Home;
use crate::setting::SettingError;
use crate::time::Timestamp;

pub use boards::{Boards, LogTail, Recovered, Restoring, Snapshot};
pub use document::{Collection, Document, Documents, Edit, Version, Wait};
pub use duty::{Duty, Held};
pub use error::{Origin, Place, StoreError, Stored, board_origin, previous_board_origin};
pub use feed::{Change, ChangeFeed, FeedWaker, Feeds, Scope, What};
pub use mailbox::{Mailbox, Mailboxes};
pub use mcp_sessions::{KeptMcpSession, McpEvent, McpSessions};
pub use presence::Presences;
pub use transaction::{Archive, Transaction};

/// A hub's state, wherever it is kept (the files of the hub home, or a PostgreSQL
/// database), put together from one trait a concern: each project's board, its activity log
/// and archive ([`Boards`]); its mail and read positions ([`Mailboxes`]); the small versioned
/// documents ([`Documents`]: projects, agents, tokens and logins, alerts, the alert queue);
/// presence, duties and marks ([`Presences`]); the change feed ([`Feeds`]); the owners of
/// MCP sessions ([`McpSessions`]). What is left here is the store as a whole: where it is,
/// how it waits, what a serving process keeps, and a project moved whole ([`copy`]). A
/// reader takes no lock and sees every change whole or not at all; a change runs under the
/// project's lock (or in one transaction) and is committed whole, or nothing of it is.
///
/// Object-safe, so a hub holds an `Arc<dyn Store>`, and a caller that needs one concern
/// takes it alone (`&dyn Boards`). A change is a closure over a [`Transaction`] (or a
/// [`Mailbox`], or a document's text) that says whether to keep what it did ([`GaveUp`] to
/// undo it); the typed wrappers ([`change_board`], [`change_mail`], [`versioned::update`])
/// carry the caller's result and error through it. The conformance suite (`conformance`)
/// is what each store is held to.
pub trait Store:
    Boards + Mailboxes + Documents + Presences + Feeds + McpSessions + fmt::Debug + Send + Sync
{
    /// This store, waiting for a busy lock as `policy` says (a hook waits briefly), and
    /// sharing whatever this one keeps between changes.
    fn with_lock(&self, policy: lock::LockPolicy) -> std::sync::Arc<dyn Store>;

    /// Tells the store that this process only looks (`doctor`): it makes nothing on this
    /// machine for its own sake (a database's schema is checked, not remembered in the home).
    fn only_looking(&self) {}

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

/// Which store a command read, as the user is told where it matters (`doctor`, `whoami`,
/// `store copy`): `the files at PATH`, or the database's address without its password.
/// `BATON_STORE` wins over `BATON_HOME`, so a home named on the command line may not be
/// where the state came from; this says where it did.
pub fn named(store: &dyn Store) -> String {
    match store.readable_files() {
        Some(home) => format!("the files at {}", home.root().display()),
        None => store.location(),
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
    /// The index that answers a search of the archive's words (SPEC section 19), when the
    /// database has it; `None` when it was not made (no pg_trgm), and a search reads the
    /// archive's words through.
    pub words_index: Option<&'static str>,
}

/// What a change handed to a store returns to have what it did undone and nothing written;
/// why it gave up is the caller's to tell (see [`change_board`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaveUp;

/// [`Boards::change_board`] for a change with a result and an error of its own: its result
/// when it is committed, its error when it fails (nothing written), the store's when the
/// store fails.
pub fn change_board<T, E: From<StoreError>>(
    store: &dyn Boards,
    project: &str,
    now: Timestamp,
    change: impl FnOnce(&mut Transaction) -> Result<T, E>,
) -> Result<T, E> {
    run_once(change, |change| store.change_board(project, now, change))
}

/// [`Mailboxes::change_mail`] for a change with a result and an error of its own, as
/// [`change_board`].
pub fn change_mail<T, E: From<StoreError>>(
    store: &dyn Mailboxes,
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
