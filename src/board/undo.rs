//! Undo points on a board, for a change that may be refused after it changed the board (a
//! group commit's member: [`crate::store::group`]). A mark copies the board's small fields
//! and no task: from the first mark on, the board notes the old slot of each task it
//! replaces (and the whole list only when tasks leave it, which a change rarely does), so
//! rolling back to a mark costs what the changes since changed, not the board's size.

use std::sync::{Arc, OnceLock};

use super::reservation::{ReadPatterns, Reservation};
use super::task::TaskId;
use super::{Board, Slot};

/// What undoes one change of the board's tasks.
#[derive(Debug)]
enum Undo {
    /// The slot at this index, as it was before it was replaced.
    Set(usize, Slot),
    /// A task was pushed at the end.
    Pushed,
    /// Every slot as it was (tasks were removed, or the board settled).
    Slots(Vec<Slot>),
}

/// The changes of a board's tasks since its first mark: none noted before it.
#[derive(Debug, Default)]
pub(super) struct Journal(Option<Vec<Undo>>);

#[cfg(test)]
impl Journal {
    /// Whether an undo point stands (changes are noted).
    pub(super) fn is_marked(&self) -> bool {
        self.0.is_some()
    }
}

/// A copy of a board carries no undo point of the board it copies.
impl Clone for Journal {
    fn clone(&self) -> Self {
        Journal(None)
    }
}

/// The board as it was at [`Board::mark`]: its small fields, and where its journal stood.
#[derive(Debug)]
pub struct Mark {
    schema: u32,
    project: String,
    next_id: u64,
    duplicated: Vec<TaskId>,
    in_id_order: bool,
    reservations: Vec<Reservation>,
    reserved_patterns: OnceLock<Arc<ReadPatterns>>,
    noted: usize,
}

impl Board {
    /// An undo point: [`Board::roll_back`] to it leaves the board as it is now.
    pub fn mark(&mut self) -> Mark {
        let noted = self.journal.0.get_or_insert_with(Vec::new).len();
        Mark {
            schema: self.schema,
            project: self.project.clone(),
            next_id: self.next_id,
            duplicated: self.duplicated.clone(),
            in_id_order: self.in_id_order,
            reservations: self.reservations.clone(),
            reserved_patterns: self.reserved_patterns.clone(),
            noted,
        }
    }

    /// Undoes every change since `mark` was taken.
    pub fn roll_back(&mut self, mark: Mark) {
        if let Some(journal) = &mut self.journal.0 {
            while journal.len() > mark.noted {
                match journal.pop().expect("a change noted after the mark") {
                    Undo::Set(index, slot) => self.slots[index] = slot,
                    Undo::Pushed => {
                        self.slots.pop();
                    }
                    Undo::Slots(slots) => self.slots = slots,
                }
            }
        }
        self.schema = mark.schema;
        self.project = mark.project;
        self.next_id = mark.next_id;
        self.duplicated = mark.duplicated;
        self.in_id_order = mark.in_id_order;
        self.reservations = mark.reservations;
        self.reserved_patterns = mark.reserved_patterns;
    }

    /// Forgets every undo point: the changes are kept, and no longer noted.
    pub fn unmark(&mut self) {
        self.journal.0 = None;
    }

    /// Notes the slot at `index` before it is replaced, while a mark stands.
    pub(super) fn note_set(&mut self, index: usize) {
        if let Some(journal) = &mut self.journal.0 {
            journal.push(Undo::Set(index, self.slots[index].clone()));
        }
    }

    /// Notes a task pushed at the end, while a mark stands.
    pub(super) fn note_pushed(&mut self) {
        if let Some(journal) = &mut self.journal.0 {
            journal.push(Undo::Pushed);
        }
    }

    /// Notes every slot before they are removed or rewritten, while a mark stands.
    pub(super) fn note_slots(&mut self) {
        if let Some(journal) = &mut self.journal.0 {
            journal.push(Undo::Slots(self.slots.clone()));
        }
    }
}
