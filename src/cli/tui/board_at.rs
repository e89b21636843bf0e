//! What the terminal board reads, and when: the board, the agents, the activity and the
//! viewer's messages, read from the desk (this machine's hub, or a hub elsewhere) when it
//! says the project changed. A refusal of what a key does is the one the CLI would print,
//! since the keys act through the same desk.

use std::sync::{Arc, Mutex, mpsc};
use std::thread;

use baton::error::Error;
use baton::mail::Marking;
use baton::session::{BoardFilter, Desk, Follow, Mail};

use super::state::Snapshot;
use super::{ACTIVITY_LINES, MESSAGES_KEPT, REDRAW_EVERY, Wake, one_line};

/// The board, the agents and the latest activity as they are now. The board is what
/// matters: agents or a log that cannot be read leave their panes empty rather than the
/// whole board unshown.
pub fn read(desk: &dyn Desk, filter: &BoardFilter) -> Result<Snapshot, Error> {
    let project = desk.project_id()?;
    let views = desk.board(filter)?;
    let now = baton::time::now();
    let agents = desk.agents().ok();
    let activity = desk.log(ACTIVITY_LINES, None).unwrap_or_default();
    let mut snapshot = Snapshot::new(project, now, views, agents, activity);
    snapshot.search = filter.search.text().map(str::to_string);
    // Looked at, not marked read: the messages view marks what it shows.
    snapshot.mail = desk.messages(true, Marking::Leave).ok().map(latest);
    Ok(snapshot)
}

/// The latest [`MESSAGES_KEPT`] of `mail`'s messages: what the messages view can show.
fn latest(mut mail: Mail) -> Mail {
    let older = mail.messages.len().saturating_sub(MESSAGES_KEPT);
    mail.messages.drain(..older);
    mail
}

/// Reads the board on a thread of its own whenever the desk says it changed and every
/// [`REDRAW_EVERY`], for what `filter` asks at the time (`/` changes it), so that a read of
/// a 10,000-task board never holds up a key. Changes during a read are read once after it.
/// A way of following changes that breaks (a hub's event stream) is opened again at most
/// once a redraw: a hub that is down is not hammered, and the read after each break says
/// whether it is there. Once open again, the notice line says where (the second hub, when
/// the first died), as `watch` says it on stderr.
pub fn follow(desk: Arc<dyn Desk>, filter: Arc<Mutex<BoardFilter>>, sender: mpsc::Sender<Wake>) {
    thread::spawn(move || {
        let mut changes: Option<Box<dyn Follow>> = desk.follow().ok();
        let mut was_broken = false;
        loop {
            let is_broken = match &mut changes {
                Some(changes) => changes.wait(REDRAW_EVERY).is_err(),
                None => {
                    thread::sleep(REDRAW_EVERY);
                    changes = desk.follow().ok();
                    false
                }
            };
            let reconnected = match &changes {
                Some(changes) if was_broken && !is_broken => Some(
                    crate::cli::reconnect::connected_again(changes.source().as_deref()),
                ),
                _ => None,
            };
            was_broken = is_broken;
            // What `/` asks for now; a read for words changed meanwhile is not shown.
            let filter = filter
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .clone();
            let wake = match read(desk.as_ref(), &filter) {
                Ok(snapshot) => Wake::Read(Box::new(snapshot)),
                Err(error) => Wake::ReadFailed(one_line(&error)),
            };
            if sender.send(wake).is_err() {
                return;
            }
            if let Some(words) = reconnected
                && sender.send(Wake::Reconnected(words)).is_err()
            {
                return;
            }
            if is_broken {
                thread::sleep(REDRAW_EVERY);
            }
        }
    });
}
