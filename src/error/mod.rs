//! The library's error: one enum over the domains, each variant carrying what the user needs
//! to act on it. Each maps to its exit code in one place ([`Error::exit_code`]), which
//! the CLI exits with and the HTTP face reports. Each domain's refusals are an enum of its
//! own, in a file of its own here, whose variants carry data and choose their own words and
//! hints; the crate's error takes each in.

mod alert;
mod message;
mod project;
mod registry;
mod remote;
mod session;
mod setup;
mod tokens;
mod wake;
pub mod worktree;

#[cfg(test)]
mod tests;

pub use alert::{AlertError, AlertUrl};
pub use message::MessageRefusal;
pub use project::{ProjectError, WideDirectory};
pub use registry::RegistryError;
pub use remote::RemoteError;
pub use session::SessionError;
pub use setup::SetupError;
pub use tokens::TokenError;
pub use wake::WakeError;

use std::path::PathBuf;

use crate::board::BoardError;
use crate::board::new_task::SendRefusal;
use crate::board::reservation::ReserveError;
use crate::board::scope::ScopeError;
use crate::board::task::TaskId;
use crate::board::transition::TransitionError;
use crate::client::UnknownClient;
use crate::file::FileError;
use crate::names::InvalidName;
use crate::secret::NoRandomness;
use crate::secret::machine_key::MachineKeyError;
use crate::setting::SettingError;
use crate::store::{Document, Origin, Place, StoreError, Stored};
use crate::text::{Face, Refused};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Name(#[from] InvalidName),
    #[error(transparent)]
    Transition(#[from] TransitionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A participant's text refused on the way in (SPEC section 10).
    #[error(transparent)]
    Text(#[from] Refused),
    #[error(transparent)]
    Send(#[from] SendRefusal),
    /// A scope or a reservation refused (SPEC section 18).
    #[error(transparent)]
    Reserve(#[from] ReserveError),
    /// A task's worktree that could not be made, reviewed or landed (SPEC 18.4, 18.5).
    #[error(transparent)]
    Worktree(#[from] worktree::WorktreeError),
    #[error(transparent)]
    Message(#[from] MessageRefusal),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error(transparent)]
    Wake(#[from] WakeError),
    #[error(transparent)]
    Alert(#[from] AlertError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Remote(#[from] RemoteError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Client(#[from] UnknownClient),
    #[error(transparent)]
    Randomness(#[from] NoRandomness),
    #[error(transparent)]
    MachineKey(#[from] MachineKeyError),
    /// A store's setting (its address, its options) that cannot be used.
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error("no identity: pass --as NAME or set BATON_AGENT")]
    NoIdentity,
    #[error("no task {task} in project {project}")]
    UnknownTask { task: TaskId, project: String },
    #[error("unknown agent `{name}`; known agents: {}", list_or_none(known))]
    UnknownAgent { name: String, known: Vec<String> },
    #[error(
        "project {project} does not exist; known projects: {}",
        list_or_none(known)
    )]
    UnknownProject { project: String, known: Vec<String> },
    #[error(
        "project {project} is bound to {workspace}; you are in {cwd}",
        workspace = workspace.display(),
        cwd = cwd.display()
    )]
    OutsideWorkspace {
        /// A directory of this machine mapped to a hub's project (`project map`), rather
        /// than the workspace the project is bound to.
        mapped: bool,
        project: String,
        workspace: PathBuf,
        cwd: PathBuf,
    },
    /// Any other request that cannot be carried out as asked: a face's refusal of a bad
    /// argument, or a failure of its own surroundings (the terminal, stdin, a socket).
    #[error("{message}")]
    Invalid {
        message: String,
        hint: Option<String>,
    },
    #[error("no work arrived within {seconds}s")]
    WaitTimedOut { seconds: u64 },
    /// No hub `BATON_URL` names could be reached (SPEC sections 13 and 16): each hub tried,
    /// with why.
    #[error("{}", unanswered_words(tried))]
    Unreachable { tried: Vec<Unanswered> },
    /// The hub at `BATON_URL` refused the request: its words, and the exit code the
    /// command has on the hub's own machine.
    #[error("{message}")]
    Hub {
        message: String,
        hint: Option<String>,
        code: i32,
    },
}

/// A pattern refused is a scope refused.
impl From<ScopeError> for Error {
    fn from(refused: ScopeError) -> Self {
        Error::Reserve(refused.into())
    }
}

/// A file's failure is the store's, with its words and exit code.
impl From<FileError> for Error {
    fn from(failed: FileError) -> Self {
        Error::Store(failed.into())
    }
}

/// A hub that gave no answer, and why, in baton's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanswered {
    pub url: String,
    pub cause: String,
}

impl Error {
    /// The hub at `url` unreachable because of `cause`.
    pub fn unreachable(url: impl Into<String>, cause: impl Into<String>) -> Error {
        Error::Unreachable {
            tried: vec![Unanswered {
                url: url.into(),
                cause: cause.into(),
            }],
        }
    }
}

/// `hub URL unreachable: CAUSE` for one hub (SPEC section 13); for several, each in turn.
fn unanswered_words(tried: &[Unanswered]) -> String {
    let each = |hub: &Unanswered| {
        let url = crate::secret::url_without_password(&hub.url);
        format!("hub {url} unreachable: {}", hub.cause)
    };
    match tried {
        [one] => each(one),
        several => format!(
            "no hub answers: {}",
            several.iter().map(each).collect::<Vec<_>>().join("; ")
        ),
    }
}

impl Error {
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid {
            message: message.into(),
            hint: None,
        }
    }

    pub fn invalid_with_hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Invalid {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// The same failure again, for another caller who met it (every change of a batch
    /// whose write failed): a store's failure as itself, anything else in the same words,
    /// hint and exit code.
    pub fn duplicate(&self) -> Error {
        match self {
            Error::Store(store) => Error::Store(store.duplicate()),
            // Refusals that each face words its own way stay themselves.
            Error::Transition(refused) => Error::Transition(refused.clone()),
            Error::Send(refused) => Error::Send(refused.clone()),
            Error::Reserve(refused) => Error::Reserve(refused.clone()),
            Error::Worktree(refused) => Error::Worktree(refused.clone()),
            Error::Message(refused) => Error::Message(refused.clone()),
            Error::Text(refused) => Error::Text(refused.clone()),
            Error::Project(refused) => Error::Project(refused.clone()),
            Error::Registry(refused) => Error::Registry(refused.clone()),
            Error::Alert(refused) => Error::Alert(refused.clone()),
            Error::Setup(refused) => Error::Setup(refused.clone()),
            Error::Session(refused) => Error::Session(refused.clone()),
            other => Error::Hub {
                message: other.to_string(),
                hint: other.hint(),
                code: other.exit_code(),
            },
        }
    }

    /// The one place errors become exit codes (SPEC section 5).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::OutsideWorkspace { .. } => 2,
            Error::Store(
                StoreError::File(FileError::LockTimeout { .. }) | StoreError::LockTimeout { .. },
            ) => 3,
            Error::Store(
                StoreError::Corrupt { .. }
                | StoreError::Board { .. }
                | StoreError::NewerSchema { .. }
                | StoreError::NewerDatabase { .. }
                | StoreError::File(FileError::NotRegular { .. }),
            ) => 4,
            Error::WaitTimedOut { .. } => 5,
            Error::Unreachable { .. } | Error::Store(StoreError::Unreachable { .. }) => 6,
            // A code outside the contract's would pass for something baton never says.
            Error::Hub { code, .. } if (1..=5).contains(code) => *code,
            Error::Hub { .. } => 1,
            Error::Name(_)
            | Error::Transition(_)
            | Error::Text(_)
            | Error::Send(_)
            | Error::Reserve(_)
            | Error::Worktree(_)
            | Error::Message(_)
            | Error::Project(_)
            | Error::Registry(_)
            | Error::Token(_)
            | Error::Wake(_)
            | Error::Alert(_)
            | Error::Setup(_)
            | Error::Remote(_)
            | Error::Session(_)
            | Error::Client(_)
            | Error::Randomness(_)
            | Error::MachineKey(_)
            | Error::Setting(_)
            | Error::Store(
                StoreError::File(FileError::Io { .. })
                | StoreError::Unfinished
                | StoreError::Database { .. },
            )
            | Error::NoIdentity
            | Error::UnknownTask { .. }
            | Error::UnknownAgent { .. }
            | Error::UnknownProject { .. }
            | Error::Invalid { .. } => 1,
        }
    }

    /// What the error says, as `face` tells it: the words are the same on every face, but
    /// an argument they name is spelled as the face spells it (`--subject`, `` `subject` ``).
    pub fn message(&self, face: Face) -> String {
        match self {
            Error::Transition(refused) => refused.words(face),
            Error::Send(refused) => refused.words(face),
            Error::Message(refused) => refused.words(face),
            Error::Project(refused) => refused.words(face),
            Error::Registry(refused) => refused.words(face),
            Error::Alert(refused) => refused.words(face),
            Error::Setup(refused) => refused.words(face),
            Error::Session(refused) => refused.words(face),
            other => other.to_string(),
        }
    }

    /// A second line that tells the user of the command line how to get unstuck, where
    /// there is one.
    pub fn hint(&self) -> Option<String> {
        self.hint_for(Face::Cli)
    }

    /// [`Error::hint`] as `face` tells it.
    pub fn hint_for(&self, face: Face) -> Option<String> {
        match self {
            Error::Invalid { hint, .. } | Error::Hub { hint, .. } => hint.clone(),
            Error::Text(refused) => Some(refused.hint(face)),
            Error::Reserve(ReserveError::Words(refused)) => Some(refused.hint(face)),
            Error::Send(refused) => refused.hint(face),
            Error::Message(refused) => refused.hint(face),
            Error::Project(refused) => refused.hint(face),
            Error::Registry(refused) => refused.hint(face),
            Error::Alert(refused) => refused.hint(face),
            Error::Setup(refused) => refused.hint(face),
            Error::Token(refused) => refused.hint(),
            Error::Wake(refused) => refused.hint(),
            Error::Remote(refused) => refused.hint(),
            Error::Setting(setting) => setting.hint.clone(),
            Error::Unreachable { .. } => Some(
                "is `baton serve` running there, and is BATON_URL right? Unset BATON_URL to \
                 use this machine's own board"
                    .into(),
            ),
            Error::NoIdentity => Some("e.g. `baton --as claude inbox`".into()),
            Error::UnknownAgent { name, .. } => Some(format!(
                "agents are known once they run a baton command, or by `baton agent add {name}`"
            )),
            Error::UnknownProject { .. } => {
                Some("create it with `baton project init --name NAME --workspace DIR`".into())
            }
            Error::OutsideWorkspace {
                mapped: false,
                workspace,
                ..
            } => Some(format!(
                "run it from inside {}: only the project's humans and its coordinator may name \
                 it with --project from elsewhere",
                workspace.display()
            )),
            Error::OutsideWorkspace {
                mapped: true,
                workspace,
                ..
            } => Some(format!(
                "run it from inside {}, the directory this machine maps to it (`baton project \
                 map`)",
                workspace.display()
            )),
            Error::Store(StoreError::Board {
                origin,
                refused: BoardError::DuplicateId { task },
            }) => Some(format!(
                "`baton board --all` shows them all and `baton doctor` names them; give all but \
                 one of the tasks numbered {task} an id no task has, in {} by hand",
                origin.place
            )),
            Error::Store(StoreError::Corrupt { origin, .. } | StoreError::Board { origin, .. }) => {
                damaged_hint(origin)
            }
            Error::Store(StoreError::File(FileError::NotRegular { path, .. })) => Some(format!(
                "baton reads only regular files there; move it away (`mv {0} {0}.aside`) \
                 and run `baton doctor`",
                path.display()
            )),
            Error::Store(store) if store.is_lock_timeout() => Some(
                "another baton command is still writing; retry, or raise BATON_LOCK_TIMEOUT".into(),
            ),
            _ => None,
        }
    }
}

/// What to do about a stored thing that does not read, by what it is.
fn damaged_hint(origin: &Origin) -> Option<String> {
    match (&origin.what, &origin.place) {
        (Stored::Board { .. }, Place::File(path)) => Some(format!(
            "baton will not overwrite it; inspect it, or bring back the previous board with \
             `baton doctor --restore PROJECT` (it keeps {}.bak)",
            path.display()
        )),
        (Stored::Board { .. }, Place::Database { .. }) => Some(
            "baton will not overwrite it; bring back the board as it was before its last change \
             with `baton doctor --restore PROJECT`"
                .into(),
        ),
        (Stored::Document(Document::Agent(name)), _) => Some(format!(
            "baton will not overwrite it; fix it by hand, or `baton agent rm {name}` and \
             register it again; `baton doctor` checks every file"
        )),
        (Stored::Document(Document::Tokens), Place::File(_)) => Some(
            "baton will not overwrite it; fix it by hand, or move it away and make the tokens \
             again with `baton token add NAME`"
                .into(),
        ),
        _ => None,
    }
}

pub(crate) fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none yet".to_string()
    } else {
        names.join(", ")
    }
}
