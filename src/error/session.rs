//! What the session refuses that belongs to no one domain: a task that left the board, a
//! note with no words, a hook from a directory that is not there.

use std::path::PathBuf;

use crate::board::task::{Status, TaskId};
use crate::text::Face;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// An action on a task that finished and was archived.
    #[error("{task} is {status} and archived; nothing moves it again")]
    Archived { task: TaskId, status: Status },
    /// `note` with nothing to say.
    #[error("{}", self.words(Face::Cli))]
    NoNoteWords,
    /// A hook whose client runs in `dir`, which is not a directory (`exists`: something
    /// else is there).
    #[error(
        "the client's working directory {} {}",
        dir.display(),
        if *exists { "is not a directory" } else { "does not exist" }
    )]
    ClientDirectory { dir: PathBuf, exists: bool },
}

impl SessionError {
    /// The refusal as `face` tells it, naming its arguments as `face` spells them.
    pub fn words(&self, face: Face) -> String {
        match (self, face) {
            (SessionError::NoNoteWords, Face::Cli) => "note needs some words".to_string(),
            (SessionError::NoNoteWords, Face::Tool) => {
                format!("note needs some words in {}", face.argument("text"))
            }
            (other, _) => other.to_string(),
        }
    }
}
