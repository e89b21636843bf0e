//! The model: tasks, the state machine that moves them, and whose turn each one is.

pub mod action;
pub mod circles;
pub mod delivery;
pub mod edit;
pub mod finished;
pub mod handover;
pub mod inbox;
pub mod lease;
pub mod mail;
pub mod new_task;
pub mod offers;
pub mod record;
pub mod reservation;
pub mod routing;
pub mod scope;
pub mod search;
pub mod stats;
pub mod task;
pub mod transition;
pub mod undo;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use action::ActionKind;
use chrono::Duration;
use inbox::{Reason, Turn};
use offers::Offers;
use reservation::{Grant, Reservation};
use task::{Head, Status, Task, TaskId};
use transition::{Action, Event, Rules, TransitionError};

use crate::time::Timestamp;

/// The `schema` of a board this binary writes and the highest it reads.
pub const BOARD_SCHEMA: u32 = 1;

/// A project's board: its own fields and its tasks. Tasks a store read stay as the store
/// keeps them until a command needs all of one: every task's [`Head`] is read up front, the
/// rest decoded on demand ([`Undecoded`]), and a store can write a task nobody changed back
/// as it was. The board does no I/O: what it has not decoded, the store holds in memory.
#[derive(Debug, Clone)]
pub struct Board {
    pub schema: u32,
    pub project: String,
    pub next_id: u64,
    slots: Vec<Slot>,
    /// What the tasks not decoded yet are decoded from: the store's, shared by every copy.
    undecoded: Option<Arc<dyn Undecoded>>,
    /// Ids that more than one task has (a board edited by hand, or written by an old baton
    /// that could reuse ids), sorted; nearly always none. Nothing acts on such an id.
    duplicated: Vec<TaskId>,
    /// Whether every task's id is above the one before it, as baton writes them: then a
    /// binary search alone finds a task, or finds that there is none (a board edited by
    /// hand may not be, and is searched through as well).
    in_id_order: bool,
    /// Who holds which patterns of the workspace (SPEC section 18.2), in the order taken.
    reservations: Vec<Reservation>,
    /// Their patterns, read once for every question asked of them until they change.
    reserved_patterns: OnceLock<Arc<reservation::ReadPatterns>>,
    /// What undoes the changes of its tasks since its first undo point ([`Board::mark`]).
    journal: undo::Journal,
}

/// The tasks of a board that a store read and has not decoded: the board keeps each one's
/// head and its place (whatever the store means by it, a byte range in a board file) and
/// asks here for the task whole when a command needs it.
pub trait Undecoded: fmt::Debug + Send + Sync {
    /// The task at `place`, decoded; a failure is said in words that name where in the
    /// store the task is.
    fn decode(&self, place: &Range<usize>) -> Result<Task, String>;

    /// The text at `span` (a task's place, the stretch between two places, or a run of
    /// them) when the store reads what it read as one text (held, or read again from where
    /// it was read); `None` where it keeps it otherwise, or where the text is not there any
    /// more. A store that writes text copies an unchanged task back from here.
    fn text(&self, span: Range<usize>) -> Option<Cow<'_, [u8]>> {
        let _ = span;
        None
    }
}

/// A task as the board keeps it: its head, and the task itself or where it is undecoded.
#[derive(Debug, Clone)]
struct Slot {
    head: Head,
    body: Body,
}

#[derive(Debug, Clone)]
enum Body {
    /// As the store read it: its place among the board's undecoded tasks, and the task once
    /// decoded. (Behind a pointer, so the thousands of tasks a command never decodes take no
    /// room for one; shared, so a copy of the board, which a server keeps to undo a refused
    /// change, copies no task.)
    Stored {
        place: Range<usize>,
        task: OnceLock<Arc<Task>>,
    },
    /// Made or changed by this command.
    Owned(Arc<Task>),
}

/// The place of a task a store settled ([`Board::settle`]): none, since it is held decoded.
pub const SETTLED: Range<usize> = usize::MAX..usize::MAX;

/// A task of a board as a store writes it back.
#[derive(Debug, Clone, Copy)]
pub enum Kept<'a> {
    /// Unchanged since the store read it (or wrote it: [`Board::settle`]): its place among
    /// [`Board::undecoded`] ([`SETTLED`] for one written since), and its id. A store that
    /// keeps the board it wrote names what stays by the id: the places are those of the
    /// read, which what the store keeps beside them need not follow.
    Stored { place: &'a Range<usize>, id: TaskId },
    /// Made or changed since, to be stored anew.
    Changed(&'a Task),
}

/// The tasks of a board as a store reads them, in board order: each one's head and its
/// place among the undecoded tasks. What [`Board::from_store`] is built from.
#[derive(Debug, Default)]
pub struct StoredTasks {
    slots: Vec<Slot>,
}

impl StoredTasks {
    pub fn with_capacity(capacity: usize) -> Self {
        StoredTasks {
            slots: Vec::with_capacity(capacity),
        }
    }

    /// Keeps the task read next: its head and where it is. (Inlined: it runs once a task.)
    #[inline(always)]
    pub fn push(&mut self, head: Head, place: Range<usize>) {
        self.slots.push(Slot {
            head,
            body: Body::Stored {
                place,
                task: OnceLock::new(),
            },
        });
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The heads read so far, each with its place, in board order.
    pub fn iter(&self) -> impl Iterator<Item = (&Head, &Range<usize>)> {
        self.slots.iter().filter_map(|slot| match &slot.body {
            Body::Stored { place, .. } => Some((&slot.head, place)),
            Body::Owned(_) => None,
        })
    }
}

/// What the model refuses to guess at on a board: a task whose stored form does not decode,
/// and an id more than one task has. Each makes the board unreadable to the command that
/// meets it. The model does not know where the board is kept: the store names that when it
/// takes the refusal in as its own error (a damaged board, exit code 4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("{task}: {detail}")]
    Undecodable { task: TaskId, detail: String },
    #[error("no task at place {index}")]
    NoTaskAt { index: usize },
    #[error("{task} is the id of more than one task")]
    DuplicateId { task: TaskId },
}

/// A task in someone's inbox, with why it is there.
#[derive(Debug, Clone, Copy)]
pub struct InboxItem<'a> {
    pub task: &'a Head,
    pub reason: Reason,
    /// Where the task is in board order, for [`Board::task_at`].
    pub index: usize,
}

impl Board {
    pub fn new(project: &str) -> Self {
        Board {
            schema: BOARD_SCHEMA,
            project: project.to_string(),
            next_id: 1,
            slots: Vec::new(),
            undecoded: None,
            duplicated: Vec::new(),
            in_id_order: true,
            reservations: Vec::new(),
            reserved_patterns: OnceLock::new(),
            journal: undo::Journal::default(),
        }
    }

    /// The board a store read: its own fields, and its tasks as the store keeps them,
    /// decoded from `undecoded` when needed.
    pub fn from_store(
        schema: u32,
        project: String,
        next_id: u64,
        tasks: StoredTasks,
        undecoded: Arc<dyn Undecoded>,
    ) -> Self {
        let duplicated = duplicated_ids(&tasks.slots);
        let in_id_order = is_in_id_order(&tasks.slots);
        Board {
            schema,
            project,
            next_id,
            slots: tasks.slots,
            undecoded: Some(undecoded),
            duplicated,
            in_id_order,
            reservations: Vec::new(),
            reserved_patterns: OnceLock::new(),
            journal: undo::Journal::default(),
        }
    }

    /// The board as a store that keeps the board it wrote holds it once written: each task
    /// made or changed since the read becomes one it stored, decoded already and known by
    /// its id ([`Kept::Stored`]), with no place among [`Board::undecoded`] ([`SETTLED`],
    /// which no decode asks for). Its next change then writes that change's tasks alone, not
    /// every task changed since the board was read.
    pub fn settle(&mut self) {
        self.note_slots();
        for slot in &mut self.slots {
            if let Body::Owned(task) = &slot.body {
                slot.body = Body::Stored {
                    place: SETTLED,
                    task: OnceLock::from(Arc::clone(task)),
                };
            }
        }
    }

    /// What the board's tasks not decoded yet are decoded from, as the store handed it.
    pub fn undecoded(&self) -> Option<&Arc<dyn Undecoded>> {
        self.undecoded.as_ref()
    }

    /// Every task as a store writes it back, in board order.
    pub fn kept(&self) -> impl Iterator<Item = Kept<'_>> {
        self.slots.iter().map(|slot| match &slot.body {
            Body::Stored { place, .. } => Kept::Stored {
                place,
                id: slot.head.id,
            },
            Body::Owned(task) => Kept::Changed(task),
        })
    }

    /// The ids more than one task on the board has, in order; nearly always none.
    pub fn duplicated_ids(&self) -> &[TaskId] {
        &self.duplicated
    }

    /// Refuses an id that more than one task has: a command that names it cannot be told
    /// which one is meant, and must not act on either at random.
    pub fn check_unambiguous(&self, id: TaskId) -> Result<(), BoardError> {
        match self.duplicated.binary_search(&id) {
            Ok(_) => Err(BoardError::DuplicateId { task: id }),
            Err(_) => Ok(()),
        }
    }

    /// The id the next task gets: above every id on the board and `highest_archived`,
    /// whatever `next_id` says (it may have been edited by hand), so no id is used twice.
    pub fn next_free_id(&self, highest_archived: u64) -> TaskId {
        let highest_here = if self.in_id_order {
            self.slots.last().map_or(0, |slot| slot.head.id.0)
        } else {
            self.heads().map(|head| head.id.0).max().unwrap_or(0)
        };
        TaskId(
            self.next_id
                .max(highest_here.saturating_add(1))
                .max(highest_archived.saturating_add(1)),
        )
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every task's head, in board order.
    pub fn heads(&self) -> impl Iterator<Item = &Head> {
        self.slots.iter().map(|slot| &slot.head)
    }

    /// The first instant after `now` at which a working task's lease runs out, or a
    /// reservation expires: what the board shows of its tasks (stalled, held, whose turn)
    /// changes then with no write, so what was worked out from it at `now` holds until
    /// then. `None` while nothing is running out.
    pub fn next_stall_after(&self, now: Timestamp) -> Option<Timestamp> {
        self.heads()
            .filter(|head| head.status == Status::Working)
            .filter_map(|head| head.lease_expires_at)
            .filter(|until| *until > now)
            .chain(self.next_expiry_after(now))
            .min()
    }

    pub fn open_heads(&self) -> impl Iterator<Item = &Head> {
        self.heads().filter(|head| head.status.is_open())
    }

    pub fn head(&self, id: TaskId) -> Option<&Head> {
        self.position(id).map(|index| &self.slots[index].head)
    }

    pub fn contains(&self, id: TaskId) -> bool {
        self.position(id).is_some()
    }

    /// Task `id` whole, decoded on first use. A task that does not decode makes the board
    /// unreadable, like any other damage; so does an id that more than one task has.
    pub fn task(&self, id: TaskId) -> Result<Option<&Task>, BoardError> {
        match self.locate(id)? {
            Some(index) => self.decode(&self.slots[index]).map(Some),
            None => Ok(None),
        }
    }

    /// Task `id` whole, as a value of its own: decoded afresh when it was not yet, without
    /// keeping a second copy on the board (for answers that list many tasks).
    pub fn task_owned(&self, id: TaskId) -> Result<Option<Task>, BoardError> {
        match self.locate(id)? {
            Some(index) => self.task_at(index).map(Some),
            None => Ok(None),
        }
    }

    /// The task at `index` in board order, as a value of its own (as [`Board::task_owned`]):
    /// for listings, which show every task, two with one id included.
    pub fn task_at(&self, index: usize) -> Result<Task, BoardError> {
        let Some(slot) = self.slots.get(index) else {
            return Err(self.no_task_at(index));
        };
        match &slot.body {
            Body::Stored { place, task } if task.get().is_none() => self.decode_stored(slot, place),
            _ => self.decode(slot).cloned(),
        }
    }

    /// Every task whole, in board order.
    pub fn tasks(&self) -> impl Iterator<Item = Result<&Task, BoardError>> {
        self.slots.iter().map(|slot| self.decode(slot))
    }

    fn decode<'a>(&'a self, slot: &'a Slot) -> Result<&'a Task, BoardError> {
        match &slot.body {
            Body::Owned(task) => Ok(task),
            Body::Stored { place, task } => match task.get() {
                Some(task) => Ok(task),
                None => {
                    let decoded = self.decode_stored(slot, place)?;
                    Ok(task.get_or_init(|| Arc::new(decoded)))
                }
            },
        }
    }

    /// Decodes the task of `slot` from what the store handed over.
    fn decode_stored(&self, slot: &Slot, place: &Range<usize>) -> Result<Task, BoardError> {
        let undecodable = |detail: String| BoardError::Undecodable {
            task: slot.head.id,
            detail,
        };
        match &self.undecoded {
            Some(undecoded) => undecoded.decode(place).map_err(undecodable),
            None => Err(undecodable("has no stored text".to_string())),
        }
    }

    fn no_task_at(&self, index: usize) -> BoardError {
        BoardError::NoTaskAt { index }
    }

    /// Adds a new task at the end of the board.
    pub fn push(&mut self, task: Task) {
        if self.position(task.id).is_some() {
            self.duplicated.push(task.id);
            self.duplicated.sort();
            self.duplicated.dedup();
        }
        if self
            .slots
            .last()
            .is_some_and(|last| last.head.id >= task.id)
        {
            self.in_id_order = false;
        }
        self.note_pushed();
        self.slots.push(Slot {
            head: Head::of(&task),
            body: Body::Owned(Arc::new(task)),
        });
    }

    /// Changes task `id` with `change`; false when there is no such task.
    pub fn modify(
        &mut self,
        id: TaskId,
        change: impl FnOnce(&mut Task),
    ) -> Result<bool, BoardError> {
        match self.locate(id)? {
            Some(index) => self.modify_at(index, change).map(|()| true),
            None => Ok(false),
        }
    }

    /// Changes the task at `index` in board order with `change`.
    pub fn modify_at(
        &mut self,
        index: usize,
        change: impl FnOnce(&mut Task),
    ) -> Result<(), BoardError> {
        if index >= self.slots.len() {
            return Err(self.no_task_at(index));
        }
        // Noted as it is, before its decoded task is taken out (a settled task has no other
        // copy to be decoded again from).
        self.note_set(index);
        // The slot is replaced below, so a task already decoded is moved out, not copied
        // (unless a copy of the board shares it).
        let decoded = match &mut self.slots[index].body {
            Body::Stored { task, .. } => task.take(),
            Body::Owned(_) => None,
        };
        let slot = &self.slots[index];
        let mut task = match (decoded, &slot.body) {
            (Some(decoded), _) => Arc::unwrap_or_clone(decoded),
            (None, Body::Stored { place, .. }) => self.decode_stored(slot, place)?,
            (None, Body::Owned(task)) => Task::clone(task),
        };
        change(&mut task);
        self.put(index, task);
        Ok(())
    }

    /// Puts `task` at `index`, its head taken from it.
    fn set(&mut self, index: usize, task: Task) {
        self.note_set(index);
        self.put(index, task);
    }

    /// [`Board::set`], the slot it replaces noted already.
    fn put(&mut self, index: usize, task: Task) {
        let renumbered = self.slots[index].head.id != task.id;
        self.slots[index] = Slot {
            head: Head::of(&task),
            body: Body::Owned(Arc::new(task)),
        };
        if renumbered {
            self.in_id_order = is_in_id_order(&self.slots);
        }
    }

    /// Takes the tasks in `ids` off the board, whole, in board order.
    pub fn remove(&mut self, ids: &HashSet<TaskId>) -> Result<Vec<Task>, BoardError> {
        let mut removed = Vec::new();
        for slot in &self.slots {
            if ids.contains(&slot.head.id) {
                removed.push(self.decode(slot)?.clone());
            }
        }
        if removed.is_empty() {
            return Ok(removed);
        }
        self.note_slots();
        self.slots.retain(|slot| !ids.contains(&slot.head.id));
        self.duplicated.retain(|id| !ids.contains(id));
        Ok(removed)
    }

    /// Where task `id` is. baton keeps tasks in id order (they are appended as numbered and
    /// only ever removed), so a binary search finds them, or finds that there is none (a
    /// task being added, once per task an import carries: a search through the board each
    /// time would make that grow with the square of the tasks); a board edited out of order
    /// by hand still gets the right answer from the linear search behind it.
    fn position(&self, id: TaskId) -> Option<usize> {
        let found = self
            .slots
            .binary_search_by_key(&id, |slot| slot.head.id)
            .ok();
        if self.in_id_order {
            return found;
        }
        found.or_else(|| self.slots.iter().position(|slot| slot.head.id == id))
    }

    /// Where task `id` is, refusing an id more than one task has.
    fn locate(&self, id: TaskId) -> Result<Option<usize>, BoardError> {
        self.check_unambiguous(id)?;
        Ok(self.position(id))
    }

    /// The tasks in `task.after` that are not completed, with their status. A dependency no
    /// longer on the board was archived, which only happens to finished tasks nothing open
    /// waits on (and `send` refuses to wait on an archived task that did not complete).
    pub fn waiting_on(&self, task: &Head) -> Vec<(TaskId, Status)> {
        task.after
            .iter()
            .filter_map(|id| self.head(*id))
            .filter(|dependency| dependency.status != Status::Completed)
            .map(|dependency| (dependency.id, dependency.status))
            .collect()
    }

    /// The circles of open tasks waiting on each other, none of which can start: see
    /// [`circles::circles`].
    pub fn circles(&self) -> Vec<Vec<TaskId>> {
        circles::circles(self.open_heads())
    }

    /// Whose turn `task` is: [`inbox::turn`], and held while another agent's reservation
    /// overlaps what it touches (SPEC section 4).
    pub fn turn<'a>(&'a self, task: &'a Head, now: Timestamp) -> Turn<'a> {
        let waiting_on = self.waiting_on(task);
        if waiting_on.is_empty()
            && let Some(holder) = self.held_by(task, now)
        {
            return Turn::Held(holder);
        }
        inbox::turn(task, &waiting_on, now)
    }

    /// The tasks whose turn is `agent`'s, in inbox order.
    pub fn inbox(&self, agent: &str, now: Timestamp) -> Vec<InboxItem<'_>> {
        let mut items: Vec<InboxItem<'_>> = self
            .heads()
            .enumerate()
            .filter(|(_, task)| task.status.is_open())
            .filter_map(|(index, task)| match self.turn(task, now) {
                Turn::Of {
                    agent: owner,
                    reason,
                } if owner == agent => Some(InboxItem {
                    task,
                    reason,
                    index,
                }),
                _ => None,
            })
            .collect();
        items.sort_by(|left, right| inbox::inbox_order(left.task, right.task));
        items
    }

    /// What `actor` may do with `task` (of this board, or archived) now, judged with the
    /// facts from the rest of the board the state machine needs, as [`Board::apply`] is.
    pub fn offers(
        &self,
        task: &Task,
        actor: &str,
        coordinator: Option<&str>,
        lease: Duration,
        now: Timestamp,
    ) -> Offers {
        let head = Head::of(task);
        let waiting_on = self.waiting_on(&head);
        let rules = Rules {
            now,
            lease,
            coordinator,
            waiting_on: &waiting_on,
            held_by: self.held_by(&head, now),
        };
        Offers::judge(task, actor, rules)
    }

    /// Applies `action` by `actor` to task `id` in place: the state machine plus the facts
    /// from the rest of the board it needs. `None` when no such task is on the board.
    pub fn apply(
        &mut self,
        id: TaskId,
        action: &Action,
        actor: &str,
        coordinator: Option<&str>,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Option<Result<Event, TransitionError>>, BoardError> {
        let Some(index) = self.locate(id)? else {
            return Ok(None);
        };
        match self.judge(index, action, actor, coordinator, lease, now)? {
            Ok((next, event)) => {
                self.keep_reservations(&next, event.action);
                self.set(index, next);
                Ok(Some(Ok(event)))
            }
            Err(refused) => Ok(Some(Err(refused))),
        }
    }

    /// Whether `apply` would take `action` on task `id` now, changing nothing: for a
    /// change that does slow work outside the lock first (a landing), refused before it
    /// starts. `None` when the board has no such task.
    pub fn check(
        &self,
        id: TaskId,
        action: &Action,
        actor: &str,
        coordinator: Option<&str>,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Option<Result<(), TransitionError>>, BoardError> {
        let Some(index) = self.locate(id)? else {
            return Ok(None);
        };
        Ok(Some(
            self.judge(index, action, actor, coordinator, lease, now)?
                .map(|_| ()),
        ))
    }

    /// The task at `index` as `action` by `actor` would leave it, and the event, or why
    /// not: the state machine's answer, with the rest of the board's waits and holds.
    fn judge(
        &self,
        index: usize,
        action: &Action,
        actor: &str,
        coordinator: Option<&str>,
        lease: Duration,
        now: Timestamp,
    ) -> Result<Result<(Task, Event), TransitionError>, BoardError> {
        let head = &self.slots[index].head;
        let waiting_on = self.waiting_on(head);
        let held_by = self.held_by(head, now).cloned();
        let task = self.decode(&self.slots[index])?;
        let rules = Rules {
            now,
            lease,
            coordinator,
            waiting_on: &waiting_on,
            held_by: held_by.as_ref(),
        };
        Ok(match transition::transition(task, action, actor, rules) {
            // An edit's waits are judged against the rest of the board's too.
            Ok((next, _)) if let Some(circle) = self.circle_closed_by(action, &next) => {
                Err(TransitionError::Refused {
                    task: next.id,
                    status: next.status,
                    assignee: next.to.clone(),
                    why: transition::Why::Circle { circle },
                })
            }
            other => other,
        })
    }

    /// The circle of waits that `next`, edited by `action` to wait on other tasks, would
    /// close: none of the tasks around it could ever start (SPEC section 4).
    fn circle_closed_by(&self, action: &Action, next: &Task) -> Option<Vec<TaskId>> {
        action.edits()?.after.as_ref()?;
        circles::circle_through(self.heads(), next.id, &next.after)
    }

    /// What a transition does to the reservations (SPEC section 18.2): a claim reserves the
    /// task's scope for its assignee; a release, a reassignment or the end of the task ends
    /// what its claim reserved. Asking, review and rework keep them: the work is not landed.
    /// So does an edit of what it touches: the work done under the old scope is not landed
    /// either, and its next claim reserves the new.
    fn keep_reservations(&mut self, task: &Task, action: ActionKind) {
        match action {
            ActionKind::Claim if !task.touches.is_empty() => {
                let grant = Grant {
                    task: Some(task.id),
                    lasts: None,
                    exclusive: true,
                    reason: None,
                };
                let scope = reservation::scope_of(&task.touches);
                // The claim was refused while anything overlapping was held by another, so
                // this takes them all; were one to slip in, the claim holds what it got.
                if self
                    .reserve(&task.to, &scope, &grant, task.updated_at)
                    .is_err()
                {
                    for pattern in &scope {
                        let _ = self.reserve(
                            &task.to,
                            std::slice::from_ref(pattern),
                            &grant,
                            task.updated_at,
                        );
                    }
                }
            }
            ActionKind::Release | ActionKind::Reassign => {
                self.end_reservations_of(task.id);
            }
            _ if task.status.is_finished() => {
                self.end_reservations_of(task.id);
            }
            _ => {}
        }
    }
}

/// Whether each of `slots` has an id above the one before it.
fn is_in_id_order(slots: &[Slot]) -> bool {
    slots
        .windows(2)
        .all(|pair| pair[0].head.id < pair[1].head.id)
}

/// The ids more than one of `slots` has, sorted. baton writes tasks in id order, so the
/// usual board is told apart from any other in one pass without a set.
fn duplicated_ids(slots: &[Slot]) -> Vec<TaskId> {
    if is_in_id_order(slots) {
        return Vec::new();
    }
    let mut ids: Vec<TaskId> = slots.iter().map(|slot| slot.head.id).collect();
    ids.sort();
    let mut duplicated: Vec<TaskId> = ids
        .windows(2)
        .filter(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .collect();
    duplicated.dedup();
    duplicated
}

impl PartialEq for Board {
    /// Boards are equal when they hold the same tasks, however each is held.
    fn eq(&self, other: &Board) -> bool {
        self.schema == other.schema
            && self.project == other.project
            && self.next_id == other.next_id
            && self.reservations == other.reservations
            && self.len() == other.len()
            && self.tasks().zip(other.tasks()).all(
                |(left, right)| matches!((left, right), (Ok(left), Ok(right)) if left == right),
            )
    }
}

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
