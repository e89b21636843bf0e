//! The record of a change: one line of a project's activity log, as the model tells it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::action::ActionKind;
use super::task::{Status, TaskId};
use crate::time::Timestamp;

/// One line of the activity log: who did what to which task, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityRecord {
    pub at: Timestamp,
    pub project: String,
    pub actor: String,
    pub action: LogAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What an activity record says was done: an action of the table, or one of the other
/// things the log records. Spelled in `activity.jsonl` by its name (SPEC section 2), as a
/// string was before; a name this baton does not know (a newer baton's) is kept as read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LogAction {
    /// An action of the table on an existing task.
    Act(ActionKind),
    /// A new task.
    Send,
    /// A line from an agent about no task.
    Note,
    /// Finished tasks moved off the board.
    Archive,
    /// A task carried over from another board (`baton import`).
    Import,
    /// An older board brought back (`doctor --restore`).
    Restore,
    /// Patterns reserved by hand (SPEC section 18.2).
    Reserve,
    /// Reservations ended by hand.
    Unreserve,
    /// A task given its worktree before its claim, for the wake run of its assignee (SPEC
    /// section 18.4).
    Worktree,
    /// A name this baton does not know.
    Other(String),
}

impl LogAction {
    /// As `activity.jsonl` spells it: `request_changes`, `send`.
    pub fn as_str(&self) -> &str {
        match self {
            LogAction::Act(kind) => kind.name(),
            LogAction::Send => "send",
            LogAction::Note => "note",
            LogAction::Archive => "archive",
            LogAction::Import => "import",
            LogAction::Restore => "restore",
            LogAction::Reserve => "reserve",
            LogAction::Unreserve => "unreserve",
            LogAction::Worktree => "worktree",
            LogAction::Other(name) => name,
        }
    }
}

/// By its name as the log spells it.
impl From<&str> for LogAction {
    fn from(name: &str) -> LogAction {
        if let Some(kind) = ActionKind::from_name(name) {
            return LogAction::Act(kind);
        }
        match name {
            "send" => LogAction::Send,
            "note" => LogAction::Note,
            "archive" => LogAction::Archive,
            "import" => LogAction::Import,
            "restore" => LogAction::Restore,
            "reserve" => LogAction::Reserve,
            "unreserve" => LogAction::Unreserve,
            "worktree" => LogAction::Worktree,
            other => LogAction::Other(other.to_string()),
        }
    }
}

impl From<ActionKind> for LogAction {
    fn from(kind: ActionKind) -> LogAction {
        LogAction::Act(kind)
    }
}

impl std::fmt::Display for LogAction {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A record's action and its name are the same thing.
impl PartialEq<&str> for LogAction {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

impl Serialize for LogAction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for LogAction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(LogAction::from(&*name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_is_written_as_its_name_and_read_back_as_itself() {
        let mut names: Vec<&str> = ActionKind::all().map(ActionKind::name).collect();
        names.extend([
            "send", "note", "archive", "import", "restore", "worktree", "land",
        ]);
        for name in names {
            let action = LogAction::from(name);
            assert_eq!(action.as_str(), name);
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<LogAction>(&json).unwrap(), action);
        }
        assert_eq!(
            LogAction::from("approve"),
            LogAction::Act(ActionKind::Approve)
        );
        assert_eq!(LogAction::from("edit"), LogAction::Act(ActionKind::Edit));
        assert_eq!(LogAction::from("worktree"), LogAction::Worktree);
        // A name this binary does not know (a newer baton's) is kept as written.
        assert_eq!(
            LogAction::from("land"),
            LogAction::Other("land".to_string())
        );
    }
}
