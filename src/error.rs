//! The library's error: one enum over the domains, each variant carrying what the user needs
//! to act on it. Each maps to its exit code in one place ([`Error::exit_code`]), which
//! the CLI exits with and the HTTP face reports.

use std::path::PathBuf;

use crate::board::task::TaskId;
use crate::board::transition::TransitionError;
use crate::client::UnknownClient;
use crate::names::InvalidName;
use crate::secret::NoRandomness;
use crate::store::{SettingError, StoreError};
use crate::text::Refused;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Name(#[from] InvalidName),
    #[error(transparent)]
    Transition(#[from] TransitionError),
    #[error(transparent)]
    Store(#[from] StoreError),
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
    /// Any other request that cannot be carried out as asked.
    #[error("{message}")]
    Invalid {
        message: String,
        hint: Option<String>,
    },
    #[error("no work arrived within {seconds}s")]
    WaitTimedOut { seconds: u64 },
    /// The hub at `BATON_URL` could not be reached (SPEC section 13).
    #[error("hub {url} unreachable: {cause}")]
    Unreachable { url: String, cause: String },
    /// The hub at `BATON_URL` refused the request: its words, and the exit code the
    /// command has on the hub's own machine.
    #[error("{message}")]
    Hub {
        message: String,
        hint: Option<String>,
        code: i32,
    },
}

/// A setting the store cannot use is a wrong request, as any other invalid input.
impl From<Refused> for Error {
    fn from(refused: Refused) -> Self {
        Error::invalid_with_hint(refused.message, refused.hint)
    }
}

impl From<UnknownClient> for Error {
    fn from(unknown: UnknownClient) -> Self {
        Error::invalid(unknown.to_string())
    }
}

impl From<NoRandomness> for Error {
    fn from(error: NoRandomness) -> Self {
        Error::invalid(error.to_string())
    }
}

impl From<SettingError> for Error {
    fn from(setting: SettingError) -> Self {
        Error::Invalid {
            message: setting.message,
            hint: setting.hint,
        }
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
            Error::Store(StoreError::LockTimeout { .. }) => 3,
            Error::Store(
                StoreError::Corrupt { .. }
                | StoreError::NewerSchema { .. }
                | StoreError::NotRegular { .. }
                | StoreError::DuplicateId { .. },
            ) => 4,
            Error::WaitTimedOut { .. } => 5,
            Error::Unreachable { .. } => 6,
            // A code outside the contract's would pass for something baton never says.
            Error::Hub { code, .. } if (1..=5).contains(code) => *code,
            Error::Hub { .. } => 1,
            Error::Name(_)
            | Error::Transition(_)
            | Error::Store(StoreError::Io { .. })
            | Error::NoIdentity
            | Error::UnknownTask { .. }
            | Error::UnknownAgent { .. }
            | Error::UnknownProject { .. }
            | Error::Invalid { .. } => 1,
        }
    }

    /// A second line that tells the user how to get unstuck, where there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Invalid { hint, .. } | Error::Hub { hint, .. } => hint.clone(),
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
            Error::Store(StoreError::Corrupt { path, .. }) if path.ends_with("board.json") => {
                Some(format!(
                    "baton will not overwrite it; inspect it, or bring back the previous board \
                     with `baton doctor --restore PROJECT` (it keeps {}.bak)",
                    path.display()
                ))
            }
            Error::Store(StoreError::Corrupt { path, .. })
                if path.parent().is_some_and(|dir| dir.ends_with("agents")) =>
            {
                let name = path.file_stem().unwrap_or_default().to_string_lossy();
                Some(format!(
                    "baton will not overwrite it; fix it by hand, or `baton agent rm {name}` \
                     and register it again; `baton doctor` checks every file"
                ))
            }
            Error::Store(StoreError::Corrupt { path, .. }) if path.ends_with("tokens.json") => {
                Some(
                    "baton will not overwrite it; fix it by hand, or move it away and make the \
                     tokens again with `baton token add NAME`"
                        .into(),
                )
            }
            Error::Store(StoreError::NotRegular { path, .. }) => Some(format!(
                "baton reads only regular files there; move it away (`mv {0} {0}.aside`) \
                 and run `baton doctor`",
                path.display()
            )),
            Error::Store(StoreError::DuplicateId { path, task }) => Some(format!(
                "`baton board --all` shows them all and `baton doctor` names them; give all but \
                 one of the tasks numbered {task} an id no task has, in {} by hand",
                path.display()
            )),
            Error::Store(StoreError::LockTimeout { .. }) => Some(
                "another baton command is still writing; retry, or raise BATON_LOCK_TIMEOUT".into(),
            ),
            _ => None,
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none yet".to_string()
    } else {
        names.join(", ")
    }
}
