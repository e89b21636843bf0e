//! Whose turn it is (SPEC section 4): every open task is in exactly one inbox, or in none.

use std::borrow::Cow;

use serde::{Serialize, Serializer};

use super::reservation::Reservation;
use super::task::{Head, Status, TaskId};
use crate::time::Timestamp;

/// Why a task is in someone's inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// It waits on `task`, which ended `status` (failed or canceled) and so can never
    /// complete: the sender should cancel it or reassign it to go ahead without.
    DependencyEnded { task: TaskId, status: Status },
}

impl Reason {
    /// The reason's name in `--json` output: one word, whatever the variant holds.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Assigned => "assigned",
            Reason::ChangesRequested => "changes_requested",
            Reason::Question => "question",
            Reason::ReviewRequested => "review_requested",
            Reason::Stalled => "stalled",
            Reason::DependencyEnded {
                status: Status::Failed,
                ..
            } => "dependency_failed",
            Reason::DependencyEnded { .. } => "dependency_canceled",
        }
    }

    /// What the one whose turn it is should do, in a few words.
    pub fn what_to_do(self) -> Cow<'static, str> {
        match self {
            Reason::Assigned => "to do".into(),
            Reason::ChangesRequested => "changes requested".into(),
            Reason::Question => "question for you".into(),
            Reason::ReviewRequested => "review requested".into(),
            Reason::Stalled => "stalled: lease expired".into(),
            Reason::DependencyEnded { task, status } => waits_on_ended(task, status).into(),
        }
    }

    /// Who is waiting on the one whose turn it is, of a task sent by `from` to `to`: the
    /// sender waits on work assigned or sent back; the assignee waits on an answer, a
    /// verdict, or the sender's decision on a stalled or unstartable task.
    pub fn who_waits<'a>(self, from: &'a str, to: &'a str) -> &'a str {
        match self {
            Reason::Assigned | Reason::ChangesRequested => from,
            Reason::Question
            | Reason::ReviewRequested
            | Reason::Stalled
            | Reason::DependencyEnded { .. } => to,
        }
    }
}

/// A reason is written as its name, a string, as it always was; the task a dependency
/// reason names is in the task's `after` list and in the words of `what_to_do`.
impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl Reason {
    /// The reason a name written by [`Reason::name`] stands for; a dependency that ended
    /// needs the task it names, which the name leaves out (see [`fields`]).
    fn from_parts(name: &str, ended: Option<TaskId>) -> Option<Reason> {
        let dependency = |status| ended.map(|task| Reason::DependencyEnded { task, status });
        Some(match name {
            "assigned" => Reason::Assigned,
            "changes_requested" => Reason::ChangesRequested,
            "question" => Reason::Question,
            "review_requested" => Reason::ReviewRequested,
            "stalled" => Reason::Stalled,
            "dependency_failed" => dependency(Status::Failed)?,
            "dependency_canceled" => dependency(Status::Canceled)?,
            _ => return None,
        })
    }
}

/// A reason as fields of the value that holds it: `reason`, its name as it always was, and
/// beside it `ended_dependency`, the task a dependency reason names, so that a client of a
/// remote hub reads back the very reason (`#[serde(flatten, with = "fields")]`).
pub mod fields {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Reason;
    use crate::board::task::TaskId;

    #[derive(Serialize, Deserialize)]
    struct Wire {
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ended_dependency: Option<TaskId>,
    }

    fn wire(reason: Option<Reason>) -> Wire {
        Wire {
            reason: reason.map(|reason| reason.name().to_string()),
            ended_dependency: match reason {
                Some(Reason::DependencyEnded { task, .. }) => Some(task),
                _ => None,
            },
        }
    }

    fn read(wire: Wire) -> Result<Option<Reason>, String> {
        let Some(name) = wire.reason else {
            return Ok(None);
        };
        Reason::from_parts(&name, wire.ended_dependency)
            .map(Some)
            .ok_or_else(|| format!("unknown inbox reason `{name}`"))
    }

    pub fn serialize<S: Serializer>(reason: &Reason, serializer: S) -> Result<S::Ok, S::Error> {
        wire(Some(*reason)).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Reason, D::Error> {
        read(Wire::deserialize(deserializer)?)
            .map_err(serde::de::Error::custom)?
            .ok_or_else(|| serde::de::Error::custom("no inbox reason"))
    }

    /// The same for a reason that may be absent (`"reason": null`).
    pub mod optional {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        use super::{Reason, Wire, read, wire};

        pub fn serialize<S: Serializer>(
            reason: &Option<Reason>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            wire(*reason).serialize(serializer)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Reason>, D::Error> {
            read(Wire::deserialize(deserializer)?).map_err(serde::de::Error::custom)
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
    /// Pending, but what it touches overlaps this reservation of another agent (SPEC
    /// section 18.2): in nobody's inbox until it ends.
    Held(&'a Reservation),
    /// Being worked on under a live lease, or finished: in nobody's inbox.
    Nobody,
}

/// Whose turn `task` is. `waiting_on` are the tasks in its `after` list not completed,
/// with their status. One that ended failed or canceled can never complete, so a task
/// waiting on it is not blocked but back with its sender, who decides what becomes of it.
pub fn turn<'a>(task: &'a Head, waiting_on: &[(TaskId, Status)], now: Timestamp) -> Turn<'a> {
    match task.status {
        Status::Pending | Status::ChangesRequested if !waiting_on.is_empty() => {
            match ended_dependency(waiting_on) {
                Some((dependency, status)) => Turn::Of {
                    agent: &task.from,
                    reason: Reason::DependencyEnded {
                        task: dependency,
                        status,
                    },
                },
                None => Turn::Blocked(waiting_on.iter().map(|(id, _)| *id).collect()),
            }
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

/// "waits on T-1, which was canceled" (or "which failed").
pub fn waits_on_ended(task: TaskId, status: Status) -> String {
    let ended = match status {
        Status::Failed => "failed",
        Status::Canceled => "was canceled",
        _ => "did not complete",
    };
    format!("waits on {task}, which {ended}")
}

/// The first of `waiting_on` that ended without completing, if any.
pub fn ended_dependency(waiting_on: &[(TaskId, Status)]) -> Option<(TaskId, Status)> {
    waiting_on
        .iter()
        .copied()
        .find(|(_, status)| status.is_finished())
}

/// Inbox order: most urgent first, then oldest first, then by id.
pub fn inbox_order(left: &Head, right: &Head) -> std::cmp::Ordering {
    left.priority
        .cmp(&right.priority)
        .then(left.created_at.cmp(&right.created_at))
        .then(left.id.cmp(&right.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::Task;
    use Status::*;

    #[test]
    fn a_task_waiting_on_an_ended_task_is_its_senders_and_otherwise_blocked_or_free() {
        let now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        // (its status, what it waits on, whose inbox and why)
        type Case = (
            Status,
            &'static [(TaskId, Status)],
            Option<(&'static str, Reason)>,
        );
        let cases: &[Case] = &[
            (Pending, &[], Some(("codex", Reason::Assigned))),
            (Pending, &[(TaskId(1), Working)], None),
            (
                Pending,
                &[(TaskId(1), Canceled)],
                Some((
                    "claude",
                    Reason::DependencyEnded {
                        task: TaskId(1),
                        status: Canceled,
                    },
                )),
            ),
            (
                ChangesRequested,
                &[(TaskId(1), Pending), (TaskId(2), Failed)],
                Some((
                    "claude",
                    Reason::DependencyEnded {
                        task: TaskId(2),
                        status: Failed,
                    },
                )),
            ),
            // Only a task that could still start waits on its dependencies.
            (
                InputRequired,
                &[(TaskId(1), Canceled)],
                Some(("claude", Reason::Question)),
            ),
            (Canceled, &[(TaskId(1), Canceled)], None),
        ];
        for (status, waiting_on, expected) in cases {
            let task = Task::example(*status, now);
            let head = Head::of(&task);
            let found = match turn(&head, waiting_on, now) {
                Turn::Of { agent, reason } => Some((agent, reason)),
                Turn::Blocked(_) | Turn::Held(_) | Turn::Nobody => None,
            };
            assert_eq!(found, *expected, "{status} waiting on {waiting_on:?}");
        }
        let ended = Reason::DependencyEnded {
            task: TaskId(1),
            status: Canceled,
        };
        assert_eq!(ended.what_to_do(), "waits on T-1, which was canceled");
        assert_eq!(
            serde_json::to_value(ended).unwrap(),
            serde_json::json!("dependency_canceled")
        );
        assert_eq!(
            serde_json::to_value(Reason::ChangesRequested).unwrap(),
            serde_json::json!("changes_requested")
        );
    }

    #[test]
    fn the_sender_waits_on_work_and_the_assignee_on_words() {
        let ended = Reason::DependencyEnded {
            task: TaskId(1),
            status: Failed,
        };
        let cases = [
            (Reason::Assigned, "claude"),
            (Reason::ChangesRequested, "claude"),
            (Reason::Question, "codex"),
            (Reason::ReviewRequested, "codex"),
            (Reason::Stalled, "codex"),
            (ended, "codex"),
        ];
        for (reason, waiting) in cases {
            assert_eq!(reason.who_waits("claude", "codex"), waiting, "{reason:?}");
        }
    }
}
