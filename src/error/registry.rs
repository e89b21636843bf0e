//! What the registry of agents refuses: a wake command it would not run, an agent whose
//! removal would leave work with nobody.

use std::path::PathBuf;

use crate::text::{self, Face};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// `agent add --wake` with no command after it.
    #[error("{}", self.words(Face::Cli))]
    WakeNeedsCommand,
    /// A wake program given as a relative path; `absolute` is where it is from here.
    #[error(
        "the wake program `{}` is a relative path, which would be looked up from wherever the \
         agent is woken from",
        text::inline(program)
    )]
    RelativeWakeProgram { program: String, absolute: PathBuf },
    /// `agent rm` of an agent that open tasks still wait on: each `T-n in project (role)`.
    #[error("{agent} has open tasks, which would be left with nobody: {}", held.join(", "))]
    OpenTasks { agent: String, held: Vec<String> },
}

impl RegistryError {
    /// The refusal as `face` tells it, naming its arguments as `face` spells them.
    pub fn words(&self, face: Face) -> String {
        match self {
            RegistryError::WakeNeedsCommand => match face {
                Face::Cli => format!("{} needs a command after `--`", face.argument("wake")),
                Face::Tool => format!("{} needs a command", face.argument("wake")),
            },
            other => other.to_string(),
        }
    }

    /// How to get past it, as `face` names the arguments.
    pub fn hint(&self, face: Face) -> Option<String> {
        Some(match self {
            RegistryError::WakeNeedsCommand => {
                "e.g. `baton agent add codex --wake -- codex exec --skip-git-repo-check`"
                    .to_string()
            }
            RegistryError::RelativeWakeProgram { absolute, .. } => {
                let absolute = text::inline(&absolute.to_string_lossy()).to_string();
                format!(
                    "give its absolute path ({}), or a program name on PATH",
                    match face {
                        Face::Cli => format!("`{} -- {absolute}`", face.argument("wake")),
                        Face::Tool => format!("{} `{absolute}`", face.argument("wake")),
                    }
                )
            }
            RegistryError::OpenTasks { .. } => format!(
                "hand each on first: `baton reassign ID --to NAME` or `baton cancel ID` ({} for \
                 another project), then remove it",
                face.argument_with("project", "ID")
            ),
        })
    }
}
