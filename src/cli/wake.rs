//! Wake commands: `wake NAME`, the lines a change prints about whom it woke, and the hidden
//! commands that baton's own detached processes run.

use std::io::Write;

use clap::{Args, Subcommand};

use baton::desktop;
use baton::error::Error;
use baton::process;
use baton::session;
use baton::wake::{self, WakeOutcome};

use super::{Context, output};

#[derive(Debug, Subcommand)]
pub enum WakeCommand {
    /// Start an agent's wake command now, as work handed to it would
    #[command(after_help = "Example: baton wake codex")]
    Wake(WakeArgs),
    /// The wake supervisor, started detached by baton itself
    #[command(name = "__wake-supervisor", hide = true)]
    WakeSupervisor(SupervisorArgs),
    /// Shows the desktop notifications given as JSON on stdin, started detached by baton
    #[command(name = "__notify", hide = true)]
    Notify,
}

#[derive(Debug, Args)]
pub struct WakeArgs {
    /// The agent to wake
    pub name: String,
}

#[derive(Debug, Args)]
pub struct SupervisorArgs {
    pub agent: String,
    pub project: String,
    /// Run even when nothing waits
    #[arg(long)]
    pub by_hand: bool,
}

pub fn run(context: &Context, command: WakeCommand) -> Result<i32, Error> {
    match command {
        WakeCommand::Wake(args) => {
            let outcome = context.desk().wake(&args.name)?;
            output::emit(context.global.json, &outcome, describe);
        }
        WakeCommand::WakeSupervisor(args) => {
            process::detach_from_caller();
            let hub = &context.hub;
            wake::supervise(
                &*hub.store,
                &hub.home,
                &args.agent,
                &args.project,
                args.by_hand,
                &session::WakeRun {
                    hub,
                    agent: &args.agent,
                },
            )?;
        }
        WakeCommand::Notify => {
            process::detach_from_caller();
            let notes = desktop::read_notes(std::io::stdin().lock()).map_err(Error::invalid)?;
            desktop::show(&notes).map_err(Error::invalid)?;
        }
    }
    Ok(0)
}

/// Says on stderr, one line per agent, whom a change woke (the session woke them).
pub fn report(outcomes: &[WakeOutcome]) {
    let mut stderr = std::io::stderr().lock();
    for outcome in outcomes {
        let _ = writeln!(stderr, "{}", describe(outcome));
    }
}

/// The line the CLI (and `baton mcp`, on stderr) writes about a wake.
pub fn describe(outcome: &WakeOutcome) -> String {
    match outcome {
        WakeOutcome::Started {
            agent, tasks, log, ..
        } => {
            format!("woke {agent}{} (log: {})", for_tasks(tasks), log.display())
        }
        WakeOutcome::AlreadyAwake {
            agent, tasks, log, ..
        } => format!(
            "{agent} is already awake and looks at its inbox again when its run ends{} \
             (log: {})",
            for_tasks(tasks),
            log.display()
        ),
        WakeOutcome::Listening { agent, tasks, .. } => format!(
            "{agent}'s listener (`baton listen` on its machine) wakes it{}",
            for_tasks(tasks)
        ),
        WakeOutcome::OnItsHost {
            agent, tasks, host, ..
        } => format!(
            "{agent}'s wake command runs on its host, {}: the hub there wakes it{}",
            baton::text::inline(host),
            for_tasks(tasks)
        ),
        WakeOutcome::Failed { agent, error, .. } => {
            format!("could not wake {agent}: {error}; the work waits in its inbox")
        }
    }
}

/// " for T-4, T-5": the hand-overs a wake serves, when it serves any.
fn for_tasks(tasks: &[baton::board::task::TaskId]) -> String {
    if tasks.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = tasks.iter().map(ToString::to_string).collect();
    format!(" for {}", ids.join(", "))
}
