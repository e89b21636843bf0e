//! The one way to change a board, for the session layer: lock `board.lock`, complete what a
//! killed writer left, re-read `board.json`, change it, move finished tasks to the archive,
//! write it with its activity lines (`store::board_file::persist`), release. The store
//! below knows the files; what a change does to the board, and the sweep that follows it,
//! are decided here.
//!
//! A process that serves many callers at once (`baton serve`) keeps a [`Resident`]: the
//! boards it has read, kept until their file changes, and a [`Group`] per project that
//! commits the changes arriving while a write is in progress together, under one lock, in
//! one board write and one fsync (group commit, `crate::group`). Each change is still
//! applied alone, in the order the changes arrived, and answered with its own result: a
//! refused change leaves the board as the change before it left it, and a change is
//! answered only once the write that holds it is done. The lock is let go after every
//! write, so CLI writers on the same board take turns with the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::activity::ActivityRecord;
use crate::archive;
use crate::board::Board;
use crate::error::Result;
use crate::group::{Group, Work};
use crate::mail::{Appending, Draft, Message};
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
    let _guard = lock_board(home, project, lock)?;
    let mut transaction = Transaction::new(board_file::read(home, project)?, now);
    let result = change(&mut transaction)?;
    transaction.commit(home, project)?;
    Ok(result)
}

/// Takes the board lock, then completes (or drops) what a killed writer left half-logged:
/// how every change begins.
fn lock_board(home: &Home, project: &str, lock: LockPolicy) -> Result<FileLock> {
    let guard = FileLock::acquire(&home.board_lock(project), "the board lock", lock)?;
    board_file::recover_log::<ActivityRecord>(home, project)?;
    Ok(guard)
}

/// A failed change is rolled back to the board and the log as they were before it.
impl Work for Transaction {
    type Mark = (Board, usize, bool, Timestamp);

    fn mark(&self) -> Self::Mark {
        (
            self.board.clone(),
            self.records.len(),
            self.is_changed,
            self.now,
        )
    }

    fn roll_back(&mut self, (board, records, is_changed, now): Self::Mark) {
        self.board = board;
        self.records.truncate(records);
        self.is_changed = is_changed;
        self.now = now;
    }
}

/// What a long-running process keeps between changes: the boards it read or wrote, and the
/// group commit of each project's board and of its mail.
#[derive(Debug, Default)]
pub struct Resident {
    boards: FileCache<Board>,
    groups: Mutex<HashMap<String, Arc<Group<Transaction>>>>,
    mail: Mutex<HashMap<String, Arc<Group<Appending>>>>,
}

impl Resident {
    /// The board of `project` as it is now, read without the lock; parsed again only when
    /// its file changed since it was last read or written here.
    pub fn board(&self, home: &Home, project: &str) -> Result<Board> {
        let path = home.board_file(project);
        self.boards.get(&path, || {
            let board: Board = board_file::read(home, project)?;
            // Every task decoded once, here: each request works on a copy of the board,
            // which shares the decoded tasks, and would otherwise decode them all again. A
            // task that does not decode is left to fail where it is used, as on the CLI.
            for task in board.tasks() {
                let _ = task;
            }
            Ok(board)
        })
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
        group_of(&self.groups, project).run(
            || self.begin(home, project, lock, now),
            |transaction| {
                // Each change at the time of its own request; the archive sweep that ends
                // the batch goes by the latest.
                let swept_at = transaction.now.max(now);
                transaction.now = now;
                let result = change(transaction);
                transaction.now = swept_at;
                result
            },
            |transaction| self.commit(home, project, transaction),
        )
    }

    /// [`crate::mail::append`], committed together with the messages of other threads that
    /// arrive while a write of the mail is in progress.
    pub fn append_mail(
        &self,
        home: &Home,
        project: &str,
        lock: LockPolicy,
        now: Timestamp,
        drafts: Vec<Draft>,
    ) -> Result<Vec<Message>> {
        if drafts.is_empty() {
            return Ok(Vec::new());
        }
        group_of(&self.mail, project).run(
            || Appending::begin(home, project, lock, now),
            |appending| Ok(appending.add(now, drafts)),
            |appending| appending.write(home, project),
        )
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
        let guard = lock_board(home, project, lock)?;
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

/// The group of `project` among `groups`, made on first use.
fn group_of<W>(groups: &Mutex<HashMap<String, Arc<Group<W>>>>, project: &str) -> Arc<Group<W>> {
    let mut groups = groups.lock().unwrap_or_else(PoisonError::into_inner);
    groups.entry(project.to_string()).or_default().clone()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Barrier;
    use std::time::Duration;

    use super::*;
    use crate::board::task::TaskId;
    use crate::error::Error;

    const CHANGES: u64 = 24;

    /// `work(n)` for each `n` below `count`, each on a thread of its own, all let go at
    /// once; the answers in the order of `n`.
    fn at_once<T: Send>(count: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let start = Barrier::new(count);
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
        let answers = at_once(CHANGES as usize, |n| {
            let n = n as u64;
            let answer = panic::catch_unwind(AssertUnwindSafe(|| {
                if n.is_multiple_of(3) {
                    update(&home, "p", lock, now, change(n))
                } else {
                    resident.update(&home, "p", lock, now, change(n))
                }
            }));
            (n, answer)
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

    #[test]
    fn messages_appended_together_each_get_their_own_number() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let lock = LockPolicy::silent(Duration::from_secs(30));
        let resident = Resident::default();
        let now = crate::time::now();
        let numbers: Vec<(usize, Vec<u64>)> = at_once(12, |n| {
            let draft = |i: usize| Draft {
                from: format!("agent{n}"),
                to: "dev".into(),
                kind: crate::mail::MessageType::Text,
                summary: format!("{n}.{i}"),
                body: String::new(),
                payload: serde_json::Value::Null,
            };
            let written = resident
                .append_mail(&home, "p", lock, now, (0..n % 3).map(draft).collect())
                .unwrap();
            for (i, message) in written.iter().enumerate() {
                assert_eq!(message.summary, format!("{n}.{i}"));
            }
            (n, written.iter().map(|message| message.seq).collect())
        });
        let mut all: Vec<u64> = numbers.iter().flat_map(|(_, seqs)| seqs.clone()).collect();
        all.sort_unstable();
        let count = (0..12).map(|n| n % 3).sum::<usize>() as u64;
        assert_eq!(all, (1..=count).collect::<Vec<u64>>(), "{numbers:?}");
        let stored = crate::mail::read(&home, "p").unwrap();
        let mut seqs: Vec<u64> = stored.iter().map(|message| message.seq).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, all, "each message once in the file");
    }
}
