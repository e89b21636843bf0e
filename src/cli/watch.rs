//! Commands that block on the board: `wait` for scripted agent loops, `watch` for people.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use baton::board::search::Search;
use baton::error::Error;
use baton::session::BoardFilter;
use baton::time;

use super::board::BoardArgs;
use super::reconnect::{Reconnecting, warn_broken};
use super::{Context, output, render};

/// A terminal's board is redrawn this often even when nothing was written, so that ages,
/// leases and stalled marks stay true.
const REDRAW_EVERY: Duration = Duration::from_secs(5);
/// Off a terminal nothing is drawn but on a change: the wait for one is this long, again
/// and again.
const WAIT_FOR_A_CHANGE: Duration = Duration::from_secs(3600);

const WATCH_LONG_ABOUT: &str = "\
A live board. On a terminal it is an application with six views, redrawn when the board
changes; off a terminal (or with --json) it prints the board once per change.

Views (Tab, or 1-6): 1 board: the open tasks by status, each status with its count, most
urgent first (f shows the finished ones too); 2 inbox: the tasks whose turn is yours and
what each waits for; 3 messages: yours, received and sent (those shown count as read);
4 task: the selected task with its thread and delivery (Enter; Esc goes back); 5 agents;
6 activity.

/ searches the tasks' subjects, bodies and threads (as --search does): Enter shows only the
tasks holding the words typed, and the footer says so; / then Esc shows every task again.

Keys on the selected task, offered only when you may take them now (the footer lists
those; `?` shows all): as its assignee c claim, u release, i ask a question, v request
review, d done, F fail; as its sender or reviewer a answer, y or A approve, r request
changes, x cancel (asks to confirm), R reassign. A key that cannot apply says why at once,
in the words the CLI refuses with. n sends a task, m writes a message (to an agent or
@all). Keys that need words ask on the bottom line: Enter sends, Esc does nothing, Tab
offers the agents' names where a name is asked for. ↑↓ or jk move (or scroll), ←→ or hl
go to the status before or after, q or Ctrl-C quits.

Marks: # blocked by unfinished tasks · ! stalled · ? handed over, not seen for 5 minutes ·
> waiting on someone but its assignee.

The board acts as --as NAME (or $BATON_AGENT), with the CLI's refusals; without an identity
it is read-only. With BATON_URL it shows and acts on that hub's project.

Example: baton --as boss watch";

#[derive(Debug, Subcommand)]
pub enum WatchCommand {
    /// Block until your inbox holds something (exit 0) or the timeout passes (exit 5)
    #[command(after_help = "Example: while baton --as codex wait --timeout 600; do …; done")]
    Wait(WaitArgs),
    /// A live board: on a terminal an application with keys that act; else printed once per
    /// change
    #[command(long_about = WATCH_LONG_ABOUT)]
    Watch(BoardArgs),
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Give up after this many seconds (default: wait for ever)
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
}

pub fn run(context: &Context, command: WatchCommand) -> Result<i32, Error> {
    match command {
        WatchCommand::Wait(args) => {
            let timeout = args.timeout.map(Duration::from_secs);
            let inbox = context.desk().wait(timeout, &|error| warn_broken(error))?;
            if context.global.json {
                output::json(&inbox);
            } else {
                output::line(&render::status_line(&inbox));
            }
            Ok(0)
        }
        WatchCommand::Watch(args) => watch_board(context, args),
    }
}

fn watch_board(context: &Context, args: BoardArgs) -> Result<i32, Error> {
    // A board left open on a screen says nothing of whether its identity is at work.
    let desk = context.observer_desk();
    let filter = BoardFilter {
        status: args.status,
        mine: args.mine,
        all: args.all,
        search: Search::new(args.label.as_deref(), args.search.as_deref())?,
        ..BoardFilter::default()
    };
    let is_terminal = std::io::stdout().is_terminal();
    // The application needs keys as well as a screen; `--json` is a stream for scripts.
    if is_terminal && std::io::stdin().is_terminal() && !context.global.json {
        return super::tui::run(desk.into(), &tui_filter(filter));
    }
    let project = desk.project_id()?;
    // Opened before the first look: a change during it is a change.
    let mut changes = desk.follow()?;
    let mut is_changed = true;
    let mut drawn_at = Instant::now();
    let mut stream = Reconnecting::new();
    loop {
        let is_stale = is_terminal && drawn_at.elapsed() >= REDRAW_EVERY;
        if is_changed || is_stale {
            let views = desk.board(&filter)?;
            draw(context, &project, &views, time::now(), is_terminal);
            drawn_at = Instant::now();
        }
        let within = match is_terminal {
            true => REDRAW_EVERY.saturating_sub(drawn_at.elapsed()),
            false => WAIT_FOR_A_CHANGE,
        };
        is_changed = match changes.wait(within) {
            Ok(is_changed) => {
                stream.answered(changes.source());
                is_changed
            }
            Err(error) => {
                stream.broken(&error);
                false
            }
        };
    }
}

/// What the terminal board reads: finished tasks too (it lists them behind `f`) unless one
/// status was asked for.
pub(super) fn tui_filter(filter: BoardFilter) -> BoardFilter {
    BoardFilter {
        all: filter.all || filter.status.is_none(),
        ..filter
    }
}

/// Prints the board once: one JSON line with `--json`, else the table, drawn over the
/// screen on a terminal.
pub(super) fn draw(
    context: &Context,
    project: &str,
    views: &[baton::session::TaskView],
    now: baton::time::Timestamp,
    is_terminal: bool,
) {
    if context.global.json {
        // One line per change: a stream a script can read line by line.
        output::line_exact(&serde_json::to_string(views).unwrap_or_default());
        return;
    }
    let table = render::board_table(project, views, now);
    if is_terminal {
        // Home the cursor and clear the screen (baton's own sequence, the one escape
        // written raw), then draw the board with everything in it escaped.
        output::print_exact("\x1b[H\x1b[2J");
        output::print(&format!(
            "baton watch · {now} · Ctrl-C to stop\n\n{}\n",
            table.trim_end()
        ));
    } else {
        output::print(&format!("{}\n\n", table.trim_end()));
    }
}
