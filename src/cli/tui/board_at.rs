//! Where the terminal board's tasks live: this machine's hub, through the session as the CLI
//! calls it, or a hub elsewhere (`BATON_URL`), through its JSON API as the CLI's remote face
//! calls it. Either way a refusal is the one the CLI would print.

use std::sync::mpsc;
use std::thread;

use serde_json::json;

use baton::board::task::{Priority, TaskId};
use baton::board::transition::Action;
use baton::error::Error;
use baton::mail::{Marking, MessageType};
use baton::project::{self, Project};
use baton::session::{AgentMatrix, BoardFilter, Changed, Mail, NewTask, Sent, Session, TaskView};
use baton::watch::{self, FileWatch};

use super::state::Snapshot;
use super::{ACTIVITY_LINES, MESSAGES_KEPT, REDRAW_EVERY, Wake, one_line};

/// A board and the identity that acts on it.
#[derive(Debug, Clone)]
pub enum BoardAt {
    /// This machine's hub.
    Here(Session),
    /// The hub at `BATON_URL`, as the token's agent.
    Remote {
        hub: baton::remote::Hub,
        project: String,
        agent: String,
    },
}

impl BoardAt {
    /// Who acts: none for a local board opened without `--as`/`BATON_AGENT`.
    pub fn agent(&self) -> Option<String> {
        match self {
            BoardAt::Here(session) => session.agent().ok().map(str::to_string),
            BoardAt::Remote { agent, .. } => Some(agent.clone()),
        }
    }

    /// The board, the agents and the latest activity as they are now. The board is what
    /// matters: agents or a log that cannot be read leave their panes empty rather than the
    /// whole board unshown.
    pub fn read(&self, filter: &BoardFilter) -> Result<Snapshot, Error> {
        match self {
            BoardAt::Here(session) => {
                let session = watch::at_now(session);
                let views = session.list(filter)?;
                let agents = session.agents().ok();
                let activity = session.log(Some(ACTIVITY_LINES), None).unwrap_or_default();
                let mut snapshot = Snapshot::new(
                    session.project.id.clone(),
                    session.now,
                    views,
                    agents,
                    activity,
                );
                // Looked at, not marked read: the messages view marks what it shows.
                snapshot.mail = session.messages(true, Marking::Leave).ok().map(latest);
                // As the session reads it for each change: it may change while the board runs.
                snapshot.coordinator = project::load(&*session.hub.store, session.project_id())
                    .ok()
                    .flatten()
                    .and_then(|project| project.coordinator);
                Ok(snapshot)
            }
            BoardAt::Remote { hub, project, .. } => {
                let now = baton::time::now();
                let views: Vec<TaskView> = hub.get(&super::super::remote::board_path(
                    project,
                    filter.status,
                    filter.mine,
                    filter.all,
                ))?;
                let agents: Option<AgentMatrix> =
                    hub.get(&format!("/projects/{project}/agents")).ok();
                let activity = hub
                    .get(&format!("/projects/{project}/log?n={ACTIVITY_LINES}"))
                    .unwrap_or_default();
                let mut snapshot = Snapshot::new(project.clone(), now, views, agents, activity);
                snapshot.mail = hub
                    .get::<Mail>(&format!("/projects/{project}/messages?all=true&peek=true"))
                    .ok()
                    .map(latest);
                snapshot.coordinator = hub
                    .get::<Project>(&format!("/projects/{project}"))
                    .ok()
                    .and_then(|project| project.coordinator);
                Ok(snapshot)
            }
        }
    }

    /// The viewer's unread messages numbered up to `through` (those the view drew) count
    /// as read; one that arrived since stays unread.
    pub fn mark_read(&self, through: u64) -> Result<Mail, Error> {
        match self {
            BoardAt::Here(session) => {
                watch::at_now(session).messages(false, Marking::Through(through))
            }
            BoardAt::Remote { hub, project, .. } => hub.get(&format!(
                "/projects/{project}/messages?all=false&through={through}"
            )),
        }
    }

    pub fn act(&self, id: TaskId, action: Action) -> Result<Changed, Error> {
        match self {
            BoardAt::Here(session) => watch::at_now(session).act(id, action),
            BoardAt::Remote { hub, project, .. } => {
                super::super::remote::act(hub, project, id, &action)
            }
        }
    }

    /// `send --to TO --subject SUBJECT`, the rest as `send`'s defaults.
    pub fn send(&self, to: String, subject: String) -> Result<Changed, Error> {
        match self {
            BoardAt::Here(session) => watch::at_now(session).send(NewTask {
                to: Some(to),
                skill: None,
                subject,
                body: String::new(),
                files: Vec::new(),
                priority: Priority::Normal,
                after: Vec::new(),
                review: false,
                reviewer: None,
            }),
            BoardAt::Remote { hub, project, .. } => hub.post(
                &format!("/projects/{project}/tasks"),
                &json!({"to": to, "subject": subject, "body": "", "files": [],
                        "priority": Priority::Normal, "after": [], "review": false}),
            ),
        }
    }

    pub fn message(&self, to: &str, text: &str) -> Result<Sent, Error> {
        match self {
            BoardAt::Here(session) => {
                watch::at_now(session).message(to, text, MessageType::Text, None)
            }
            BoardAt::Remote { hub, project, .. } => super::super::remote::message(
                hub,
                project,
                to,
                text,
                MessageType::Text.as_str(),
                None,
            ),
        }
    }

    /// Reads the board on a thread of its own whenever it changes and every
    /// [`REDRAW_EVERY`], so that a read of a 10,000-task board never holds up a key.
    /// Changes during a read are read once after it. Here a change is told by the kernel's
    /// file events (else a poll) on the project's files; on a remote hub by its event
    /// stream, opened again when it breaks.
    pub fn follow(self, filter: BoardFilter, sender: mpsc::Sender<Wake>) {
        thread::spawn(move || {
            let mut changes = Changes::of(&self);
            loop {
                changes.wait(&self);
                let wake = match self.read(&filter) {
                    Ok(snapshot) => Wake::Read(Box::new(snapshot)),
                    Err(error) => Wake::ReadFailed(one_line(&error)),
                };
                if sender.send(wake).is_err() {
                    return;
                }
            }
        });
    }
}

/// The latest [`MESSAGES_KEPT`] of `mail`'s messages: what the messages view can show.
fn latest(mut mail: Mail) -> Mail {
    let older = mail.messages.len().saturating_sub(MESSAGES_KEPT);
    mail.messages.drain(..older);
    mail
}

/// What tells the reader that the board may have changed.
enum Changes {
    // Boxed: on macOS the file watch is several times the size of a stream.
    Files(Box<FileWatch>),
    Stream(Option<baton::remote::events::Events>),
}

impl Changes {
    fn of(board: &BoardAt) -> Changes {
        match board {
            BoardAt::Here(session) => {
                let mut files = FileWatch::project(session.home(), session.project_id());
                // The board was read just before: only what changes from now on counts.
                files.has_changed();
                Changes::Files(Box::new(files))
            }
            BoardAt::Remote { hub, .. } => Changes::Stream(hub.events().ok()),
        }
    }

    /// Returns after a change, or after [`REDRAW_EVERY`] without one.
    fn wait(&mut self, board: &BoardAt) {
        match (self, board) {
            (Changes::Files(files), _) => {
                files.wait_for_change(REDRAW_EVERY);
            }
            (Changes::Stream(stream), BoardAt::Remote { hub, .. }) => match stream {
                Some(events) => {
                    if events.next(REDRAW_EVERY).is_err() {
                        // A broken stream: the read that follows says whether the hub is
                        // there, and the next wait opens the stream again.
                        *stream = None;
                    }
                }
                None => {
                    // Reopened at most once a redraw: a hub that is down is not hammered.
                    thread::sleep(REDRAW_EVERY);
                    *stream = hub.events().ok();
                }
            },
            (Changes::Stream(_), BoardAt::Here(_)) => thread::sleep(REDRAW_EVERY),
        }
    }
}
