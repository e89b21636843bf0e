//! Lease renewal (SPEC section 3): a signed-in agent keeps its claims alive by using baton.
//! Pure: the board, the agent, the time and the project's lease are handed in.

use chrono::Duration;

use super::Board;
use super::BoardError;
use super::task::{Head, Status};
use super::transition;
use crate::time::Timestamp;

/// Whether `task` is one of `agent`'s working tasks with less than half its lease left.
pub fn is_due(task: &Head, agent: &str, now: Timestamp, lease: Duration) -> bool {
    task.status == Status::Working
        && &*task.to == agent
        && task
            .lease_expires_at
            .is_some_and(|until| now.until(until) < lease / 2)
}

/// Whether any of `agent`'s leases on `board`, or of its reservations by hand, is due for
/// renewal.
pub fn has_due_leases(board: &Board, agent: &str, now: Timestamp, lease: Duration) -> bool {
    board.heads().any(|task| is_due(task, agent, now, lease))
        || board.reservations().iter().any(|reservation| {
            reservation.agent == agent
                && reservation
                    .expires_at
                    .is_some_and(|until| until > now && now.until(until) < lease / 2)
        })
}

/// Renews the due leases of `agent`, and its reservations by hand (SPEC section 18.2); true
/// when any was renewed. Renewing only past half the lease keeps frequent commands from each
/// writing the board.
pub fn renew_due_leases(
    board: &mut Board,
    agent: &str,
    now: Timestamp,
    lease: Duration,
) -> Result<bool, BoardError> {
    let due: Vec<usize> = board
        .heads()
        .enumerate()
        .filter(|(_, task)| is_due(task, agent, now, lease))
        .map(|(index, _)| index)
        .collect();
    for index in &due {
        board.modify_at(*index, |task| transition::renew_lease(task, now, lease))?;
    }
    let reservations = board.renew_reservations(agent, now, lease);
    Ok(!due.is_empty() || reservations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::{Task, TaskId};

    fn at(minute: i64) -> Timestamp {
        let start: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        start.plus(Duration::minutes(minute))
    }

    #[test]
    fn a_lease_is_due_once_less_than_half_of_it_is_left() {
        let lease = Duration::minutes(60);
        // (status, assignee, minutes of the lease left, due for codex)
        let cases: &[(Status, &str, Option<i64>, bool)] = &[
            (Status::Working, "codex", Some(31), false),
            (Status::Working, "codex", Some(30), false),
            (Status::Working, "codex", Some(29), true),
            (Status::Working, "codex", Some(-5), true),
            (Status::Working, "gemini", Some(1), false),
            (Status::Working, "codex", None, false),
            (Status::ReviewRequested, "codex", Some(1), false),
        ];
        for (status, to, left, due) in cases {
            let mut task = Task::example(*status, at(0));
            task.to = to.to_string();
            task.lease_expires_at = left.map(at);
            let found = is_due(&Head::of(&task), "codex", at(0), lease);
            assert_eq!(found, *due, "{status} of {to} with {left:?} minutes left");
        }
    }

    #[test]
    fn only_the_due_leases_of_the_agent_are_renewed() {
        let lease = Duration::minutes(60);
        let mut board = Board::new("api");
        for (id, to, left) in [(1, "codex", 10), (2, "codex", 50), (3, "gemini", 10)] {
            let mut task = Task::example(Status::Working, at(0));
            task.id = TaskId(id);
            task.to = to.into();
            task.lease_expires_at = Some(at(left));
            board.push(task);
        }
        assert!(has_due_leases(&board, "codex", at(0), lease));
        assert!(renew_due_leases(&mut board, "codex", at(0), lease).unwrap());
        let expiry = |id| board.head(TaskId(id)).unwrap().lease_expires_at;
        assert_eq!(
            [expiry(1), expiry(2), expiry(3)],
            [Some(at(60)), Some(at(50)), Some(at(10))]
        );
        assert!(!has_due_leases(&board, "codex", at(0), lease));
        assert!(!renew_due_leases(&mut board, "codex", at(0), lease).unwrap());
    }
}
