//! `baton watch` on a terminal: the board as an application (SPEC section 15).
//!
//! Three things wake the loop, each told over one channel: a key (crossterm's events, read on
//! their own thread), a change of the project (the store's feed of changes that `wait` uses,
//! through [`Desk::follow`]) with the board read again on its own thread, and a signal to end.
//! The board is read only on a change and every [`REDRAW_EVERY`] (so that ages and leases
//! stay true); a key only moves through what was read. Actions go through the same session
//! functions as the CLI, so a refusal is the CLI's, shown on the status line; before that,
//! what a key may do to the selected task is judged by the state machine itself
//! (`transition::offered`), so a key that cannot apply says so before it asks for words.
//! The messages the messages view shows count as read, as `baton messages` counts them.

mod board_at;
mod cells;
mod draw;
mod keys;
mod snapshot;
mod state;
#[cfg(test)]
mod testing;

use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event as TerminalEvent};

use baton::board::search::Search;
use baton::board::task::Priority;
use baton::error::Error;
use baton::mail::{Marking, MessageType};
use baton::session::reservations::UnreserveAsk;
use baton::session::{BoardFilter, Desk, NewTask};
use baton::text::inline;

use super::{render, wake};
use state::{App, Effect, Snapshot};

/// The board is read and drawn this often even when nothing was written.
pub(super) const REDRAW_EVERY: Duration = Duration::from_secs(5);
/// How many lines of the activity log are kept for the feed.
pub(super) const ACTIVITY_LINES: usize = 200;
/// How many of the viewer's latest messages are kept for the messages view.
pub(super) const MESSAGES_KEPT: usize = 200;

/// What wakes the loop.
pub(super) enum Wake {
    Terminal(TerminalEvent),
    /// Reading the terminal failed: nothing more will come from it.
    TerminalLost(String),
    /// The board as read after a change, or on the clock.
    Read(Box<Snapshot>),
    /// The board could not be read: the error, on one line.
    ReadFailed(String),
    /// The way changes arrive broke and is open again: where, on one line.
    Reconnected(String),
    Stop,
}

/// Runs the board until `q`, Ctrl-C or a signal to end (SIGTERM, SIGHUP, SIGINT, SIGQUIT);
/// the terminal is given back as it was on every way out, a panic included (ratatui's hook
/// restores it).
pub fn run(desk: Arc<dyn Desk>, filter: &BoardFilter) -> Result<i32, Error> {
    // Without an identity the board is read-only; a hub that cannot say whose its token
    // is, or names no agent, is not looked at.
    let agent = match desk.agent() {
        Ok(agent) => Some(agent),
        Err(Error::NoIdentity) => None,
        Err(error) => return Err(error),
    };
    // The keys a task offers are the session's judgment, read with the board.
    let filter = &BoardFilter {
        offered: agent.is_some(),
        ..filter.clone()
    };
    let filter_status = filter.status;
    let first = board_at::read(desk.as_ref(), filter)?;
    let mut app = App::new(agent, first);
    app.label = filter.search.label().map(str::to_string);
    // What the board is read for, changed by `/` and read by the reader's thread.
    let filter = Arc::new(Mutex::new(filter.clone()));
    // A finished status asked for by name is listed at once.
    if filter_status.is_some_and(|status| status.is_finished()) {
        app.toggle_finished();
    }
    let mut terminal = ratatui::try_init().map_err(terminal_error)?;
    let (sender, receiver) = mpsc::channel();
    // Keys are read only once the terminal is raw, so none is taken in cooked mode.
    follow_terminal(sender.clone());
    board_at::follow(Arc::clone(&desk), Arc::clone(&filter), sender.clone());
    follow_signals(sender);
    let outcome = run_loop(&mut terminal, &mut app, desk.as_ref(), &filter, &receiver);
    // Restored before the error, if any, is printed.
    let restored = ratatui::try_restore();
    outcome?;
    restored.map_err(terminal_error)?;
    Ok(0)
}

fn run_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    desk: &dyn Desk,
    filter: &Mutex<BoardFilter>,
    receiver: &mpsc::Receiver<Wake>,
) -> Result<(), Error> {
    loop {
        terminal
            .draw(|frame| draw::draw(frame, app))
            .map_err(terminal_error)?;
        let Ok(wake) = receiver.recv() else {
            return Ok(());
        };
        let board_read = matches!(wake, Wake::Read(_));
        match wake {
            Wake::Read(snapshot) => app.replace(*snapshot),
            Wake::ReadFailed(error) => app.notify(error, true),
            Wake::Reconnected(words) => app.notify(words, false),
            Wake::Stop => return Ok(()),
            Wake::TerminalLost(error) => {
                return Err(Error::invalid(format!("cannot read the terminal: {error}")));
            }
            Wake::Terminal(TerminalEvent::Key(key)) => match app.on_key(key) {
                Effect::Quit => return Ok(()),
                Effect::Nothing => {}
                Effect::Search(words) => search(app, desk, filter, words),
                // The change it makes is seen by the board's reader like any other.
                effect => carry_out(app, desk, effect),
            },
            // A resize, a focus change, a paste: drawn again.
            Wake::Terminal(_) => {}
        }
        // The messages view shows the viewer's messages: those it shows count as read.
        if let Some(effect) = app.unread_to_mark() {
            carry_out(app, desk, effect);
        }
        follow_diff(app, desk, board_read);
    }
}

/// Reads the diff of the selected task, when it has a worktree: when another task was
/// selected, and at each read of the board (its commits do not change the board).
fn follow_diff(app: &mut App, desk: &dyn Desk, board_read: bool) {
    let Some(view) = app.selected_view() else {
        app.diff = None;
        return;
    };
    let id = view.task.id;
    if view.task.worktree.is_none() {
        app.diff = None;
        return;
    }
    let same = app.diff.as_ref().is_some_and(|shown| shown.task == id);
    if same && !board_read {
        return;
    }
    let read = desk
        .diff(id, false)
        .map_err(|error| first_line(&error.to_string()));
    app.diff = Some(state::ShownDiff { task: id, read });
}

/// `/`: the board read again at once for only the tasks whose words hold `words` (every
/// task for none), as `board --search` reads it, and by the reader's thread from then on.
fn search(app: &mut App, desk: &dyn Desk, filter: &Mutex<BoardFilter>, words: Option<String>) {
    let read_for = {
        let mut shared = filter
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // The label the board was started with, if any, stays.
        match Search::new(shared.search.label(), words.as_deref()) {
            Ok(search) => shared.search = search,
            Err(refused) => {
                app.search = shared.search.text().map(str::to_string);
                app.notify(format!("error: {}", inline(&refused.to_string())), true);
                return;
            }
        }
        shared.clone()
    };
    match board_at::read(desk, &read_for) {
        Ok(snapshot) => {
            let shown = snapshot.views.len();
            app.replace(snapshot);
            let text = match &words {
                Some(words) => format!(
                    "{} holding `{}` · / then Esc shows every task",
                    baton::plural::count(shown, "task"),
                    inline(words)
                ),
                None => "search cleared: every task shown".to_string(),
            };
            app.notify(text, false);
        }
        Err(error) => app.notify(one_line(&error), true),
    }
}

/// Does what a key asked, as the CLI would, and says how it went.
fn carry_out(app: &mut App, desk: &dyn Desk, effect: Effect) {
    let outcome = match effect {
        Effect::Act(id, action) => desk.act(id, action).map(|changed| {
            app.select(changed.task.task.id);
            changed_line(&changed)
        }),
        // `send --to TO --subject SUBJECT`, the rest as `send`'s defaults.
        Effect::Send { to, subject } => desk
            .send(NewTask {
                to: Some(to),
                subject,
                priority: Priority::Normal,
                ..NewTask::default()
            })
            .map(|changed| {
                app.select(changed.task.task.id);
                changed_line(&changed)
            }),
        Effect::Message { to, text } => desk
            .message(&to, &text, MessageType::Text, None)
            .map(|sent| first_line(&render::sent(&sent))),
        // The viewer's unread messages numbered up to `through` (those the view drew)
        // count as read; one that arrived since stays unread. Said only when it fails: the
        // view already shows the messages.
        Effect::MarkRead(through) => match desk.messages(false, Marking::Through(through)) {
            Ok(_) => return,
            Err(error) => Err(error),
        },
        Effect::Unreserve { agent, pattern } => {
            let mine = app.agent.as_deref() == Some(agent.as_str());
            desk.unreserve(UnreserveAsk {
                patterns: Some(vec![pattern]),
                agent: (!mine).then_some(agent),
            })
            .map(|ended| first_line(&super::reserve::ended_words(&ended)))
        }
        // Carried out by the loop, which holds what the board is read for.
        Effect::Nothing | Effect::Quit | Effect::Search(_) => return,
    };
    match outcome {
        Ok(text) => app.notify(text, false),
        Err(error) => app.notify(one_line(&error), true),
    }
}

/// A change in one line: what the CLI prints first, then warnings and wakes, which the CLI
/// writes on stderr and the board cannot.
fn changed_line(changed: &baton::session::Changed) -> String {
    let mut text = first_line(&render::changed(changed));
    for warning in &changed.warnings {
        text.push_str(&format!(" · warning: {}", inline(warning)));
    }
    for woken in &changed.woken {
        text.push_str(&format!(" · {}", inline(&wake::describe(woken))));
    }
    text
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// An error as the CLI words it, `error: …` and its hint, on one line.
pub(super) fn one_line(error: &Error) -> String {
    let mut text = format!("error: {}", inline(&error.to_string()));
    if let Some(hint) = error.hint() {
        text.push_str(&format!(" · hint: {}", inline(&hint)));
    }
    text
}

fn terminal_error(error: std::io::Error) -> Error {
    Error::invalid(format!("the terminal: {error}"))
}

/// Keys and resizes, read on a thread of their own so the loop can also wait for changes.
fn follow_terminal(sender: mpsc::Sender<Wake>) {
    thread::spawn(move || {
        loop {
            let wake = match event::read() {
                Ok(event) => Wake::Terminal(event),
                Err(error) => {
                    let _ = sender.send(Wake::TerminalLost(error.to_string()));
                    return;
                }
            };
            if sender.send(wake).is_err() {
                return;
            }
        }
    });
}

/// SIGTERM, SIGHUP, SIGINT and SIGQUIT (on Windows: the console closing, the system shutting
/// down, Ctrl-C and Ctrl-Break) end the board like `q`, so the terminal is given back. In
/// raw mode Ctrl-C and Ctrl-\ are keys, but `kill -INT` or `kill -QUIT` from elsewhere are
/// still signals, whose default ends the process with the terminal left raw; a signal handler of its own would have to
/// be `unsafe`, tokio's is not. The handlers are in place when this returns, before the
/// board is first drawn: a signal that comes as soon as the board shows is not lost.
fn follow_signals(sender: mpsc::Sender<Wake>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let ended = {
        let _inside = runtime.enter();
        ended()
    };
    let Ok(ended) = ended else {
        return;
    };
    thread::spawn(move || {
        runtime.block_on(ended);
        let _ = sender.send(Wake::Stop);
    });
}

/// What completes when the process is asked to end, listened for from now; an error when
/// that cannot be listened for.
#[cfg(unix)]
fn ended() -> std::io::Result<impl Future<Output = ()> + Send> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hang_up = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut quit = signal(SignalKind::quit())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = hang_up.recv() => {}
            _ = interrupt.recv() => {}
            _ = quit.recv() => {}
        }
    })
}

#[cfg(windows)]
fn ended() -> std::io::Result<impl Future<Output = ()> + Send> {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
    let mut close = ctrl_close()?;
    let mut shutdown = ctrl_shutdown()?;
    let mut interrupt = ctrl_c()?;
    let mut quit = ctrl_break()?;
    Ok(async move {
        tokio::select! {
            _ = close.recv() => {}
            _ = shutdown.recv() => {}
            _ = interrupt.recv() => {}
            _ = quit.recv() => {}
        }
    })
}

#[cfg(not(any(unix, windows)))]
fn ended() -> std::io::Result<impl Future<Output = ()> + Send> {
    Ok(std::future::pending())
}
