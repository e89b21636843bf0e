//! The one way to change a board, for the session layer: lock `board.lock`, complete what a
//! killed writer left, re-read `board.json`, change it, move finished tasks to the archive,
//! write it with its activity lines (`store::board_file::persist`), release. The store
//! below knows the files; what a change does to the board, and the sweep that follows it,
//! are decided here.
//!
//! A process that serves many callers at once (`baton serve`) keeps a [`Resident`]: the
//! boards it has read, kept until their file changes, and a [`Group`] per project that
//! commits the changes arriving while a write is in progress together, under one lock, in
//! one board write and one fsync (group commit). Each change is still applied alone, in the
//! order the changes arrived, and answered with its own result: a refused change leaves
//! the board as the change before it left it, and a change is answered only once the write
//! that holds it is done. The lock is let go after every write, so CLI writers on the same
//! board take turns with the server.

use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use crate::activity::ActivityRecord;
use crate::archive;
use crate::board::Board;
use crate::error::{Error, Result};
use crate::store::board_file;
use crate::store::cache::FileCache;
use crate::store::lock::{FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::time::Timestamp;

/// A change in progress, holding the lock. Record one activity line per change made.
#[derive(Debug)]
pub struct Transaction {
    pub board: Board,
    pub now: Timestamp,
    records: Vec<ActivityRecord>,
    is_changed: bool,
}

impl Transaction {
    fn new(board: Board, now: Timestamp) -> Self {
        Transaction {
            board,
            now,
            records: Vec::new(),
            is_changed: false,
        }
    }

    /// Notes a change for the activity log; a transaction with none writes nothing.
    pub fn record(&mut self, record: ActivityRecord) {
        self.records.push(record);
        self.is_changed = true;
    }

    /// Marks the board changed without an activity line (lease renewals).
    pub fn touch(&mut self) {
        self.is_changed = true;
    }

    /// Moves finished tasks past their time to the archive (appended before the board is
    /// written: every write keeps the board small), then writes the board with its lines,
    /// if anything changed.
    fn commit(&mut self, home: &Home, project: &str) -> Result<()> {
        if self.is_changed {
            archive::sweep(home, &mut self.board, self.now)?;
            board_file::persist(home, project, &self.board, &self.records)?;
        }
        Ok(())
    }
}

/// Runs `change` on the board under the lock and persists what it did. When `change`
/// fails, nothing is written. A change a killed writer left half-logged is completed (or
/// dropped) first, so its lines come before this change's.
pub fn update<T>(
    home: &Home,
    project: &str,
    lock: LockPolicy,
    now: Timestamp,
    change: impl FnOnce(&mut Transaction) -> Result<T>,
) -> Result<T> {
    let _guard = FileLock::acquire(&home.board_lock(project), "the board lock", lock)?;
    board_file::recover_log::<ActivityRecord>(home, project)?;
    let mut transaction = Transaction::new(board_file::read(home, project)?, now);
    let result = change(&mut transaction)?;
    transaction.commit(home, project)?;
    Ok(result)
}

/// What a long-running process keeps between changes: the boards it read or wrote, and the
/// group commit of each project.
#[derive(Debug, Default)]
pub struct Resident {
    boards: FileCache<Board>,
    groups: Mutex<HashMap<String, Arc<Group>>>,
}

impl Resident {
    /// The board of `project` as it is now, read without the lock; parsed again only when
    /// its file changed since it was last read or written here.
    pub fn board(&self, home: &Home, project: &str) -> Result<Board> {
        let path = home.board_file(project);
        Ok(self.boards.get(&path, || board_file::read(home, project))?)
    }

    /// [`update`], committed together with the changes of other threads that arrive while
    /// a write is in progress.
    pub fn update<T>(
        &self,
        home: &Home,
        project: &str,
        lock: LockPolicy,
        now: Timestamp,
        change: impl FnOnce(&mut Transaction) -> Result<T>,
    ) -> Result<T> {
        let group = self.group(project);
        group.update(self, home, project, lock, now, change)
    }

    fn group(&self, project: &str) -> Arc<Group> {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        groups.entry(project.to_string()).or_default().clone()
    }

    /// Takes the lock and reads the board, for a batch: as [`update`] does, but through
    /// the kept boards.
    fn begin(
        &self,
        home: &Home,
        project: &str,
        lock: LockPolicy,
        now: Timestamp,
    ) -> Result<(FileLock, Transaction)> {
        let guard = FileLock::acquire(&home.board_lock(project), "the board lock", lock)?;
        board_file::recover_log::<ActivityRecord>(home, project)?;
        let board = self.board(home, project)?;
        Ok((guard, Transaction::new(board, now)))
    }

    /// Writes a batch and keeps the board it wrote; the caller still holds the lock.
    fn commit(&self, home: &Home, project: &str, mut transaction: Transaction) -> Result<()> {
        let path = home.board_file(project);
        match transaction.commit(home, project) {
            Ok(()) => {
                self.boards.keep(&path, transaction.board);
                Ok(())
            }
            Err(error) => {
                // A write that failed half-way (the rename done, the directory's sync not)
                // leaves a board nobody should guess at: read it again next time.
                self.boards.forget(&path);
                Err(error)
            }
        }
    }
}

/// The changes to one project's board from the threads of one process. Each arrival takes
/// a ticket; the first arrival while no batch is open or writing leads the next batch: it
/// takes the lock and reads the board, and every change that has arrived by then joins the
/// batch. Members apply their changes one at a time in ticket order, each on its own
/// thread; the leader then writes them all at once, and each member returns when the write
/// is done. Whoever arrives meanwhile waits for the next batch.
#[derive(Debug, Default)]
pub struct Group {
    state: Mutex<GroupState>,
    turn: Condvar,
}

#[derive(Debug, Default)]
struct GroupState {
    next_ticket: u64,
    /// The ticket of the next batch's leader: the first not in a batch yet.
    next_leader: u64,
    open: Option<Batch>,
    /// A batch is being written (the lock is held, the board is out).
    is_writing: bool,
}

#[derive(Debug)]
struct Batch {
    /// The tickets in the batch, from `first` up to `end` (unknown until its leader holds
    /// the lock; everyone who has arrived by then is in).
    first: u64,
    end: Option<u64>,
    /// Whose turn it is to apply a change.
    next: u64,
    /// The transaction, while nobody is applying a change to it; `None` once the batch
    /// could not begin (the lock or the board could not be had), which `outcome` says.
    transaction: Option<Transaction>,
    /// How the batch ended, for its members to copy.
    outcome: Arc<OnceLock<Result<()>>>,
}

impl Batch {
    fn holds(&self, ticket: u64) -> bool {
        self.first <= ticket && self.end.is_some_and(|end| ticket < end)
    }
}

impl Group {
    fn lock(&self) -> MutexGuard<'_, GroupState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, state: MutexGuard<'a, GroupState>) -> MutexGuard<'a, GroupState> {
        self.turn
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn update<T>(
        &self,
        resident: &Resident,
        home: &Home,
        project: &str,
        lock: LockPolicy,
        now: Timestamp,
        change: impl FnOnce(&mut Transaction) -> Result<T>,
    ) -> Result<T> {
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let mut guard = None;
        // Wait for this change's turn, leading the batch when it is the first in line.
        loop {
            if state.open.is_none() && !state.is_writing && state.next_leader == ticket {
                let outcome = Arc::new(OnceLock::new());
                state.open = Some(Batch {
                    first: ticket,
                    end: None,
                    next: ticket,
                    transaction: None,
                    outcome: outcome.clone(),
                });
                drop(state);
                let begun = resident.begin(home, project, lock, now);
                state = self.lock();
                let end = state.next_ticket;
                state.next_leader = end;
                let batch = state.open.as_mut().expect("the batch this thread opened");
                batch.end = Some(end);
                match begun {
                    Ok((held, transaction)) => {
                        guard = Some(held);
                        batch.transaction = Some(transaction);
                    }
                    Err(error) => {
                        let _ = outcome.set(Err(error));
                    }
                }
                self.turn.notify_all();
            }
            if let Some(batch) = &state.open
                && batch.holds(ticket)
                && batch.next == ticket
            {
                break;
            }
            state = self.wait(state);
        }
        let batch = state.open.as_mut().expect("the batch of this change");
        let outcome = batch.outcome.clone();
        let Some(mut transaction) = batch.transaction.take() else {
            // The batch could not begin: every change in it is refused as the first was.
            drop(self.pass_turn(state));
            return Err(copy_of(outcome.get()));
        };
        drop(state);
        let applied = apply(&mut transaction, now, change);
        let mut state = self.lock();
        let batch = state.open.as_mut().expect("the batch of this change");
        batch.transaction = Some(transaction);
        let mut state = self.pass_turn(state);
        if let Some(guard) = guard {
            state = self.lead_write(state, resident, home, project, guard);
        }
        let result = match applied {
            Ok(Ok(result)) => result,
            Ok(Err(refused)) => return Err(refused),
            Err(panicked) => {
                drop(state);
                panic::resume_unwind(panicked)
            }
        };
        while outcome.get().is_none() {
            state = self.wait(state);
        }
        drop(state);
        match outcome.get() {
            Some(Ok(())) => Ok(result),
            written => Err(copy_of(written)),
        }
    }

    /// Hands the batch on to the next ticket; the last member's turn closes a batch that
    /// could not begin.
    fn pass_turn<'a>(&self, mut state: MutexGuard<'a, GroupState>) -> MutexGuard<'a, GroupState> {
        let batch = state.open.as_mut().expect("an open batch");
        batch.next += 1;
        if batch.transaction.is_none() && Some(batch.next) == batch.end {
            state.open = None;
        }
        self.turn.notify_all();
        state
    }

    /// The leader's part once its own change is applied: waits for the rest of the batch,
    /// writes it, lets the lock go, and tells the members how it went.
    fn lead_write<'a>(
        &'a self,
        mut state: MutexGuard<'a, GroupState>,
        resident: &Resident,
        home: &Home,
        project: &str,
        guard: FileLock,
    ) -> MutexGuard<'a, GroupState> {
        while state
            .open
            .as_ref()
            .is_some_and(|batch| Some(batch.next) != batch.end)
        {
            state = self.wait(state);
        }
        let batch = state.open.take().expect("the batch this thread leads");
        let transaction = batch.transaction.expect("every member gave it back");
        state.is_writing = true;
        drop(state);
        let written = resident.commit(home, project, transaction);
        drop(guard);
        let mut state = self.lock();
        state.is_writing = false;
        let _ = batch.outcome.set(written);
        self.turn.notify_all();
        state
    }
}

/// Applies one member's change to the batch's transaction at the time of its own request;
/// a change that fails (or panics) leaves the transaction as it found it.
fn apply<T>(
    transaction: &mut Transaction,
    now: Timestamp,
    change: impl FnOnce(&mut Transaction) -> Result<T>,
) -> std::thread::Result<Result<T>> {
    let board = transaction.board.clone();
    let (records, is_changed) = (transaction.records.len(), transaction.is_changed);
    // The archive sweep goes by the latest time of the batch.
    let swept_at = transaction.now.max(now);
    transaction.now = now;
    let result = panic::catch_unwind(AssertUnwindSafe(|| change(transaction)));
    transaction.now = swept_at;
    if !matches!(result, Ok(Ok(_))) {
        transaction.board = board;
        transaction.records.truncate(records);
        transaction.is_changed = is_changed;
    }
    result
}

/// A member's copy of how its batch ended.
fn copy_of(outcome: Option<&Result<()>>) -> Error {
    match outcome {
        Some(Err(error)) => error.duplicate(),
        _ => Error::invalid("the change was not written"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Barrier;
    use std::time::Duration;

    use super::*;
    use crate::board::task::TaskId;

    const CHANGES: u64 = 24;

    fn line(n: u64, now: Timestamp) -> ActivityRecord {
        ActivityRecord {
            at: now,
            project: "p".into(),
            actor: format!("agent{n}"),
            action: "counted".into(),
            task: Some(TaskId(n)),
            from_status: None,
            to_status: None,
            text: None,
        }
    }

    /// Change `n` counts itself on the board (next_id) and logs one line; every fourth
    /// changes the board and then refuses, every seventh changes it and then panics, and
    /// one in three comes through a writer of its own, as a CLI process would.
    fn change(n: u64) -> impl FnOnce(&mut Transaction) -> Result<u64> {
        move |tx| {
            tx.board.next_id += 1;
            if n % 4 == 1 {
                return Err(Error::invalid(format!("change {n} refused")));
            }
            if n % 7 == 5 {
                panic!("change {n} panics");
            }
            tx.record(line(n, tx.now));
            Ok(tx.board.next_id)
        }
    }

    #[test]
    fn changes_committed_together_each_get_their_own_answer_and_lose_nothing() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let lock = LockPolicy::silent(Duration::from_secs(30));
        let resident = Resident::default();
        let now = crate::time::now();
        let start = Barrier::new(CHANGES as usize);
        let answers: Vec<(u64, std::thread::Result<Result<u64>>)> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..CHANGES)
                .map(|n| {
                    let (home, resident, start) = (&home, &resident, &start);
                    scope.spawn(move || {
                        start.wait();
                        let answer = panic::catch_unwind(AssertUnwindSafe(|| {
                            if n % 3 == 0 {
                                update(home, "p", lock, now, change(n))
                            } else {
                                resident.update(home, "p", lock, now, change(n))
                            }
                        }));
                        (n, answer)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let mut counts = BTreeSet::new();
        let mut committed = BTreeSet::new();
        for (n, answer) in answers {
            match answer {
                Err(_) => assert_eq!(n % 7, 5, "only the panicking change panics ({n})"),
                Ok(Err(refused)) => {
                    assert_eq!(n % 4, 1, "{n} refused: {refused}");
                    assert_eq!(refused.to_string(), format!("change {n} refused"));
                }
                Ok(Ok(count)) => {
                    assert!(n % 4 != 1 && n % 7 != 5, "{n} should have failed");
                    assert!(
                        counts.insert(count),
                        "{n} saw the count {count} another saw"
                    );
                    committed.insert(n);
                }
            }
        }
        // What a refused or panicking change did to the board is gone; every other change
        // counted exactly once, in some order, each on the board its predecessor left.
        let board: Board = board_file::read(&home, "p").unwrap();
        let first = Board::new("p").next_id;
        assert_eq!(board.next_id, first + committed.len() as u64);
        let expected: BTreeSet<u64> = (first + 1..=board.next_id).collect();
        assert_eq!(counts, expected);
        assert_eq!(resident.board(&home, "p").unwrap().next_id, board.next_id);
        let logged: Vec<u64> = crate::activity::read(&home.activity_file("p"))
            .unwrap()
            .iter()
            .map(|record| record.task.unwrap().0)
            .collect();
        assert_eq!(
            logged.len(),
            committed.len(),
            "one line per committed change"
        );
        assert_eq!(logged.into_iter().collect::<BTreeSet<_>>(), committed);
    }

    #[test]
    fn a_batch_that_cannot_begin_refuses_each_of_its_changes_and_the_next_one_begins() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let resident = Resident::default();
        let now = crate::time::now();
        std::fs::create_dir_all(home.board_file("p").parent().unwrap()).unwrap();
        std::fs::write(home.board_file("p"), "{ not a board").unwrap();
        let lock = LockPolicy::silent(Duration::from_secs(5));
        let refused = resident
            .update(&home, "p", lock, now, |_| Ok(()))
            .unwrap_err();
        assert_eq!(refused.exit_code(), 4, "{refused}");
        assert_eq!(refused.duplicate().to_string(), refused.to_string());
        std::fs::remove_file(home.board_file("p")).unwrap();
        let count = resident.update(&home, "p", lock, now, change(0)).unwrap();
        assert_eq!(count, Board::new("p").next_id + 1);
    }
}
