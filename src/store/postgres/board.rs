//! The boards on PostgreSQL: a change of a board read, run and written in one transaction
//! (alone, or in a resident process's batch), the board kept by version for the next read,
//! and the board before the last change kept for `doctor --restore`. A board's reservations
//! (SPEC section 18.2) are a field of its row, read and written with it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use super::archive::ArchiveInTransaction;
use postgres::Row;
use postgres::types::ToSql;

use super::archive::{HIGHEST_ARCHIVED, INSERT_ARCHIVE, archive_rows, highest_of};
use super::client::{self, Client, Piped, Statements};
use super::documents::{SELECT_DOCUMENT, WRITE_DOCUMENT};
use super::feed::NOTIFY;
use super::listen::{self, Kind, Notice};
use super::log::{APPEND_RECORDS, log_notices, record_rows};
use super::pool::Connection;
use super::remembered::GUARD_AS_TEXT;
use super::{BOARD_LOCKS, Failed, PgStore, TRY_LOCK, encode, lock_key};
use crate::board::record::ActivityRecord;
use crate::board::reservation::Reservation;
use crate::board::task::{Head, Task};
use crate::board::{BOARD_SCHEMA, Board, Kept, StoredTasks, Undecoded};
use crate::store::document::{Version, Wait};
use crate::store::group::{Group, Work, group_of};
use crate::store::head::head_of_text;
use crate::store::transaction::{Committed, Transaction};
use crate::store::{GaveUp, Origin, Restoring, Snapshot, StoreError};
use crate::time::Timestamp;

/// Each project's board as last read or written, with the version it had.
pub(super) type Boards = Mutex<HashMap<String, (i64, Arc<Read>)>>;

/// The batch in progress of each project's board.
pub(super) type Groups = Mutex<HashMap<String, Arc<Group<Batch>>>>;

/// The changes of one batch to a project's board: the transaction they are applied to, the
/// board as it was read, and the database connection's client, which the changes' archive
/// reads share until the leader writes the batch with it.
pub(super) struct Batch {
    transaction: Transaction,
    read: Read,
    client: Arc<Mutex<Option<Client>>>,
}

impl Batch {
    /// Gives the client the changes shared back to `connection`, which then commits, or
    /// rolls back when given back to the pool.
    pub(super) fn give_back(
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

    fn mark(&mut self) -> Self::Mark {
        self.transaction.mark()
    }

    fn roll_back(&mut self, mark: Self::Mark) {
        self.transaction.roll_back(mark);
    }
}

impl PgStore {
    /// [`crate::store::Store::change_board`]: in a resident process, in the project's batch;
    /// in a command, a batch of one.
    pub(super) fn change(
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

    /// The count of the board's writes, which every change moves on.
    pub(super) fn version_of_board(&self, project: &str) -> Option<Version> {
        self.run(|client| {
            Ok(client
                .query_opt("SELECT version FROM boards WHERE project = $1", &[&project])?
                .map(|row| row.get::<_, i64>(0)))
        })
        .ok()
        .flatten()
        .map(|version| Version::Counted(version.max(0) as u64))
    }

    /// One moment's board and log: a transaction sees no change half made, and waits for
    /// none.
    pub(super) fn snapshot_of(&self, project: &str) -> Result<Option<Snapshot>, StoreError> {
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

    /// [`crate::store::Store::restore_board`]: the board, the board before and the log read
    /// (under the board's lock unless `dry_run`), and what `plan` makes of them written.
    pub(super) fn restore(
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
        let changes = changes_of(&read, &board, &self.board_origin(project))?;
        let fields = Fields::of(&board)?;
        self.write_board(connection.client(), project, &read, &fields, &changes)?;
        self.notify(
            connection.client(),
            &[PgStore::notice(project, Kind::Board)],
        )?;
        self.append_log(connection.client(), project, &records)?;
        connection.commit().map_err(|error| self.failed(&error))
    }

    /// [`crate::store::Store::change_board`] in a resident process: the change joins the
    /// batch of the project's next transaction, whose leader opens it (the advisory lock
    /// taken, the board read) and, once every change of the batch is applied in turn, writes
    /// and commits them all at once. A change that gives up is rolled back alone; a batch that
    /// fails to commit fails every change in it, none of which then counts.
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
    /// changes while they run. The `BEGIN`, the lock, the board's fields and the project's
    /// record go in one round trip; when the lock was busy, it is waited for and they are
    /// read again once it is taken.
    fn begin_batch(
        &self,
        project: &str,
        now: Timestamp,
    ) -> Result<(Connection<'_>, Batch), StoreError> {
        let key = lock_key(project);
        let lock_params: [&(dyn ToSql + Sync); 2] = [&BOARD_LOCKS, &key];
        let project_params: [&(dyn ToSql + Sync); 1] = [&project];
        let kind = "project";
        let record_params: [&(dyn ToSql + Sync); 2] = [&kind, &project];
        // The archive's highest id (for a new task's) comes with them, whatever the change:
        // one index probe, where asking when a task is sent would be a round trip more.
        let mut reads: Vec<Piped<'_>> = vec![
            (BOARD_FIELDS, &project_params),
            (SELECT_DOCUMENT, &record_params),
            (HIGHEST_ARCHIVED, &project_params),
        ];
        // A command keeps no board: its tasks are read in the same round trip.
        if self.boards.is_none() {
            reads.push((SELECT_TASKS, &project_params));
        }
        let mut piped: Vec<Piped<'_>> = vec![(TRY_LOCK, &lock_params)];
        piped.extend_from_slice(&reads);
        let (mut connection, mut answers) = self.begin_with(&piped)?;
        let taken = answers[0].first().is_some_and(|row| row.get::<_, bool>(0));
        let reads = match taken {
            true => answers.split_off(1),
            false => {
                // The other hub's batch holds it: waited for, and the reads made again.
                let what = format!("the board lock of project {project}");
                self.wait_for_lock(
                    &mut connection,
                    BOARD_LOCKS,
                    project,
                    &what,
                    Wait::AsTheStoreDoes,
                    &reads,
                )?
                .ok_or(StoreError::Unfinished)?
            }
        };
        let read = match reads.get(3) {
            Some(tasks) => self.board_of_rows(project, reads[0].first(), tasks)?,
            None => self.board_with_fields(connection.client(), project, reads[0].first())?,
        };
        let record = Some(reads[1].first().map(|row| row.get(0)));
        let highest = reads[2].first().map(highest_of);
        let client = Arc::new(Mutex::new(Some(connection.take())));
        let archive = Arc::new(ArchiveInTransaction {
            client: client.clone(),
            pool_shown: self.shown().to_string(),
            project: project.to_string(),
            record: Mutex::new(record),
            highest,
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
        let committed = transaction
            .commit()
            .map_err(|refused| StoreError::board(self.board_origin(project), refused))?;
        if committed.board.is_none() && committed.records.is_empty() && committed.project.is_none()
        {
            // Every change of the batch gave up: the connection rolls back when given back.
            return Ok(());
        }
        // The COMMIT goes with the last statements of the write.
        let written = self.write_change(connection.client(), project, &read, committed)?;
        connection.committed();
        if let Some((version, board)) = written {
            self.keep_board(project, version, &board);
        }
        Ok(())
    }

    /// Reads the board of `project` as `client` sees it.
    pub(super) fn read_board(
        &self,
        client: &mut impl Statements,
        project: &str,
    ) -> Result<Read, Failed> {
        let fields = client
            .query_opt(BOARD_FIELDS, &[&project])
            .map_err(|error| self.failed(&error))?;
        self.board_with_fields(client, project, fields.as_ref())
    }

    /// [`crate::store::Boards::board`]. A command reads the board's fields and its tasks in
    /// one round trip, with its transaction's `BEGIN` (and the schema's guard while it is
    /// only remembered) and `COMMIT`; a resident process reads the fields first, and the
    /// tasks only when they are not those of the board it keeps.
    pub(super) fn board_now(&self, project: &str) -> Result<Board, StoreError> {
        if self.boards.is_some() {
            return self.read(|transaction| Ok(self.read_board(transaction, project)?.board));
        }
        let params: [&(dyn ToSql + Sync); 1] = [&project];
        let mut answers = self.run(|client| {
            let guard = self.pool().guard().map(|_| GUARD_AS_TEXT);
            let mut piped: Vec<Piped<'_>> = Vec::with_capacity(5);
            piped.push((READ_ONLY_BEGIN, &[]));
            piped.extend(guard.map(|guard| (guard, &[] as &[_])));
            piped.push((BOARD_FIELDS, &params));
            piped.push((SELECT_TASKS, &params));
            piped.push((COMMIT, &[]));
            let mut answers = client.pipelined(&piped)?;
            if guard.is_some() {
                let rows = answers.remove(1);
                let answer = rows.first().and_then(|row| row.get::<_, Option<String>>(0));
                self.pool().guarded(answer)?;
            }
            Ok(answers)
        })?;
        let (tasks, fields) = (answers.swap_remove(2), answers.swap_remove(1));
        Ok(self.board_of_rows(project, fields.first(), &tasks)?.board)
    }

    /// The board of `project` whose fields `client` read as `fields` ([`BOARD_FIELDS`]; `None`:
    /// no board yet): the board kept at their version, else its tasks read.
    fn board_with_fields(
        &self,
        client: &mut impl Statements,
        project: &str,
        fields: Option<&Row>,
    ) -> Result<Read, Failed> {
        let version = fields.map(|row| row.get::<_, i64>(2));
        if let Some(kept) = self.kept_board(project, version)
            && fields.is_some_and(|row| {
                row.get::<_, i64>(1) == kept.board.next_id as i64
                    && row.get::<_, &str>(3) == &*kept.reservations
            })
        {
            // The same version with the same next id and reservations: a board made again
            // after its row was removed (a copy's --replace) starts its versions again,
            // never its ids.
            return Ok(kept);
        }
        let rows = client
            .query(SELECT_TASKS, &[&project])
            .map_err(|error| self.failed(&error))?;
        self.board_of_rows(project, fields, &rows)
    }

    /// The board of `project` whose fields and tasks were read as `fields` ([`BOARD_FIELDS`];
    /// `None`: no board yet) and `rows` ([`SELECT_TASKS`]), kept by its version in a resident
    /// process.
    fn board_of_rows(
        &self,
        project: &str,
        fields: Option<&Row>,
        rows: &[Row],
    ) -> Result<Read, Failed> {
        let version = fields.map(|row| row.get::<_, i64>(2));
        let texts: Arc<[(i64, String)]> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        let (schema, next_id, reservations) = match fields {
            Some(row) => (
                row.get::<_, i32>(0),
                row.get::<_, i64>(1),
                row.get::<_, String>(3),
            ),
            None => (BOARD_SCHEMA as i32, 1, NO_RESERVATIONS.to_string()),
        };
        let board = self.board_of(project, schema, next_id, Some(&reservations), &texts)?;
        let read = Read {
            exists: fields.is_some(),
            board,
            reservations: reservations.into(),
            texts,
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

    /// The board of `project` with these fields, reservations (the text of their list;
    /// `None`: none kept) and tasks (each as its text). A resident process decodes each task
    /// once, for the many reads of the board it keeps; a command reads only each task's head
    /// (as a board file is read) and decodes a task whole when it needs it: `status` shows
    /// a few of a thousand.
    fn board_of(
        &self,
        project: &str,
        schema: i32,
        next_id: i64,
        reservations: Option<&str>,
        texts: &Arc<[(i64, String)]>,
    ) -> Result<Board, Failed> {
        let origin = self.board_origin(project);
        if schema as i64 > BOARD_SCHEMA as i64 {
            return Err(StoreError::NewerSchema {
                origin,
                found: schema as u64,
                known: BOARD_SCHEMA,
            });
        }
        let corrupt = |id: &i64, error: serde_json::Error| {
            StoreError::corrupt(&origin)(format!("#{id}: {error}"))
        };
        let mut stored = StoredTasks::with_capacity(texts.len());
        let undecoded: Arc<dyn Undecoded> = match self.boards {
            Some(_) => {
                let mut tasks = Vec::with_capacity(texts.len());
                for (place, (id, text)) in texts.iter().enumerate() {
                    let task: Task = serde_json::from_str(text).map_err(|e| corrupt(id, e))?;
                    stored.push(Head::of(&task), place..place + 1);
                    tasks.push(task);
                }
                Arc::new(Tasks(tasks))
            }
            None => {
                for (place, (id, text)) in texts.iter().enumerate() {
                    let head = head_of_text(text).map_err(|e| corrupt(id, e))?;
                    stored.push(head, place..place + 1);
                }
                Arc::new(Texts(Arc::clone(texts)))
            }
        };
        let reservations: Vec<Reservation> = match reservations {
            Some(text) => serde_json::from_str(text)
                .map_err(|error| StoreError::corrupt(&origin)(format!("reservations: {error}")))?,
            None => Vec::new(),
        };
        let mut board = Board::from_store(
            schema.max(0) as u32,
            project.to_string(),
            next_id.max(0) as u64,
            stored,
            undecoded,
        );
        board.set_reservations(reservations);
        Ok(board)
    }

    /// The board of `project` before its last change, as `client` sees it.
    pub(super) fn read_previous(
        &self,
        client: &mut impl Statements,
        project: &str,
    ) -> Result<Option<Board>, Failed> {
        let fields = client
            .query_opt(
                "SELECT previous_schema, previous_next_id, previous_reservations FROM boards \
                 WHERE project = $1",
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
        let texts: Arc<[(i64, String)]> = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
        let reservations = fields.get::<_, Option<String>>(2);
        self.board_of(project, schema, next_id, reservations.as_deref(), &texts)
            .map(Some)
    }

    /// Writes what a change of the board of `project` committed, in the transaction of
    /// `client`, which read the board as `read`: the project's record, the
    /// tasks archived, the board (its changed tasks, the board before, its fields), and the
    /// log's records with their notices. Every statement that needs no answer of another is
    /// sent at once with the `COMMIT`: one round trip for them all ([`Client::pipelined`]),
    /// the records numbered on from the last by the statement that appends them. Once this
    /// returns, the transaction is committed (a statement refused refuses the rest, and the
    /// `COMMIT` then rolls back).
    /// The board's new version and what it now is, when the board was written.
    fn write_change(
        &self,
        client: &mut Client,
        project: &str,
        read: &Read,
        committed: Committed,
    ) -> Result<Option<(i64, Read)>, Failed> {
        let fail = |error: client::Error| self.failed(&error);
        let board = committed.board;
        let written = match &board {
            Some(board) => Some((
                changes_of(read, board, &self.board_origin(project))?,
                Fields::of(board)?,
            )),
            None => None,
        };
        // Every statement's parameters, made before any is sent.
        let kind = "project";
        let document: &[u8] = committed.project.as_deref().unwrap_or_default();
        let document_params: [&(dyn ToSql + Sync); 3] = [&kind, &project, &document];
        let (ids, texts, labels, words) = archive_rows(&committed.archived)?;
        let archive_params: [&(dyn ToSql + Sync); 5] = [&project, &ids, &texts, &labels, &words];
        let project_params: [&(dyn ToSql + Sync); 1] = [&project];
        let no_changes = Changes {
            removed: Vec::new(),
            written: Vec::new(),
        };
        let changes = written.as_ref().map_or(&no_changes, |(changes, _)| changes);
        let (touched, was) = read.previous(changes);
        let previous_params: [&(dyn ToSql + Sync); 3] = [&project, &touched, &was];
        let removed_params: [&(dyn ToSql + Sync); 2] = [&project, &changes.removed];
        let task_ids: Vec<i64> = changes.written.iter().map(|(id, _)| *id).collect();
        let task_texts: Vec<&str> = changes
            .written
            .iter()
            .map(|(_, text)| text.as_str())
            .collect();
        let tasks_params: [&(dyn ToSql + Sync); 3] = [&project, &task_ids, &task_texts];
        let (schema, next_id, reservations) = match &written {
            Some((_, fields)) => (
                fields.schema as i32,
                fields.next_id as i64,
                fields.reservations.clone(),
            ),
            None => (0, 0, Arc::from(NO_RESERVATIONS)),
        };
        let reservations = &*reservations;
        let previous_schema = read.exists.then_some(read.board.schema as i32);
        let previous_next_id = read.exists.then_some(read.board.next_id as i64);
        let previous_reservations = read.exists.then_some(&*read.reservations);
        let fields_params: [&(dyn ToSql + Sync); 7] = [
            &project,
            &schema,
            &next_id,
            &reservations,
            &previous_schema,
            &previous_next_id,
            &previous_reservations,
        ];
        let board_notice = vec![PgStore::notice(project, Kind::Board).text()];
        let board_notice_params: [&(dyn ToSql + Sync); 2] = [&listen::CHANNEL, &board_notice];
        // One round trip: every write, none of which needs an answer of another.
        let mut first: Vec<Piped<'_>> = Vec::new();
        if committed.project.is_some() {
            first.push((WRITE_DOCUMENT, &document_params));
        }
        if !committed.archived.is_empty() {
            first.push((INSERT_ARCHIVE, &archive_params));
        }
        let mut version_at = None;
        if written.is_some() {
            first.push((DELETE_PREVIOUS, &project_params));
            if read.exists {
                first.push((INSERT_PREVIOUS, &previous_params));
            }
            if !changes.removed.is_empty() {
                first.push((DELETE_TASKS, &removed_params));
            }
            if !changes.written.is_empty() {
                first.push((INSERT_TASKS, &tasks_params));
            }
            version_at = Some(first.len());
            first.push((WRITE_FIELDS, &fields_params));
            if committed.records.is_empty() {
                first.push((NOTIFY, &board_notice_params));
            }
        }
        // The records, numbered on from the last in the statement that appends them, with
        // their notices; then the COMMIT.
        let (at_millis, records) = record_rows(&committed.records)?;
        let notices: Vec<String> = log_notices(project, None, &committed.records)
            .iter()
            .map(Notice::text)
            .collect();
        let records_params: [&(dyn ToSql + Sync); 5] =
            [&project, &at_millis, &records, &notices, &listen::CHANNEL];
        if !committed.records.is_empty() {
            first.push((APPEND_RECORDS, &records_params));
        }
        first.push((COMMIT, &[]));
        let answers = client.pipelined(&first).map_err(fail)?;
        let version = version_at
            .map(|at| {
                answers[at]
                    .first()
                    .map(|row| row.get::<_, i64>(0))
                    .ok_or(StoreError::Unfinished)
            })
            .transpose()?;
        Ok(match (board, written, version) {
            (Some(board), Some((changes, fields)), Some(version)) => {
                Some((version, read.after(board, fields.reservations, changes)))
            }
            _ => None,
        })
    }

    /// Writes a board over the board read as `read`: the tasks `changes` names, the board's
    /// `fields`, and what they were before (the previous board). Returns the board's new
    /// version.
    fn write_board(
        &self,
        client: &mut Client,
        project: &str,
        read: &Read,
        fields: &Fields,
        changes: &Changes,
    ) -> Result<i64, Failed> {
        let fail = |error: client::Error| self.failed(&error);
        client.execute(DELETE_PREVIOUS, &[&project]).map_err(fail)?;
        if read.exists {
            let (touched, was) = read.previous(changes);
            client
                .execute(INSERT_PREVIOUS, &[&project, &touched, &was])
                .map_err(fail)?;
        }
        if !changes.removed.is_empty() {
            client
                .execute(DELETE_TASKS, &[&project, &changes.removed])
                .map_err(fail)?;
        }
        self.insert_tasks(client, project, &changes.written)?;
        let previous = read.exists.then(|| Fields {
            schema: read.board.schema,
            next_id: read.board.next_id,
            reservations: read.reservations.clone(),
        });
        self.write_board_fields(client, project, fields, previous.as_ref())
    }

    /// Writes `tasks` (each its id and text) onto the board of `project`, over any task of
    /// the same id.
    pub(super) fn insert_tasks(
        &self,
        client: &mut impl Statements,
        project: &str,
        tasks: &[(i64, String)],
    ) -> Result<(), Failed> {
        if tasks.is_empty() {
            return Ok(());
        }
        let ids: Vec<i64> = tasks.iter().map(|(id, _)| *id).collect();
        let texts: Vec<&str> = tasks.iter().map(|(_, text)| text.as_str()).collect();
        client
            .execute(INSERT_TASKS, &[&project, &ids, &texts])
            .map_err(|error| self.failed(&error))?;
        Ok(())
    }

    /// Writes the `fields` of the board of `project` (its row made when it has none), with
    /// those of the board before the change (`None`: nothing to restore), and counts its
    /// version up. Returns the new version.
    pub(super) fn write_board_fields(
        &self,
        client: &mut impl Statements,
        project: &str,
        fields: &Fields,
        previous: Option<&Fields>,
    ) -> Result<i64, Failed> {
        let previous_schema = previous.map(|previous| previous.schema as i32);
        let previous_next_id = previous.map(|previous| previous.next_id as i64);
        let previous_reservations = previous.map(|previous| &*previous.reservations);
        let version: i64 = client
            .query_one(
                WRITE_FIELDS,
                &[
                    &project,
                    &(fields.schema as i32),
                    &(fields.next_id as i64),
                    &&*fields.reservations,
                    &previous_schema,
                    &previous_next_id,
                    &previous_reservations,
                ],
            )
            .map_err(|error| self.failed(&error))?
            .get(0);
        Ok(version)
    }
}

/// The fields of the board of project $1: its schema, next id, version and reservations.
const BOARD_FIELDS: &str =
    "SELECT schema, next_id, version, reservations FROM boards WHERE project = $1";

/// Begins a transaction that only reads, and sees one moment's state throughout.
const READ_ONLY_BEGIN: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// The tasks of the board of project $1, each as its id and text, in id order.
const SELECT_TASKS: &str = "SELECT id, task FROM tasks WHERE project = $1 ORDER BY id";

/// Ends a change's transaction, as the last statement of its last round trip.
const COMMIT: &str = "COMMIT";

/// Forgets the board before the last change of project $1.
const DELETE_PREVIOUS: &str = "DELETE FROM board_previous WHERE project = $1";

/// Keeps, as the board before this change of project $1, the tasks $2 as they were ($3; NULL:
/// not on the board).
const INSERT_PREVIOUS: &str = "INSERT INTO board_previous (project, id, task) \
     SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) AS r(id, task)";

/// Takes the tasks $2 off the board of project $1.
const DELETE_TASKS: &str = "DELETE FROM tasks WHERE project = $1 AND id = ANY($2)";

/// Writes the tasks $2 (ids) with texts $3 onto the board of project $1.
const INSERT_TASKS: &str = "INSERT INTO tasks (project, id, task) \
     SELECT $1, r.id, r.task FROM unnest($2::bigint[], $3::text[]) AS r(id, task) \
     ON CONFLICT (project, id) DO UPDATE SET task = excluded.task";

/// Writes the fields of the board of project $1 ($2 to $4) and those of the board before ($5
/// to $7), its version counted up: the new version.
const WRITE_FIELDS: &str = "INSERT INTO boards (project, schema, next_id, reservations, version, \
         previous_schema, previous_next_id, previous_reservations) \
     VALUES ($1, $2, $3, $4, 1, $5, $6, $7) \
     ON CONFLICT (project) DO UPDATE SET schema = excluded.schema, \
         next_id = excluded.next_id, reservations = excluded.reservations, \
         version = boards.version + 1, \
         previous_schema = excluded.previous_schema, \
         previous_next_id = excluded.previous_next_id, \
         previous_reservations = excluded.previous_reservations \
     RETURNING version";

/// The reservations of a board that has none, as the row keeps them.
const NO_RESERVATIONS: &str = "[]";

/// A board's own fields as its row keeps them: the reservations as the JSON text of their
/// list.
#[derive(Debug, Clone)]
pub(super) struct Fields {
    pub(super) schema: u32,
    pub(super) next_id: u64,
    pub(super) reservations: Arc<str>,
}

impl Fields {
    /// The fields of a board with these values.
    pub(super) fn new(
        schema: u32,
        next_id: u64,
        reservations: &[Reservation],
    ) -> Result<Fields, Failed> {
        Ok(Fields {
            schema,
            next_id,
            reservations: encode(&reservations)?.into(),
        })
    }

    /// The fields of `board`.
    fn of(board: &Board) -> Result<Fields, Failed> {
        Fields::new(board.schema, board.next_id, board.reservations())
    }
}

/// A board as a change read it.
#[derive(Debug, Clone)]
pub(super) struct Read {
    /// Whether the project had a board (a row of `boards`).
    pub(super) exists: bool,
    pub(super) board: Board,
    /// Its reservations as the row keeps them: what the next write keeps as the board
    /// before's.
    reservations: Arc<str>,
    /// Its tasks as stored: id and text, in id order (shared with the copy a resident
    /// process keeps, which a read of the board does not copy again). Once written over
    /// ([`Read::after`]) they are no longer at the places of the board's stored tasks, which
    /// are those of the first read: what stays is known by its id ([`Kept::Stored`]).
    texts: Arc<[(i64, String)]>,
}

impl Read {
    /// The tasks `changes` touch (those removed, then those written) and the text each had
    /// on this board (`None`: it was not on it): the previous board's rows, which a restore
    /// puts back.
    fn previous(&self, changes: &Changes) -> (Vec<i64>, Vec<Option<&str>>) {
        let before: HashMap<i64, &str> = self
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
        let was = touched.iter().map(|id| before.get(id).copied()).collect();
        (touched, was)
    }

    /// The board as written over this one: `board`, settled ([`Board::settle`]), with its
    /// `reservations` as written and its tasks' texts this one's with `changes` made.
    fn after(&self, mut board: Board, reservations: Arc<str>, changes: Changes) -> Read {
        // What this write stored is stored: the next writes only what it changes.
        board.settle();
        let removed: HashSet<i64> = changes.removed.into_iter().collect();
        let mut texts: BTreeMap<i64, String> = self
            .texts
            .iter()
            .filter(|(id, _)| !removed.contains(id))
            .cloned()
            .collect();
        texts.extend(changes.written);
        Read {
            exists: true,
            board,
            reservations,
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
}

/// The tasks of a board a command read, each as its text, decoded when the command needs
/// it whole.
#[derive(Debug)]
struct Texts(Arc<[(i64, String)]>);

impl Undecoded for Texts {
    fn decode(&self, place: &Range<usize>) -> Result<Task, String> {
        let (id, text) = self
            .0
            .get(place.start)
            .ok_or_else(|| format!("no task at place {}", place.start))?;
        serde_json::from_str(text).map_err(|error| format!("#{id}: {error}"))
    }
}

/// What `board` changes of the board read as `read`: the tasks the change made or changed
/// (those it left alone are known by their place among the ones read), and those it took
/// off. A board not made from `read` (a restore's) is compared task by task.
fn changes_of(read: &Read, board: &Board, origin: &Origin) -> Result<Changes, Failed> {
    let from_read = match (board.undecoded(), read.board.undecoded()) {
        (Some(mine), Some(read)) => Arc::ptr_eq(mine, read),
        _ => false,
    };
    let mut staying: HashSet<i64> = HashSet::new();
    let mut written: Vec<(i64, String)> = Vec::new();
    if from_read {
        for kept in board.kept() {
            match kept {
                // By its id: the texts kept after a write are in id order, no longer at
                // the places of the read the board's stored tasks come from.
                Kept::Stored { id, .. } => {
                    staying.insert(id.0 as i64);
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
            let task = task.map_err(|refused| StoreError::board(origin.clone(), refused))?;
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
