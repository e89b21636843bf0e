//! Whose turn it is (SPEC section 4): every open task is in exactly one inbox, or in none.

use serde::Serialize;

use super::task::{Head, Status, TaskId};
use crate::time::Timestamp;

/// Why a task is in someone's inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Pending and free to start.
    Assigned,
    /// The reviewer asked for rework.
    ChangesRequested,
    /// The assignee asked the sender a question.
    Question,
    /// The assignee asked the reviewer for a verdict.
    ReviewRequested,
    /// Claimed, but the lease ran out: the sender should chase or reassign it.
    Stalled,
}

impl Reason {
    /// What the one whose turn it is should do, in a few words.
    pub fn what_to_do(self) -> &'static str {
        match self {
            Reason::Assigned => "to do",
            Reason::ChangesRequested => "changes requested",
            Reason::Question => "question for you",
            Reason::ReviewRequested => "review requested",
            Reason::Stalled => "stalled: lease expired",
        }
    }
}

/// Where an open task stands with respect to the inboxes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn<'a> {
    /// In the inbox of this agent, for this reason.
    Of { agent: &'a str, reason: Reason },
    /// Pending, but waiting on these unfinished tasks: in nobody's inbox.
    Blocked(Vec<TaskId>),
    /// Being worked on under a live lease, or finished: in nobody's inbox.
    Nobody,
}

/// Whose turn `task` is. `waiting_on` are the ids in its `after` list not yet completed.
pub fn turn<'a>(task: &'a Head, waiting_on: Vec<TaskId>, now: Timestamp) -> Turn<'a> {
    match task.status {
        Status::Pending | Status::ChangesRequested if !waiting_on.is_empty() => {
            Turn::Blocked(waiting_on)
        }
        Status::Pending => Turn::Of {
            agent: &task.to,
            reason: Reason::Assigned,
        },
        Status::ChangesRequested => Turn::Of {
            agent: &task.to,
            reason: Reason::ChangesRequested,
        },
        Status::InputRequired => Turn::Of {
            agent: &task.from,
            reason: Reason::Question,
        },
        Status::ReviewRequested => Turn::Of {
            agent: task.reviewer(),
            reason: Reason::ReviewRequested,
        },
        Status::Working if task.is_stalled(now) => Turn::Of {
            agent: &task.from,
            reason: Reason::Stalled,
        },
        Status::Working | Status::Completed | Status::Failed | Status::Canceled => Turn::Nobody,
    }
}

/// Inbox order: most urgent first, then oldest first, then by id.
pub fn inbox_order(left: &Head, right: &Head) -> std::cmp::Ordering {
    left.priority
        .cmp(&right.priority)
        .then(left.created_at.cmp(&right.created_at))
        .then(left.id.cmp(&right.id))
}
