//! Commands that block on the board: `wait` for scripted agent loops, `watch` for people.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

use baton::error::Error;
use baton::session::BoardFilter;
use baton::watch::{self, FileWatch};

use super::board::BoardArgs;
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
            let session = context.session()?;
            let timeout = args.timeout.map(Duration::from_secs);
            let inbox = watch::wait_for_work(&session, timeout)?;
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
    let session = context.observer_session()?;
    let filter = BoardFilter {
        status: args.status,
        mine: args.mine,
        all: args.all,
    };
    let is_terminal = std::io::stdout().is_terminal();
    // The application needs keys as well as a screen; `--json` is a stream for scripts.
    if is_terminal && std::io::stdin().is_terminal() && !context.global.json {
        return super::tui::run(super::tui::BoardAt::Here(session), &tui_filter(filter));
    }
    let mut files = FileWatch::project(session.home(), session.project_id());
    // The first look always counts: the board is drawn at once.
    let mut is_changed = files.has_changed();
    let mut drawn_at = Instant::now();
    loop {
        let is_stale = is_terminal && drawn_at.elapsed() >= REDRAW_EVERY;
        if is_changed || is_stale {
            let now_session = watch::at_now(&session);
            let views = now_session.list(&filter)?;
            draw(
                context,
                &session.project.id,
                &views,
                now_session.now,
                is_terminal,
            );
            drawn_at = Instant::now();
        }
        let pause = match is_terminal {
            true => REDRAW_EVERY.saturating_sub(drawn_at.elapsed()),
            false => WAIT_FOR_A_CHANGE,
        };
        is_changed = files.wait_for_change(pause);
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
