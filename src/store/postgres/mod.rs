//! The store on PostgreSQL (SPEC section 16), for hubs that share one database: the same
//! [`Store`] the files give, each change one transaction.
//!
//! A change of a board takes the project's advisory transaction lock (so changes of one
//! project are serialized, across every process and hub, exactly as the board lock
//! serializes them on files), reads the board, runs the change once, and commits in the
//! same transaction the board's changed tasks, the activity records (numbered on from the
//! project's last, so gapless and in commit order), the tasks moved to the archive, and the
//! project's record; a change that gives up rolls back, and nothing of it is written. The
//! mail has a lock of its own, as `mail.lock` is, and each document one of its own.
//!
//! What the files have that a database has no need of is given its honest meaning here:
//! nothing is ever half-written, so there is nothing to recover or to catch up on
//! ([`super::Boards::catch_up_log`] does nothing; a snapshot recovers nothing); the board before the
//! last change is kept (as the tasks that change touched, as they were) for `doctor
//! --restore`.
//!
//! This file holds the store, its connections and locks, and [`Store`] put together from
//! the files beside it, one a job, each writing the statements of its tables once:
//! `board` (boards, their tasks and the board before), `log` (the activity log),
//! `archive`, `mail` (with the read positions and the mail's archive), `documents`,
//! `presence` (presences, duties and marks), `feed` (the change feed), `sessions` (MCP
//! sessions) and `image` (a project's export and import, through the others'
//! statements); [`schema`] holds the tables.

pub mod address;
mod archive;
mod board;
pub mod client;
mod documents;
mod feed;
mod image;
mod listen;
mod log;
mod mail;
pub mod pool;
mod presence;
mod remembered;
pub mod schema;
mod sessions;
pub mod tls;
mod unprepared;
pub mod url;

// The test cluster runs Debian's server as its own user: Unix only (Windows is linted and
// unit-tested under Wine, where no PostgreSQL runs).
#[cfg(all(test, unix))]
pub mod cluster;
#[cfg(all(test, unix))]
pub(crate) mod tests;

use std::sync::{Arc, Mutex, PoisonError};

use postgres::Row;
use postgres::error::SqlState;
use postgres::types::ToSql;
use sha2::{Digest, Sha256};

use self::address::Address;
use self::board::{Boards, Groups};
use self::client::{Client, Piped, Statements};
use self::listen::Listener;
use self::pool::{Connection, Pool, is_connection_lost};
use self::presence::Keeper;
use super::copy::ProjectImage;
use super::document::{Documents, Version, Wait};
use super::files::HomeFiles;
use super::mailbox::Mailbox;
use super::presence::Presence;
use super::{
    ChangeFeed, Duty, Feeds, GaveUp, Held, KeptMcpSession, LogTail, Mailboxes, McpSessions, Origin,
    Place, Presences, Restoring, Scope, Snapshot, Store, StoreError, Stored, Transaction,
};
use crate::board::Board;
use crate::board::mail::{Message, ReadPositions};
use crate::board::record::ActivityRecord;
use crate::board::search::Search;
use crate::board::task::{Task, TaskId};
use crate::file::lock::{Holder, LockPolicy};
use crate::home::Home;
use crate::time::Timestamp;

/// The classes of advisory lock a change takes (the first key; the second is the name's
/// hash): one a project's board (and its record), one its mail, one each document.
const BOARD_LOCKS: i32 = 0x6261_0001;
const MAIL_LOCKS: i32 = 0x6261_0002;
const DOCUMENT_LOCKS: i32 = 0x6261_0003;
/// The class of the session advisory locks that hold duties (one sender, one supervisor per
/// agent, among every process sharing the database).
const DUTY_LOCKS: i32 = 0x6261_0004;

/// The hub's state in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgStore {
    shared: Arc<Shared>,
    lock: LockPolicy,
    /// The changes of a resident process (`baton serve`) to each project's board, committed
    /// together while a transaction of the project is in progress ([`super::group`]); `None`
    /// for a command, which makes one change.
    groups: Option<Arc<Groups>>,
    /// A resident process's boards as last read or written, each under its version: a read
    /// of an unchanged board (the web board, agents that look often, the next batch) asks
    /// only for the version, not for every task. `None` for a command.
    boards: Option<Arc<Boards>>,
}

#[derive(Debug)]
struct Shared {
    pool: Pool,
    /// The thread that holds this process's presences and duties, started on the first.
    keeper: Mutex<Option<Arc<Keeper>>>,
    /// The thread that listens for changes, started on the first feed.
    listener: Mutex<Option<Arc<Listener>>>,
    /// This machine's own documents (the setup manifest, the project map), which stay files.
    local: HomeFiles,
}

/// Runs `work` (a connection the process keeps: the listening one, the presence keeper's)
/// on a thread named `name` with a runtime of its own, for as long as it runs; `what` names
/// the thread in the error that it could not be started.
fn run_on_a_thread(
    name: &str,
    what: &str,
    shown: &str,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StoreError> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(work);
        })
        .map(drop)
        .map_err(|error| StoreError::Unreachable {
            store: shown.to_string(),
            detail: format!("cannot start {what}: {error}"),
            lasting: false,
        })
}

/// A change that failed: the store's error, or the change's own refusal.
type Failed = StoreError;

impl PgStore {
    /// The store at `address`, with this machine's own files under `home`; nothing is
    /// connected until the first call.
    pub fn new(address: Address, home: Home, lock: LockPolicy) -> PgStore {
        let remembered = remembered::Remembered::of(&home, &address);
        PgStore {
            shared: Arc::new(Shared {
                pool: Pool::new(address).remembering(remembered),
                keeper: Mutex::new(None),
                listener: Mutex::new(None),
                local: HomeFiles::new(home, lock),
            }),
            lock,
            groups: None,
            boards: None,
        }
    }

    /// The store as it may be named: its address without the password.
    pub fn shown(&self) -> &str {
        self.shared.pool.shown()
    }

    fn pool(&self) -> &Pool {
        &self.shared.pool
    }

    fn failed(&self, error: &client::Error) -> StoreError {
        self.pool().failed(error)
    }

    /// `what` as this store keeps it, to name it in words (`postgres://app@db/baton#…`,
    /// then what it is: `projects/app/board`, `agent/bob`).
    fn origin(&self, what: Stored) -> Origin {
        if let Stored::Document(document) = &what
            && documents::place_of(document).is_none()
        {
            // This machine's own, kept in its files whatever the store.
            return self.shared.local.document_origin(document);
        }
        Origin {
            place: Place::Database {
                store: self.shown().to_string(),
                name: what.name(),
            },
            what,
        }
    }

    fn board_origin(&self, project: &str) -> Origin {
        super::board_origin(self, project)
    }

    /// Runs `work` on a connection: a read, or anything safe to run again, since a
    /// connection kept from before that turns out cut (the server restarted since) is let
    /// go and `work` run again on a new one.
    fn run<T>(
        &self,
        mut work: impl FnMut(&mut Client) -> Result<T, client::Error>,
    ) -> Result<T, StoreError> {
        loop {
            let mut connection = self.pool().get()?;
            match work(connection.client()) {
                Ok(done) => return Ok(done),
                Err(error) if connection.reused && is_connection_lost(&error) => {
                    connection.let_go();
                }
                Err(error) if self.pool().rechecked(&error, connection.client())? => {}
                Err(error) => return Err(self.failed(&error)),
            }
        }
    }

    /// Runs `work` as [`PgStore::run`] does, the schema confirmed first while it is only
    /// remembered ([`remembered`]): a write outside a transaction has no `BEGIN` to ask
    /// with, so the first such write of a command costs one round trip more, and none after.
    fn run_writing<T>(
        &self,
        mut work: impl FnMut(&mut Client) -> Result<T, client::Error>,
    ) -> Result<T, StoreError> {
        self.run(|client| {
            if let Some(guard) = self.pool().guard() {
                let answer = client.value_of(guard)?;
                self.pool().guarded(answer)?;
            }
            work(client)
        })
    }

    /// Runs `work` in a repeatable-read, read-only transaction: what it reads is one
    /// moment's state, whatever commits meanwhile.
    fn read<T>(
        &self,
        mut work: impl FnMut(&mut client::Transaction<'_>) -> Result<T, Failed>,
    ) -> Result<T, StoreError> {
        let mut outcome = None;
        self.run(|client| {
            let mut transaction = match self.pool().guard() {
                None => client.read_transaction()?,
                Some(guard) => {
                    let (transaction, answer) = client.read_transaction_and(guard)?;
                    self.pool().guarded(answer)?;
                    transaction
                }
            };
            outcome = Some(work(&mut transaction));
            transaction.commit()
        })?;
        outcome.unwrap_or(Err(StoreError::Unfinished))
    }

    /// A connection in a new read-write transaction, for a change.
    fn begin(&self) -> Result<Connection<'_>, StoreError> {
        loop {
            let mut connection = self.pool().get()?;
            match connection.begin("") {
                Ok(()) => return Ok(connection),
                Err(error) if connection.reused && is_connection_lost(&error) => {
                    connection.let_go();
                }
                Err(error) if self.pool().rechecked(&error, connection.client())? => {}
                Err(error) => return Err(self.failed(&error)),
            }
        }
    }

    /// A connection in a new read-write transaction whose `BEGIN` carries `statements`
    /// ([`Connection::begin_with`]): one round trip. The rows of each, in order.
    fn begin_with(
        &self,
        statements: &[Piped<'_>],
    ) -> Result<(Connection<'_>, Vec<Vec<Row>>), StoreError> {
        loop {
            let mut connection = self.pool().get()?;
            match connection.begin_with(statements) {
                Ok(answers) => return Ok((connection, answers)),
                Err(error) if connection.reused && is_connection_lost(&error) => {
                    connection.let_go();
                }
                Err(error) if self.pool().rechecked(&error, connection.client())? => {}
                Err(error) => return Err(self.failed(&error)),
            }
        }
    }

    /// Takes the advisory transaction lock `(class, name)` in the transaction of
    /// `connection`: at once if it is free, else (unless `wait` says not to) waiting as the
    /// store's lock policy says, told once. False when it was busy and not waited for.
    fn take_lock(
        &self,
        connection: &mut Connection<'_>,
        class: i32,
        name: &str,
        what: &str,
        wait: Wait,
    ) -> Result<bool, StoreError> {
        let key = lock_key(name);
        let taken: bool = connection
            .client()
            .query_one(TRY_LOCK, &[&class, &key])
            .map_err(|error| self.failed(&error))?
            .get(0);
        if taken {
            return Ok(true);
        }
        Ok(self
            .wait_for_lock(connection, class, name, what, wait, &[])?
            .is_some())
    }

    /// Waits for the advisory transaction lock `(class, name)`, found busy, as
    /// [`PgStore::take_lock`] says, and runs `then` once it is taken: the lock's timeout set,
    /// the wait, the timeout unset and `then` go in one round trip. The rows of each of
    /// `then` once the lock is taken; `None` when `wait` says not to wait.
    fn wait_for_lock(
        &self,
        connection: &mut Connection<'_>,
        class: i32,
        name: &str,
        what: &str,
        wait: Wait,
        then: &[Piped<'_>],
    ) -> Result<Option<Vec<Vec<Row>>>, StoreError> {
        let key = lock_key(name);
        let client = connection.client();
        if wait == Wait::Never {
            return Ok(None);
        }
        let timed_out = || StoreError::LockTimeout {
            lock: format!("{} ({what})", self.shown()),
            holder: Holder::Unknown,
            seconds: self.lock.timeout.as_secs_f64(),
        };
        // A lock_timeout of 0 waits for ever: no wait at all is no wait.
        let millis = self.lock.timeout.as_millis();
        if millis == 0 {
            return Err(timed_out());
        }
        (self.lock.on_wait)(&format!("waiting for {what} held by {}", Holder::Unknown));
        let timeout = millis.to_string();
        let no_timeout = "0";
        let timeout_params: [&(dyn ToSql + Sync); 1] = [&timeout];
        let lock_params: [&(dyn ToSql + Sync); 2] = [&class, &key];
        let no_timeout_params: [&(dyn ToSql + Sync); 1] = [&no_timeout];
        let mut piped: Vec<Piped<'_>> = vec![
            (SET_LOCK_TIMEOUT, &timeout_params),
            (WAIT_FOR_LOCK, &lock_params),
            (SET_LOCK_TIMEOUT, &no_timeout_params),
        ];
        piped.extend_from_slice(then);
        // The wait for the lock is the server's to end, at the lock timeout: the round trip
        // is given that long and the usual time to answer besides.
        let waited = client.answered_within(
            self.lock.timeout.saturating_add(client::ANSWER_WITHIN),
            |client| client.pipelined(&piped),
        );
        match waited {
            Ok(mut answers) => Ok(Some(answers.split_off(3))),
            Err(error) if error.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => Err(timed_out()),
            Err(error) => Err(self.failed(&error)),
        }
    }
}

impl Store for PgStore {
    fn with_lock(&self, policy: LockPolicy) -> Arc<dyn Store> {
        Arc::new(PgStore {
            shared: self.shared.clone(),
            lock: policy,
            groups: self.groups.clone(),
            boards: self.boards.clone(),
        })
    }

    fn readable_files(&self) -> Option<&Home> {
        None
    }

    fn is_shared_by_machines(&self) -> bool {
        true
    }

    fn location(&self) -> String {
        self.shown().to_string()
    }

    /// Checks the schema in full, remembered or not, and remembers nothing on this machine.
    fn only_looking(&self) {
        self.pool().only_looking();
    }

    fn check_answers(&self) -> Result<(), StoreError> {
        self.run(|client| client.batch_execute(""))
    }

    fn resident(&self) -> Arc<dyn Store> {
        self.pool().resident();
        Arc::new(PgStore {
            groups: Some(Arc::default()),
            boards: Some(Arc::default()),
            ..self.clone()
        })
    }

    /// Read in a transaction of the pool, whose first checked (and migrated) the schema, or
    /// confirmed the one remembered.
    fn schema_version(&self) -> Result<Option<super::SchemaVersion>, StoreError> {
        let (found, indexed): (i64, bool) = self.read(|transaction| {
            let found = transaction
                .query_one("SELECT coalesce(max(version), 0) FROM baton_schema", &[])
                .map_err(|error| self.failed(&error))?
                .get(0);
            let indexed =
                schema::has_words_index(transaction).map_err(|error| self.failed(&error))?;
            Ok((found, indexed))
        })?;
        Ok(Some(super::SchemaVersion {
            found,
            known: schema::SCHEMA,
            words_index: indexed.then_some(schema::WORDS_INDEX),
        }))
    }

    fn export_project(&self, project: &str) -> Result<ProjectImage, StoreError> {
        self.export(project)
    }

    fn import_project(&self, project: &str, image: &ProjectImage) -> Result<(), StoreError> {
        self.import(project, image)
    }
}

impl super::Boards for PgStore {
    fn board(&self, project: &str) -> Result<Board, StoreError> {
        self.board_now(project)
    }

    fn board_version(&self, project: &str) -> Option<Version> {
        self.version_of_board(project)
    }

    fn change_board(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        self.change(project, now, change)
    }

    fn snapshot(&self, project: &str) -> Result<Option<Snapshot>, StoreError> {
        self.snapshot_of(project)
    }

    fn previous_board(&self, project: &str) -> Result<Option<Board>, StoreError> {
        self.read(|transaction| self.read_previous(transaction, project))
    }

    fn restore_board(
        &self,
        project: &str,
        dry_run: bool,
        plan: &mut dyn FnMut(Restoring) -> Result<(Board, Vec<ActivityRecord>), GaveUp>,
    ) -> Result<(), StoreError> {
        self.restore(project, dry_run, plan)
    }

    fn log(
        &self,
        project: &str,
        since: Option<Timestamp>,
        last: Option<usize>,
    ) -> Result<Vec<ActivityRecord>, StoreError> {
        self.read(|transaction| self.read_log(transaction, project, since, last))
    }

    fn tail_log(&self, project: &str) -> Result<Box<dyn LogTail>, StoreError> {
        self.tail(project)
    }

    /// A change and its records commit together: nothing is ever left to log.
    fn catch_up_log(&self, _project: &str) -> Result<(), StoreError> {
        Ok(())
    }

    fn archived_task(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
        self.archived(project, id)
    }

    fn archived_tasks(&self, project: &str) -> Result<Vec<Task>, StoreError> {
        self.read_archive(project)
    }

    fn search_archive(&self, project: &str, search: &Search) -> Result<Vec<Task>, StoreError> {
        self.searched_archive(project, search)
    }

    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError> {
        self.run(|client| archive::highest_archived(client, project))
    }
}

impl Mailboxes for PgStore {
    fn mail(&self, project: &str) -> Result<Vec<Message>, StoreError> {
        self.read_mail(project)
    }

    fn read_positions(&self, project: &str) -> Result<ReadPositions, StoreError> {
        self.read_positions_of(project)
    }

    fn positions_and_mail(
        &self,
        project: &str,
    ) -> Result<(ReadPositions, Vec<Message>), StoreError> {
        self.read_positions_and_mail(project)
    }

    fn change_mail(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        self.change_mailbox(project, now, change)
    }
}

impl Presences for PgStore {
    fn announce_session(
        &self,
        project: &str,
        agent: &str,
        client: &str,
    ) -> Result<Presence, StoreError> {
        self.announce("session", project, agent, client)
    }

    fn announce_listener(&self, agent: &str) -> Result<Presence, StoreError> {
        self.announce("listener", "", agent, "")
    }

    fn is_listened(&self, agent: &str) -> bool {
        self.live("listener", agent, "")
            .is_ok_and(|live| !live.is_empty())
    }

    fn live_clients(&self, project: &str, agent: &str) -> Vec<String> {
        self.live("session", agent, project).unwrap_or_default()
    }

    fn try_hold(&self, duty: &Duty) -> Result<Option<Held>, StoreError> {
        self.hold(duty)
    }

    fn is_held(&self, duty: &Duty) -> bool {
        self.is_duty_held(duty)
    }

    fn mark_once(&self, mark: &str) -> Result<bool, StoreError> {
        self.mark(mark)
    }
}

impl Feeds for PgStore {
    fn changes(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError> {
        self.feed(scope)
    }
}

impl McpSessions for PgStore {
    fn record_mcp_session(&self, session: &str, kept: &KeptMcpSession) -> Result<(), StoreError> {
        self.record_session(session, kept)
    }

    fn mcp_session(&self, session: &str) -> Result<Option<KeptMcpSession>, StoreError> {
        self.kept_session(session)
    }

    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError> {
        self.forget_sessions(sessions)
    }

    fn append_mcp_event(&self, session: &str, key: &str, data: &str) -> Result<(), StoreError> {
        self.append_event(session, key, data)
    }

    fn mcp_events_after(
        &self,
        session: &str,
        after: u64,
    ) -> Result<Vec<crate::store::mcp_sessions::McpEvent>, StoreError> {
        self.events_after(session, after)
    }

    fn mcp_events_end(&self, session: &str) -> Result<u64, StoreError> {
        self.events_end(session)
    }
}

/// A value as the JSON text the files keep it as.
fn encode(value: &impl serde::Serialize) -> Result<String, Failed> {
    serde_json::to_string(value)
        .map_err(|error| StoreError::corrupt(&Origin::unwritten())(error.to_string()))
}

/// Takes the advisory transaction lock ($1, $2) if it is free: whether it did.
const TRY_LOCK: &str = "SELECT pg_try_advisory_xact_lock($1, $2)";

/// Waits for the advisory transaction lock ($1, $2), for as long as the lock timeout.
const WAIT_FOR_LOCK: &str = "SELECT pg_advisory_xact_lock($1, $2)";

/// Sets the lock timeout of the transaction to $1 (milliseconds; 0: none), as `SET LOCAL`.
const SET_LOCK_TIMEOUT: &str = "SELECT set_config('lock_timeout', $1, true)";

/// The second key of the advisory lock on `name`: 32 bits of its SHA-256. Two names that
/// share one only take turns where they need not.
fn lock_key(name: &str) -> i32 {
    let digest = Sha256::digest(name.as_bytes());
    i32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// What `slot` holds, or what `start` makes, kept there for the next caller: one per process,
/// started by whoever asks first.
fn started_once<T>(
    slot: &Mutex<Option<Arc<T>>>,
    start: impl FnOnce() -> Result<T, StoreError>,
) -> Result<Arc<T>, StoreError> {
    let mut kept = slot.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(kept) = &*kept {
        return Ok(kept.clone());
    }
    let started = Arc::new(start()?);
    *kept = Some(started.clone());
    Ok(started)
}
