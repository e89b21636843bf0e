//! The table of task actions (SPEC section 3), from which every face is made: for each
//! action on an existing task, its names, who may take it, the statuses it starts from and
//! leads to, the words it takes, and how each face shows it — the CLI's subcommand and its
//! help, the MCP tool and its description, the terminal board's key and prompt, the web
//! board's button. The faces walk [`ACTIONS`] (ripgrep's `flags/defs.rs`: one list, from
//! which parser and help come); what an action *does* beyond its row is one rule in
//! [`super::transition::transition`]. Adding an action is one row here and, if it does more
//! than move the status, one rule there.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::edit::{FIELDS, Field};
use super::task::Status;

/// An action on an existing task, without its words. Also what a thread entry records: each
/// action writes one entry, spelled [`Row::entry`] in the board file.
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
    Edit,
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

/// An argument of an action beyond the task: its words, or the new assignee.
#[derive(Debug)]
pub struct Argument {
    /// `--body` on the command line, `body` in an MCP tool call and in the HTTP body's
    /// place for it.
    pub name: &'static str,
    /// The command line's short flag: `-b`.
    pub short: Option<char>,
    /// What the command line's help shows for its value: `BODY`, `NAME`.
    pub value_name: &'static str,
    /// The command line's help for it.
    pub help: &'static str,
    /// The MCP tool's description of it, where the tool says more than its name.
    pub tool_help: Option<&'static str>,
}

/// How the terminal board takes an action.
#[derive(Debug)]
pub struct Key {
    /// The keys that take it.
    pub keys: &'static [char],
    /// The keys as the footer and the help name them: `y/A`.
    pub label: &'static str,
    /// What the footer and the help call the action.
    pub what: &'static str,
    /// The words before the line typed for it, `{id}` standing for the task: none is shown
    /// for an action without words.
    pub prompt: &'static str,
}

/// How the web board offers an action.
#[derive(Debug)]
pub struct Button {
    pub label: &'static str,
    /// What the words in the box are for it: none for an action without words, and for a
    /// reassignment, whose new assignee is picked beside its button.
    pub words: Option<&'static str>,
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
    /// The kind of the thread entry it writes, as the board file spells it:
    /// `changes_request`.
    pub entry: &'static str,
    /// Whether its entry carries words someone must read before acting: the inbox shows
    /// the last such entry.
    pub is_conversation: bool,
    pub role: Role,
    pub from: &'static [Status],
    /// The status it leads to; none where the status stays as it is (an edit).
    pub to: Option<Status>,
    pub words: Words,
    /// What a refusal about the words calls them: `the question is 300 KiB`.
    pub word: &'static str,
    /// The argument that carries the words; none for an action without words.
    pub argument: Option<Argument>,
    /// The argument that names a new assignee (`--to`, `to`), for a reassignment.
    pub assignee: Option<Argument>,
    /// The fields it changes, each an argument that may be left out: an edit's.
    pub fields: &'static [Field],
    /// How a refusal names the action: "only codex can {phrase}".
    pub phrase: &'static str,
    /// The CLI subcommand's one-line help.
    pub help: &'static str,
    /// A command line that takes it, shown under the subcommand's help.
    pub example: &'static str,
    /// The MCP tool's description (under 80 characters: every agent pays for it).
    pub tool: &'static str,
    pub key: Key,
    pub button: Button,
    /// Whether a human is asked "for good?" before it is taken: nothing moves the task back.
    pub confirms: bool,
    /// Whether it hands work to someone, and so may wake them (the CLI's `--no-wake`).
    pub hands_over: bool,
}

impl Row {
    /// The name of the argument that carries the words; empty for an action without words.
    pub fn argument_name(&self) -> &'static str {
        self.argument.as_ref().map_or("", |argument| argument.name)
    }

    /// Whether it names a new assignee.
    pub fn takes_to(&self) -> bool {
        self.assignee.is_some()
    }

    /// The terminal board's prompt for the action on task `id`.
    pub fn prompt(&self, id: impl std::fmt::Display) -> String {
        match self.key.prompt {
            "" => format!("{} {id}:", self.name),
            prompt => prompt.replace("{id}", &id.to_string()),
        }
    }
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

/// `--body`, required or not, with the help the command line gives it.
const fn body(help: &'static str, tool_help: Option<&'static str>) -> Option<Argument> {
    Some(Argument {
        name: "body",
        short: Some('b'),
        value_name: "BODY",
        help,
        tool_help,
    })
}

const REQUIRED_BODY: &str = "The words (required; `-` reads them from stdin)";
const OPTIONAL_NOTE: &str = "An optional note (`-` reads it from stdin)";

/// The table, in the order of SPEC section 3 (and of [`ActionKind`]).
pub const ACTIONS: &[Row] = &[
    Row {
        kind: ActionKind::Claim,
        name: "claim",
        command: "claim",
        entry: "claim",
        is_conversation: false,
        role: Role::Assignee,
        from: &[Pending, ChangesRequested],
        to: Some(Working),
        words: Words::None,
        word: "text",
        argument: None,
        assignee: None,
        fields: &[],
        phrase: "claim it",
        help: "Start work on a task assigned to you (pending or changes_requested → working)",
        example: "baton claim 12",
        tool: "Start work on a task assigned to you.",
        key: Key {
            keys: &['c'],
            label: "c",
            what: "claim",
            prompt: "",
        },
        button: Button {
            label: "Claim",
            words: None,
        },
        confirms: false,
        hands_over: false,
    },
    Row {
        kind: ActionKind::Release,
        name: "release",
        command: "release",
        entry: "release",
        is_conversation: false,
        role: Role::Assignee,
        from: &[Working],
        to: Some(Pending),
        words: Words::None,
        word: "text",
        argument: None,
        assignee: None,
        fields: &[],
        phrase: "release it",
        help: "Give a claimed task back (working → pending)",
        example: "baton release 12",
        tool: "Give back a task you claimed.",
        key: Key {
            keys: &['u'],
            label: "u",
            what: "release",
            prompt: "",
        },
        button: Button {
            label: "Release",
            words: None,
        },
        confirms: false,
        hands_over: false,
    },
    Row {
        kind: ActionKind::Ask,
        name: "ask",
        command: "ask",
        entry: "question",
        is_conversation: true,
        role: Role::Assignee,
        from: AT_WORK,
        to: Some(InputRequired),
        words: Words::Required,
        word: "question",
        argument: body(REQUIRED_BODY, None),
        assignee: None,
        fields: &[],
        phrase: "ask on it",
        help: "Ask the sender a question (→ input_required, in the sender's inbox)",
        example: "baton ask 12 --body 'which branch should this go on?'",
        tool: "Ask the sender a question about your task.",
        key: Key {
            keys: &['i'],
            label: "i",
            what: "ask a question",
            prompt: "ask on {id}, question:",
        },
        button: Button {
            label: "Ask",
            words: Some("your question"),
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Answer,
        name: "answer",
        command: "answer",
        entry: "answer",
        is_conversation: true,
        role: Role::Sender,
        from: &[InputRequired],
        to: Some(Pending),
        words: Words::Required,
        word: "answer",
        argument: body(REQUIRED_BODY, None),
        assignee: None,
        fields: &[],
        phrase: "answer on it",
        help: "Answer the question on a task you sent (input_required → pending)",
        example: "baton answer 12 --body 'main, behind a flag'",
        tool: "Answer the question on a task you sent.",
        key: Key {
            keys: &['a'],
            label: "a",
            what: "answer",
            prompt: "answer {id}:",
        },
        button: Button {
            label: "Answer",
            words: Some("your answer"),
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Review,
        name: "review",
        command: "review",
        entry: "review_request",
        is_conversation: true,
        role: Role::Assignee,
        from: AT_WORK,
        to: Some(ReviewRequested),
        words: Words::Optional,
        word: "note",
        argument: body(OPTIONAL_NOTE, None),
        assignee: None,
        fields: &[],
        phrase: "ask for a review of it",
        help: "Ask for a review of your work (→ review_requested, in the reviewer's inbox)",
        example: "baton review 12 --body 'ready: the parser change is in src/parse.rs'",
        tool: "Ask for a review of your work on a task.",
        key: Key {
            keys: &['v'],
            label: "v",
            what: "request review",
            prompt: "request review of {id}, note (may be empty):",
        },
        button: Button {
            label: "Request review",
            words: Some("a note for the reviewer"),
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Approve,
        name: "approve",
        command: "approve",
        entry: "approval",
        is_conversation: true,
        role: Role::Reviewer,
        from: &[ReviewRequested],
        to: Some(Completed),
        words: Words::Optional,
        word: "note",
        argument: body(OPTIONAL_NOTE, None),
        assignee: None,
        fields: &[],
        phrase: "approve it",
        help: "Approve work you were asked to review (review_requested → completed)",
        example: "baton approve 12 --body 'good, merge it'",
        tool: "Approve work you review: the task completes.",
        key: Key {
            keys: &['y', 'A'],
            label: "y/A",
            what: "approve",
            prompt: "approve {id}, note (may be empty):",
        },
        button: Button {
            label: "Approve",
            words: Some("a note"),
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::RequestChanges,
        name: "request_changes",
        command: "request-changes",
        entry: "changes_request",
        is_conversation: true,
        role: Role::Reviewer,
        from: &[ReviewRequested],
        to: Some(ChangesRequested),
        words: Words::Required,
        word: "request",
        argument: body(REQUIRED_BODY, None),
        assignee: None,
        fields: &[],
        phrase: "request changes on it",
        help: "Send reviewed work back for rework (review_requested → changes_requested)",
        example: "baton request-changes 12 --body 'add a test for empty input'",
        tool: "Send work you review back, saying what to change.",
        key: Key {
            keys: &['r'],
            label: "r",
            what: "request changes",
            prompt: "request changes on {id}, what:",
        },
        button: Button {
            label: "Request changes",
            words: Some("what to change"),
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Done,
        name: "done",
        command: "done",
        entry: "result",
        is_conversation: false,
        role: Role::Assignee,
        from: AT_WORK,
        to: Some(Completed),
        words: Words::Required,
        word: "result",
        argument: Some(Argument {
            name: "result",
            short: Some('r'),
            value_name: "RESULT",
            help: "What was done (required)",
            tool_help: Some("What was done"),
        }),
        assignee: None,
        fields: &[],
        phrase: "mark it done",
        help: "Complete a task assigned to you (→ completed; not for tasks sent with --review)",
        example: "baton done 12 --result 'fixed in 3f2c1a0, tests added'",
        tool: "Complete your task (not one sent for review).",
        key: Key {
            keys: &['d'],
            label: "d",
            what: "done",
            prompt: "done {id}, result:",
        },
        button: Button {
            label: "Done",
            words: Some("the result"),
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Fail,
        name: "fail",
        command: "fail",
        entry: "failure",
        is_conversation: false,
        role: Role::Assignee,
        from: ANY_OPEN,
        to: Some(Failed),
        words: Words::Required,
        word: "reason",
        argument: Some(Argument {
            name: "reason",
            short: None,
            value_name: "REASON",
            help: "Why it cannot be done (required)",
            tool_help: None,
        }),
        assignee: None,
        fields: &[],
        phrase: "fail it",
        help: "Give up on a task assigned to you (→ failed)",
        example: "baton fail 12 --reason 'needs access to the staging database'",
        tool: "Give up on your task, saying why.",
        key: Key {
            keys: &['F'],
            label: "F",
            what: "fail",
            prompt: "fail {id}, reason:",
        },
        button: Button {
            label: "Fail",
            words: Some("why it failed"),
        },
        confirms: true,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Cancel,
        name: "cancel",
        command: "cancel",
        entry: "cancellation",
        is_conversation: false,
        role: Role::SenderOrCoordinator,
        from: ANY_OPEN,
        to: Some(Canceled),
        words: Words::Optional,
        word: "reason",
        argument: Some(Argument {
            name: "reason",
            short: None,
            value_name: "REASON",
            help: "Why it is withdrawn",
            tool_help: None,
        }),
        assignee: None,
        fields: &[],
        phrase: "cancel it",
        help: "Withdraw a task you sent, or any task as coordinator (→ canceled)",
        example: "baton cancel 12 --reason 'not needed since T-9'",
        tool: "Withdraw a task you sent (or any, as coordinator).",
        key: Key {
            keys: &['x'],
            label: "x",
            what: "cancel",
            prompt: "cancel {id}, reason (may be empty):",
        },
        button: Button {
            label: "Cancel task",
            words: Some("why"),
        },
        confirms: true,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Reassign,
        name: "reassign",
        command: "reassign",
        entry: "reassignment",
        is_conversation: true,
        role: Role::SenderOrCoordinator,
        from: &[Pending, Working, InputRequired, ChangesRequested],
        to: Some(Pending),
        words: Words::Optional,
        word: "note",
        argument: body(
            "Why, for the new assignee",
            Some("Why, for the new assignee"),
        ),
        assignee: Some(Argument {
            name: "to",
            short: None,
            value_name: "NAME",
            help: "The agent who takes it over",
            tool_help: Some("Agent who takes it over"),
        }),
        fields: &[],
        phrase: "reassign it",
        help: "Hand a task to another agent (→ pending, in their inbox)",
        example: "baton reassign 12 --to gemini --body 'codex is busy with T-9'",
        tool: "Hand a task you sent (or any, as coordinator) to another agent.",
        key: Key {
            keys: &['R'],
            label: "R",
            what: "reassign",
            prompt: "reassign {id} to agent:",
        },
        button: Button {
            label: "Reassign",
            words: None,
        },
        confirms: false,
        hands_over: true,
    },
    Row {
        kind: ActionKind::Edit,
        name: "edit",
        command: "edit",
        entry: "edit",
        is_conversation: false,
        role: Role::SenderOrCoordinator,
        from: &[Pending, InputRequired, ChangesRequested],
        to: None,
        words: Words::None,
        word: "text",
        argument: None,
        assignee: None,
        fields: FIELDS,
        phrase: "edit it",
        help: "Change a task you sent while nobody works on it (its status stays)",
        example: "baton edit 12 --subject 'Fix the lexer' --touches 'src/lex/**'",
        tool: "Change a task you sent (or any, as coordinator) while not worked on.",
        key: Key {
            keys: &['e'],
            label: "e",
            what: "edit",
            prompt: "edit {id}, field=value (subject=…, touches=a,b, priority=high, …):",
        },
        button: Button {
            label: "Edit",
            words: None,
        },
        confirms: false,
        hands_over: true,
    },
];

impl ActionKind {
    /// Every action, in the order of the table.
    pub fn all() -> impl Iterator<Item = ActionKind> {
        ACTIONS.iter().map(|row| row.kind)
    }

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

    /// The kind of its thread entry as the board file spells it: `changes_request`.
    pub fn entry(self) -> &'static str {
        self.row().entry
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

    /// The action whose thread entry the board file spells `entry`.
    pub fn from_entry(entry: &str) -> Option<ActionKind> {
        ACTIONS
            .iter()
            .find(|row| row.entry == entry)
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

impl<'de> Deserialize<'de> for ActionKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(deserializer)?;
        ActionKind::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no action `{name}`")))
    }
}

/// A thread entry's kind as the board file spells it ([`Row::entry`]): `question` for an
/// `ask`. Used with `#[serde(with = "entry_spelling")]`.
pub mod entry_spelling {
    use super::*;

    pub fn serialize<S: Serializer>(kind: &ActionKind, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(kind.entry())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ActionKind, D::Error> {
        let entry = std::borrow::Cow::<str>::deserialize(deserializer)?;
        ActionKind::from_entry(&entry)
            .ok_or_else(|| serde::de::Error::unknown_variant(&entry, &ENTRIES))
    }

    /// Every entry's spelling, for serde's refusal of another.
    const ENTRIES: [&str; ACTIONS.len()] = {
        let mut entries = [""; ACTIONS.len()];
        let mut place = 0;
        while place < ACTIONS.len() {
            entries[place] = ACTIONS[place].entry;
            place += 1;
        }
        entries
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_action_once_in_the_order_of_its_kinds() {
        for (place, row) in ACTIONS.iter().enumerate() {
            let kind = row.kind;
            assert_eq!(kind as usize, place);
            assert_eq!(kind.row().kind, kind);
            assert_eq!(ActionKind::from_name(row.name), Some(kind));
            assert_eq!(ActionKind::from_command(row.command), Some(kind));
            assert_eq!(ActionKind::from_entry(row.entry), Some(kind));
            // One spelling with `_`, the other with `-`.
            assert_eq!(row.command, row.name.replace('_', "-"));
            assert_eq!(row.argument.is_none(), row.words == Words::None);
            assert_eq!(
                row.key.prompt.is_empty(),
                row.words == Words::None && row.fields.is_empty()
            );
            assert!(row.tool.len() <= 80, "{}", row.name);
            assert!(
                row.example.starts_with(&format!("baton {} ", row.command)),
                "{}",
                row.name
            );
        }
        assert_eq!(ActionKind::all().count(), ACTIONS.len());
        let keys: Vec<char> = ACTIONS
            .iter()
            .flat_map(|row| row.key.keys)
            .copied()
            .collect();
        let mut distinct = keys.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), keys.len(), "one action a key");
    }
}
