//! The store on the files of the hub home (SPEC section 2): a project's board changed under
//! `board.lock` (read again under it, written atomically with its activity lines
//! journaled, the finished tasks appended to the archive first), the activity log, the
//! archive.
//!
//! A process that serves many callers at once (`baton serve`) makes its store resident
//! ([`FileStore::resident`]): it keeps the boards it has read, until their file changes,
//! and a [`Group`] per project that commits the changes arriving while a write is in
//! progress together, under one lock, in one board write and one fsync (group commit). Each
//! change is still applied alone, in the order the changes arrived, and answered with its
//! own result: a refused change leaves the board as the change before it left it, and a
//! change is answered only once the write that holds it is done. The lock is let go after
//! every write, so CLI writers on the same board take turns with the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::cache::FileCache;
use super::group::Group;
use super::lock::{FileLock, LockPolicy};
use super::paths::Home;
use super::transaction::Transaction;
use super::{GaveUp, Store, StoreError, archive_file, board_file, log, versioned};
use crate::board::Board;
use crate::board::record::ActivityRecord;
use crate::board::task::{Task, TaskId};
use crate::time::Timestamp;

/// The hub's state in the files under its home.
#[derive(Debug)]
pub struct FileStore {
    home: Home,
    lock: LockPolicy,
    /// What a long-running process keeps between changes; a command, run once, keeps
    /// nothing.
    resident: Option<Arc<Resident>>,
}

/// What a long-running process keeps between changes: the boards it read or wrote, and the
/// group commit of each project's board.
#[derive(Debug, Default)]
struct Resident {
    boards: FileCache<Board>,
    groups: Mutex<HashMap<String, Arc<Group<Transaction>>>>,
}

impl FileStore {
    /// The store of the hub at `home`, whose locks wait as `lock` says.
    pub fn new(home: Home, lock: LockPolicy) -> Self {
        FileStore {
            home,
            lock,
            resident: None,
        }
    }

    /// The store for a process that serves many requests: boards are kept between them and
    /// changes that arrive together are committed together.
    pub fn resident(home: Home, lock: LockPolicy) -> Self {
        FileStore {
            resident: Some(Arc::default()),
            ..FileStore::new(home, lock)
        }
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    /// Takes the board lock, then completes (or drops) what a killed writer left
    /// half-logged: how every change begins.
    fn lock_board(&self, project: &str) -> Result<FileLock, StoreError> {
        let guard = FileLock::acquire(&self.home.board_lock(project), "the board lock", self.lock)?;
        board_file::recover_log::<ActivityRecord>(&self.home, project)?;
        Ok(guard)
    }

    /// Writes what `transaction` changed; the caller holds the board lock. The project's
    /// record first, then the tasks leaving the board into the archive (a crash before the
    /// board is written leaves a task in both places, never in neither), then the board
    /// with its activity lines. The board written, when it was.
    fn commit(&self, project: &str, transaction: Transaction) -> Result<Option<Board>, StoreError> {
        let committed = transaction.commit()?;
        if let Some(document) = &committed.project {
            versioned::save_bytes(&self.home.project_file(project), document)?;
        }
        if !committed.archived.is_empty() {
            archive_file::append(&self.home, project, &committed.archived)?;
        }
        if let Some(board) = &committed.board {
            board_file::persist(&self.home, project, board, &committed.records)?;
        }
        Ok(committed.board)
    }

    /// The board of `project`, through the boards a resident store keeps.
    fn read_board(&self, project: &str) -> Result<Board, StoreError> {
        let Some(resident) = &self.resident else {
            return board_file::read(&self.home, project);
        };
        resident.boards.get(&self.home.board_file(project), || {
            let board = board_file::read(&self.home, project)?;
            // Every task decoded once, here: each request works on a copy of the board,
            // which shares the decoded tasks, and would otherwise decode them all again. A
            // task that does not decode is left to fail where it is used, as on the CLI.
            for task in board.tasks() {
                let _ = task;
            }
            Ok(board)
        })
    }

    /// [`Store::change_board`] committed together with the changes of other threads that
    /// arrive while a write is in progress.
    fn change_in_group(
        &self,
        resident: &Resident,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let group = group_of(&resident.groups, project);
        let path = self.home.board_file(project);
        let applied = group.run(
            || {
                let guard = self.lock_board(project)?;
                let board = self.read_board(project)?;
                Ok((guard, Transaction::new(board, now)))
            },
            |transaction| {
                // Each change at the time of its own request; the archive sweep that ends
                // the batch goes by the latest.
                let swept_at = transaction.now.max(now);
                transaction.now = now;
                let result = change(transaction);
                transaction.now = swept_at;
                result
            },
            |transaction| match self.commit(project, transaction) {
                Ok(written) => {
                    if let Some(board) = written {
                        resident.boards.keep(&path, board);
                    }
                    Ok(())
                }
                Err(error) => {
                    // A write that failed half-way (the rename done, the directory's sync
                    // not) leaves a board nobody should guess at: read it again next time.
                    resident.boards.forget(&path);
                    Err(error)
                }
            },
        )?;
        // A change that gave up is rolled back by the group and refuses only itself.
        let _ = applied;
        Ok(())
    }
}

/// The group of `project` among `groups`, made on first use.
fn group_of<W>(groups: &Mutex<HashMap<String, Arc<Group<W>>>>, project: &str) -> Arc<Group<W>> {
    let mut groups = groups.lock().unwrap_or_else(PoisonError::into_inner);
    groups.entry(project.to_string()).or_default().clone()
}

impl Store for FileStore {
    fn with_lock(&self, policy: LockPolicy) -> Arc<dyn Store> {
        Arc::new(FileStore {
            home: self.home.clone(),
            lock: policy,
            resident: self.resident.clone(),
        })
    }

    fn board(&self, project: &str) -> Result<Board, StoreError> {
        self.read_board(project)
    }

    fn change_board(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        if let Some(resident) = &self.resident {
            return self.change_in_group(resident, project, now, change);
        }
        let _guard = self.lock_board(project)?;
        let mut transaction = Transaction::new(board_file::read(&self.home, project)?, now);
        if change(&mut transaction).is_ok() {
            self.commit(project, transaction)?;
        }
        Ok(())
    }

    fn log(
        &self,
        project: &str,
        since: Option<Timestamp>,
        last: Option<usize>,
    ) -> Result<Vec<ActivityRecord>, StoreError> {
        let mut records: Vec<ActivityRecord> = log::read(&self.home.activity_file(project))?;
        if let Some(since) = since {
            records.retain(|record| record.at >= since);
        }
        if let Some(last) = last {
            let skip = records.len().saturating_sub(last);
            records.drain(..skip);
        }
        Ok(records)
    }

    fn catch_up_log(&self, project: &str) -> Result<(), StoreError> {
        board_file::try_recover_log::<ActivityRecord>(&self.home, project)?;
        Ok(())
    }

    fn archived_task(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
        archive_file::find(&self.home, project, id)
    }

    fn archived_tasks(&self, project: &str) -> Result<Vec<Task>, StoreError> {
        archive_file::all(&self.home, project)
    }

    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError> {
        archive_file::highest_id(&self.home, project)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Barrier;
    use std::time::Duration;

    use super::*;
    use crate::error::{Error, Result};
    use crate::store::change_board;

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
        let command = FileStore::new(home.clone(), lock);
        let resident = FileStore::resident(home.clone(), lock);
        let now = crate::time::now();
        let answers = at_once(CHANGES as usize, |n| {
            let n = n as u64;
            let answer = panic::catch_unwind(AssertUnwindSafe(|| {
                if n.is_multiple_of(3) {
                    change_board(&command, "p", now, change(n))
                } else {
                    change_board(&resident, "p", now, change(n))
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
        let board = board_file::read(&home, "p").unwrap();
        let first = Board::new("p").next_id;
        assert_eq!(board.next_id, first + committed.len() as u64);
        let expected: BTreeSet<u64> = (first + 1..=board.next_id).collect();
        assert_eq!(counts, expected);
        assert_eq!(resident.board("p").unwrap().next_id, board.next_id);
        let logged: Vec<u64> = resident
            .log("p", None, None)
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
        let lock = LockPolicy::silent(Duration::from_secs(5));
        let resident = FileStore::resident(home.clone(), lock);
        let now = crate::time::now();
        std::fs::create_dir_all(home.board_file("p").parent().unwrap()).unwrap();
        std::fs::write(home.board_file("p"), "{ not a board").unwrap();
        let refused = change_board(&resident, "p", now, |_| Ok::<_, Error>(())).unwrap_err();
        assert_eq!(refused.exit_code(), 4, "{refused}");
        assert_eq!(refused.duplicate().to_string(), refused.to_string());
        std::fs::remove_file(home.board_file("p")).unwrap();
        let count = change_board(&resident, "p", now, change(0)).unwrap();
        assert_eq!(count, Board::new("p").next_id + 1);
    }
}
