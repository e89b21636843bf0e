//! The table of task actions (SPEC section 3): for each action on an existing task, its
//! names, who may take it, the statuses it starts from and leads to, and the words it
//! takes. Every face spells an action from here: the activity log and the MCP tools by
//! [`Row::name`], the CLI's subcommands and the HTTP paths by [`Row::command`], the terminal
//! board's prompts by [`Row::words`].

use serde::{Serialize, Serializer};

use super::task::{EntryKind, Status};

/// An action on an existing task, without its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActionKind {
    Claim,
    Release,
    Ask,
    Answer,
    Review,
    Approve,
    RequestChanges,
    Done,
    Fail,
    Cancel,
    Reassign,
}

/// Who may take an action (SPEC section 3, column "who").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The task's `to`.
    Assignee,
    /// The task's `from`.
    Sender,
    /// The task's reviewer, else its sender.
    Reviewer,
    /// The sender, or the project's coordinator.
    SenderOrCoordinator,
}

/// Whether an action takes words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// None: a claim or a release.
    None,
    /// Words that may be left out.
    Optional,
    /// Words without which the action is refused.
    Required,
}

/// One row of the table.
#[derive(Debug)]
pub struct Row {
    pub kind: ActionKind,
    /// As the activity log, the state machine's offers and the MCP tools spell it:
    /// `request_changes`.
    pub name: &'static str,
    /// As the CLI's subcommand and the HTTP path spell it: `request-changes`.
    pub command: &'static str,
    pub role: Role,
    pub from: &'static [Status],
    pub to: Status,
    pub words: Words,
    /// What a refusal about the words calls them: `the question is 300 KiB`.
    pub word: &'static str,
    /// The argument that carries the words: `--body` on the command line, `body` in an MCP
    /// tool call. Empty for an action without words.
    pub argument: &'static str,
    /// Whether it names a new assignee (`--to`, `to`).
    pub takes_to: bool,
    /// How a refusal names the action: "only codex can {phrase}".
    pub phrase: &'static str,
    /// The kind of the thread entry it writes.
    pub entry: EntryKind,
}

use Status::*;

/// Every open status: what `fail` and `cancel` start from.
const ANY_OPEN: &[Status] = &[
    Pending,
    Working,
    InputRequired,
    ReviewRequested,
    ChangesRequested,
];

/// The statuses an assignee works in.
const AT_WORK: &[Status] = &[Pending, Working, ChangesRequested];

/// The table, in the order of SPEC section 3 (and of [`ActionKind`]).
pub const ACTIONS: &[Row] = &[
    Row {
        kind: ActionKind::Claim,
        name: "claim",
        command: "claim",
        role: Role::Assignee,
        from: &[Pending, ChangesRequested],
        to: Working,
        words: Words::None,
        word: "text",
        argument: "",
        takes_to: false,
        phrase: "claim it",
        entry: EntryKind::Claim,
    },
    Row {
        kind: ActionKind::Release,
        name: "release",
        command: "release",
        role: Role::Assignee,
        from: &[Working],
        to: Pending,
        words: Words::None,
        word: "text",
        argument: "",
        takes_to: false,
        phrase: "release it",
        entry: EntryKind::Release,
    },
    Row {
        kind: ActionKind::Ask,
        name: "ask",
        command: "ask",
        role: Role::Assignee,
        from: AT_WORK,
        to: InputRequired,
        words: Words::Required,
        word: "question",
        argument: "body",
        takes_to: false,
        phrase: "ask on it",
        entry: EntryKind::Question,
    },
    Row {
        kind: ActionKind::Answer,
        name: "answer",
        command: "answer",
        role: Role::Sender,
        from: &[InputRequired],
        to: Pending,
        words: Words::Required,
        word: "answer",
        argument: "body",
        takes_to: false,
        phrase: "answer on it",
        entry: EntryKind::Answer,
    },
    Row {
        kind: ActionKind::Review,
        name: "review",
        command: "review",
        role: Role::Assignee,
        from: AT_WORK,
        to: ReviewRequested,
        words: Words::Optional,
        word: "note",
        argument: "body",
        takes_to: false,
        phrase: "ask for a review of it",
        entry: EntryKind::ReviewRequest,
    },
    Row {
        kind: ActionKind::Approve,
        name: "approve",
        command: "approve",
        role: Role::Reviewer,
        from: &[ReviewRequested],
        to: Completed,
        words: Words::Optional,
        word: "note",
        argument: "body",
        takes_to: false,
        phrase: "approve it",
        entry: EntryKind::Approval,
    },
    Row {
        kind: ActionKind::RequestChanges,
        name: "request_changes",
        command: "request-changes",
        role: Role::Reviewer,
        from: &[ReviewRequested],
        to: ChangesRequested,
        words: Words::Required,
        word: "request",
        argument: "body",
        takes_to: false,
        phrase: "request changes on it",
        entry: EntryKind::ChangesRequest,
    },
    Row {
        kind: ActionKind::Done,
        name: "done",
        command: "done",
        role: Role::Assignee,
        from: AT_WORK,
        to: Completed,
        words: Words::Required,
        word: "result",
        argument: "result",
        takes_to: false,
        phrase: "mark it done",
        entry: EntryKind::Result,
    },
    Row {
        kind: ActionKind::Fail,
        name: "fail",
        command: "fail",
        role: Role::Assignee,
        from: ANY_OPEN,
        to: Failed,
        words: Words::Required,
        word: "reason",
        argument: "reason",
        takes_to: false,
        phrase: "fail it",
        entry: EntryKind::Failure,
    },
    Row {
        kind: ActionKind::Cancel,
        name: "cancel",
        command: "cancel",
        role: Role::SenderOrCoordinator,
        from: ANY_OPEN,
        to: Canceled,
        words: Words::Optional,
        word: "reason",
        argument: "reason",
        takes_to: false,
        phrase: "cancel it",
        entry: EntryKind::Cancellation,
    },
    Row {
        kind: ActionKind::Reassign,
        name: "reassign",
        command: "reassign",
        role: Role::SenderOrCoordinator,
        from: &[Pending, Working, InputRequired, ChangesRequested],
        to: Pending,
        words: Words::Optional,
        word: "note",
        argument: "body",
        takes_to: true,
        phrase: "reassign it",
        entry: EntryKind::Reassignment,
    },
];

impl ActionKind {
    /// Every action, in the order of the table.
    pub const ALL: [ActionKind; 11] = [
        ActionKind::Claim,
        ActionKind::Release,
        ActionKind::Ask,
        ActionKind::Answer,
        ActionKind::Review,
        ActionKind::Approve,
        ActionKind::RequestChanges,
        ActionKind::Done,
        ActionKind::Fail,
        ActionKind::Cancel,
        ActionKind::Reassign,
    ];

    /// The action's row of the table.
    pub fn row(self) -> &'static Row {
        // The table lists the kinds in their order (a test checks it), so the kind's
        // place is its row's.
        &ACTIONS[self as usize]
    }

    /// As the activity log and the MCP tools spell it: `request_changes`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// As the CLI and the HTTP paths spell it: `request-changes`.
    pub fn command(self) -> &'static str {
        self.row().command
    }

    /// The action named `name` as the log spells it.
    pub fn from_name(name: &str) -> Option<ActionKind> {
        ACTIONS
            .iter()
            .find(|row| row.name == name)
            .map(|row| row.kind)
    }

    /// The action named `command` as the CLI and the HTTP paths spell it.
    pub fn from_command(command: &str) -> Option<ActionKind> {
        ACTIONS
            .iter()
            .find(|row| row.command == command)
            .map(|row| row.kind)
    }

    /// Every action as the CLI and the HTTP paths spell it, for a refusal that lists them.
    pub fn commands() -> impl Iterator<Item = &'static str> {
        ACTIONS.iter().map(|row| row.command)
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// An action and its [`ActionKind::name`] are the same thing.
impl PartialEq<&str> for ActionKind {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

/// By its [`ActionKind::name`], as the web board reads the actions offered.
impl Serialize for ActionKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_action_once_in_the_order_of_its_kinds() {
        assert_eq!(ACTIONS.len(), ActionKind::ALL.len());
        for (row, kind) in ACTIONS.iter().zip(ActionKind::ALL) {
            assert_eq!(row.kind, kind);
            assert_eq!(kind.row().kind, kind);
            assert_eq!(ActionKind::from_name(row.name), Some(kind));
            assert_eq!(ActionKind::from_command(row.command), Some(kind));
            // One spelling with `_`, the other with `-`.
            assert_eq!(row.command, row.name.replace('_', "-"));
            assert_eq!(row.argument.is_empty(), row.words == Words::None);
        }
    }
}
