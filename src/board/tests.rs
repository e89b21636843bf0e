//! The board's own tests: finding tasks, and the invariants of random histories. How a
//! store writes a board and reads it back is tested by each store.

use proptest::prelude::*;

use super::testing::{AGENTS, pending_board, start, step, take};
use super::*;

#[test]
fn tasks_are_found_in_order_and_out_of_order() {
    let mut board = pending_board(5);
    board.slots.remove(2);
    assert_eq!(
        board.task(TaskId(4)).unwrap().map(|task| task.id),
        Some(TaskId(4))
    );
    assert!(board.task(TaskId(3)).unwrap().is_none());
    // As a board edited out of order by hand reads.
    board.slots.swap(0, 3);
    board.in_id_order = is_in_id_order(&board.slots);
    for id in [1, 2, 4, 5] {
        assert_eq!(
            board.task(TaskId(id)).unwrap().map(|task| task.id),
            Some(TaskId(id))
        );
    }
    assert!(board.task(TaskId(9)).unwrap().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_histories_keep_the_board_invariants(steps in proptest::collection::vec(step(), 1..120)) {
        let mut board = Board::new("p");
        let mut now = start();
        for step in steps {
            let before = board.clone();
            take(&mut board, step, &mut now);

            // Every task reads as its own head.
            for task in board.tasks().map(Result::unwrap) {
                prop_assert_eq!(board.head(task.id), Some(&Head::of(task)));
            }

            // Ids are unique and dense, and next_id follows the last.
            let ids: Vec<u64> = board.heads().map(|task| task.id.0).collect();
            prop_assert_eq!(ids.clone(), (1..=ids.len() as u64).collect::<Vec<_>>());
            prop_assert_eq!(board.next_id, ids.len() as u64 + 1);

            for old in before.tasks().map(Result::unwrap) {
                let new = board.task(old.id).unwrap().expect("tasks are never lost");
                // A finished task never changes.
                if old.status.is_finished() {
                    prop_assert_eq!(old, new);
                }
                // A thread only grows: the old thread is a prefix of the new.
                prop_assert!(new.thread.len() >= old.thread.len());
                prop_assert_eq!(&new.thread[..old.thread.len()], &old.thread[..]);
            }

            // No open tasks wait on each other in a circle: an edit closing one is refused.
            prop_assert_eq!(board.circles(), Vec::<Vec<crate::board::task::TaskId>>::new());

            // A task is in at most one inbox, and one waiting on someone is in theirs.
            for task in board.tasks().map(Result::unwrap) {
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
                    Status::Pending | Status::ChangesRequested => {
                        let waiting_on = board.waiting_on(&Head::of(task));
                        if waiting_on.iter().any(|(_, status)| matches!(status, Status::Failed | Status::Canceled)) {
                            // It can never start as sent: its sender decides.
                            Some(task.from.as_str())
                        } else if !waiting_on.is_empty() {
                            None
                        } else if held_by_another(&board, task, now) {
                            // Held: what it touches is another agent's for now.
                            None
                        } else {
                            Some(task.to.as_str())
                        }
                    }
                    _ => None,
                };
                prop_assert_eq!(holders.first().copied(), expected, "{} {}", task.id, task.status);
            }

            // No two agents hold overlapping patterns unless both share them.
            let live: Vec<_> = board.live_reservations(now).collect();
            for (index, one) in live.iter().enumerate() {
                for other in &live[index + 1..] {
                    if one.agent != other.agent && one.parsed().overlaps(&other.parsed()) {
                        prop_assert!(!one.exclusive && !other.exclusive, "{:?} and {:?}", one, other);
                    }
                }
            }
            // What a claim reserved belongs to an open task of the same agent.
            for reservation in board.reservations() {
                if let Some(id) = reservation.task {
                    let task = board.task(id).unwrap().expect("its task is on the board");
                    prop_assert!(task.status.is_open(), "{:?} of {}", reservation, task.status);
                    prop_assert_eq!(&task.to, &reservation.agent);
                }
            }
        }
    }
}

/// Whether a live reservation of an agent other than `task`'s assignee overlaps what it
/// touches: worked out here from the patterns, apart from [`Board::held_by`].
fn held_by_another(board: &Board, task: &Task, now: Timestamp) -> bool {
    board.reservations().iter().any(|reservation| {
        reservation.is_live(now)
            && reservation.agent != task.to
            && task.touches.iter().any(|mine| {
                scope::Pattern::parse(mine)
                    .unwrap()
                    .overlaps(&reservation.parsed())
            })
    })
}

/// Everything a board holds that a roll back must restore: its tasks whole, their heads,
/// and how its tasks are found.
fn held(board: &Board) -> (Board, Vec<Head>, bool, Vec<TaskId>) {
    (
        board.clone(),
        board.heads().cloned().collect(),
        board.in_id_order,
        board.duplicated.clone(),
    )
}

#[test]
fn a_board_rolled_back_to_its_mark_is_as_it_was_its_settled_tasks_included() {
    let mut board = pending_board(6);
    // As a store keeps the board it wrote: its tasks held decoded, with no text behind them.
    board.settle();
    let before = held(&board);
    let first = board.mark();
    board
        .modify(TaskId(2), |task| task.subject = "changed".into())
        .unwrap();
    let second = board.mark();
    super::testing::new_task(&mut board, "ada", "bob", false, vec![], start());
    board
        .remove(&[TaskId(1), TaskId(5)].into_iter().collect())
        .unwrap();
    board
        .modify(TaskId(3), |task| task.subject = "changed too".into())
        .unwrap();
    board.next_id = 40;
    // Back to the second mark: the first change stands, nothing after it.
    board.roll_back(second);
    assert_eq!(board.len(), 6);
    assert_eq!(board.next_id, before.0.next_id);
    assert_eq!(board.task(TaskId(2)).unwrap().unwrap().subject, "changed");
    assert_eq!(
        board.task(TaskId(3)).unwrap().unwrap().subject,
        before.0.task(TaskId(3)).unwrap().unwrap().subject
    );
    board.roll_back(first);
    assert_eq!(held(&board), before);
    // A copy carries no undo point, and the board forgets them when told.
    assert!(!board.clone().journal.is_marked());
    board.unmark();
    assert!(!board.journal.is_marked());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_step_rolled_back_leaves_the_board_as_it_was_before_it(
        steps in proptest::collection::vec((step(), any::<bool>(), any::<bool>()), 1..80)
    ) {
        let mut board = Board::new("p");
        let mut now = start();
        for (step, undone, sweep) in steps {
            let before = held(&board);
            let mark = board.mark();
            take(&mut board, step, &mut now);
            if sweep {
                let finished: HashSet<TaskId> = board
                    .heads()
                    .filter(|head| head.status.is_finished())
                    .map(|head| head.id)
                    .collect();
                board.remove(&finished).unwrap();
            }
            // A step kept stays under the marks after it: the next rolled back comes back
            // to it.
            if undone {
                board.roll_back(mark);
                prop_assert!(held(&board) == before);
            }
        }
    }
}
