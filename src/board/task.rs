//! A task on the board: what is asked, of whom, where it stands, and everything said on it.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::action::ActionKind;
use super::delivery::Delivery;
use crate::time::Timestamp;

/// A task's number within its project, shown as `T-12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u64);

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T-{}", self.0)
    }
}

impl FromStr for TaskId {
    type Err = String;

    /// Accepts `12`, `T-12` and `t-12`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        let digits = trimmed
            .strip_prefix("T-")
            .or_else(|| trimmed.strip_prefix("t-"))
            .unwrap_or(trimmed);
        match digits.parse::<u64>() {
            Ok(number) if number > 0 && digits.bytes().all(|byte| byte.is_ascii_digit()) => {
                Ok(TaskId(number))
            }
            _ => Err(format!(
                "`{text}` is not a task id (expected 12, T-12 or t-12)"
            )),
        }
    }
}

impl Serialize for TaskId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u64::deserialize(deserializer).map(TaskId)
    }
}

/// Where a task stands. The first five are open; the last three are finished for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Working,
    InputRequired,
    ReviewRequested,
    ChangesRequested,
    Completed,
    Failed,
    Canceled,
}

impl Status {
    pub const ALL: [Status; 8] = [
        Status::Pending,
        Status::Working,
        Status::InputRequired,
        Status::ReviewRequested,
        Status::ChangesRequested,
        Status::Completed,
        Status::Failed,
        Status::Canceled,
    ];

    /// Each status as a board file spells it, in the order of [`Status::ALL`].
    pub const NAMES: [&'static str; 8] = {
        let mut names = [""; 8];
        let mut place = 0;
        while place < names.len() {
            names[place] = Status::ALL[place].as_str();
            place += 1;
        }
        names
    };

    pub fn is_finished(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Canceled)
    }

    pub fn is_open(self) -> bool {
        !self.is_finished()
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::ReviewRequested => "review_requested",
            Status::ChangesRequested => "changes_requested",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Canceled => "canceled",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().replace('-', "_");
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == wanted)
            .ok_or_else(|| {
                let names: Vec<_> = Status::ALL.iter().map(|status| status.as_str()).collect();
                format!("unknown status `{text}` (one of {})", names.join(", "))
            })
    }
}

/// How soon a task should be taken up; the inbox sorts by it first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Urgent,
    High,
    #[default]
    Normal,
    Low,
}

impl Priority {
    pub const ALL: [Priority; 4] = [
        Priority::Urgent,
        Priority::High,
        Priority::Normal,
        Priority::Low,
    ];

    /// Each priority as a board file spells it, in the order of [`Priority::ALL`].
    pub const NAMES: [&'static str; 4] = {
        let mut names = [""; 4];
        let mut place = 0;
        while place < names.len() {
            names[place] = Priority::ALL[place].as_str();
            place += 1;
        }
        names
    };

    pub const fn as_str(self) -> &'static str {
        match self {
            Priority::Urgent => "urgent",
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Priority {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "urgent" => Ok(Priority::Urgent),
            "high" => Ok(Priority::High),
            "normal" => Ok(Priority::Normal),
            "low" => Ok(Priority::Low),
            _ => Err(format!(
                "unknown priority `{text}` (one of urgent, high, normal, low)"
            )),
        }
    }
}

/// One thing said or done on a task. Entries are only ever appended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadEntry {
    pub at: Timestamp,
    pub by: String,
    /// The action that wrote it, spelled as its entry (`question` for an `ask`).
    #[serde(with = "super::action::entry_spelling")]
    pub kind: ActionKind,
    pub text: String,
}

/// A task as stored in `board.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub id: TaskId,
    pub subject: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub files: Vec<String>,
    pub from: String,
    pub to: String,
    /// Who approves a review; `None` means the sender.
    #[serde(default)]
    pub reviewer: Option<String>,
    pub status: Status,
    #[serde(default)]
    pub priority: Priority,
    /// Tasks that must be completed before this one can be taken up.
    #[serde(default)]
    pub after: Vec<TaskId>,
    #[serde(default)]
    pub skill: Option<String>,
    /// Sent with `--review`: it can only be completed by an approval.
    #[serde(default)]
    pub review: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default)]
    pub claimed_at: Option<Timestamp>,
    #[serde(default)]
    pub lease_expires_at: Option<Timestamp>,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub thread: Vec<ThreadEntry>,
    /// The last hand-over and how far it got (SPEC section 11); none on boards written
    /// before it, and not written while there is none, so those boards stay as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
    /// Where `baton import` found the task (none for a task sent here): what makes a
    /// second import of the same board add nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Origin>,
    /// What the task will change (SPEC section 18.1): path patterns relative to the
    /// workspace and named resources; not written while there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touches: Vec<String>,
    /// The git worktree its work is done in (SPEC section 18.4), given at its first claim
    /// in a project with worktrees on; not written while there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<Worktree>,
    /// Where its work went on the base branch (SPEC section 18.5), once landed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Landed>,
    /// Its labels (SPEC section 19): names as agents' and projects' are, at most
    /// [`super::search::MOST_LABELS`], each once. Always written, empty or not, so that every
    /// face's JSON carries the list; last, so the fast reader of a board finds the fields
    /// before it in the order it expects (`store::files::layout`).
    #[serde(default)]
    pub labels: Vec<String>,
}

/// A task's own git worktree: where it is, on which machine, and what it started from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Worktree {
    /// Its directory, on the machine named by `host`.
    pub path: String,
    /// Its branch: `baton/T-<n>`.
    pub branch: String,
    /// The branch its work lands on.
    pub base: String,
    /// The base branch's tip it was made from.
    pub base_commit: String,
    /// The machine it is on (none where the machine has no usable name).
    #[serde(default)]
    pub host: Option<String>,
    /// The head commit its last review asked review of; later commits are not reviewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<String>,
}

impl Worktree {
    /// Where the task's work is done, as every face tells its agent (SPEC section 18.4):
    /// `work in /path (branch baton/T-3)`, each part shown as text (section 10): the path
    /// and branch come from whichever machine claimed the task.
    pub fn where_to_work(&self) -> String {
        format!(
            "work in {} (branch {})",
            crate::text::inline(&self.path),
            crate::text::inline(&self.branch)
        )
    }
}

/// The branch a task's worktree has: `baton/T-<n>`.
pub fn worktree_branch(id: TaskId) -> String {
    format!("baton/{id}")
}

/// A task's work put on its base branch: the commit that carries it there, and when.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Landed {
    pub commit: String,
    pub at: Timestamp,
}

/// Where an imported task came from: the tool (`roundtable`, `agent-bridge`), the project it
/// had there and its id there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Origin {
    pub from: String,
    pub project: String,
    pub id: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} {}/{}", self.from, self.project, self.id)
    }
}

/// The part of a task that decides whose turn it is and where it sorts: what a command
/// needs of every task on the board. The rest of a task is decoded only when it is shown or
/// changed: a store reads every task's head up front and keeps the rest as it stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub id: TaskId,
    pub status: Status,
    pub priority: Priority,
    /// Agent names are shared: a board of thousands of tasks names a handful of agents.
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub reviewer: Option<Arc<str>>,
    pub after: Vec<TaskId>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub lease_expires_at: Option<Timestamp>,
    /// What it will touch: whether it is held by another agent's reservation.
    pub touches: Vec<String>,
}

impl Head {
    /// What a reader starts a task's head from, before any field is read; `nobody` stands
    /// in for the names until they are.
    pub fn unread(nobody: Arc<str>) -> Head {
        Head {
            id: TaskId(0),
            status: Status::Pending,
            priority: Priority::default(),
            from: Arc::clone(&nobody),
            to: nobody,
            reviewer: None,
            after: Vec::new(),
            created_at: Timestamp::EPOCH,
            updated_at: Timestamp::EPOCH,
            lease_expires_at: None,
            touches: Vec::new(),
        }
    }

    pub fn of(task: &Task) -> Head {
        Head {
            id: task.id,
            status: task.status,
            priority: task.priority,
            from: Arc::from(task.from.as_str()),
            to: Arc::from(task.to.as_str()),
            reviewer: task.reviewer.as_deref().map(Arc::from),
            after: task.after.clone(),
            created_at: task.created_at,
            updated_at: task.updated_at,
            lease_expires_at: task.lease_expires_at,
            touches: task.touches.clone(),
        }
    }

    /// The agent who approves or requests changes: `reviewer`, else the sender.
    pub fn reviewer(&self) -> &str {
        self.reviewer.as_deref().unwrap_or(&self.from)
    }

    /// A working task whose lease ran out: its assignee has gone quiet.
    pub fn is_stalled(&self, now: Timestamp) -> bool {
        self.status == Status::Working && self.lease_expires_at.is_some_and(|until| until <= now)
    }
}

impl Task {
    /// Where its work is to be done ([`Worktree::where_to_work`]), while it is open and
    /// has a worktree that has not landed.
    pub fn where_to_work(&self) -> Option<String> {
        let tree = self.worktree.as_ref()?;
        (self.status.is_open() && self.landed.is_none()).then(|| tree.where_to_work())
    }

    /// The agent who approves or requests changes: `reviewer`, else the sender.
    pub fn reviewer(&self) -> &str {
        self.reviewer.as_deref().unwrap_or(&self.from)
    }

    /// Whether a review has any part in this task: it was sent with `--review` or a
    /// `--reviewer`, or its assignee asked for one. Only then is naming its reviewer news.
    pub fn involves_review(&self) -> bool {
        self.review
            || self.reviewer.is_some()
            || matches!(
                self.status,
                Status::ReviewRequested | Status::ChangesRequested
            )
            || self
                .thread
                .iter()
                .any(|entry| entry.kind == ActionKind::Review)
    }

    /// A working task whose lease ran out: its assignee has gone quiet.
    pub fn is_stalled(&self, now: Timestamp) -> bool {
        self.status == Status::Working && self.lease_expires_at.is_some_and(|until| until <= now)
    }

    /// The last question, answer or review note: what the one whose turn it is must read.
    pub fn last_word(&self) -> Option<&ThreadEntry> {
        self.thread
            .iter()
            .rev()
            .find(|entry| entry.kind.row().is_conversation && !entry.text.is_empty())
    }
}

#[cfg(test)]
impl Task {
    /// A task for unit tests: T-4, "fix the parser", from claude to codex, made at `at`.
    pub(crate) fn example(status: Status, at: Timestamp) -> Task {
        Task {
            id: TaskId(4),
            subject: "fix the parser".into(),
            body: String::new(),
            files: vec![],
            from: "claude".into(),
            to: "codex".into(),
            reviewer: None,
            status,
            priority: Priority::Normal,
            after: vec![],
            skill: None,
            review: false,
            created_at: at,
            updated_at: at,
            claimed_at: None,
            lease_expires_at: None,
            result: None,
            thread: vec![],
            delivery: None,
            imported: None,
            touches: vec![],
            worktree: None,
            landed: None,
            labels: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_task_with_a_worktree_says_where_to_work_until_it_lands() {
        let at = Timestamp::parse_stored("2026-01-01T00:00:00Z").unwrap();
        let mut task = Task::example(Status::Pending, at);
        assert_eq!(task.where_to_work(), None, "no worktree: the workspace");
        task.worktree = Some(Worktree {
            path: "/home/ann/.local/share/baton/worktrees/app/T-4".into(),
            branch: worktree_branch(task.id),
            base: "main".into(),
            base_commit: "0".repeat(40),
            host: Some("laptop".into()),
            reviewed: None,
        });
        let place = "work in /home/ann/.local/share/baton/worktrees/app/T-4 (branch baton/T-4)";
        for status in [
            Status::Pending,
            Status::Working,
            Status::ChangesRequested,
            Status::ReviewRequested,
        ] {
            task.status = status;
            assert_eq!(task.where_to_work().as_deref(), Some(place), "{status}");
        }
        task.landed = Some(Landed {
            commit: "1".repeat(40),
            at,
        });
        assert_eq!(task.where_to_work(), None, "landed");
        task.landed = None;
        task.status = Status::Canceled;
        assert_eq!(task.where_to_work(), None, "finished");
        // What a machine recorded is shown as text, on one line (SPEC section 10).
        task.status = Status::Working;
        if let Some(tree) = &mut task.worktree {
            tree.path = "/tmp/x\nfake: line\u{1b}[2J".into();
        }
        let shown = task.where_to_work().unwrap();
        assert!(!shown.contains(['\n', '\u{1b}']), "{shown}");
    }

    #[test]
    fn a_reviewer_is_involved_only_where_a_review_applies() {
        let at = Timestamp::parse_stored("2026-01-01T00:00:00Z").unwrap();
        let plain = Task::example(Status::Working, at);
        assert!(
            !plain.involves_review(),
            "a plain task involves no reviewer"
        );
        let required = Task {
            review: true,
            ..plain.clone()
        };
        let named = Task {
            reviewer: Some("qa".into()),
            ..plain.clone()
        };
        let asked = Task::example(Status::ReviewRequested, at);
        let mut sent_back = Task::example(Status::Working, at);
        sent_back.thread.push(ThreadEntry {
            at,
            by: "codex".into(),
            kind: ActionKind::Review,
            text: String::new(),
        });
        for task in [required, named, asked, sent_back] {
            assert!(task.involves_review(), "{task:?}");
        }
    }

    #[test]
    fn task_ids_parse_in_every_accepted_form() {
        assert_eq!("12".parse::<TaskId>().unwrap(), TaskId(12));
        assert_eq!("T-12".parse::<TaskId>().unwrap(), TaskId(12));
        assert_eq!("t-12".parse::<TaskId>().unwrap(), TaskId(12));
        for bad in ["", "0", "T-", "T12", "-3", "12a", "+4", "T--1"] {
            assert!(bad.parse::<TaskId>().is_err(), "{bad}");
        }
        assert_eq!(TaskId(7).to_string(), "T-7");
    }

    #[test]
    fn statuses_and_priorities_round_trip_their_names() {
        for status in Status::ALL {
            assert_eq!(status.as_str().parse::<Status>().unwrap(), status);
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{status}\""));
        }
        assert_eq!(
            "review-requested".parse::<Status>().unwrap(),
            Status::ReviewRequested
        );
        assert!(Priority::Urgent < Priority::Low);
        assert!("soon".parse::<Priority>().is_err());
    }
}
