//! The model: tasks, the state machine that moves them, and whose turn each one is.

pub mod inbox;
pub mod task;
pub mod transition;

use serde::{Deserialize, Serialize};

use inbox::{Reason, Turn};
use task::{Status, Task, TaskId};

use crate::time::Timestamp;

/// The `schema` this binary writes and the highest it reads.
pub const BOARD_SCHEMA: u32 = 1;

/// The contents of `board.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub schema: u32,
    pub project: String,
    pub next_id: u64,
    pub tasks: Vec<Task>,
}

/// A task in someone's inbox, with why it is there.
#[derive(Debug, Clone, Copy)]
pub struct InboxItem<'a> {
    pub task: &'a Task,
    pub reason: Reason,
}

impl Board {
    pub fn new(project: &str) -> Self {
        Board {
            schema: BOARD_SCHEMA,
            project: project.to_string(),
            next_id: 1,
            tasks: Vec::new(),
        }
    }

    pub fn task(&self, id: TaskId) -> Option<&Task> {
        self.tasks.iter().find(|task| task.id == id)
    }

    pub fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|task| task.id == id)
    }

    /// The ids in `task.after` that are not completed. A dependency no longer on the board
    /// was archived, which only happens to finished tasks nothing open waits on.
    pub fn waiting_on(&self, task: &Task) -> Vec<TaskId> {
        task.after
            .iter()
            .copied()
            .filter(|id| {
                self.task(*id)
                    .is_some_and(|dependency| dependency.status != Status::Completed)
            })
            .collect()
    }

    pub fn turn<'a>(&'a self, task: &'a Task, now: Timestamp) -> Turn<'a> {
        inbox::turn(task, self.waiting_on(task), now)
    }

    /// The tasks whose turn is `agent`'s, in inbox order.
    pub fn inbox(&self, agent: &str, now: Timestamp) -> Vec<InboxItem<'_>> {
        let mut items: Vec<InboxItem<'_>> = self
            .tasks
            .iter()
            .filter(|task| task.status.is_open())
            .filter_map(|task| match self.turn(task, now) {
                Turn::Of {
                    agent: owner,
                    reason,
                } if owner == agent => Some(InboxItem { task, reason }),
                _ => None,
            })
            .collect();
        items.sort_by(|left, right| inbox::inbox_order(left.task, right.task));
        items
    }

    pub fn open_tasks(&self) -> impl Iterator<Item = &Task> {
        self.tasks.iter().filter(|task| task.status.is_open())
    }
}
