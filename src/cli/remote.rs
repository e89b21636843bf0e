//! Commands against a hub on another machine (`BATON_URL`, SPEC section 13) run through the
//! same code as on the hub's own machine, on the hub's desk
//! ([`baton::remote::desk::RemoteDesk`]): the same arguments, output and exit codes. What
//! is left here are the commands that change the hub's own machine (its tokens, wake
//! commands, archive, backups), which refuse, saying where to run them.

use baton::error::Error;
use baton::remote::HubClient;

use super::Command;
use super::agents::{AgentCommand, AgentsCommand};
use super::board::BoardCommand;
use super::projects::ProjectCommand;
use super::wake::WakeCommand;

/// Whether `command` acts on the hub when BATON_URL is set; `demo`, `setup` and baton's own
/// detached processes run on this machine all the same.
pub fn is_for_hub(command: &Command) -> bool {
    !matches!(
        command,
        Command::Demo
            | Command::Setup(_)
            | Command::Wake(WakeCommand::WakeSupervisor(_) | WakeCommand::Notify)
            | Command::AlertSend(_)
    )
}

/// The refusal of `command` when only the hub's own machine can carry it out; `None` for
/// every command that runs on the hub's desk from here.
pub fn refusal(hub: &HubClient, command: &Command) -> Option<Error> {
    let hub_only = |command: &str, hint: &str| {
        Error::invalid_with_hint(
            format!(
                "`baton {command}` runs only on the hub's machine, and BATON_URL points at {}",
                hub.described()
            ),
            match hint {
                "" => "run it there, or unset BATON_URL to act on this machine's own board"
                    .to_string(),
                hint => hint.to_string(),
            },
        )
    };
    Some(match command {
        Command::Project(ProjectCommand::Init(_)) => hub_only(
            "project init",
            "a project's workspace is a directory of the hub's machine: run `baton project \
             init` there, then `baton project map ID DIR` here",
        ),
        Command::Project(ProjectCommand::Set(_)) => hub_only(
            "project set",
            "a project's settings are kept on the hub's machine: run `baton project set` \
             there",
        ),
        Command::Board(BoardCommand::Archive(_)) => hub_only("archive", ""),
        Command::Agents(AgentsCommand::Agent(AgentCommand::Add(args)))
            if args.wake || args.no_wake_command =>
        {
            hub_only(
                "agent add --wake",
                "a wake command runs on the hub's machine and is set there; on this machine \
                 `baton listen --wake -- CMD ARGS…` runs yours when work arrives",
            )
        }
        Command::Agents(AgentsCommand::Agent(AgentCommand::Rm { .. })) => hub_only("agent rm", ""),
        Command::Doctor(args) if args.restore.is_some() => hub_only("doctor --restore", ""),
        Command::Token(_) => hub_only("token", ""),
        Command::Worktree(_) => hub_only(
            "worktree prune",
            "it removes worktrees of the hub's machine: run it there",
        ),
        Command::Store(_) => hub_only(
            "store copy",
            "it copies the stores of the machine it runs on: run it on the hub's machine, or \
             unset BATON_URL",
        ),
        Command::Import(_) => hub_only(
            "import",
            "the board to carry over is read from the hub's disk: copy it there and run \
             `baton import` on that machine",
        ),
        // The alerts' URLs and secrets are the hub's: they are set where they are kept.
        Command::Alert(_) => hub_only("alert", ""),
        Command::Serve(_) => Error::invalid_with_hint(
            format!(
                "baton serve serves this machine's board, but BATON_URL points at {}",
                hub.described()
            ),
            "unset BATON_URL to serve this machine's board",
        ),
        _ => return None,
    })
}
