//! The command line: clap types, one file per command group, each calling the library.
//! Printing and exit codes live here and nowhere else.

mod agents;
mod alerts;
mod board;
mod bridge;
mod commit_guard;
mod demo;
mod diff;
mod doctor;
mod hook;
mod import;
mod listen;
mod mcp;
mod messages;
mod output;
mod projects;
mod reconnect;
mod remote;
mod render;
mod reserve;
mod serve;
mod setup;
mod stats;
mod store;
mod tokens;
mod tui;
mod wake;
mod watch;
mod worktrees;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use baton::error::Error;
use baton::file::lock::LockPolicy;
use baton::home::Home;
use baton::remote::desk::RemoteDesk;
use baton::session::{AfterEffects, Desk, Hub, LocalDesk, Request, Session};
use baton::text;

const ABOUT: &str = "A task board on the local disk that coding agents and humans share";

const LONG_ABOUT: &str = "\
A task board on the local disk that coding agents and humans share.

Agents hand each other tasks, ask and answer questions, request and give reviews, and send
messages. Each agent's inbox shows exactly the tasks whose turn is theirs.

Identity: --as NAME, else $BATON_AGENT. Project: --project ID, else the project whose
workspace holds the current directory, else `default`. Data: $BATON_HOME, else
~/.local/share/baton.

A task's life: send → pending → claim → working → done → completed, with side trips:
  ask → input_required (sender answers) · review → review_requested (reviewer approves
  or requests changes) · fail, cancel, reassign.

A hub on another machine: with BATON_URL (what `baton serve` printed there) and BATON_TOKEN
(from `baton token add NAME` there) every command acts on that hub as the token's agent;
`baton project map ID DIR` names the project a directory of this machine stands for, and
`baton listen --wake -- CMD…` wakes this machine's agent when work arrives. Hubs that share
one store may be named together, comma-separated (BATON_URL=http://a:7878,http://b:7878):
the first that answers is used until it stops answering, then the next; `listen`, `wait`
and `watch` move with it and catch up.

`wait`, `watch` and `serve` sleep until the kernel says a file changed; with
BATON_FILE_EVENTS=poll (or on a network filesystem) they look at the files every 100 ms.

Exit codes: 0 done · 1 bad request or refused · 2 outside the project's workspace ·
3 lock busy · 4 stored data unreadable · 5 wait timed out · 6 no hub at BATON_URL can be
reached, or the database of BATON_STORE cannot.";

#[derive(Debug, Parser)]
#[command(name = "baton", version, about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes, before or after the subcommand.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Act as this agent (overrides $BATON_AGENT)
    #[arg(long = "as", global = true, value_name = "NAME")]
    pub agent: Option<String>,
    /// Act on this project instead of the one the current directory belongs to
    #[arg(long, global = true, value_name = "ID")]
    pub project: Option<String>,
    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub json: bool,
    /// Do not start the wake command of whoever receives work (for the commands that hand
    /// work over; `baton --no-wake send …` is `send --no-wake`, and the others ignore it)
    #[arg(long)]
    pub no_wake: bool,
}

/// `--no-wake`, taken by the commands that hand work over to someone (and so may wake them).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct NoWake {
    /// Do not start the wake command of whoever receives work
    #[arg(long)]
    pub no_wake: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Board(board::BoardCommand),
    #[command(flatten)]
    Agents(agents::AgentsCommand),
    #[command(flatten)]
    Messages(messages::MessagesCommand),
    #[command(flatten)]
    Reserve(reserve::ReserveCommand),
    /// A task's changes against its base: committed on its branch, and uncommitted in its
    /// worktree (marked so)
    Diff(diff::DiffArgs),
    /// Answer an agent client's hook (session-start, prompt, stop, pre-edit), which always
    /// exits 0, or git's pre-commit (`setup --git`), which exits 1 to refuse the commit
    Hook(hook::HookArgs),
    #[command(flatten)]
    Wake(wake::WakeCommand),
    #[command(flatten)]
    Watch(watch::WatchCommand),
    /// Create, list and show projects
    #[command(subcommand)]
    Project(projects::ProjectCommand),
    /// Tidy the tasks' git worktrees on this machine (`worktree prune`)
    #[command(subcommand)]
    Worktree(worktrees::WorktreeCommand),
    /// Read or add to the project's shared notes
    Context(projects::ContextArgs),
    /// How the team is doing: per agent, tasks finished, claim to finish, waits on a human,
    /// rework and hand-overs unseen past 5 minutes
    Stats(stats::StatsArgs),
    /// Walk two agents through a task's whole life in a throwaway home
    #[command(after_help = "Example: baton demo")]
    Demo,
    /// Check the hub home; bring a board back from its backup
    Doctor(doctor::DoctorArgs),
    Import(import::ImportArgs),
    /// Serve the board's tools to an agent over MCP (stdio), acting as --as NAME
    #[command(after_help = "Example: claude mcp add --scope user baton -- baton --as claude mcp")]
    Mcp(NoWake),
    /// Wire Claude Code, Codex, Gemini CLI and opencode to baton (or --uninstall)
    Setup(setup::SetupArgs),
    #[command(subcommand)]
    Store(store::StoreCommand),
    #[command(subcommand)]
    Token(tokens::TokenCommand),
    #[command(subcommand)]
    Alert(alerts::AlertCommand),
    /// Posts the queued alerts, started detached by baton
    #[command(name = "__alert-send", hide = true)]
    AlertSend(alerts::SenderArgs),
    /// Serve the hub over HTTP: the web board, MCP at /mcp, the JSON API and an A2A server
    /// (/a2a), until Ctrl-C. Prints the URL that logs a browser in as --as NAME
    Serve(serve::ServeArgs),
    /// On an agent's machine: follow the hub at BATON_URL and run this machine's wake
    /// command when work arrives for the token's agent, until Ctrl-C
    Listen(listen::ListenArgs),
}

impl Command {
    /// For a command that hands work over (and so may wake whoever receives it), whether
    /// it was given `--no-wake`; `None` for a command that wakes nobody.
    fn no_wake(&self) -> Option<bool> {
        use board::BoardCommand as B;
        let flag = match self {
            Command::Board(command) => match command {
                B::Send(args) => args.wake,
                B::Act(transition) if transition.kind.row().hands_over => NoWake {
                    no_wake: transition.no_wake,
                },
                B::Act(_)
                | B::Show(_)
                | B::Board(_)
                | B::Inbox(_)
                | B::Status(_)
                | B::Log(_)
                | B::Note(_)
                | B::Archive(_) => return None,
            },
            Command::Messages(messages::MessagesCommand::Msg(args)) => args.wake,
            Command::Reserve(reserve::ReserveCommand::Unreserve(args)) => args.wake,
            Command::Mcp(flag) => *flag,
            Command::Serve(args) => args.wake,
            _ => return None,
        };
        Some(flag.no_wake)
    }
}

/// What every command needs: the parsed globals and the hub.
pub struct Context {
    pub global: Global,
    pub hub: Hub,
    /// The hub on another machine that `BATON_URL` names, when it is set.
    pub remote: Option<baton::remote::HubClient>,
}

impl Context {
    /// The identity from `--as`, else `$BATON_AGENT` (empty counts as unset).
    pub fn agent(&self) -> Option<String> {
        self.global.agent.clone().or_else(|| {
            std::env::var("BATON_AGENT")
                .ok()
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
        })
    }

    /// The project of a remote hub a command acts on: the one `--project` names, else the
    /// one this machine's project map gives `cwd` (the current directory when `None`), else
    /// `default` (SPEC section 13).
    pub fn remote_project(&self, cwd: Option<&std::path::Path>) -> Result<String, Error> {
        let cwd = match cwd {
            Some(cwd) => cwd.to_path_buf(),
            None => current_dir()?,
        };
        baton::remote::map::ProjectMap::load(&self.hub.home)?
            .resolve(self.global.project.as_deref(), &cwd)
    }

    /// Opens a session for the caller in the resolved project.
    pub fn session(&self) -> Result<Session, Error> {
        let agent = self.agent();
        Session::open(
            self.hub.clone(),
            Request {
                agent: agent.as_deref(),
                project: self.global.project.as_deref(),
                cwd: None,
            },
        )
    }

    /// The caller's desk: on the hub at `BATON_URL` when it is set, else on this machine's.
    /// Every command that acts on the board goes through it, written once for both.
    pub fn desk(&self) -> Box<dyn Desk> {
        match &self.remote {
            Some(hub) => Box::new(self.remote_desk(hub)),
            None => Box::new(self.local_desk()),
        }
    }

    /// [`Context::desk`] for a command that looks on the caller's behalf for as long as it
    /// runs (`watch`): it renews no lease and records no heartbeat (SPEC section 3).
    pub fn observer_desk(&self) -> Box<dyn Desk> {
        match &self.remote {
            Some(hub) => Box::new(self.remote_desk(hub).observing()),
            None => Box::new(self.local_desk().observing()),
        }
    }

    /// [`Context::desk`] for a client's hook run in `cwd`, the client's directory: it
    /// answers in time for the client whatever locks or the hub do.
    pub fn hook_desk(&self, cwd: Option<PathBuf>) -> Box<dyn Desk> {
        match &self.remote {
            Some(hub) => Box::new(self.remote_desk(hub).for_hook(cwd)),
            None => Box::new(self.local_desk().for_hook(cwd)),
        }
    }

    fn local_desk(&self) -> LocalDesk {
        LocalDesk::new(self.hub.clone(), self.agent(), self.global.project.clone())
    }

    fn remote_desk(&self, hub: &baton::remote::HubClient) -> RemoteDesk {
        RemoteDesk::new(
            hub.clone(),
            self.hub.home.clone(),
            self.global.project.clone(),
        )
    }
}

/// Parses the command line, runs it, and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap exits 2 on bad arguments, but 2 is baton's "outside the workspace":
            // bad arguments are a wrong request, 1.
            let _ = error.print();
            return if error.use_stderr() { 1 } else { 0 };
        }
    };
    // Before the command (`baton --no-wake …`) it is taken by every command, so that a
    // wrapper can pass it to all it runs; after it, only by those that hand work over.
    let mut cli = cli;
    cli.global.no_wake |= cli.command.no_wake().unwrap_or(false);
    let after_effects = AfterEffects::from_environment(cli.global.no_wake);
    let hub = match Home::from_environment()
        .and_then(|home| {
            Hub::from_environment(home, LockPolicy::from_environment()?, after_effects)
        })
        .map_err(Error::from)
    {
        Ok(hub) => hub,
        // A hook always exits 0 and answers in its client's format, even to say this.
        Err(error) => match cli.command {
            Command::Hook(args) => return hook::refuse(&args, &error),
            _ => return fail(&error),
        },
    };
    let remote = match baton::remote::HubClient::from_environment() {
        Ok(remote) => remote.map(|remote| remote.claiming(cli.global.agent.clone())),
        Err(error) => match cli.command {
            Command::Hook(args) => return hook::refuse(&args, &error),
            // What runs only on this machine does not need the hub.
            Command::Demo | Command::Setup(_) | Command::Wake(_) | Command::AlertSend(_) => None,
            _ => return fail(&error),
        },
    };
    let context = Context {
        global: cli.global,
        hub,
        remote,
    };
    let command = cli.command;
    if let Some(hub) = &context.remote
        && remote::is_for_hub(&command)
        && let Some(refusal) = remote::refusal(hub, &command)
    {
        return fail(&refusal);
    }
    let result = match command {
        Command::Board(command) => board::run(&context, command),
        Command::Agents(command) => agents::run(&context, command),
        Command::Messages(command) => messages::run(&context, command),
        Command::Reserve(command) => reserve::run(&context, command),
        Command::Diff(args) => diff::run(&context, args),
        Command::Hook(args) => Ok(hook::run(&context, args)),
        Command::Wake(command) => wake::run(&context, command),
        Command::Watch(command) => watch::run(&context, command),
        Command::Project(command) => projects::run(&context, command),
        Command::Worktree(command) => worktrees::run(&context, command),
        Command::Context(args) => projects::context(&context, args),
        Command::Stats(args) => stats::run(&context, args),
        Command::Demo => demo::run(&context),
        Command::Doctor(args) => doctor::run(&context, args),
        Command::Import(args) => import::run(&context, args),
        Command::Mcp(_) => match &context.remote {
            Some(hub) => bridge::run(&context, hub),
            None => mcp::run(&context),
        },
        Command::Setup(args) => setup::run(&context, args),
        Command::Store(command) => store::run(&context, command),
        Command::Token(command) => tokens::run(&context, command),
        Command::Alert(command) => alerts::run(&context, command),
        Command::AlertSend(args) => alerts::send(&context, args),
        Command::Serve(args) => serve::run(&context, args),
        Command::Listen(args) => match &context.remote {
            Some(hub) => listen::run(&context, hub, args),
            None => Err(Error::invalid_with_hint(
                "baton listen follows a hub on another machine, and BATON_URL is not set",
                "set BATON_URL to the hub's address and BATON_TOKEN to a token `baton token add \
                 NAME` printed there",
            )),
        },
    };
    match result {
        Ok(code) => code,
        Err(error) => fail(&error),
    }
}

/// Prints `error:` and, where there is one, `hint:`; returns the exit code.
fn fail(error: &Error) -> i32 {
    // An error can quote what was asked for (a name, a path, a task's words): it is shown
    // on one line with every control character escaped, like all participants' text.
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", text::inline(&error.to_string()));
    if let Some(hint) = error.hint() {
        let _ = writeln!(stderr, "hint: {}", text::inline(&hint));
    }
    error.exit_code()
}

/// The current directory, for commands that bind to it.
pub fn current_dir() -> Result<PathBuf, Error> {
    baton::project::current_dir()
}

#[cfg(test)]
mod help_examples;
