//! Group commit: the changes that threads of one process make to one file while a write of
//! it is in progress are applied one at a time, in the order they arrived, and written
//! together under one lock, in one write and one fsync (`baton serve`, where many requests
//! change the same board and the same mail at once).
//!
//! Each arrival takes a ticket. The first arrival while no batch is open or writing leads
//! the next batch: it takes the lock and reads the file (`begin`), and every change that has
//! arrived by then joins the batch. (A database's store groups the same way, its transaction
//! and its advisory lock for the file's lock: one transaction, one commit, for the batch.) Members apply their changes one at a time in ticket
//! order, each on its own thread, to the one [`Work`] in progress; the leader then writes it
//! (`write`) and lets the lock go, and each member returns once the write is done, with its
//! own result. A change that fails (or panics) is rolled back and refuses only itself; a
//! batch that cannot begin or be written refuses each of its changes with the same error.
//! The lock is let go after every write, so other processes take turns with this one.

use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::{self, Thread};

use super::StoreError;

/// What a batch changes, with the marks a failed change is rolled back to.
pub trait Work {
    type Mark;
    fn mark(&mut self) -> Self::Mark;
    fn roll_back(&mut self, mark: Self::Mark);
}

/// The changes to one file from the threads of one process.
pub struct Group<W> {
    state: Mutex<GroupState<W>>,
}

impl<W> std::fmt::Debug for Group<W> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        formatter
            .debug_struct("Group")
            .field("next_ticket", &state.next_ticket)
            .field("is_writing", &state.is_writing)
            .finish_non_exhaustive()
    }
}

impl<W> Default for Group<W> {
    fn default() -> Self {
        Group {
            state: Mutex::new(GroupState {
                next_ticket: 0,
                next_leader: 0,
                open: None,
                is_writing: false,
                waiting: HashMap::new(),
            }),
        }
    }
}

struct GroupState<W> {
    next_ticket: u64,
    /// The ticket of the next batch's leader: the first not in a batch yet.
    next_leader: u64,
    open: Option<Batch<W>>,
    /// A batch is being written (the lock is held, the work is out).
    is_writing: bool,
    /// The threads waiting, by ticket: each is woken alone when what it waits for may have
    /// come (its turn, its batch's outcome, its batch's start), never all at once, so a
    /// batch of a hundred changes costs a hundred wake-ups and not ten thousand.
    waiting: HashMap<u64, Thread>,
}

impl<W> GroupState<W> {
    fn wake(&mut self, ticket: u64) {
        if let Some(thread) = self.waiting.remove(&ticket) {
            thread.unpark();
        }
    }
}

struct Batch<W> {
    /// The tickets in the batch, from `first` up to `end` (unknown until its leader holds
    /// the lock; everyone who has arrived by then is in).
    first: u64,
    end: Option<u64>,
    /// Whose turn it is to apply a change.
    next: u64,
    /// The work, while nobody is applying a change to it; `None` once the batch could not
    /// begin, which `outcome` says.
    work: Option<W>,
    /// How the batch ended, for its members to copy.
    outcome: Arc<OnceLock<Result<(), StoreError>>>,
}

impl<W> Batch<W> {
    fn holds(&self, ticket: u64) -> bool {
        self.first <= ticket && self.end.is_some_and(|end| ticket < end)
    }
}

impl<W> Group<W> {
    fn lock(&self) -> MutexGuard<'_, GroupState<W>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<W: Work> Group<W> {
    /// Applies `change` in the next batch and returns its result once the batch is written:
    /// the batch's failure to begin or be written, else what `change` returned (a change
    /// that failed returns at once, its work rolled back). `begin` (take the lock, read)
    /// and `write` are called only if this change leads its batch; what `begin` holds (the
    /// lock, a database's transaction) is the leader's, handed to `write` and let go after.
    pub fn run<G, T, E>(
        &self,
        begin: impl FnOnce() -> Result<(G, W), StoreError>,
        change: impl FnOnce(&mut W) -> Result<T, E>,
        write: impl FnOnce(W, &mut G) -> Result<(), StoreError>,
    ) -> Result<Result<T, E>, StoreError> {
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let mut guard = None;
        let mut begin = Some(begin);
        // Wait for this change's turn, leading the batch when it is the first in line.
        loop {
            if state.open.is_none() && !state.is_writing && state.next_leader == ticket {
                state.open = Some(Batch {
                    first: ticket,
                    end: None,
                    next: ticket,
                    work: None,
                    outcome: Arc::new(OnceLock::new()),
                });
                drop(state);
                let begin = begin
                    .take()
                    .expect("a change leads only the batch it is in");
                let begun = begin();
                state = self.lock();
                let end = state.next_ticket;
                state.next_leader = end;
                let batch = state.open.as_mut().expect("the batch this thread opened");
                batch.end = Some(end);
                match begun {
                    Ok((held, work)) => {
                        guard = Some(held);
                        batch.work = Some(work);
                    }
                    Err(error) => {
                        let _ = batch.outcome.set(Err(error));
                    }
                }
            }
            // The leader's turn is the first of its batch.
            if let Some(batch) = &state.open
                && batch.holds(ticket)
                && batch.next == ticket
            {
                break;
            }
            state = self.wait(state, ticket);
        }
        let batch = state.open.as_mut().expect("the batch of this change");
        let outcome = batch.outcome.clone();
        let Some(mut work) = batch.work.take() else {
            // The batch could not begin: every change in it is refused as the first was.
            drop(self.pass_turn(state));
            return Err(copy_of(outcome.get()));
        };
        drop(state);
        let mark = work.mark();
        let applied = panic::catch_unwind(AssertUnwindSafe(|| change(&mut work)));
        if !matches!(applied, Ok(Ok(_))) {
            work.roll_back(mark);
        }
        let mut state = self.lock();
        let batch = state.open.as_mut().expect("the batch of this change");
        batch.work = Some(work);
        let mut state = self.pass_turn(state);
        if let Some(guard) = guard {
            state = self.lead_write(state, guard, write);
        }
        let result = match applied {
            Ok(Ok(result)) => result,
            Ok(Err(refused)) => return Ok(Err(refused)),
            Err(panicked) => {
                drop(state);
                panic::resume_unwind(panicked)
            }
        };
        while outcome.get().is_none() {
            state = self.wait(state, ticket);
        }
        drop(state);
        match outcome.get() {
            Some(Ok(())) => Ok(Ok(result)),
            written => Err(copy_of(written)),
        }
    }

    /// Sleeps until ticket `ticket` is woken (or wakes spuriously: the caller looks again).
    fn wait<'a>(
        &'a self,
        mut state: MutexGuard<'a, GroupState<W>>,
        ticket: u64,
    ) -> MutexGuard<'a, GroupState<W>> {
        state.waiting.insert(ticket, thread::current());
        drop(state);
        // A wake-up between the unlock and the park is kept: park returns at once.
        thread::park();
        let mut state = self.lock();
        state.waiting.remove(&ticket);
        state
    }

    /// Hands the batch on to the next ticket; the last member's turn closes a batch that
    /// could not begin.
    fn pass_turn<'a>(
        &self,
        mut state: MutexGuard<'a, GroupState<W>>,
    ) -> MutexGuard<'a, GroupState<W>> {
        let batch = state.open.as_mut().expect("an open batch");
        batch.next += 1;
        let (next, first) = (batch.next, batch.first);
        let is_last = Some(next) == batch.end;
        let could_not_begin = batch.work.is_none();
        state.wake(next);
        if is_last && could_not_begin {
            state.open = None;
            let next_leader = state.next_leader;
            state.wake(next_leader);
        } else if is_last {
            // The leader waits for the last change of its batch.
            state.wake(first);
        }
        state
    }

    /// The leader's part once its own change is applied: waits for the rest of the batch,
    /// writes it, lets the lock go, and tells the members how it went.
    fn lead_write<'a, G>(
        &'a self,
        mut state: MutexGuard<'a, GroupState<W>>,
        mut guard: G,
        write: impl FnOnce(W, &mut G) -> Result<(), StoreError>,
    ) -> MutexGuard<'a, GroupState<W>> {
        let leader = state
            .open
            .as_ref()
            .expect("the batch this thread leads")
            .first;
        while state
            .open
            .as_ref()
            .is_some_and(|batch| Some(batch.next) != batch.end)
        {
            state = self.wait(state, leader);
        }
        let batch = state.open.take().expect("the batch this thread leads");
        let size = batch.end.unwrap_or(batch.first) - batch.first;
        crate::metrics::GROUP_COMMIT_BATCHES.observe((), size as f64);
        let work = batch.work.expect("every member gave it back");
        state.is_writing = true;
        drop(state);
        let written = write(work, &mut guard);
        drop(guard);
        let mut state = self.lock();
        state.is_writing = false;
        let _ = batch.outcome.set(written);
        for member in batch.first..batch.end.unwrap_or(batch.first) {
            state.wake(member);
        }
        let next_leader = state.next_leader;
        state.wake(next_leader);
        state
    }
}

/// The group of `project` among `groups`, made on first use.
pub fn group_of<W>(groups: &Mutex<HashMap<String, Arc<Group<W>>>>, project: &str) -> Arc<Group<W>> {
    let mut groups = groups.lock().unwrap_or_else(PoisonError::into_inner);
    groups.entry(project.to_string()).or_default().clone()
}

/// A member's copy of how its batch ended.
fn copy_of(outcome: Option<&Result<(), StoreError>>) -> StoreError {
    match outcome {
        Some(Err(error)) => error.duplicate(),
        _ => StoreError::Unfinished,
    }
}
