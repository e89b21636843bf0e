//! The keys that act on the selected task: the rows of the model's table of actions, each
//! taken by its row's key; what each asks for before it acts, and the action it takes with
//! the words typed.

use ratatui::crossterm::event::KeyCode;

use baton::board::action::{ACTIONS, ActionKind, Row, Words as TableWords};
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

/// A key that acts on the selected task: a row of the table, by its [`Row::key`].
pub type TaskKey = Row;

/// The keys that act on the selected task, in the order of SPEC section 3's table (the
/// order [`baton::board::transition::offered`] gives): the assignee's, then the sender's
/// and reviewer's.
pub const TASK_KEYS: &[TaskKey] = ACTIONS;

/// What the key of `row` asks for before it acts: the words of its row, or for an action
/// that names a new assignee that assignee (its note is left empty).
pub fn words(row: &TaskKey) -> Words {
    match row.words {
        _ if row.takes_to() => Words::Agent,
        TableWords::None => Words::None,
        TableWords::Optional => Words::Optional,
        TableWords::Required => Words::Required,
    }
}

/// The task key a key press is, if any.
pub(super) fn task_key(code: KeyCode) -> Option<&'static TaskKey> {
    let KeyCode::Char(pressed) = code else {
        return None;
    };
    TASK_KEYS.iter().find(|row| row.key.keys.contains(&pressed))
}

/// The action a task key takes with the words typed: for an action that names a new
/// assignee they name them.
pub(super) fn action_of(kind: ActionKind, words: String) -> Option<Action> {
    match kind.row().takes_to() {
        true => Action::of(kind, String::new(), Some(words.trim().to_string())),
        false => Action::of(kind, words, None),
    }
}
