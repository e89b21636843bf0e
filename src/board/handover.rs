//! Handover detection: which tasks a change moved into someone's inbox, the cue for waking
//! and notifying them. Pure: the board before and after is looked at, nothing else.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Board;
use super::delivery::{Delivery, DeliveryEvent};
use super::inbox::{Reason, Turn};
use super::task::TaskId;
use crate::time::Timestamp;

/// Someone whose inbox just gained a task: the cue to wake and notify them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handover {
    pub agent: String,
    pub project: String,
    pub task: TaskId,
    #[serde(flatten, with = "super::inbox::fields")]
    pub reason: Reason,
    pub subject: String,
}

/// Whose inbox each task is in, and why: taken before a change to compare with after it.
pub type Owners = HashMap<TaskId, (String, Reason)>;

/// The tasks a change to `id` can move between inboxes: itself, the tasks waiting on it
/// (its completion unblocks them), and those that touch something (the reservations its
/// claim took or its end frees may hold or free them). Looking only at these keeps a
/// change's cost from growing with the board.
pub fn affected_by(board: &Board, id: TaskId) -> Vec<TaskId> {
    let ids: Vec<TaskId> = std::iter::once(id)
        .chain(
            board
                .open_heads()
                .filter(|task| task.after.contains(&id) || !task.touches.is_empty())
                .map(|task| task.id)
                .filter(|other| *other != id),
        )
        .collect();
    ids
}

/// The tasks a change of the reservations can hold back or free: the open ones that touch
/// something.
pub fn affected_by_reservations(board: &Board) -> Vec<TaskId> {
    board
        .open_heads()
        .filter(|task| !task.touches.is_empty())
        .map(|task| task.id)
        .collect()
}

/// Whose inbox each of `ids` is in.
pub fn owners(board: &Board, ids: &[TaskId], now: Timestamp) -> Owners {
    ids.iter()
        .filter_map(|id| board.head(*id))
        .filter_map(|task| match board.turn(task, now) {
            Turn::Of { agent, reason } => Some((task.id, (agent.to_string(), reason))),
            _ => None,
        })
        .collect()
}

/// The tasks among `ids` that entered someone's inbox (other than the actor's) with this
/// change, `before` being their [`owners`] before it; in task order.
pub fn handovers(
    before: &Owners,
    board: &Board,
    ids: &[TaskId],
    now: Timestamp,
    actor: &str,
) -> Vec<Handover> {
    let mut arrived: Vec<Handover> = owners(board, ids, now)
        .into_iter()
        .filter(|(id, (agent, reason))| {
            agent != actor && before.get(id) != Some(&(agent.clone(), *reason))
        })
        .filter_map(|(id, (agent, reason))| {
            board.task(id).ok().flatten().map(|task| Handover {
                agent,
                project: board.project.clone(),
                task: id,
                reason,
                subject: task.subject.clone(),
            })
        })
        .collect();
    arrived.sort_by_key(|handover| handover.task);
    arrived
}

/// Records the delivery of a change by `actor` on the board: `acted` on the task it changed
/// (when it was delivered to the actor), then `queued` on every task it handed over.
pub fn record_delivery(
    board: &mut Board,
    changed: Option<TaskId>,
    arrived: &[Handover],
    actor: &str,
    now: Timestamp,
) -> Result<(), super::BoardError> {
    if let Some(id) = changed {
        board.modify(id, |task| {
            if let Some(delivery) = &mut task.delivery {
                delivery.record(DeliveryEvent::Changed, actor, now);
            }
        })?;
    }
    for handover in arrived {
        board.modify(handover.task, |task| {
            task.delivery = Some(Delivery::queued(&handover.agent, now));
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::{Status, Task};

    fn now() -> Timestamp {
        "2026-11-29T12:00:00Z".parse().unwrap()
    }

    fn task(id: u64, status: Status, after: &[u64]) -> Task {
        let mut task = Task::example(status, now());
        task.id = TaskId(id);
        task.subject = format!("task {id}");
        task.after = after.iter().copied().map(TaskId).collect();
        task
    }

    fn board(tasks: &[Task]) -> Board {
        let mut board = Board::new("api");
        for task in tasks {
            board.push(task.clone());
        }
        board
    }

    #[test]
    fn a_change_reaches_the_task_and_those_waiting_on_it() {
        use Status::*;
        let board = board(&[
            task(1, Working, &[]),
            task(2, Pending, &[1]),
            task(3, Completed, &[1]),
            task(4, Pending, &[2]),
        ]);
        assert_eq!(affected_by(&board, TaskId(1)), [TaskId(1), TaskId(2)]);
        assert_eq!(affected_by(&board, TaskId(4)), [TaskId(4)]);
    }

    #[test]
    fn a_task_is_handed_over_when_it_enters_an_inbox_other_than_the_actors() {
        use Status::*;
        // (task 1 before, task 1 after, the actor, who receives a handover and why)
        type Case = (
            Status,
            Status,
            &'static str,
            &'static [(&'static str, Reason)],
        );
        let cases: &[Case] = &[
            // Sent back for rework: the assignee's again.
            (
                ReviewRequested,
                ChangesRequested,
                "claude",
                &[("codex", Reason::ChangesRequested)],
            ),
            // A question goes to the sender.
            (
                Working,
                InputRequired,
                "codex",
                &[("claude", Reason::Question)],
            ),
            // Completing frees task 2, which waits on it.
            (Working, Completed, "codex", &[("gemini", Reason::Assigned)]),
            // The actor's own inbox is no handover.
            (Working, InputRequired, "claude", &[]),
            // Nothing moved.
            (Pending, Pending, "claude", &[]),
        ];
        for (from, to, actor, expected) in cases {
            let mut waiting = task(2, Pending, &[1]);
            waiting.to = "gemini".into();
            let mut before = board(&[task(1, *from, &[]), waiting]);
            let ids = affected_by(&before, TaskId(1));
            let owned = owners(&before, &ids, now());
            before.modify(TaskId(1), |task| task.status = *to).unwrap();
            let found: Vec<(String, Reason)> = handovers(&owned, &before, &ids, now(), actor)
                .into_iter()
                .map(|handover| (handover.agent, handover.reason))
                .collect();
            let expected: Vec<(String, Reason)> = expected
                .iter()
                .map(|(agent, reason)| (agent.to_string(), *reason))
                .collect();
            assert_eq!(found, expected, "{from} → {to} by {actor}");
        }
    }
}
