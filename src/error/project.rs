//! What the project domain refuses: a workspace it cannot bind, a project that is not there
//! or is there already, a change of its settings by someone who may not make it.

use std::path::PathBuf;

use crate::text::Face;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectError {
    /// The directory the command runs in was deleted under it.
    #[error("the current directory no longer exists")]
    CurrentDirGone,
    #[error("cannot read the current directory: {cause}")]
    CurrentDirUnreadable { cause: String },
    /// The current directory was deleted, and the project it was in is bound to
    /// `workspace`.
    #[error(
        "the current directory no longer exists, and project {project} is bound to {}",
        workspace.display()
    )]
    CurrentDirGoneFrom { project: String, workspace: PathBuf },
    #[error(
        "workspace {} is {}: the project would capture every directory beneath it",
        workspace.display(),
        wide.words()
    )]
    TooWide {
        workspace: PathBuf,
        wide: WideDirectory,
    },
    #[error("workspace {} is not a directory I can use: {cause}", workspace.display())]
    WorkspaceUnusable { workspace: PathBuf, cause: String },
    #[error("workspace {} is not a directory", workspace.display())]
    WorkspaceNotDirectory { workspace: PathBuf },
    /// The project went while it was being bound again.
    #[error("project {project} is gone")]
    Gone { project: String },
    #[error("{} is already the workspace of project {project}", workspace.display())]
    AlreadyBound { workspace: PathBuf, project: String },
    #[error("project {project} already exists")]
    Exists { project: String },
    #[error(
        "`default` is the project of every directory outside a workspace; it cannot be bound \
         to one"
    )]
    DefaultUnbindable,
    /// `context --add` with nothing to add.
    #[error("{}", self.words(Face::Cli))]
    NoContextWords,
    /// A change of `what` (a setting of the project's) by someone other than its
    /// coordinator or humans.
    #[error(
        "only {} (the coordinator){} can change {what} of project {project}",
        coordinator.as_deref().unwrap_or("nobody"),
        or_humans(humans)
    )]
    NotCoordinator {
        project: String,
        coordinator: Option<String>,
        humans: Vec<String>,
        what: String,
    },
    /// `doctor --restore` of a project whose board has no backup.
    #[error("project {project} has no board.json.bak: there is nothing to restore")]
    NoBackup { project: String },
}

/// A directory too wide to be a project's workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WideDirectory {
    Root,
    UserHome,
}

impl WideDirectory {
    fn words(self) -> &'static str {
        match self {
            WideDirectory::Root => "the root directory",
            WideDirectory::UserHome => "your home directory",
        }
    }
}

impl ProjectError {
    /// The refusal as `face` tells it, naming its arguments as `face` spells them.
    pub fn words(&self, face: Face) -> String {
        match self {
            ProjectError::NoContextWords => {
                format!("context {} needs some words", face.argument("add"))
            }
            other => other.to_string(),
        }
    }

    /// How to get past it, as `face` names the arguments.
    pub fn hint(&self, face: Face) -> Option<String> {
        Some(match self {
            // The project is named on the command line that started the process, whichever
            // face asks (an MCP server's `baton mcp --project` too).
            ProjectError::CurrentDirGone | ProjectError::CurrentDirUnreadable { .. } => format!(
                "cd into a directory that exists, or pass {}",
                Face::Cli.argument_with("project", "ID")
            ),
            ProjectError::CurrentDirGoneFrom { workspace, .. } => {
                format!("cd into {}", workspace.display())
            }
            ProjectError::TooWide { .. } => "bind the project to the repository it is for, e.g. \
                 `baton project init --name api --workspace ~/src/api`"
                .to_string(),
            ProjectError::AlreadyBound { project, .. } => {
                format!("see it with `baton project show --project {project}`")
            }
            ProjectError::DefaultUnbindable => format!(
                "pick another {}, or leave it out to use the directory's name",
                face.argument("name")
            ),
            ProjectError::NotCoordinator { humans, .. } => format!(
                "ask {} to make the change",
                match humans.is_empty() {
                    true => "the coordinator",
                    false => "the coordinator or a human of the project",
                }
            ),
            ProjectError::NoBackup { .. } => {
                "a backup is kept from the second change to a board on".to_string()
            }
            ProjectError::WorkspaceUnusable { .. }
            | ProjectError::WorkspaceNotDirectory { .. }
            | ProjectError::Gone { .. }
            | ProjectError::Exists { .. }
            | ProjectError::NoContextWords => return None,
        })
    }
}

/// ` or alice, bob` for a project's humans; nothing when it has none.
fn or_humans(humans: &[String]) -> String {
    if humans.is_empty() {
        String::new()
    } else {
        format!(" or {}", humans.join(", "))
    }
}
