//! The keys that act on the selected task: the rows of the model's table of actions, each
//! taken by its row's key; what each asks for before it acts, and the action it takes with
//! the words typed.

use ratatui::crossterm::event::KeyCode;

use baton::board::action::{ACTIONS, ActionKind, Row, Words as TableWords};
use baton::board::edit::Edits;
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
    /// A field and its new value, `subject=Fix the lexer`: an edit's.
    Fields,
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
        _ if !row.fields.is_empty() => Words::Fields,
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
/// assignee they name them, and for one that changes fields they are `field=value`.
pub(super) fn action_of(kind: ActionKind, words: String) -> Option<Action> {
    if !kind.row().fields.is_empty() {
        return edits(&words).ok().map(Action::edit);
    }
    match kind.row().takes_to() {
        true => Action::of(kind, String::new(), Some(words.trim().to_string())),
        false => Action::of(kind, words, None),
    }
}

/// The edit typed as `field=value` (a list comma-separated, as on the command line), or
/// why it is not one.
pub(super) fn edits(words: &str) -> Result<Edits, String> {
    let Some((name, value)) = words.split_once('=') else {
        return Err("type a field and its value: subject=Fix the lexer".to_string());
    };
    let mut edits = Edits::default();
    edits.set(name.trim(), value.trim())?;
    Ok(edits)
}
