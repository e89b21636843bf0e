//! Why an agent could not be woken as asked.

use std::path::PathBuf;

use crate::text;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WakeError {
    #[error("{agent} has no wake command")]
    NoWakeCommand { agent: String },
    /// The agent's wake command runs on another machine, `host`.
    #[error(
        "{agent}'s wake command runs on its host, {}, not on this machine",
        text::inline(host)
    )]
    HostElsewhere { agent: String, host: String },
    /// The wake command (or the workspace it runs in) was not signed by this machine; `why`
    /// is the wake domain's account of it, which its supervisor logs as well.
    #[error("{why}")]
    NotSignedHere { why: String },
    #[error("cannot wake {agent}: {cause}")]
    Failed { agent: String, cause: String },
    /// A wake asked from another machine for an agent nothing waits for.
    #[error(
        "nothing waits for {agent} in project {project}: a wake from another machine runs only \
         for work that waits"
    )]
    NothingWaits { agent: String, project: String },
    #[error(
        "{agent} has no wake command on the hub, and no listener (`baton listen` on its \
         machine) follows it"
    )]
    NoWakeNorListener { agent: String },
    #[error("waking is off in project {project} (its settings say so)")]
    WakingOff { project: String },
    /// Another listener or wake supervisor of `agent` holds its lock on this machine.
    #[error(
        "{agent} is woken on this machine already: another `baton listen` (or a wake \
         supervisor) holds {}",
        lock.display()
    )]
    WokenAlready { agent: String, lock: PathBuf },
}

impl WakeError {
    /// How to get past it.
    pub fn hint(&self) -> Option<String> {
        match self {
            WakeError::NoWakeCommand { agent } => Some(format!(
                "give it one with `baton agent add {agent} --wake -- CMD ARGS…`"
            )),
            WakeError::HostElsewhere { agent, .. } => {
                Some(format!("run `baton wake {agent}` there"))
            }
            WakeError::NothingWaits { agent, .. } => Some(format!(
                "hand it work (`baton send --to {agent} …`), which wakes it"
            )),
            WakeError::NotSignedHere { .. }
            | WakeError::Failed { .. }
            | WakeError::NoWakeNorListener { .. }
            | WakeError::WakingOff { .. }
            | WakeError::WokenAlready { .. } => None,
        }
    }
}
