//! The keys that act on the selected task, taken from the model's table of actions: what
//! each asks for before it acts, and the action it takes with the words typed.

use ratatui::crossterm::event::KeyCode;

use baton::board::action::{ActionKind, Words as TableWords};
use baton::board::transition::Action;

/// What a key that acts on the selected task asks for before it acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// Nothing: the key acts at once.
    None,
    /// A line that may be empty.
    Optional,
    /// A line that must hold some words.
    Required,
    /// An agent's name.
    Agent,
}

/// A key that acts on the selected task.
#[derive(Debug, Clone, Copy)]
pub struct TaskKey {
    /// The keys, as the help and the footer name them.
    pub label: &'static str,
    pub action: ActionKind,
    /// What the footer and the help call it.
    pub what: &'static str,
}

impl TaskKey {
    /// What the key asks for before it acts: the words of its action's row of the table,
    /// or for a reassignment the new assignee (its note is left empty).
    pub fn words(&self) -> Words {
        let row = self.action.row();
        match row.words {
            _ if row.takes_to() => Words::Agent,
            TableWords::None => Words::None,
            TableWords::Optional => Words::Optional,
            TableWords::Required => Words::Required,
        }
    }
}

/// The keys that act on the selected task, in the order of SPEC section 3's table (the
/// order [`baton::board::transition::offered`] gives): the assignee's, then the sender's and reviewer's.
pub const TASK_KEYS: &[TaskKey] = &[
    TaskKey {
        label: "c",
        action: ActionKind::Claim,
        what: "claim",
    },
    TaskKey {
        label: "u",
        action: ActionKind::Release,
        what: "release",
    },
    TaskKey {
        label: "i",
        action: ActionKind::Ask,
        what: "ask a question",
    },
    TaskKey {
        label: "a",
        action: ActionKind::Answer,
        what: "answer",
    },
    TaskKey {
        label: "v",
        action: ActionKind::Review,
        what: "request review",
    },
    TaskKey {
        label: "y/A",
        action: ActionKind::Approve,
        what: "approve",
    },
    TaskKey {
        label: "r",
        action: ActionKind::RequestChanges,
        what: "request changes",
    },
    TaskKey {
        label: "d",
        action: ActionKind::Done,
        what: "done",
    },
    TaskKey {
        label: "F",
        action: ActionKind::Fail,
        what: "fail",
    },
    TaskKey {
        label: "x",
        action: ActionKind::Cancel,
        what: "cancel",
    },
    TaskKey {
        label: "R",
        action: ActionKind::Reassign,
        what: "reassign",
    },
];

/// The task key a key press is, if any.
pub(super) fn task_key(code: KeyCode) -> Option<&'static TaskKey> {
    let action = match code {
        KeyCode::Char('c') => ActionKind::Claim,
        KeyCode::Char('u') => ActionKind::Release,
        KeyCode::Char('i') => ActionKind::Ask,
        KeyCode::Char('a') => ActionKind::Answer,
        KeyCode::Char('v') => ActionKind::Review,
        KeyCode::Char('y' | 'A') => ActionKind::Approve,
        KeyCode::Char('r') => ActionKind::RequestChanges,
        KeyCode::Char('d') => ActionKind::Done,
        KeyCode::Char('F') => ActionKind::Fail,
        KeyCode::Char('x') => ActionKind::Cancel,
        KeyCode::Char('R') => ActionKind::Reassign,
        _ => return None,
    };
    TASK_KEYS.iter().find(|key| key.action == action)
}

/// The action a task key takes with the words typed: for a reassignment they name the new
/// assignee.
pub(super) fn action_of(kind: ActionKind, words: String) -> Option<Action> {
    match kind.row().takes_to() {
        true => Action::of(kind, String::new(), Some(words.trim().to_string())),
        false => Action::of(kind, words, None),
    }
}
