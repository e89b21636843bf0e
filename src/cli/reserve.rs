//! `reserve`, `unreserve`, `reservations` and `reserved` (SPEC section 18.2): who holds which
//! paths of the workspace, by hand and by the claims of tasks.

use std::fmt::Write as _;
use std::path::Path;

use clap::{Args, Subcommand};

use super::{Context, output};
use baton::board::reservation::Reservation;
use baton::board::scope;
use baton::board::task::TaskId;
use baton::error::Error;
use baton::session::reservations::{Holding, ReserveAsk, Reserved, UnreserveAsk};
use baton::text::inline;
use baton::time::{self, Timestamp};

#[derive(Debug, Subcommand)]
pub enum ReserveCommand {
    /// Reserve paths or resources for a while: nobody else changes them meanwhile
    #[command(
        after_help = "Examples:\n  baton reserve 'src/date/**,Cargo.lock' --for 1h \
                            --reason 'date rewrite'\n  baton reserve port:3000 --shared"
    )]
    Reserve(ReserveArgs),
    /// End your reservations (or, as the coordinator or a human, another agent's)
    #[command(after_help = "Examples:
  baton unreserve 'src/date/**'
  baton --as alice unreserve --all --agent codex")]
    Unreserve(UnreserveArgs),
    /// Who holds which paths now
    #[command(after_help = "Example: baton reservations --mine")]
    Reservations(ReservationsArgs),
    /// Whether anyone else holds these paths: exit 0 when nobody does, 1 naming each holder
    #[command(after_help = "Example: baton --as codex reserved src/date/parse.rs Cargo.lock")]
    Reserved(ReservedArgs),
}

#[derive(Debug, Args)]
pub struct ReserveArgs {
    /// Comma-separated: paths and globs from the workspace's root (src/date/**, docs/) or
    /// KIND:NAME (port:3000, db:migrations)
    #[arg(value_delimiter = ',', required = true, value_name = "PATTERNS")]
    pub patterns: Vec<String>,
    /// The task of yours it is for: it ends with the task's work too
    #[arg(long, value_parser = |text: &str| text.parse::<TaskId>())]
    pub task: Option<TaskId>,
    /// How long it lasts (30m, 2h, 1d; at most 7d); default the project's lease. Your own
    /// baton commands renew it, as they renew leases
    #[arg(long = "for", value_name = "DURATION", value_parser = time::parse_duration)]
    pub lasts: Option<chrono::Duration>,
    /// Keep out only exclusive reservations of others (several may share it)
    #[arg(long)]
    pub shared: bool,
    /// Why: shown to whoever it stands in the way of
    #[arg(long, value_name = "WORDS")]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct UnreserveArgs {
    /// Comma-separated patterns, as they were reserved
    #[arg(
        value_delimiter = ',',
        value_name = "PATTERNS",
        required_unless_present = "all"
    )]
    pub patterns: Vec<String>,
    /// All of them
    #[arg(long, conflicts_with = "patterns")]
    pub all: bool,
    /// Another agent's reservations (the project's coordinator or a human); it is told.
    /// (Its own id: `agent` is the global `--as`.)
    #[arg(long = "agent", id = "holder", value_name = "NAME")]
    pub holder: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct ReservationsArgs {
    /// Only yours
    #[arg(long)]
    pub mine: bool,
}

#[derive(Debug, Args)]
pub struct ReservedArgs {
    /// Paths relative to the workspace's root, or absolute paths inside it
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<String>,
}

pub fn run(context: &Context, command: ReserveCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    let desk = context.desk();
    match command {
        ReserveCommand::Reserve(args) => {
            let seconds = args
                .lasts
                .map(|lasts| u64::try_from(lasts.num_seconds()).unwrap_or(0));
            let reserved = desk.reserve(ReserveAsk {
                patterns: args.patterns,
                task: args.task,
                seconds,
                shared: args.shared,
                reason: args.reason,
            })?;
            output::emit(as_json, &reserved, |reserved| taken(reserved, time::now()));
        }
        ReserveCommand::Unreserve(args) => {
            let ended = desk.unreserve(UnreserveAsk {
                patterns: (!args.all).then_some(args.patterns),
                agent: args.holder,
            })?;
            output::emit(as_json, &ended, ended_words);
            super::wake::report(&ended.woken);
        }
        ReserveCommand::Reservations(args) => {
            let held = desk.reservations(args.mine)?;
            output::emit(as_json, &held, |held| table(held, time::now()));
        }
        ReserveCommand::Reserved(args) => {
            let workspace = desk.project()?.workspace;
            let paths = args
                .paths
                .iter()
                .map(|path| relative(workspace.as_deref(), path))
                .collect::<Result<Vec<_>, _>>()?;
            let holdings = desk.reserved(&paths)?;
            output::emit(as_json, &holdings, |holdings| held_words(&paths, holdings));
            return Ok(if holdings.is_empty() { 0 } else { 1 });
        }
    }
    Ok(0)
}

/// `path` as the workspace names it: an absolute path inside the workspace made relative
/// to its root; a relative one is taken as relative to the root already.
fn relative(workspace: Option<&Path>, path: &str) -> Result<String, Error> {
    let given = Path::new(path);
    if !given.is_absolute() {
        return Ok(path.to_string());
    }
    let outside = || {
        Error::invalid(format!(
            "{} is outside the project's workspace",
            inline(path)
        ))
    };
    let root = workspace.ok_or_else(outside)?;
    scope::relative_to(root, given)
        .or_else(|| {
            let canonical = |path: &Path| path.canonicalize().ok();
            scope::relative_to(
                &canonical(root)?,
                &canonical(given.parent()?)?.join(given.file_name()?),
            )
        })
        .ok_or_else(outside)
}

fn until(reservation: &Reservation, now: Timestamp) -> String {
    match (reservation.expires_at, reservation.task) {
        (Some(until), _) => format!("{} left", time::age(now, until)),
        (None, Some(task)) => format!("while {task} is worked on"),
        (None, None) => "until ended".to_string(),
    }
}

fn taken(reserved: &Reserved, now: Timestamp) -> String {
    let mut text = String::new();
    for reservation in &reserved.reservations {
        let kind = if reservation.exclusive {
            ""
        } else {
            " (shared)"
        };
        let _ = writeln!(
            text,
            "reserved {}{kind}: {}",
            inline(&reservation.pattern),
            until(reservation, now)
        );
    }
    text
}

pub(super) fn ended_words(ended: &Reserved) -> String {
    let mut text = String::new();
    for reservation in &ended.reservations {
        let _ = writeln!(
            text,
            "ended {} of {}",
            inline(&reservation.pattern),
            inline(&reservation.agent)
        );
    }
    for handover in &ended.handovers {
        let _ = writeln!(
            text,
            "  {} is now in {}'s inbox",
            handover.task,
            inline(&handover.agent)
        );
    }
    if !ended.notifications.is_empty() {
        let told: Vec<String> = ended
            .notifications
            .iter()
            .map(|arrival| inline(&arrival.agent).to_string())
            .collect();
        let _ = writeln!(text, "  baton told {}", told.join(" and "));
    }
    text
}

/// Who holds what, under the board's table: nothing while nobody holds anything.
pub(super) fn held_under_board(held: &[Reservation], now: Timestamp) -> String {
    match held.is_empty() {
        true => String::new(),
        false => format!("\nreserved:\n{}", indented(&table(held, now))),
    }
}

fn indented(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

fn table(held: &[Reservation], now: Timestamp) -> String {
    if held.is_empty() {
        return "nobody holds a reservation".to_string();
    }
    let mut text = String::new();
    for reservation in held {
        let task = reservation
            .task
            .map(|task| format!(" for {task}"))
            .unwrap_or_default();
        let kind = if reservation.exclusive {
            ""
        } else {
            ", shared"
        };
        let reason = reservation
            .reason
            .as_deref()
            .map(|reason| format!(": {}", inline(reason)))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "{}  {}{task} ({}{kind}){reason}",
            inline(&reservation.pattern),
            inline(&reservation.agent),
            until(reservation, now)
        );
    }
    text
}

fn held_words(paths: &[String], holdings: &[Holding]) -> String {
    if holdings.is_empty() {
        let paths: Vec<String> = paths.iter().map(|path| inline(path).to_string()).collect();
        return format!("nobody else holds {}", paths.join(", "));
    }
    holdings
        .iter()
        .map(Holding::words)
        .collect::<Vec<_>>()
        .join("\n")
}
