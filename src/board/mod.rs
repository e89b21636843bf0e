//! The model: tasks, the state machine that moves them, and whose turn each one is.

pub mod inbox;
pub mod task;
pub mod transition;

use serde::{Deserialize, Serialize};

use chrono::Duration;

use inbox::{Reason, Turn};
use task::{Status, Task, TaskId};
use transition::{Action, Event, Rules, TransitionError};

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
        self.position(id).map(|index| &self.tasks[index])
    }

    pub fn task_mut(&mut self, id: TaskId) -> Option<&mut Task> {
        self.position(id).map(|index| &mut self.tasks[index])
    }

    /// Where task `id` is. baton keeps tasks in id order (they are appended as numbered and
    /// only ever removed), so a binary search finds them; a board edited out of order by hand
    /// still gets the right answer from the linear search behind it.
    fn position(&self, id: TaskId) -> Option<usize> {
        self.tasks
            .binary_search_by_key(&id, |task| task.id)
            .ok()
            .or_else(|| self.tasks.iter().position(|task| task.id == id))
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
    ) -> Option<Result<Event, TransitionError>> {
        let task = self.task(id)?;
        let waiting_on = self.waiting_on(task);
        let rules = Rules {
            now,
            lease,
            coordinator,
            waiting_on: &waiting_on,
        };
        let outcome = transition::transition(task, action, actor, rules);
        Some(outcome.map(|(next, event)| {
            if let Some(slot) = self.task_mut(id) {
                *slot = next;
            }
            event
        }))
    }

    pub fn open_tasks(&self) -> impl Iterator<Item = &Task> {
        self.tasks.iter().filter(|task| task.status.is_open())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use task::Priority;

    const AGENTS: [&str; 4] = ["ada", "bob", "cy", "lead"];

    /// One step of a random history: a new task, or an action on an existing one.
    #[derive(Debug, Clone)]
    enum Step {
        Send {
            from: usize,
            to: usize,
            review: bool,
            after: Option<usize>,
        },
        Act {
            actor: usize,
            task: usize,
            action: usize,
            target: usize,
        },
        Wait {
            minutes: i64,
        },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (
                0..4usize,
                0..4usize,
                any::<bool>(),
                proptest::option::of(0..8usize)
            )
                .prop_map(|(from, to, review, after)| Step::Send {
                    from,
                    to,
                    review,
                    after
                }),
            (0..4usize, 0..8usize, 0..11usize, 0..4usize).prop_map(
                |(actor, task, action, target)| Step::Act {
                    actor,
                    task,
                    action,
                    target
                }
            ),
            (1..40i64).prop_map(|minutes| Step::Wait { minutes }),
        ]
    }

    fn action(index: usize, target: &str) -> Action {
        match index {
            0 => Action::Claim,
            1 => Action::Release,
            2 => Action::Ask {
                question: "q".into(),
            },
            3 => Action::Answer { answer: "a".into() },
            4 => Action::Review { note: "r".into() },
            5 => Action::Approve {
                note: String::new(),
            },
            6 => Action::RequestChanges { what: "w".into() },
            7 => Action::Done { result: "d".into() },
            8 => Action::Fail { reason: "f".into() },
            9 => Action::Cancel {
                reason: String::new(),
            },
            _ => Action::Reassign {
                to: target.to_string(),
                note: String::new(),
            },
        }
    }

    fn new_task(
        board: &mut Board,
        from: &str,
        to: &str,
        review: bool,
        after: Vec<TaskId>,
        now: Timestamp,
    ) {
        let id = TaskId(board.next_id);
        board.next_id += 1;
        board.tasks.push(Task {
            id,
            subject: format!("task {}", id.0),
            body: String::new(),
            files: vec![],
            from: from.into(),
            to: to.into(),
            reviewer: None,
            status: Status::Pending,
            priority: Priority::Normal,
            after,
            skill: None,
            review,
            created_at: now,
            updated_at: now,
            claimed_at: None,
            lease_expires_at: None,
            result: None,
            thread: vec![],
        });
    }

    #[test]
    fn tasks_are_found_in_order_and_out_of_order() {
        let now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        let mut board = Board::new("p");
        for _ in 0..5 {
            new_task(&mut board, "ada", "bob", false, vec![], now);
        }
        board.tasks.remove(2);
        assert_eq!(board.task(TaskId(4)).map(|task| task.id), Some(TaskId(4)));
        assert!(board.task(TaskId(3)).is_none());
        board.tasks.swap(0, 3);
        for id in [1, 2, 4, 5] {
            assert_eq!(board.task(TaskId(id)).map(|task| task.id), Some(TaskId(id)));
        }
        assert!(board.task(TaskId(9)).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn random_histories_keep_the_board_invariants(steps in proptest::collection::vec(step(), 1..120)) {
            let mut board = Board::new("p");
            let mut now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
            let lease = Duration::minutes(30);
            for step in steps {
                let before = board.clone();
                match step {
                    Step::Send { from, to, review, after } => {
                        let after = after
                            .filter(|index| *index < board.tasks.len())
                            .map(|index| vec![board.tasks[index].id])
                            .unwrap_or_default();
                        new_task(&mut board, AGENTS[from], AGENTS[to], review, after, now);
                    }
                    Step::Act { actor, task, action: index, target } => {
                        if let Some(id) = board.tasks.get(task).map(|task| task.id) {
                            let _ = board.apply(id, &action(index, AGENTS[target]), AGENTS[actor], Some("lead"), lease, now);
                        }
                    }
                    Step::Wait { minutes } => now = now.plus(Duration::minutes(minutes)),
                }

                // Ids are unique and dense, and next_id follows the last.
                let ids: Vec<u64> = board.tasks.iter().map(|task| task.id.0).collect();
                prop_assert_eq!(ids.clone(), (1..=ids.len() as u64).collect::<Vec<_>>());
                prop_assert_eq!(board.next_id, ids.len() as u64 + 1);

                for old in &before.tasks {
                    let new = board.task(old.id).expect("tasks are never lost");
                    // A finished task never changes.
                    if old.status.is_finished() {
                        prop_assert_eq!(old, new);
                    }
                    // A thread only grows: the old thread is a prefix of the new.
                    prop_assert!(new.thread.len() >= old.thread.len());
                    prop_assert_eq!(&new.thread[..old.thread.len()], &old.thread[..]);
                }

                // A task is in at most one inbox, and one waiting on someone is in theirs.
                for task in &board.tasks {
                    let holders: Vec<&str> = AGENTS
                        .iter()
                        .copied()
                        .filter(|agent| board.inbox(agent, now).iter().any(|item| item.task.id == task.id))
                        .collect();
                    prop_assert!(holders.len() <= 1, "{} in {:?}", task.id, holders);
                    let expected = match task.status {
                        Status::InputRequired => Some(task.from.as_str()),
                        Status::ReviewRequested => Some(task.reviewer()),
                        Status::Working if task.is_stalled(now) => Some(task.from.as_str()),
                        Status::Pending | Status::ChangesRequested if board.waiting_on(task).is_empty() => Some(task.to.as_str()),
                        _ => None,
                    };
                    prop_assert_eq!(holders.first().copied(), expected, "{} {}", task.id, task.status);
                }
            }
        }
    }
}
