//! Messages between agents (SPEC section 6): the append-only `mail.jsonl` of a project, each
//! agent's read position in it, the notifications baton writes itself, and the sweep that
//! moves old, fully read mail to `archive/mail-<YYYY-MM>.jsonl`.
//!
//! Every write happens under the project's `mail.lock`, never under the board lock, so a
//! message never waits for a board change (a board change may take the mail lock after its
//! own, to write notifications; nothing here ever takes the board lock).

use std::collections::BTreeMap;
use std::fmt;
use std::io::ErrorKind;
use std::str::FromStr;

use chrono::Duration;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::board::task::{Status, Task};
use crate::board::transition::Action;
use crate::error::Result;
use crate::registry;
use crate::store::lock::{FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::store::versioned::{self, Versioned};
use crate::store::{StoreError, atomic, jsonl, regular};
use crate::time::Timestamp;

/// The `to` of a broadcast: every agent but the sender.
pub const BROADCAST: &str = "@all";
/// The `from` of the notifications baton writes itself.
pub const BATON: &str = "baton";
/// Mail every recipient has read moves to the archive once it is this old.
pub const KEEP_READ_MAIL_FOR: Duration = Duration::days(7);
/// The `schema` of `mail.read.json` this binary writes and the highest it reads.
pub const POSITIONS_SCHEMA: u32 = 1;
/// Summaries made from a message's words are cut to this many characters.
const SUMMARY_CHARS: usize = 72;

/// What a message is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageType {
    Text,
    /// Written by baton itself when a task changes under someone.
    Notification,
    ShutdownRequest,
    ShutdownResponse,
    PlanApprovalRequest,
    /// The coordinator's verdict on a plan; only the coordinator sends it.
    PlanApprovalResponse,
}

impl MessageType {
    pub const ALL: [MessageType; 6] = [
        MessageType::Text,
        MessageType::Notification,
        MessageType::ShutdownRequest,
        MessageType::ShutdownResponse,
        MessageType::PlanApprovalRequest,
        MessageType::PlanApprovalResponse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::Text => "text",
            MessageType::Notification => "notification",
            MessageType::ShutdownRequest => "shutdown_request",
            MessageType::ShutdownResponse => "shutdown_response",
            MessageType::PlanApprovalRequest => "plan_approval_request",
            MessageType::PlanApprovalResponse => "plan_approval_response",
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MessageType {
    type Err = String;

    /// Accepts the stored names, and `-` for `_` (`plan-approval-request`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().replace('-', "_");
        MessageType::ALL
            .into_iter()
            .find(|kind| kind.as_str() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = MessageType::ALL.iter().map(|kind| kind.as_str()).collect();
                format!(
                    "unknown message type `{text}` (one of {})",
                    names.join(", ")
                )
            })
    }
}

/// One line of `mail.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Counts up from 1 per project and never repeats, even after the sweep.
    pub seq: u64,
    pub at: Timestamp,
    pub from: String,
    /// An agent's name, or [`BROADCAST`].
    pub to: String,
    #[serde(rename = "type")]
    pub kind: MessageType,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub payload: Value,
}

impl Message {
    pub fn is_broadcast(&self) -> bool {
        self.to == BROADCAST
    }

    /// Whether this message is addressed to `agent`, who joined the hub at `joined`. A
    /// broadcast reaches the agents there when it was sent, the sender excepted.
    pub fn reaches(&self, agent: &str, joined: Timestamp) -> bool {
        if self.is_broadcast() {
            self.from != agent && joined <= self.at
        } else {
            self.to == agent
        }
    }
}

/// A message before it has a number and a time.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub from: String,
    pub to: String,
    pub kind: MessageType,
    pub summary: String,
    pub body: String,
    pub payload: Value,
}

/// Someone whose inbox just gained a message: the cue to wake and notify them, as
/// [`crate::board::handover::Handover`] is for tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    pub agent: String,
    pub project: String,
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub summary: String,
}

/// The contents of `mail.read.json`: how far each agent has read, and the highest number
/// the sweep has moved out (so numbering carries on when `mail.jsonl` is emptied).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadPositions {
    pub schema: u32,
    /// The highest `seq` each agent has been shown.
    #[serde(default)]
    pub positions: BTreeMap<String, u64>,
    #[serde(default)]
    pub archived_through: u64,
}

impl Versioned for ReadPositions {
    const SCHEMA: u32 = POSITIONS_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Default for ReadPositions {
    fn default() -> Self {
        ReadPositions {
            schema: POSITIONS_SCHEMA,
            positions: BTreeMap::new(),
            archived_through: 0,
        }
    }
}

impl ReadPositions {
    pub fn of(&self, agent: &str) -> u64 {
        self.positions.get(agent).copied().unwrap_or(0)
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

/// Reads every message of a project without locking (a missing file reads as empty). A
/// torn or unknown line is skipped: it belongs to a crashed writer or a newer baton.
pub fn read(home: &Home, project: &str) -> Result<Vec<Message>, StoreError> {
    Ok(jsonl::read_all(&home.mail_file(project))?.records)
}

/// Reads `mail.read.json`; a missing file means nobody has read anything yet.
pub fn read_positions(home: &Home, project: &str) -> Result<ReadPositions, StoreError> {
    Ok(versioned::load(&home.mail_cursor_file(project))?.unwrap_or_default())
}

/// Writes `mail.read.json` atomically. The caller holds the mail lock.
fn write_positions(home: &Home, project: &str, positions: &ReadPositions) -> Result<()> {
    Ok(versioned::save(&home.mail_cursor_file(project), positions)?)
}

fn lock(home: &Home, project: &str, policy: LockPolicy) -> Result<FileLock> {
    Ok(FileLock::acquire(
        &home.mail_lock(project),
        "the mail lock",
        policy,
    )?)
}

/// Appends `drafts` as numbered messages, then sweeps old read mail to the archive.
pub fn append(
    home: &Home,
    project: &str,
    policy: LockPolicy,
    now: Timestamp,
    drafts: Vec<Draft>,
) -> Result<Vec<Message>> {
    if drafts.is_empty() {
        return Ok(Vec::new());
    }
    let _guard = lock(home, project, policy)?;
    let mut lines = raw_lines(home, project)?;
    let positions = read_positions(home, project)?;
    let last = lines
        .iter()
        .filter_map(|line| line.seq)
        .chain([positions.archived_through])
        // A read position past every message can only come from a mail file cut short by
        // hand; numbering on from it keeps new messages from hiding behind old positions.
        .chain(positions.positions.values().copied())
        .max()
        .unwrap_or(0);
    let messages: Vec<Message> = drafts
        .into_iter()
        .zip(last + 1..)
        .map(|(draft, seq)| Message {
            seq,
            at: now,
            from: draft.from,
            to: draft.to,
            kind: draft.kind,
            summary: draft.summary,
            body: draft.body,
            payload: draft.payload,
        })
        .collect();
    jsonl::append(&home.mail_file(project), &messages)?;
    // The sweep rewrites what stays, and the messages just appended stay.
    lines.extend(messages.iter().map(|message| RawLine {
        // Serializing plain data cannot fail; `jsonl::append` just did the same.
        text: serde_json::to_string(message).unwrap_or_default(),
        seq: Some(message.seq),
        message: Some(message.clone()),
    }));
    sweep_locked(home, project, now, lines, positions)?;
    Ok(messages)
}

/// The messages that reach `agent` (who joined the hub at `joined`) and that it has not
/// been shown, oldest first. Looks only: nothing is marked read.
pub fn unread(
    home: &Home,
    project: &str,
    agent: &str,
    joined: Timestamp,
) -> Result<Vec<Message>, StoreError> {
    let position = read_positions(home, project)?.of(agent);
    Ok(unread_after(read(home, project)?, agent, joined, position))
}

fn unread_after(
    messages: Vec<Message>,
    agent: &str,
    joined: Timestamp,
    position: u64,
) -> Vec<Message> {
    messages
        .into_iter()
        .filter(|message| is_unread(message, agent, joined, position))
        .collect()
}

/// Whether `message` reaches `agent` (who joined at `joined`) and comes after the agent's
/// read `position`.
fn is_unread(message: &Message, agent: &str, joined: Timestamp, position: u64) -> bool {
    message.seq > position && message.reaches(agent, joined)
}

/// Every message in `mail.jsonl` and `agent`'s read position before this look. With
/// `mark_read`, in one locked step, everything that reaches the agent now counts as read:
/// two processes reading for one agent at once never both get a message, and none is
/// skipped.
pub fn look(
    home: &Home,
    project: &str,
    policy: LockPolicy,
    agent: &str,
    joined: Timestamp,
    mark_read: bool,
) -> Result<(Vec<Message>, u64)> {
    let position = read_positions(home, project)?.of(agent);
    let messages = read(home, project)?;
    // With nothing unread there is nothing to mark, and no lock to take: the hooks look on
    // every prompt, and most of those looks find no mail.
    if !mark_read || newest_unread(&messages, agent, joined, position).is_none() {
        return Ok((messages, position));
    }
    let _guard = lock(home, project, policy)?;
    let mut positions = read_positions(home, project)?;
    let messages = read(home, project)?;
    let before = positions.of(agent);
    if let Some(newest) = newest_unread(&messages, agent, joined, before) {
        positions.positions.insert(agent.to_string(), newest);
        write_positions(home, project, &positions)?;
    }
    Ok((messages, before))
}

/// The number of the newest message unread by `agent`.
fn newest_unread(
    messages: &[Message],
    agent: &str,
    joined: Timestamp,
    position: u64,
) -> Option<u64> {
    let unread = messages
        .iter()
        .filter(|message| is_unread(message, agent, joined, position));
    unread.map(|message| message.seq).max()
}

/// [`unread`], and marks what it returns as read (see [`look`]).
pub fn take_unread(
    home: &Home,
    project: &str,
    policy: LockPolicy,
    agent: &str,
    joined: Timestamp,
) -> Result<Vec<Message>> {
    let (messages, position) = look(home, project, policy, agent, joined, true)?;
    Ok(unread_after(messages, agent, joined, position))
}

/// One line of `mail.jsonl` as stored: kept byte for byte, so the sweep never drops or
/// rewrites what it does not understand.
struct RawLine {
    text: String,
    seq: Option<u64>,
    message: Option<Message>,
}

fn raw_lines(home: &Home, project: &str) -> Result<Vec<RawLine>, StoreError> {
    let path = home.mail_file(project);
    let text = match regular::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError::io(&path)(error)),
    };
    Ok(text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: Option<Value> = serde_json::from_str(line).ok();
            RawLine {
                seq: value.as_ref().and_then(|value| value["seq"].as_u64()),
                message: value.and_then(|value| serde_json::from_value(value).ok()),
                text: line.to_string(),
            }
        })
        .collect())
}

/// Who must read a message before it may leave `mail.jsonl`: its addressee while still
/// registered, or for a broadcast every agent registered when it was sent but the sender.
fn has_been_read_by_all(
    message: &Message,
    agents: &[registry::AgentRecord],
    positions: &ReadPositions,
) -> bool {
    agents
        .iter()
        .filter(|agent| message.reaches(&agent.name, agent.created_at))
        .all(|agent| positions.of(&agent.name) >= message.seq)
}

/// The seqs of the messages the sweep moves: older than [`KEEP_READ_MAIL_FOR`] and read by
/// every recipient.
fn sweepable(
    messages: &[&Message],
    agents: &[registry::AgentRecord],
    positions: &ReadPositions,
    now: Timestamp,
) -> Vec<u64> {
    messages
        .iter()
        .filter(|message| message.at.until(now) >= KEEP_READ_MAIL_FOR)
        .filter(|message| has_been_read_by_all(message, agents, positions))
        .map(|message| message.seq)
        .collect()
}

/// Moves old, fully read mail to `archive/mail-<YYYY-MM>.jsonl`. The caller holds the mail
/// lock. The order of the writes makes a crash safe: the numbering is secured first, then
/// the archive gets its copy, then `mail.jsonl` lets go of it; a crash between the last two
/// leaves a message in both places (never in neither), and a later sweep archives it again.
fn sweep_locked(
    home: &Home,
    project: &str,
    now: Timestamp,
    mut lines: Vec<RawLine>,
    mut positions: ReadPositions,
) -> Result<usize> {
    // Cheap check first: most sends find nothing old enough and need not read the registry.
    let is_any_old = lines
        .iter()
        .filter_map(|line| line.message.as_ref())
        .any(|message| message.at.until(now) >= KEEP_READ_MAIL_FOR);
    if !is_any_old {
        return Ok(0);
    }
    let (agents, _unreadable) = registry::list(home)?;
    let messages: Vec<&Message> = lines
        .iter()
        .filter_map(|line| line.message.as_ref())
        .collect();
    let leaving = sweepable(&messages, &agents, &positions, now);
    if leaving.is_empty() {
        return Ok(0);
    }
    let highest = leaving.iter().copied().max().unwrap_or(0);
    if highest > positions.archived_through {
        positions.archived_through = highest;
        write_positions(home, project, &positions)?;
    }
    let (moving, staying): (Vec<RawLine>, Vec<RawLine>) = lines
        .drain(..)
        .partition(|line| line.seq.is_some_and(|seq| leaving.contains(&seq)));
    let mut by_month: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in &moving {
        if let (Some(message), Ok(value)) = (&line.message, serde_json::from_str(&line.text)) {
            by_month.entry(message.at.month()).or_default().push(value);
        }
    }
    let dir = home.archive_dir(project);
    for (month, values) in &by_month {
        jsonl::append(&dir.join(format!("mail-{month}.jsonl")), values)?;
    }
    let mut text = String::new();
    for line in &staying {
        text.push_str(&line.text);
        text.push('\n');
    }
    atomic::replace(&home.mail_file(project), text.as_bytes(), None)?;
    Ok(moving.len())
}

/// The notifications baton writes when `actor`'s action took `before` to `after`: to the
/// sender when the task completed, failed or was canceled, and to the assignee when it was
/// canceled or reassigned away. Nobody is told of what they did themselves.
pub fn notifications(before: &Task, after: &Task, actor: &str, action: &Action) -> Vec<Draft> {
    let id = after.id;
    let payload = |event: &str| {
        json!({
            "task": id.0,
            "event": event,
            "status": after.status,
            "by": actor,
        })
    };
    let words = action.text().trim();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut tell = |to: &str, summary: String, body: String, event: &str| {
        if to != actor && !drafts.iter().any(|draft| draft.to == to) {
            drafts.push(Draft {
                from: BATON.to_string(),
                to: to.to_string(),
                kind: MessageType::Notification,
                summary,
                body,
                payload: payload(event),
            });
        }
    };
    let finished = before.status.is_open() && after.status.is_finished();
    match after.status {
        Status::Completed if finished => {
            let result = after.result.as_deref().unwrap_or("").trim();
            let verb = match action {
                Action::Approve { .. } => "approved",
                _ => "completed",
            };
            let body = if result.is_empty() {
                format!("{actor} {verb} {id} ({}).", after.subject)
            } else {
                format!("{actor} {verb} {id} ({}). Result: {result}", after.subject)
            };
            tell(
                &after.from,
                format!("{id} completed: {}", after.subject),
                body,
                "completed",
            );
        }
        Status::Failed if finished => tell(
            &after.from,
            format!("{id} failed: {}", after.subject),
            format!(
                "{actor} gave up on {id} ({}). Reason: {words}",
                after.subject
            ),
            "failed",
        ),
        Status::Canceled if finished => {
            let reason = if words.is_empty() {
                String::new()
            } else {
                format!(" Reason: {words}")
            };
            let body = format!("{actor} canceled {id} ({}).{reason}", after.subject);
            let summary = format!("{id} canceled: {}", after.subject);
            tell(&after.from, summary.clone(), body.clone(), "canceled");
            tell(&before.to, summary, body, "canceled");
        }
        _ => {}
    }
    if let Action::Reassign { to, .. } = action
        && before.to != after.to
    {
        let note = if words.is_empty() {
            String::new()
        } else {
            format!(" Note: {words}")
        };
        tell(
            &before.to,
            format!("{id} reassigned to {to}: {}", after.subject),
            format!(
                "{actor} reassigned {id} ({}) from you to {to}; it is no longer yours.{note}",
                after.subject
            ),
            "reassigned",
        );
    }
    drafts
}

/// The agents that `message` reaches, as wake cues.
pub fn deliveries(
    message: &Message,
    project: &str,
    agents: &[registry::AgentRecord],
) -> Vec<Delivery> {
    agents
        .iter()
        .filter(|agent| message.reaches(&agent.name, agent.created_at))
        .map(|agent| Delivery {
            agent: agent.name.clone(),
            project: project.to_string(),
            seq: message.seq,
            kind: message.kind,
            summary: message.summary.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let done = Action::Done {
            result: "fixed".into(),
        };
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

        let fail = Action::Fail {
            reason: "no access".into(),
        };
        let failed = notifications(&working, &finish(Status::Failed), "codex", &fail);
        assert_eq!(failed.len(), 1);
        assert!(failed[0].body.contains("Reason: no access"));

        let cancel = Action::Cancel {
            reason: "not needed".into(),
        };
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

        let reassign = Action::Reassign {
            to: "gemini".into(),
            note: "codex is busy".into(),
        };
        let mut reassigned = working.clone();
        reassigned.status = Status::Pending;
        reassigned.to = "gemini".into();
        let drafts = notifications(&working, &reassigned, "claude", &reassign);
        assert_eq!(drafts.len(), 1);
        assert_eq!(drafts[0].to, "codex");
        assert!(drafts[0].body.contains("Note: codex is busy"));

        let approve = Action::Approve {
            note: "good".into(),
        };
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

        let claimed = notifications(&task(Status::Pending), &working, "codex", &Action::Claim);
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
