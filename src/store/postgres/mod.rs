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
//! ([`Store::catch_up_log`] does nothing; a snapshot recovers nothing); the board before the
//! last change is kept (as the tasks that change touched, as they were) for `doctor
//! --restore`.

pub mod address;
pub mod client;
mod listen;
pub mod pool;
mod presence;
pub mod schema;
pub mod tls;
pub mod url;

// The test cluster runs Debian's server as its own user: Unix only (Windows is linted and
// unit-tested under Wine, where no PostgreSQL runs).
#[cfg(all(test, unix))]
pub mod cluster;
#[cfg(all(test, unix))]
mod tests;

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use postgres::error::SqlState;
use sha2::{Digest, Sha256};

use self::address::Address;
use self::client::{Client, Statements};
use self::listen::{Kind, Listener, Notice};
use self::pool::{Connection, Pool, is_connection_lost};
use self::presence::{Announcement, Keeper};
use super::copy::{BoardImage, ProjectImage};
use super::document::{Collection, Document, DocumentChange, Documents, Edit, Version, Wait};
use super::files::HomeFiles;
use super::group::{Group, Work, group_of};
use super::lock::{Holder, LockPolicy};
use super::mailbox::{MailCommitted, Mailbox};
use super::paths::Home;
use super::presence::Presence;
use super::transaction::{Archive, Committed};
use super::{
    ChangeFeed, Duty, GaveUp, Held, LogTail, Restoring, Scope, Snapshot, Store, StoreError,
    Transaction, versioned,
};
use crate::board::mail::{Message, ReadPositions};
use crate::board::record::ActivityRecord;
use crate::board::task::{Head, Task, TaskId};
use crate::board::{BOARD_SCHEMA, Board, Kept, StoredTasks, Undecoded};
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

/// Each project's board as last read or written, with the version it had.
type Boards = Mutex<HashMap<String, (i64, Arc<Read>)>>;

/// The batch in progress of each project's board.
type Groups = Mutex<HashMap<String, Arc<Group<Batch>>>>;

/// The changes of one batch to a project's board: the transaction they are applied to, the
/// board as it was read, and the database connection's client, which the changes' archive
/// reads share until the leader writes the batch with it.
struct Batch {
    transaction: Transaction,
    read: Read,
    client: Arc<Mutex<Option<Client>>>,
}

impl Batch {
    /// Gives the client the changes shared back to `connection`, which then commits, or
    /// rolls back when given back to the pool.
    fn give_back(
        client: &Mutex<Option<Client>>,
        connection: &mut Connection<'_>,
    ) -> Result<(), StoreError> {
        let client = client.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some(client) = client else {
            return Err(StoreError::Unfinished);
        };
        connection.restore(client);
        Ok(())
    }
}

impl Work for Batch {
    type Mark = <Transaction as Work>::Mark;

    fn mark(&self) -> Self::Mark {
        self.transaction.mark()
    }

    fn roll_back(&mut self, mark: Self::Mark) {
        self.transaction.roll_back(mark);
    }
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
        })
}

/// A change that failed: the store's error, or the change's own refusal.
type Failed = StoreError;

impl PgStore {
    /// The store at `address`, with this machine's own files under `home`; nothing is
    /// connected until the first call.
    pub fn new(address: Address, home: Home, lock: LockPolicy) -> PgStore {
        PgStore {
            shared: Arc::new(Shared {
                pool: Pool::new(address),
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

    /// Where a thing of this store is, to name it in words (`postgres://app@db/baton#…`).
    fn origin(&self, relative: &str) -> PathBuf {
        PathBuf::from(format!("{}#{relative}", self.shown()))
    }

    fn board_origin(&self, project: &str) -> PathBuf {
        self.origin(&format!("projects/{project}/board"))
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
                Err(error) => return Err(self.failed(&error)),
            }
        }
    }

    /// Runs `work` in a repeatable-read, read-only transaction: what it reads is one
    /// moment's state, whatever commits meanwhile.
    fn read<T>(
        &self,
        mut work: impl FnMut(&mut client::Transaction<'_>) -> Result<T, Failed>,
    ) -> Result<T, StoreError> {
        let mut outcome = None;
        self.run(|client| {
            let mut transaction = client.read_transaction()?;
            outcome = Some(work(&mut transaction));
            transaction.commit()
        })?;
        outcome.unwrap_or(Err(StoreError::Unfinished))
    }

    /// [`Store::change_board`] in a resident process: the change joins the batch of the
    /// project's next transaction, whose leader opens it (the advisory lock taken, the board
    /// read) and, once every change of the batch is applied in turn, writes and commits them
    /// all at once. A change that gives up is rolled back alone; a batch that fails to commit
    /// fails every change in it, none of which then counts.
    fn change_in_group(
        &self,
        groups: &Groups,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let group = group_of(groups, project);
        // A change that gave up was rolled back by the group and refuses only itself: its
        // caller holds why.
        let _gave_up: Result<(), GaveUp> = group.run(
            || self.begin_batch(project, now),
            |batch| batch.transaction.apply_at(now, change),
            |batch, connection| self.write_batch(project, batch, connection),
        )?;
        Ok(())
    }

    /// A change's transaction (one change's, or a batch's): begun, the project's board lock
    /// taken, its board read, the archive read in it through the client it shares with the
    /// changes while they run.
    fn begin_batch(
        &self,
        project: &str,
        now: Timestamp,
    ) -> Result<(Connection<'_>, Batch), StoreError> {
        let mut connection = self.begin()?;
        let what = format!("the board lock of project {project}");
        self.take_lock(
            &mut connection,
            BOARD_LOCKS,
            project,
            &what,
            Wait::AsTheStoreDoes,
        )?;
        let read = self.read_board(connection.client(), project)?;
        let client = Arc::new(Mutex::new(Some(connection.take())));
        let archive = Arc::new(ArchiveInTransaction {
            client: client.clone(),
            pool_shown: self.shown().to_string(),
            project: project.to_string(),
        });
        let transaction = Transaction::new(read.board.clone(), now).with_archive(archive);
        Ok((
            connection,
            Batch {
                transaction,
                read,
                client,
            },
        ))
    }

    /// Writes what a batch's changes made and commits it: one transaction for them all.
    fn write_batch(
        &self,
        project: &str,
        batch: Batch,
        connection: &mut Connection<'_>,
    ) -> Result<(), StoreError> {
        let Batch {
            transaction,
            read,
            client,
        } = batch;
        Batch::give_back(&client, connection)?;
        let committed = transaction.commit()?;
        if committed.board.is_none() && committed.records.is_empty() && committed.project.is_none()
        {
            // Every change of the batch gave up: the connection rolls back when given back.
            return Ok(());
        }
        let written = self.write_change(connection.client(), project, &read, committed)?;
        connection.commit().map_err(|error| self.failed(&error))?;
        if let Some((version, board)) = written {
            self.keep_board(project, version, &board);
        }
        Ok(())
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
        let client = connection.client();
        let taken: bool = client
            .query_one("SELECT pg_try_advisory_xact_lock($1, $2)", &[&class, &key])
            .map_err(|error| self.failed(&error))?
            .get(0);
        if taken {
            return Ok(true);
        }
        if wait == Wait::Never {
            return Ok(false);
        }
        let timed_out = || StoreError::LockTimeout {
            path: PathBuf::from(format!("{} ({what})", self.shown())),
            holder: Holder::Unknown,
            seconds: self.lock.timeout.as_secs_f64(),
        };
        // A lock_timeout of 0 waits for ever: no wait at all is no wait.
        let millis = self.lock.timeout.as_millis();
        if millis == 0 {
            return Err(timed_out());
        }
        (self.lock.on_wait)(&format!("waiting for {what} held by {}", Holder::Unknown));
        client
            .batch_execute(&format!("SET LOCAL lock_timeout = {millis}"))
            .map_err(|error| self.failed(&error))?;
        // The wait for the lock is the server's to end, at the lock timeout: the statement
        // is given that long and the usual time to answer besides.
        let waited = client.answered_within(
            self.lock.timeout.saturating_add(client::ANSWER_WITHIN),
            |client| client.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&class, &key]),
        );
        match waited {
            Ok(_) => {}
            Err(error) if error.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
                return Err(timed_out());
            }
            Err(error) => return Err(self.failed(&error)),
        }
        client
            .batch_execute("SET LOCAL lock_timeout = 0")
            .map_err(|error| self.failed(&error))?;
        Ok(true)
    }

    /// Reads the board of `project` as `client` sees it.
    fn read_board(&self, client: &mut impl Statements, project: &str) -> Result<Read, Failed> {
        let fields = client
            .query_opt(
                "SELECT schema, next_id, version FROM boards WHERE project = $1",
                &[&project],
            )
            .map_err(|error| self.failed(&error))?;
        let version = fields.as_ref().map(|row| row.get::<_, i64>(2));
        if let Some(kept) = self.kept_board(project, version)
            && fields
                .as_ref()
                .is_some_and(|row| row.get::<_, i64>(1) == kept.board.next_id as i64)
        {
            // The same version with the same next id: a board made again after its row was
            // removed (a copy's --replace) starts its versions again, never its ids.
            return Ok(kept);
        }
        let rows = client
            .query(
                "SELECT id, task FROM tasks WHERE project = $1 ORDER BY id",
                &[&project],
            )
            .map_err(|error| self.failed(&error))?;
        let texts: Vec<(i64, String)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        let (schema, next_id) = match &fields {
            Some(row) => (row.get::<_, i32>(0), row.get::<_, i64>(1)),
            None => (BOARD_SCHEMA as i32, 1),
        };
        let board = self.board_of(project, schema, next_id, &texts)?;
        let read = Read {
            exists: fields.is_some(),
            board,
            texts: texts.into(),
        };
        if let Some(version) = version {
            self.keep_board(project, version, &read);
        }
        Ok(read)
    }

    /// The board of `project` kept at `version`, when this resident process keeps it.
    fn kept_board(&self, project: &str, version: Option<i64>) -> Option<Read> {
        let boards = self.boards.as_ref()?;
        let version = version?;
        let boards = boards.lock().unwrap_or_else(PoisonError::into_inner);
        let (kept, read) = boards.get(project)?;
        (*kept == version).then(|| Read::clone(read))
    }

    /// Keeps `read` as the board of `project` at `version`, in a resident process.
    fn keep_board(&self, project: &str, version: i64, read: &Read) {
        if let Some(boards) = &self.boards {
            let mut boards = boards.lock().unwrap_or_else(PoisonError::into_inner);
            boards.insert(project.to_string(), (version, Arc::new(read.clone())));
        }
    }

    /// The board of `project` with these fields and tasks (each as its text).
    fn board_of(
        &self,
        project: &str,
        schema: i32,
        next_id: i64,
        texts: &[(i64, String)],
    ) -> Result<Board, Failed> {
        let origin = self.board_origin(project);
        if schema as i64 > BOARD_SCHEMA as i64 {
            return Err(StoreError::NewerSchema {
                path: origin,
                found: schema as u64,
                known: BOARD_SCHEMA,
            });
        }
        let mut stored = StoredTasks::with_capacity(texts.len());
        let mut tasks = Vec::with_capacity(texts.len());
        for (place, (id, text)) in texts.iter().enumerate() {
            let task: Task = serde_json::from_str(text).map_err(|error| StoreError::Corrupt {
                path: origin.clone(),
                detail: format!("#{id}: {error}"),
            })?;
            stored.push(Head::of(&task), place..place + 1);
            tasks.push(task);
        }
        Ok(Board::from_store(
            schema.max(0) as u32,
            project.to_string(),
            next_id.max(0) as u64,
            stored,
            Arc::new(Tasks(tasks)),
            &origin,
        ))
    }

    /// The board of `project` before its last change, as `client` sees it.
    fn read_previous(
        &self,
        client: &mut impl Statements,
        project: &str,
    ) -> Result<Option<Board>, Failed> {
        let fields = client
            .query_opt(
                "SELECT previous_schema, previous_next_id FROM boards WHERE project = $1",
                &[&project],
            )
            .map_err(|error| self.failed(&error))?;
        let Some(fields) = fields else {
            return Ok(None);
        };
        let (Some(schema), Some(next_id)) = (
            fields.get::<_, Option<i32>>(0),
            fields.get::<_, Option<i64>>(1),
        ) else {
            return Ok(None);
        };
        let rows = client
            .query(
                "SELECT t.id, t.task FROM tasks t WHERE t.project = $1 \
                   AND NOT EXISTS (SELECT 1 FROM board_previous p \
                                   WHERE p.project = t.project AND p.id = t.id) \
                 UNION ALL \
                 SELECT id, task FROM board_previous WHERE project = $1 AND task IS NOT NULL \
                 ORDER BY 1",
                &[&project],
            )
            .map_err(|error| self.failed(&error))?;
        let texts: Vec<(i64, String)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        self.board_of(project, schema, next_id, &texts).map(Some)
    }

    /// The activity records of `project`, oldest first: those at or after `since`, and of
    /// them the last `last`.
    fn read_log(
        &self,
        client: &mut impl Statements,
        project: &str,
        since: Option<Timestamp>,
        last: Option<usize>,
    ) -> Result<Vec<ActivityRecord>, Failed> {
        let since = since.map_or(i64::MIN, |since| since.datetime().timestamp_millis());
        let last = last.map(|last| i64::try_from(last).unwrap_or(i64::MAX));
        let rows = client
            .query(
                "SELECT record FROM activity WHERE project = $1 AND at_millis >= $2 \
                 ORDER BY seq DESC LIMIT $3",
                &[&project, &since, &last],
            )
            .map_err(|error| self.failed(&error))?;
        // A record a newer baton wrote, that this one cannot read, is passed over, as a
        // line of the file is.
        let mut records: Vec<ActivityRecord> = rows
            .iter()
            .filter_map(|row| serde_json::from_str(row.get::<_, &str>(0)).ok())
            .collect();
        records.reverse();
        Ok(records)
    }

    /// Writes what a change of the board of `project` committed, in the transaction of
    /// `client`, which read the board as `read`.
    fn write_change(
        &self,
        client: &mut Client,
        project: &str,
        read: &Read,
        committed: Committed,
    ) -> Result<Option<(i64, Read)>, Failed> {
        let fail = |error: client::Error| self.failed(&error);
        if let Some(document) = &committed.project {
            let (kind, name) = ("project", project);
            write_document(client, kind, name, document).map_err(fail)?;
        }
        if !committed.archived.is_empty() {
            let ids: Vec<i64> = committed
                .archived
                .iter()
                .map(|task| task.id.0 as i64)
                .collect();
            let texts = committed
                .archived
                .iter()
                .map(encode)
                .collect::<Result<Vec<String>, Failed>>()?;
            client
                .execute(
                    "INSERT INTO archive (project, id, task) \
                     SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) \
                         WITH ORDINALITY AS r(id, task, n) ORDER BY r.n",
                    &[&project, &ids, &texts],
                )
                .map_err(fail)?;
        }
        let mut written = None;
        if let Some(board) = committed.board {
            let changes = changes_of(read, &board)?;
            let version = self.write_board(client, project, read, &board, &changes)?;
            if committed.records.is_empty() {
                self.notify(client, &[PgStore::notice(project, Kind::Board)])?;
            }
            written = Some((version, read.after(board, changes)));
        }
        self.append_log(client, project, &committed.records)?;
        Ok(written)
    }

    /// Writes `board` over the board read as `read`: the tasks `changes` names, the board's
    /// fields, and what they were before (the previous board). Returns the board's new
    /// version.
    fn write_board(
        &self,
        client: &mut Client,
        project: &str,
        read: &Read,
        board: &Board,
        changes: &Changes,
    ) -> Result<i64, Failed> {
        let fail = |error: client::Error| self.failed(&error);
        client
            .execute("DELETE FROM board_previous WHERE project = $1", &[&project])
            .map_err(fail)?;
        if read.exists {
            let before: HashMap<i64, &str> = read
                .texts
                .iter()
                .map(|(id, text)| (*id, text.as_str()))
                .collect();
            let touched: Vec<i64> = changes
                .removed
                .iter()
                .copied()
                .chain(changes.written.iter().map(|(id, _)| *id))
                .collect();
            let was: Vec<Option<&str>> = touched.iter().map(|id| before.get(id).copied()).collect();
            client
                .execute(
                    "INSERT INTO board_previous (project, id, task) \
                     SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) AS r(id, task)",
                    &[&project, &touched, &was],
                )
                .map_err(fail)?;
        }
        if !changes.removed.is_empty() {
            client
                .execute(
                    "DELETE FROM tasks WHERE project = $1 AND id = ANY($2)",
                    &[&project, &changes.removed],
                )
                .map_err(fail)?;
        }
        if !changes.written.is_empty() {
            let ids: Vec<i64> = changes.written.iter().map(|(id, _)| *id).collect();
            let texts: Vec<&str> = changes
                .written
                .iter()
                .map(|(_, text)| text.as_str())
                .collect();
            client
                .execute(
                    "INSERT INTO tasks (project, id, task) \
                     SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) AS r(id, task) \
                     ON CONFLICT (project, id) DO UPDATE SET task = excluded.task",
                    &[&project, &ids, &texts],
                )
                .map_err(fail)?;
        }
        let (previous_schema, previous_next_id) = match read.exists {
            true => (
                Some(read.board.schema as i32),
                Some(read.board.next_id as i64),
            ),
            false => (None, None),
        };
        let version: i64 = client
            .query_one(
                "INSERT INTO boards (project, schema, next_id, version, previous_schema, \
                     previous_next_id) \
                 VALUES ($1, $2, $3, 1, $4, $5) \
                 ON CONFLICT (project) DO UPDATE SET schema = excluded.schema, \
                     next_id = excluded.next_id, version = boards.version + 1, \
                     previous_schema = excluded.previous_schema, \
                     previous_next_id = excluded.previous_next_id \
                 RETURNING version",
                &[
                    &project,
                    &(board.schema as i32),
                    &(board.next_id as i64),
                    &previous_schema,
                    &previous_next_id,
                ],
            )
            .map_err(fail)?
            .get(0);
        Ok(version)
    }

    /// Appends `records` to the log of `project`, numbered on from its last; the caller
    /// holds the project's lock, so the numbers are gapless and in commit order. Each is
    /// told (on commit) to the feeds.
    fn append_log(
        &self,
        client: &mut Client,
        project: &str,
        records: &[ActivityRecord],
    ) -> Result<(), Failed> {
        if records.is_empty() {
            return Ok(());
        }
        let last: i64 = client
            .query_one(
                "SELECT coalesce(max(seq), 0) FROM activity WHERE project = $1",
                &[&project],
            )
            .map_err(|error| self.failed(&error))?
            .get(0);
        let at: Vec<i64> = records
            .iter()
            .map(|record| record.at.datetime().timestamp_millis())
            .collect();
        let texts = records
            .iter()
            .map(encode)
            .collect::<Result<Vec<String>, Failed>>()?;
        client
            .execute(
                "INSERT INTO activity (project, seq, at_millis, record) \
                 SELECT $1, $4 + r.n, r.at, r.record \
                 FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r(at, record, n)",
                &[&project, &at, &texts, &last],
            )
            .map_err(|error| self.failed(&error))?;
        let notices: Vec<Notice> = records
            .iter()
            .zip(last + 1..)
            .map(|(record, seq)| Notice {
                project: project.to_string(),
                kind: Kind::Log,
                action: Some(record.action.to_string()),
                task: record.task.map(|task| task.0),
                seq: Some(seq.max(0) as u64),
            })
            .collect();
        self.notify(client, &notices)
    }

    /// Sends `notices` to every listening process, when (and if) the transaction of `client`
    /// commits.
    fn notify(&self, client: &mut impl Statements, notices: &[Notice]) -> Result<(), Failed> {
        if notices.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = notices.iter().map(Notice::text).collect();
        client
            .execute(
                "SELECT pg_notify($1, n.text) FROM unnest($2::text[]) WITH ORDINALITY AS n(text, i) \
                 ORDER BY n.i",
                &[&listen::CHANNEL, &texts],
            )
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// Tells the feeds of a change of `document` where they follow it (the tokens).
    fn notify_document(&self, client: &mut Client, document: &Document) -> Result<(), Failed> {
        match document {
            Document::Tokens => self.notify(client, &[PgStore::notice("", Kind::Tokens)]),
            _ => Ok(()),
        }
    }

    /// A notice of `kind` in `project`, naming nothing more.
    fn notice(project: &str, kind: Kind) -> Notice {
        Notice {
            project: project.to_string(),
            kind,
            action: None,
            task: None,
            seq: None,
        }
    }

    /// The presence keeper of this process, started on first use.
    fn keeper(&self) -> Result<Arc<Keeper>, StoreError> {
        started_once(&self.shared.keeper, || {
            // The schema is checked (and made) by the pool's first connection.
            self.run(|_| Ok(()))?;
            Keeper::start(self.pool().address.clone(), self.pool().tls()?)
        })
    }

    /// The listening thread of this process, started on first use (once the schema is
    /// known good).
    fn listener(&self) -> Result<Arc<Listener>, StoreError> {
        started_once(&self.shared.listener, || {
            self.run(|_| Ok(()))?;
            Listener::start(
                self.pool().address.clone(),
                self.pool().tls()?,
                self.shown(),
            )
        })
    }

    fn live(&self, kind: &str, agent: &str, project: &str) -> Result<Vec<String>, StoreError> {
        self.run(|client| presence::live(client, kind, agent, project))
    }
}

/// A board as a change read it.
#[derive(Debug, Clone)]
struct Read {
    /// Whether the project had a board (a row of `boards`).
    exists: bool,
    board: Board,
    /// Its tasks as stored: id and text, in id order (shared with the copy a resident
    /// process keeps, which a read of the board does not copy again).
    texts: Arc<[(i64, String)]>,
}

impl Read {
    /// The board as written over this one: `board`, its tasks' texts this one's with
    /// `changes` made.
    fn after(&self, board: Board, changes: Changes) -> Read {
        let removed: HashSet<i64> = changes.removed.into_iter().collect();
        let mut texts: std::collections::BTreeMap<i64, String> = self
            .texts
            .iter()
            .filter(|(id, _)| !removed.contains(id))
            .cloned()
            .collect();
        texts.extend(changes.written);
        Read {
            exists: true,
            board,
            texts: texts.into_iter().collect::<Vec<_>>().into(),
        }
    }
}

/// What a write changes of the tasks of a board.
struct Changes {
    /// The ids that leave the board.
    removed: Vec<i64>,
    /// The tasks written anew (added or changed), each with its text.
    written: Vec<(i64, String)>,
}

/// The tasks of a board read from the database, decoded: the board asks for them whole when
/// a command needs one.
#[derive(Debug)]
struct Tasks(Vec<Task>);

impl Undecoded for Tasks {
    fn decode(&self, place: &Range<usize>) -> Result<Task, String> {
        self.0
            .get(place.start)
            .cloned()
            .ok_or_else(|| format!("no task at place {}", place.start))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What `board` changes of the board read as `read`: the tasks the change made or changed
/// (those it left alone are known by their place among the ones read), and those it took
/// off. A board not made from `read` (a restore's) is compared task by task.
fn changes_of(read: &Read, board: &Board) -> Result<Changes, Failed> {
    let from_read = match (board.undecoded(), read.board.undecoded()) {
        (Some(mine), Some(read)) => Arc::ptr_eq(mine, read),
        _ => false,
    };
    let mut staying: HashSet<i64> = HashSet::new();
    let mut written: Vec<(i64, String)> = Vec::new();
    if from_read {
        for kept in board.kept() {
            match kept {
                Kept::Stored(place) => {
                    if let Some((id, _)) = read.texts.get(place.start) {
                        staying.insert(*id);
                    }
                }
                Kept::Changed(task) => written.push((task.id.0 as i64, encode(task)?)),
            }
        }
    } else {
        let before: HashMap<i64, &str> = read
            .texts
            .iter()
            .map(|(id, text)| (*id, text.as_str()))
            .collect();
        for task in board.tasks() {
            let task = task?;
            let id = task.id.0 as i64;
            let text = encode(task)?;
            match before.get(&id) == Some(&text.as_str()) {
                true => {
                    staying.insert(id);
                }
                false => written.push((id, text)),
            }
        }
    }
    // One row a task: were an id on the board twice, its last task is the one kept.
    let mut seen = HashSet::new();
    written.reverse();
    written.retain(|(id, _)| seen.insert(*id));
    written.reverse();
    let removed = read
        .texts
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !staying.contains(id) && !seen.contains(id))
        .collect();
    Ok(Changes { removed, written })
}

/// A value as the JSON text the files keep it as.
fn encode(value: &impl serde::Serialize) -> Result<String, Failed> {
    serde_json::to_string(value).map_err(|error| StoreError::Corrupt {
        path: PathBuf::from("(a value being written)"),
        detail: error.to_string(),
    })
}

/// The second key of the advisory lock on `name`: 32 bits of its SHA-256. Two names that
/// share one only take turns where they need not.
fn lock_key(name: &str) -> i32 {
    let digest = Sha256::digest(name.as_bytes());
    i32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// Writes the text of the document `(kind, name)`, counting its version up.
fn write_document(
    client: &mut impl Statements,
    kind: &str,
    name: &str,
    text: &[u8],
) -> Result<u64, client::Error> {
    client.execute(
        "INSERT INTO documents (kind, name, body, version) VALUES ($1, $2, $3, 1) \
         ON CONFLICT (kind, name) DO UPDATE SET body = excluded.body, \
             version = documents.version + 1",
        &[&kind, &name, &text],
    )
}

/// Where a document is kept: its kind and name, or `None` for this machine's own, which
/// are files.
fn place_of(document: &Document) -> Option<(&'static str, &str)> {
    Some(match document {
        Document::Project(id) => ("project", id.as_str()),
        Document::Agent(name) => ("agent", name.as_str()),
        Document::Tokens => ("tokens", ""),
        Document::Alerts => ("alerts", ""),
        Document::AlertsDropped => ("alerts-dropped", ""),
        Document::QueuedAlert(name) => ("queued-alert", name.as_str()),
        Document::SetupManifest | Document::ProjectMap => return None,
    })
}

/// The lock that guards a document, and its words: a project's record is guarded by its
/// board's lock (a project change and a board change never interleave), the alert queue's
/// documents by the queue's one lock.
fn lock_of(document: &Document) -> (i32, String, String) {
    match document {
        Document::Project(id) => (
            BOARD_LOCKS,
            id.clone(),
            format!("the board lock of project {id}"),
        ),
        Document::AlertsDropped | Document::QueuedAlert(_) => (
            DOCUMENT_LOCKS,
            "alert-queue".to_string(),
            "the alert queue lock".to_string(),
        ),
        other => {
            let (kind, name) = place_of(other).unwrap_or(("", ""));
            (
                DOCUMENT_LOCKS,
                format!("{kind}/{name}"),
                format!("the lock of {kind} {name}").trim_end().to_string(),
            )
        }
    }
}

/// The archive of a project as a change reads it: in the change's own transaction.
struct ArchiveInTransaction {
    client: Arc<Mutex<Option<Client>>>,
    pool_shown: String,
    project: String,
}

impl std::fmt::Debug for ArchiveInTransaction {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ArchiveInTransaction")
            .field("store", &self.pool_shown)
            .field("project", &self.project)
            .finish()
    }
}

impl ArchiveInTransaction {
    fn query<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, client::Error>,
    ) -> Result<T, StoreError> {
        let mut client = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(client) = client.as_mut() else {
            return Err(StoreError::Unfinished);
        };
        work(client).map_err(|error| {
            let detail = pool::describe(&error);
            match is_connection_lost(&error) {
                true => StoreError::Unreachable {
                    store: self.pool_shown.clone(),
                    detail,
                },
                false => StoreError::Database {
                    store: self.pool_shown.clone(),
                    detail,
                },
            }
        })
    }
}

impl Archive for ArchiveInTransaction {
    fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        let text: Option<String> = self.query(|client| {
            Ok(client
                .query_opt(
                    "SELECT task FROM archive WHERE project = $1 AND id = $2 \
                     ORDER BY place DESC LIMIT 1",
                    &[&self.project, &(id.0 as i64)],
                )?
                .map(|row| row.get(0)))
        })?;
        text.map(|text| decode_archived(&self.pool_shown, &self.project, &text))
            .transpose()
    }

    fn tasks(&self) -> Result<Vec<Task>, StoreError> {
        let texts: Vec<String> = self.query(|client| {
            Ok(client
                .query(
                    "SELECT task FROM archive WHERE project = $1 ORDER BY place",
                    &[&self.project],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        texts
            .iter()
            .map(|text| decode_archived(&self.pool_shown, &self.project, text))
            .collect()
    }

    fn highest_id(&self) -> Result<u64, StoreError> {
        self.query(|client| highest_archived(client, &self.project))
    }
}

fn highest_archived(client: &mut impl Statements, project: &str) -> Result<u64, client::Error> {
    let highest: i64 = client
        .query_one(
            "SELECT coalesce(max(id), 0) FROM archive WHERE project = $1",
            &[&project],
        )?
        .get(0);
    Ok(highest.max(0) as u64)
}

fn decode_archived(shown: &str, project: &str, text: &str) -> Result<Task, StoreError> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt {
        path: PathBuf::from(format!("{shown}#projects/{project}/archive")),
        detail: error.to_string(),
    })
}

impl Documents for PgStore {
    fn document_origin(&self, document: &Document) -> PathBuf {
        match place_of(document) {
            None => self.shared.local.document_origin(document),
            // The same names as in the files, after the store's address.
            Some(_) => {
                let home = Home::new(PathBuf::new());
                let relative = HomeFiles::new(home, self.lock).document_origin(document);
                self.origin(&relative.to_string_lossy())
            }
        }
    }

    fn load_document(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.load_document(document);
        };
        self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT body FROM documents WHERE kind = $1 AND name = $2",
                    &[&kind, &name],
                )?
                .map(|row| row.get::<_, Vec<u8>>(0)))
        })
    }

    fn document_version(&self, document: &Document) -> Option<Version> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.document_version(document);
        };
        self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT version FROM documents WHERE kind = $1 AND name = $2",
                    &[&kind, &name],
                )?
                .map(|row| row.get::<_, i64>(0)))
        })
        .ok()
        .flatten()
        .map(|version| Version::Counted(version as u64))
    }

    fn update_document(
        &self,
        document: &Document,
        wait: Wait,
        change: &mut DocumentChange<'_>,
    ) -> Result<bool, StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.update_document(document, wait, change);
        };
        let mut connection = self.begin()?;
        let (class, key, what) = lock_of(document);
        if !self.take_lock(&mut connection, class, &key, &what, wait)? {
            return Ok(false);
        }
        let client = connection.client();
        let current: Option<Vec<u8>> = client
            .query_opt(
                "SELECT body FROM documents WHERE kind = $1 AND name = $2",
                &[&kind, &name],
            )
            .map_err(|error| self.failed(&error))?
            .map(|row| row.get(0));
        let Ok(edit) = change(current.as_deref()) else {
            return Ok(true);
        };
        let written = match edit {
            Edit::Keep => return Ok(true),
            Edit::Write(text) => write_document(client, kind, name, &text),
            Edit::WriteUnsynced(text) => {
                // What a power cut may lose harmlessly: committed without waiting for the
                // log to reach the disk, as the files write it without a sync.
                client
                    .batch_execute("SET LOCAL synchronous_commit = off")
                    .and_then(|()| write_document(client, kind, name, &text))
            }
            Edit::Remove => client.execute(
                "DELETE FROM documents WHERE kind = $1 AND name = $2",
                &[&kind, &name],
            ),
        };
        written.map_err(|error| self.failed(&error))?;
        self.notify_document(connection.client(), document)?;
        connection.commit().map_err(|error| self.failed(&error))?;
        Ok(true)
    }

    fn save_document(&self, document: &Document, edit: Edit) -> Result<(), StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.save_document(document, edit);
        };
        let text = match edit {
            Edit::Keep => return Ok(()),
            Edit::Write(text) | Edit::WriteUnsynced(text) => Some(text),
            Edit::Remove => None,
        };
        let mut connection = self.begin()?;
        let client = connection.client();
        let written = match &text {
            Some(text) => write_document(client, kind, name, text),
            None => client.execute(
                "DELETE FROM documents WHERE kind = $1 AND name = $2",
                &[&kind, &name],
            ),
        };
        written.map_err(|error| self.failed(&error))?;
        self.notify_document(connection.client(), document)?;
        connection.commit().map_err(|error| self.failed(&error))
    }

    fn remove_document(&self, document: &Document) -> Result<bool, StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.remove_document(document);
        };
        let mut connection = self.begin()?;
        // Only the sender removes a queued alert: it needs no lock.
        if !matches!(document, Document::QueuedAlert(_)) {
            let (class, key, what) = lock_of(document);
            self.take_lock(&mut connection, class, &key, &what, Wait::AsTheStoreDoes)?;
        }
        let removed = connection
            .client()
            .execute(
                "DELETE FROM documents WHERE kind = $1 AND name = $2",
                &[&kind, &name],
            )
            .map_err(|error| self.failed(&error))?;
        self.notify_document(connection.client(), document)?;
        connection.commit().map_err(|error| self.failed(&error))?;
        Ok(removed > 0)
    }

    fn list_documents(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        let kind = match collection {
            Collection::Projects => "project",
            Collection::Agents => "agent",
            Collection::QueuedAlerts => "queued-alert",
        };
        let names: Vec<String> = self.run(|client| {
            Ok(client
                .query(
                    "SELECT name FROM documents WHERE kind = $1 ORDER BY name",
                    &[&kind],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        // Sorted as the files sort them (bytewise), whatever the database's collation.
        let mut names: Vec<String> = names
            .into_iter()
            .filter(|name| match collection {
                Collection::Projects => {
                    crate::names::check(crate::names::NameKind::Project, name).is_ok()
                }
                Collection::Agents => {
                    crate::names::check(crate::names::NameKind::Agent, name).is_ok()
                }
                Collection::QueuedAlerts => name.ends_with(".json"),
            })
            .collect();
        names.sort();
        Ok(names)
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

    fn home_files(&self) -> Option<&Home> {
        None
    }

    fn location(&self) -> String {
        self.shown().to_string()
    }

    fn check_answers(&self) -> Result<(), StoreError> {
        self.run(|client| client.batch_execute(""))
    }

    fn resident(&self) -> Arc<dyn Store> {
        Arc::new(PgStore {
            groups: Some(Arc::default()),
            boards: Some(Arc::default()),
            ..self.clone()
        })
    }

    fn board(&self, project: &str) -> Result<Board, StoreError> {
        self.read(|transaction| Ok(self.read_board(transaction, project)?.board))
    }

    /// The count of the board's writes, which every change moves on.
    fn board_version(&self, project: &str) -> Option<Version> {
        self.run(|client| {
            Ok(client
                .query_opt("SELECT version FROM boards WHERE project = $1", &[&project])?
                .map(|row| row.get::<_, i64>(0)))
        })
        .ok()
        .flatten()
        .map(|version| Version::Counted(version.max(0) as u64))
    }

    fn change_board(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        if let Some(groups) = &self.groups {
            return self.change_in_group(groups, project, now, change);
        }
        // A batch of one.
        let (mut connection, mut batch) = self.begin_batch(project, now)?;
        if change(&mut batch.transaction).is_err() {
            // A change that gave up: the connection rolls back when given back.
            return Batch::give_back(&batch.client, &mut connection);
        }
        self.write_batch(project, batch, &mut connection)
    }

    fn snapshot(&self, project: &str) -> Result<Option<Snapshot>, StoreError> {
        // One moment's board and log: a transaction sees no change half made, and waits
        // for none.
        self.read(|transaction| {
            let read = self.read_board(transaction, project)?;
            let log = self.read_log(transaction, project, None, None)?;
            Ok(Some(Snapshot {
                recovered: None,
                board: Ok(read.exists.then_some(read.board)),
                log: Ok(log),
            }))
        })
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
        let restoring = |client: &mut Client| -> Result<(Read, Restoring), Failed> {
            let read = self.read_board(client, project)?;
            let restoring = Restoring {
                previous: self.read_previous(client, project),
                current: Ok(read.exists.then(|| read.board.clone())),
                log: self.read_log(client, project, None, None)?,
            };
            Ok((read, restoring))
        };
        if dry_run {
            let mut connection = self.pool().get()?;
            let (_, looked_at) = restoring(connection.client())?;
            let _ = plan(looked_at);
            return Ok(());
        }
        let mut connection = self.begin()?;
        let what = format!("the board lock of project {project}");
        self.take_lock(
            &mut connection,
            BOARD_LOCKS,
            project,
            &what,
            Wait::AsTheStoreDoes,
        )?;
        let (read, looked_at) = restoring(connection.client())?;
        let Ok((board, records)) = plan(looked_at) else {
            return Ok(());
        };
        let changes = changes_of(&read, &board)?;
        self.write_board(connection.client(), project, &read, &board, &changes)?;
        self.notify(
            connection.client(),
            &[PgStore::notice(project, Kind::Board)],
        )?;
        self.append_log(connection.client(), project, &records)?;
        connection.commit().map_err(|error| self.failed(&error))
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
        let last: i64 = self.run(|client| {
            Ok(client
                .query_one(
                    "SELECT coalesce(max(seq), 0) FROM activity WHERE project = $1",
                    &[&project],
                )?
                .get(0))
        })?;
        Ok(Box::new(Tail {
            store: self.clone(),
            project: project.to_string(),
            last,
        }))
    }

    /// A change and its records commit together: nothing is ever left to log.
    fn catch_up_log(&self, _project: &str) -> Result<(), StoreError> {
        Ok(())
    }

    fn archived_task(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
        let text: Option<String> = self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT task FROM archive WHERE project = $1 AND id = $2 \
                     ORDER BY place DESC LIMIT 1",
                    &[&project, &(id.0 as i64)],
                )?
                .map(|row| row.get(0)))
        })?;
        text.map(|text| decode_archived(self.shown(), project, &text))
            .transpose()
    }

    fn archived_tasks(&self, project: &str) -> Result<Vec<Task>, StoreError> {
        let texts: Vec<String> = self.run(|client| {
            Ok(client
                .query(
                    "SELECT task FROM archive WHERE project = $1 ORDER BY place",
                    &[&project],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        texts
            .iter()
            .map(|text| decode_archived(self.shown(), project, text))
            .collect()
    }

    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError> {
        self.run(|client| highest_archived(client, project))
    }

    fn mail(&self, project: &str) -> Result<Vec<Message>, StoreError> {
        let texts: Vec<String> = self.run(|client| {
            Ok(client
                .query(
                    "SELECT message FROM mail WHERE project = $1 ORDER BY seq",
                    &[&project],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        // A message a newer baton wrote, that this one cannot read, is skipped and kept.
        Ok(texts
            .iter()
            .filter_map(|text| serde_json::from_str(text).ok())
            .collect())
    }

    fn read_positions(&self, project: &str) -> Result<ReadPositions, StoreError> {
        let text: Option<String> = self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT positions FROM read_positions WHERE project = $1",
                    &[&project],
                )?
                .map(|row| row.get(0)))
        })?;
        let origin = self.origin(&format!("projects/{project}/mail.read.json"));
        match text {
            Some(text) => versioned::decode(&origin, text.as_bytes()),
            None => Ok(ReadPositions::default()),
        }
    }

    fn change_mail(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let mut connection = self.begin()?;
        let what = format!("the mail lock of project {project}");
        self.take_lock(
            &mut connection,
            MAIL_LOCKS,
            project,
            &what,
            Wait::AsTheStoreDoes,
        )?;
        let client = connection.client();
        let fail = |error: client::Error| self.failed(&error);
        let rows = client
            .query(
                "SELECT seq, message FROM mail WHERE project = $1 ORDER BY seq",
                &[&project],
            )
            .map_err(fail)?;
        let lines: Vec<(i64, String)> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        let origin = self.origin(&format!("projects/{project}/mail.read.json"));
        let positions: ReadPositions = match client
            .query_opt(
                "SELECT positions FROM read_positions WHERE project = $1",
                &[&project],
            )
            .map_err(fail)?
        {
            Some(row) => versioned::decode(&origin, row.get::<_, &str>(0).as_bytes())?,
            None => ReadPositions::default(),
        };
        let last = lines
            .iter()
            .map(|(seq, _)| seq.max(&0).unsigned_abs())
            .chain([positions.archived_through])
            .chain(positions.positions.values().copied())
            .max()
            .unwrap_or(0);
        let messages: Vec<Message> = lines
            .iter()
            .filter_map(|(_, text)| serde_json::from_str(text).ok())
            .collect();
        let mut sent_at: HashMap<u64, Timestamp> = messages
            .iter()
            .map(|message| (message.seq, message.at))
            .collect();
        let mut mailbox = Mailbox::new(now, messages, positions, last);
        if change(&mut mailbox).is_err() {
            return Ok(());
        }
        let MailCommitted {
            added,
            positions,
            leaving,
        } = mailbox.commit();
        if !added.is_empty() {
            let seqs: Vec<i64> = added.iter().map(|message| message.seq as i64).collect();
            let texts = added
                .iter()
                .map(encode)
                .collect::<Result<Vec<String>, Failed>>()?;
            client
                .execute(
                    "INSERT INTO mail (project, seq, message) \
                     SELECT $1, r.seq, r.message FROM unnest($2::bigint[], $3::text[]) \
                         AS r(seq, message)",
                    &[&project, &seqs, &texts],
                )
                .map_err(fail)?;
            let notices: Vec<Notice> = added
                .iter()
                .map(|message| Notice {
                    seq: Some(message.seq),
                    ..PgStore::notice(project, Kind::Mail)
                })
                .collect();
            self.notify(client, &notices)?;
        }
        if let Some(positions) = &positions {
            let text = versioned::text_of(&origin, positions)?;
            let text = String::from_utf8_lossy(&text).into_owned();
            client
                .execute(
                    "INSERT INTO read_positions (project, positions) VALUES ($1, $2) \
                     ON CONFLICT (project) DO UPDATE SET positions = excluded.positions",
                    &[&project, &text],
                )
                .map_err(fail)?;
        }
        if !leaving.is_empty() {
            // Each leaving message to the archive by the month it was sent in, kept as it
            // was stored.
            for message in &added {
                sent_at.insert(message.seq, message.at);
            }
            let (seqs, month_of): (Vec<i64>, Vec<String>) = leaving
                .iter()
                .filter_map(|seq| sent_at.get(seq).map(|at| (*seq as i64, at.month())))
                .unzip();
            client
                .execute(
                    "INSERT INTO mail_archive (project, seq, month, message) \
                     SELECT m.project, m.seq, r.month, m.message \
                     FROM mail m JOIN unnest($2::bigint[], $3::text[]) AS r(seq, month) \
                         ON m.seq = r.seq \
                     WHERE m.project = $1 ORDER BY m.seq",
                    &[&project, &seqs, &month_of],
                )
                .map_err(fail)?;
            client
                .execute(
                    "DELETE FROM mail WHERE project = $1 AND seq = ANY($2)",
                    &[&project, &seqs],
                )
                .map_err(fail)?;
            if added.is_empty() {
                self.notify(client, &[PgStore::notice(project, Kind::Mailbox)])?;
            }
        }
        connection.commit().map_err(|error| self.failed(&error))
    }

    /// Read on a connection of the pool, whose first checked (and migrated) the schema.
    fn schema_version(&self) -> Result<Option<super::SchemaVersion>, StoreError> {
        let found: i64 = self.run(|client| {
            Ok(client
                .query_one("SELECT coalesce(max(version), 0) FROM baton_schema", &[])?
                .get(0))
        })?;
        Ok(Some(super::SchemaVersion {
            found,
            known: schema::SCHEMA,
        }))
    }

    fn export_project(&self, project: &str) -> Result<ProjectImage, StoreError> {
        // One moment's state of the project, whatever commits meanwhile.
        self.read(|transaction| {
            let fail = |error: client::Error| self.failed(&error);
            let record: Option<Vec<u8>> = transaction
                .query_opt(
                    "SELECT body FROM documents WHERE kind = 'project' AND name = $1",
                    &[&project],
                )
                .map_err(fail)?
                .map(|row| row.get(0));
            let read = self.read_board(transaction, project)?;
            let board = match read.exists {
                true => Some(BoardImage::of(&read.board)?),
                false => None,
            };
            let log = self.read_log(transaction, project, None, None)?;
            let mut texts = |query: &str| -> Result<Vec<String>, Failed> {
                Ok(transaction
                    .query(query, &[&project])
                    .map_err(fail)?
                    .iter()
                    .map(|row| row.get(0))
                    .collect())
            };
            let archive = texts("SELECT task FROM archive WHERE project = $1 ORDER BY place")?
                .iter()
                .map(|text| decode_archived(self.shown(), project, text))
                .collect::<Result<Vec<Task>, StoreError>>()?;
            // A message a newer baton wrote, that this one cannot read, is passed over, as
            // everywhere else.
            let messages = |texts: Vec<String>| -> Vec<Message> {
                texts
                    .iter()
                    .filter_map(|text| serde_json::from_str(text).ok())
                    .collect()
            };
            let mail = messages(texts(
                "SELECT message FROM mail WHERE project = $1 ORDER BY seq",
            )?);
            let mail_archive = messages(texts(
                "SELECT message FROM mail_archive WHERE project = $1 ORDER BY seq",
            )?);
            let origin = self.origin(&format!("projects/{project}/mail.read.json"));
            let read_positions = texts("SELECT positions FROM read_positions WHERE project = $1")?
                .first()
                .map(|text| versioned::decode::<ReadPositions>(&origin, text.as_bytes()))
                .transpose()?;
            Ok(ProjectImage {
                record,
                board,
                log,
                archive,
                mail,
                read_positions,
                mail_archive,
                unreadable: Vec::new(),
            }
            .normalized())
        })
    }

    fn import_project(&self, project: &str, image: &ProjectImage) -> Result<(), StoreError> {
        let mut connection = self.begin()?;
        for (class, what) in [(BOARD_LOCKS, "board"), (MAIL_LOCKS, "mail")] {
            let what = format!("the {what} lock of project {project}");
            self.take_lock(&mut connection, class, project, &what, Wait::AsTheStoreDoes)?;
        }
        let client = connection.client();
        let fail = |error: client::Error| self.failed(&error);
        match &image.record {
            Some(record) => write_document(client, "project", project, record).map(drop),
            None => client
                .execute(
                    "DELETE FROM documents WHERE kind = 'project' AND name = $1",
                    &[&project],
                )
                .map(drop),
        }
        .map_err(fail)?;
        for table in [
            "tasks",
            "board_previous",
            "activity",
            "archive",
            "mail",
            "mail_archive",
            "read_positions",
        ] {
            client
                .execute(
                    &format!("DELETE FROM {table} WHERE project = $1"),
                    &[&project],
                )
                .map_err(fail)?;
        }
        match &image.board {
            Some(board) => {
                let ids: Vec<i64> = board.tasks.iter().map(|task| task.id.0 as i64).collect();
                let texts = board
                    .tasks
                    .iter()
                    .map(encode)
                    .collect::<Result<Vec<String>, Failed>>()?;
                client
                    .execute(
                        "INSERT INTO tasks (project, id, task) \
                         SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) \
                             AS r(id, task)",
                        &[&project, &ids, &texts],
                    )
                    .map_err(fail)?;
                client
                    .execute(
                        "INSERT INTO boards (project, schema, next_id, version) \
                         VALUES ($1, $2, $3, 1) \
                         ON CONFLICT (project) DO UPDATE SET schema = excluded.schema, \
                             next_id = excluded.next_id, version = boards.version + 1, \
                             previous_schema = NULL, previous_next_id = NULL",
                        &[&project, &(board.schema as i32), &(board.next_id as i64)],
                    )
                    .map_err(fail)?;
            }
            None => {
                client
                    .execute("DELETE FROM boards WHERE project = $1", &[&project])
                    .map_err(fail)?;
            }
        }
        let at: Vec<i64> = image
            .log
            .iter()
            .map(|record| record.at.datetime().timestamp_millis())
            .collect();
        let records = image
            .log
            .iter()
            .map(encode)
            .collect::<Result<Vec<String>, Failed>>()?;
        client
            .execute(
                "INSERT INTO activity (project, seq, at_millis, record) \
                 SELECT $1, r.n, r.at, r.record \
                 FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r(at, record, n)",
                &[&project, &at, &records],
            )
            .map_err(fail)?;
        let (ids, tasks): (Vec<i64>, Vec<String>) = image
            .archive
            .iter()
            .map(|task| Ok((task.id.0 as i64, encode(task)?)))
            .collect::<Result<Vec<(i64, String)>, Failed>>()?
            .into_iter()
            .unzip();
        client
            .execute(
                "INSERT INTO archive (project, id, task) \
                 SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) \
                     WITH ORDINALITY AS r(id, task, n) ORDER BY r.n",
                &[&project, &ids, &tasks],
            )
            .map_err(fail)?;
        for (table, messages) in [("mail", &image.mail), ("mail_archive", &image.mail_archive)] {
            let seqs: Vec<i64> = messages.iter().map(|message| message.seq as i64).collect();
            let months: Vec<String> = messages.iter().map(|message| message.at.month()).collect();
            let texts = messages
                .iter()
                .map(encode)
                .collect::<Result<Vec<String>, Failed>>()?;
            let insert = match table {
                "mail" => {
                    "INSERT INTO mail (project, seq, message) \
                     SELECT $1, r.seq, r.message \
                     FROM unnest($2::bigint[], $3::text[], $4::text[]) AS r(seq, message, month)"
                }
                _ => {
                    "INSERT INTO mail_archive (project, seq, month, message) \
                     SELECT $1, r.seq, r.month, r.message \
                     FROM unnest($2::bigint[], $3::text[], $4::text[]) AS r(seq, message, month)"
                }
            };
            client
                .execute(insert, &[&project, &seqs, &texts, &months])
                .map_err(fail)?;
        }
        if let Some(positions) = &image.read_positions {
            let origin = self.origin(&format!("projects/{project}/mail.read.json"));
            let text = versioned::text_of(&origin, positions)?;
            let text = String::from_utf8_lossy(&text).into_owned();
            client
                .execute(
                    "INSERT INTO read_positions (project, positions) VALUES ($1, $2)",
                    &[&project, &text],
                )
                .map_err(fail)?;
        }
        self.notify(
            client,
            &[
                PgStore::notice(project, Kind::Board),
                PgStore::notice(project, Kind::Mailbox),
            ],
        )?;
        connection.commit().map_err(|error| self.failed(&error))
    }

    fn mark_once(&self, mark: &str) -> Result<bool, StoreError> {
        let inserted = self.run(|client| {
            client.execute(
                "INSERT INTO marks (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                &[&mark],
            )
        })?;
        Ok(inserted == 1)
    }

    fn announce_session(
        &self,
        project: &str,
        agent: &str,
        client: &str,
    ) -> Result<Presence, StoreError> {
        self.keeper()?.announce(
            self.pool(),
            Announcement {
                kind: "session",
                project: project.to_string(),
                agent: agent.to_string(),
                client: client.to_string(),
            },
        )
    }

    fn announce_listener(&self, agent: &str) -> Result<Presence, StoreError> {
        self.keeper()?.announce(
            self.pool(),
            Announcement {
                kind: "listener",
                project: String::new(),
                agent: agent.to_string(),
                client: String::new(),
            },
        )
    }

    fn is_listened(&self, agent: &str) -> bool {
        self.live("listener", agent, "")
            .is_ok_and(|live| !live.is_empty())
    }

    fn live_clients(&self, project: &str, agent: &str) -> Vec<String> {
        self.live("session", agent, project).unwrap_or_default()
    }

    /// A feed fed by this process's listening connection (LISTEN/NOTIFY).
    fn changes(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError> {
        self.listener()?.feed(scope, self.shown())
    }

    /// A duty is a session advisory lock of this process's keeper connection: a process
    /// that dies lets go of it with its connection.
    fn try_hold(&self, duty: &Duty) -> Result<Option<Held>, StoreError> {
        self.keeper()?.take_duty(self.pool(), duty_key(duty))
    }

    fn is_held(&self, duty: &Duty) -> bool {
        self.run(|client| presence::is_duty_held(client, duty_key(duty)))
            .unwrap_or(false)
    }

    fn record_mcp_session(&self, session: &str, token: &str) -> Result<(), StoreError> {
        self.run(|client| {
            client.execute(
                "INSERT INTO mcp_sessions (session, token) VALUES ($1, $2) \
                 ON CONFLICT (session) DO UPDATE SET token = excluded.token",
                &[&session, &token],
            )
        })?;
        Ok(())
    }

    fn mcp_session_owner(&self, session: &str) -> Result<Option<String>, StoreError> {
        self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT token FROM mcp_sessions WHERE session = $1",
                    &[&session],
                )?
                .map(|row| row.get(0)))
        })
    }

    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError> {
        if sessions.is_empty() {
            return Ok(());
        }
        self.run(|client| {
            client.execute(
                "DELETE FROM mcp_sessions WHERE session = ANY($1)",
                &[&sessions],
            )
        })?;
        Ok(())
    }
}

/// The advisory lock (two keys) that holds `duty`.
fn duty_key(duty: &Duty) -> (i32, i32) {
    match duty {
        Duty::AlertSender => (DUTY_LOCKS, lock_key("alert-sender")),
        Duty::Wake(agent) => (DUTY_LOCKS, lock_key(&format!("wake/{agent}"))),
    }
}

/// The log of a project read on as it grows: the records numbered past the last one read.
struct Tail {
    store: PgStore,
    project: String,
    last: i64,
}

impl LogTail for Tail {
    fn fresh_lines(&mut self) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(i64, String)> = self.store.run(|client| {
            Ok(client
                .query(
                    "SELECT seq, record FROM activity WHERE project = $1 AND seq > $2 \
                     ORDER BY seq",
                    &[&self.project, &self.last],
                )?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })?;
        if let Some((seq, _)) = rows.last() {
            self.last = *seq;
        }
        Ok(rows.into_iter().map(|(_, record)| record).collect())
    }
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
