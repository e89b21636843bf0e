//! Random histories of a board, for the model's tests and for a store's tests that each
//! history survives its write and read back.

use chrono::Duration;
use proptest::prelude::*;

use super::Board;
use super::action::ActionKind;
use super::edit::Edits;
use super::reservation::Grant;
use super::scope::Pattern;
use super::task::{Priority, Status, Task, TaskId};
use super::transition::Action;
use crate::time::Timestamp;

pub const AGENTS: [&str; 4] = ["ada", "bob", "cy", "lead"];

/// One step of a random history: a new task, or an action on an existing one.
#[derive(Debug, Clone)]
pub enum Step {
    Send {
        from: usize,
        to: usize,
        review: bool,
        after: Option<usize>,
        /// The patterns of [`PATTERNS`] it touches, as bits.
        touches: u8,
    },
    /// A reservation by hand of one of [`PATTERNS`], or its end.
    Reserve {
        agent: usize,
        pattern: usize,
        shared: bool,
        minutes: Option<i64>,
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

/// What the tasks of a random history touch and its agents reserve: some overlapping.
pub const PATTERNS: [&str; 6] = [
    "src/**",
    "src/a.rs",
    "docs/",
    "port:1",
    "src/b/*.rs",
    "*.md",
];

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (
            0..4usize,
            0..4usize,
            any::<bool>(),
            proptest::option::of(0..8usize),
            prop_oneof![Just(0u8), any::<u8>()],
        )
            .prop_map(|(from, to, review, after, touches)| Step::Send {
                from,
                to,
                review,
                after,
                touches,
            }),
        (
            0..4usize,
            0..PATTERNS.len(),
            any::<bool>(),
            proptest::option::of(1..90i64)
        )
            .prop_map(|(agent, pattern, shared, minutes)| Step::Reserve {
                agent,
                pattern,
                shared,
                minutes,
            }),
        (0..4usize, 0..8usize, 0..13usize, 0..4usize).prop_map(|(actor, task, action, target)| {
            Step::Act {
                actor,
                task,
                action,
                target,
            }
        }),
        (1..40i64).prop_map(|minutes| Step::Wait { minutes }),
    ]
}

/// Action `index` of the table, `target` the place of the agent (or the task) it names.
fn action(index: usize, target: usize) -> Action {
    let waits = |after: Vec<TaskId>| {
        Action::edit(Edits {
            after: Some(after),
            priority: Some(Priority::High),
            ..Edits::default()
        })
    };
    match index {
        0 => Action::from(ActionKind::Claim),
        1 => Action::from(ActionKind::Release),
        2 => Action::new(ActionKind::Ask, "q".into()),
        3 => Action::new(ActionKind::Answer, "a".into()),
        4 => Action::new(ActionKind::Review, "r".into()),
        5 => Action::new(ActionKind::Approve, String::new()),
        6 => Action::new(ActionKind::RequestChanges, "w".into()),
        7 => Action::new(ActionKind::Done, "d".into()),
        8 => Action::new(ActionKind::Fail, "f".into()),
        9 => Action::new(ActionKind::Cancel, String::new()),
        10 => Action::reassign(AGENTS[target].to_string(), String::new()),
        // An edit that frees the task of its waits, and one that makes it wait on another
        // (refused where that closes a circle).
        11 => waits(Vec::new()),
        _ => waits(vec![TaskId(target as u64 + 1)]),
    }
}

/// The moment a history starts at.
pub fn start() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

/// Takes `step` on `board` at `now` (moved on by a wait), as a command would: an action
/// the state machine refuses changes nothing.
pub fn take(board: &mut Board, step: Step, now: &mut Timestamp) {
    let lease = Duration::minutes(30);
    match step {
        Step::Send {
            from,
            to,
            review,
            after,
            touches,
        } => {
            let after = after
                .filter(|index| *index < board.len())
                .and_then(|index| board.heads().nth(index))
                .map(|head| vec![head.id])
                .unwrap_or_default();
            new_task(board, AGENTS[from], AGENTS[to], review, after, *now);
            let touches: Vec<String> = PATTERNS
                .iter()
                .enumerate()
                .filter(|(bit, _)| touches & (1 << bit) != 0)
                .map(|(_, pattern)| pattern.to_string())
                .collect();
            let id = TaskId(board.next_id - 1);
            let _ = board.modify(id, |task| task.touches = touches);
        }
        Step::Reserve {
            agent,
            pattern,
            shared,
            minutes,
        } => match minutes {
            Some(minutes) => {
                let grant = Grant {
                    task: None,
                    lasts: Some(Duration::minutes(minutes)),
                    exclusive: !shared,
                    reason: None,
                };
                let pattern =
                    Pattern::parse(PATTERNS[pattern]).expect("the patterns of a history read");
                let _ = board.reserve(AGENTS[agent], &[pattern], &grant, *now);
            }
            None => {
                board.unreserve(AGENTS[agent], Some(&[PATTERNS[pattern].to_string()]));
            }
        },
        Step::Act {
            actor,
            task,
            action: index,
            target,
        } => {
            let id = board.heads().nth(task).map(|head| head.id);
            if let Some(id) = id {
                let action = action(index, target);
                // As the session does, a wait on a task that is not there is refused
                // before the model is asked.
                let waits = action.edits().and_then(|edits| edits.after.as_ref());
                if waits.is_some_and(|after| after.iter().any(|id| !board.contains(*id))) {
                    return;
                }
                let _ = board.apply(id, &action, AGENTS[actor], Some("lead"), lease, *now);
            }
        }
        Step::Wait { minutes } => *now = now.plus(Duration::minutes(minutes)),
    }
}

/// Adds a pending task from `from` to `to`, numbered next.
pub fn new_task(
    board: &mut Board,
    from: &str,
    to: &str,
    review: bool,
    after: Vec<TaskId>,
    now: Timestamp,
) {
    let id = TaskId(board.next_id);
    board.next_id += 1;
    board.push(Task {
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
        delivery: None,
        imported: None,
        touches: Vec::new(),
        worktree: None,
        landed: None,
        labels: Vec::new(),
    });
}

/// A board of `count` pending tasks from ada to bob.
pub fn pending_board(count: usize) -> Board {
    let mut board = Board::new("p");
    for _ in 0..count {
        new_task(&mut board, "ada", "bob", false, vec![], start());
    }
    board
}
