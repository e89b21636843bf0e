//! Messages between agents (SPEC section 6): the append-only `mail.jsonl` of a project
//! ([`file`]), each agent's read position in it ([`positions`]), the notifications baton
//! writes itself ([`notifications`]), and the sweep that moves old, fully read mail to
//! `archive/mail-<YYYY-MM>.jsonl` ([`sweep`]).
//!
//! Every write is one change of the mail in the store (under the project's mail lock in
//! the file store, never under the board lock, so a message never waits for a board
//! change).

mod file;
mod notifications;
mod positions;
mod sweep;

use chrono::Duration;
use serde::{Deserialize, Serialize};

pub use crate::board::mail::{
    BROADCAST, Draft, Message, MessageType, POSITIONS_SCHEMA, ReadPositions,
};
pub use file::{append, read};
pub use notifications::{arrivals, notifications};
pub use positions::{Marking, look, read_positions, take_unread, unread};

/// The `from` of the notifications baton writes itself.
pub const BATON: &str = "baton";
/// Mail every recipient has read moves to the archive once it is this old.
pub const KEEP_READ_MAIL_FOR: Duration = Duration::days(7);
/// Summaries made from a message's words are cut to this many characters.
const SUMMARY_CHARS: usize = 72;

/// Someone whose inbox just gained a message: the cue to wake and notify them, as
/// [`crate::board::handover::Handover`] is for tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrival {
    pub agent: String,
    pub project: String,
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub summary: String,
    /// For a notification baton wrote, the task it is about and what became of it
    /// (`completed`, `failed`, `canceled`, `reassigned`): what an alert tells of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<crate::board::task::TaskId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
}

impl Arrival {
    /// `message` arriving in `agent`'s inbox in `project`.
    pub fn of(message: &Message, agent: &str, project: &str) -> Arrival {
        let is_notification = message.kind == MessageType::Notification;
        let about = |field: &str| {
            is_notification
                .then(|| message.payload.get(field))
                .flatten()
        };
        Arrival {
            agent: agent.to_string(),
            project: project.to_string(),
            seq: message.seq,
            kind: message.kind,
            summary: message.summary.clone(),
            task: about("task")
                .and_then(serde_json::Value::as_u64)
                .map(crate::board::task::TaskId),
            event: about("event")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
        }
    }
}

/// A summary for words that came without one: their first line, shortened.
pub fn summarize(body: &str) -> String {
    let line = body.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() <= SUMMARY_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(SUMMARY_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::positions::unread_after;
    use super::sweep::sweepable;
    use super::*;
    use crate::board::action::ActionKind;
    use crate::board::task::{Status, Task};
    use crate::board::transition::Action;
    use crate::registry;
    use crate::time::Timestamp;
    use serde_json::Value;

    fn at(day: i64) -> Timestamp {
        let start: Timestamp = "2026-11-01T12:00:00Z".parse().unwrap();
        start.plus(Duration::days(day))
    }

    fn message(seq: u64, from: &str, to: &str, day: i64) -> Message {
        Message {
            seq,
            at: at(day),
            from: from.into(),
            to: to.into(),
            kind: MessageType::Text,
            summary: String::new(),
            body: format!("message {seq}"),
            payload: Value::Null,
        }
    }

    fn agent(name: &str, joined_day: i64) -> registry::AgentRecord {
        registry::AgentRecord::new(name, at(joined_day))
    }

    fn task(status: Status) -> Task {
        Task::example(status, at(0))
    }

    #[test]
    fn types_parse_by_name_and_unknown_ones_are_refused() {
        for kind in MessageType::ALL {
            assert_eq!(kind.as_str().parse::<MessageType>().unwrap(), kind);
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                Value::String(kind.as_str().into())
            );
        }
        assert_eq!(
            "plan-approval-request".parse::<MessageType>().unwrap(),
            MessageType::PlanApprovalRequest
        );
        let refused = "memo".parse::<MessageType>().unwrap_err();
        assert!(refused.contains("unknown message type `memo`"), "{refused}");
        assert!(refused.contains("shutdown_request"), "{refused}");
    }

    #[test]
    fn a_broadcast_reaches_those_present_but_the_sender() {
        let broadcast = message(1, "claude", BROADCAST, 3);
        assert!(!broadcast.reaches("claude", at(0)), "not the sender");
        assert!(broadcast.reaches("codex", at(0)));
        assert!(
            broadcast.reaches("codex", at(3)),
            "joined at the same moment"
        );
        assert!(!broadcast.reaches("gemini", at(4)), "joined later");
        let direct = message(2, "claude", "codex", 3);
        assert!(
            direct.reaches("codex", at(9)),
            "a direct message always reaches"
        );
        assert!(!direct.reaches("gemini", at(0)));
    }

    #[test]
    fn unread_is_what_reaches_the_agent_past_its_position() {
        let messages = vec![
            message(1, "claude", "codex", 0),
            message(2, "codex", BROADCAST, 0),
            message(3, "gemini", BROADCAST, 0),
            message(4, "claude", "gemini", 0),
            message(5, "claude", "codex", 0),
        ];
        let seqs = |position| -> Vec<u64> {
            unread_after(messages.clone(), "codex", at(0), position)
                .iter()
                .map(|message| message.seq)
                .collect()
        };
        assert_eq!(seqs(0), vec![1, 3, 5]);
        assert_eq!(seqs(3), vec![5]);
        assert_eq!(seqs(5), Vec::<u64>::new());
    }

    #[test]
    fn the_sweep_takes_only_old_mail_that_every_recipient_has_read() {
        let agents = vec![agent("claude", 0), agent("codex", 0), agent("gemini", 5)];
        let messages = [
            message(1, "claude", "codex", 0),    // old, read by codex
            message(2, "claude", BROADCAST, 0),  // old, gemini not there yet, codex read
            message(3, "codex", BROADCAST, 1),   // old, claude has not read it
            message(4, "claude", "ghost", 1),    // old, addressee gone: nobody left to read
            message(5, "claude", "codex", 9),    // read, but too recent
            message(6, "gemini", BROADCAST, 10), // too recent
        ];
        let mut positions = ReadPositions::default();
        positions.positions.insert("codex".into(), 6);
        positions.positions.insert("claude".into(), 2);
        let refs: Vec<&Message> = messages.iter().collect();
        assert_eq!(sweepable(&refs, &agents, &positions, at(10)), vec![1, 2, 4]);
        positions.positions.insert("claude".into(), 3);
        assert_eq!(
            sweepable(&refs, &agents, &positions, at(10)),
            vec![1, 2, 3, 4]
        );
        assert_eq!(
            sweepable(&refs, &agents, &positions, at(20)),
            vec![1, 2, 3, 4, 5],
            "6 waits for claude"
        );
    }

    fn recipients(before: &Task, after: &Task, actor: &str, action: &Action) -> Vec<String> {
        notifications(before, after, actor, action)
            .into_iter()
            .map(|draft| {
                assert_eq!(draft.kind, MessageType::Notification);
                assert_eq!(draft.from, BATON);
                draft.to
            })
            .collect()
    }

    #[test]
    fn notifications_go_to_whoever_did_not_act() {
        let working = task(Status::Working);
        let finish = |status: Status| {
            let mut after = working.clone();
            after.status = status;
            after
        };
        let done = Action::new(ActionKind::Done, "fixed".into());
        let mut completed = finish(Status::Completed);
        completed.result = Some("fixed".into());
        assert_eq!(
            recipients(&working, &completed, "codex", &done),
            vec!["claude"]
        );
        let drafts = notifications(&working, &completed, "codex", &done);
        assert_eq!(drafts[0].summary, "T-4 completed: fix the parser");
        assert!(
            drafts[0].body.contains("Result: fixed"),
            "{}",
            drafts[0].body
        );
        assert_eq!(drafts[0].payload["task"], 4);
        assert_eq!(drafts[0].payload["status"], "completed");

        let fail = Action::new(ActionKind::Fail, "no access".into());
        let failed = notifications(&working, &finish(Status::Failed), "codex", &fail);
        assert_eq!(failed.len(), 1);
        assert!(failed[0].body.contains("Reason: no access"));

        let cancel = Action::new(ActionKind::Cancel, "not needed".into());
        let canceled = finish(Status::Canceled);
        assert_eq!(
            recipients(&working, &canceled, "claude", &cancel),
            vec!["codex"],
            "the sender canceled: only the assignee hears"
        );
        assert_eq!(
            recipients(&working, &canceled, "boss", &cancel),
            vec!["claude", "codex"],
            "the coordinator canceled: both hear"
        );
        let mut to_self = working.clone();
        to_self.to = "claude".into();
        let mut to_self_canceled = to_self.clone();
        to_self_canceled.status = Status::Canceled;
        assert_eq!(
            recipients(&to_self, &to_self_canceled, "boss", &cancel),
            vec!["claude"],
            "one message per recipient"
        );

        let reassign = Action::reassign("gemini".into(), "codex is busy".into());
        let mut reassigned = working.clone();
        reassigned.status = Status::Pending;
        reassigned.to = "gemini".into();
        let drafts = notifications(&working, &reassigned, "claude", &reassign);
        assert_eq!(drafts.len(), 1);
        assert_eq!(drafts[0].to, "codex");
        assert!(drafts[0].body.contains("Note: codex is busy"));

        let approve = Action::new(ActionKind::Approve, "good".into());
        let mut reviewed = task(Status::ReviewRequested);
        reviewed.reviewer = Some("gemini".into());
        let approved = notifications(&reviewed, &completed, "gemini", &approve);
        assert_eq!(approved.len(), 1);
        assert_eq!(approved[0].to, "claude");
        assert!(
            approved[0].body.starts_with("gemini approved T-4"),
            "{}",
            approved[0].body
        );

        let claimed = notifications(
            &task(Status::Pending),
            &working,
            "codex",
            &Action::from(ActionKind::Claim),
        );
        assert!(claimed.is_empty(), "a claim tells nobody");
    }

    #[test]
    fn summaries_are_the_first_line_shortened() {
        assert_eq!(summarize("  hello\nworld"), "hello");
        let long = "word ".repeat(40);
        let summary = summarize(&long);
        assert_eq!(summary.chars().count(), SUMMARY_CHARS);
        assert!(summary.ends_with('…'));
    }
}
