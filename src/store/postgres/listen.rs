//! The change feeds of a PostgreSQL store ([`crate::store::feed`]), by LISTEN/NOTIFY: every
//! change sends its notifications in its own transaction (so they go out when, and only
//! when, it commits, in commit order), and one connection per process listens for them, on
//! a thread of its own, and hands each to the feeds that want it. Nothing is polled.
//!
//! A notification's payload is a small JSON object: the project (`p`), what changed (`k`:
//! `log`, `mail`, `mailbox`, `board` or `tokens`) and what names it (`a` an action, `t` a
//! task, `s` a record's or a message's number, which also keeps two notifications of one
//! transaction apart: the server sends identical ones once).
//!
//! When the listening connection is cut, the feeds say so (an error) until it is back, and
//! then tell [`What::Everything`]: what was committed meanwhile was not heard.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

use super::address::Address;
use super::client;
use super::pool::describe;
use super::tls::Rustls;
use crate::board::record::LogAction;
use crate::store::StoreError;
use crate::store::feed::{Change, ChangeFeed, FeedWaker, Scope, What};

/// The channel every change is told on.
pub const CHANNEL: &str = "baton_changes";

/// How long making a feed waits for the listening connection.
const CONNECT_WITHIN: Duration = Duration::from_secs(10);

/// How long the listener waits before connecting again.
const RECONNECT_AFTER: Duration = Duration::from_millis(250);

/// How often the listening connection is asked whether the server still answers. A
/// connection that is only listened on says nothing when its server stops answering (the
/// TCP connection may well stay up): asked so, it is found out within this and
/// [`client::ANSWER_WITHIN`], the feeds are told, and it connects again. One empty
/// statement a minute costs the server nothing.
const ASK_EVERY: Duration = Duration::from_secs(60);

/// One notification's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    #[serde(rename = "p", default, skip_serializing_if = "String::is_empty")]
    pub project: String,
    #[serde(rename = "k")]
    pub kind: Kind,
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub task: Option<u64>,
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// What a notification tells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An activity record.
    Log,
    /// A message added to the mail.
    Mail,
    /// The mail changed otherwise (messages moved to the archive).
    Mailbox,
    /// The board written with no record of its own.
    Board,
    /// The tokens.
    Tokens,
    /// An MCP session ended; its id is in the notice's `project` field (`p`), which a
    /// session is of none.
    Session,
}

impl Notice {
    pub fn text(&self) -> String {
        // Plain data: serializing it cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// What a feed of `scope` tells of it; `None` when it is not that feed's.
    fn change_for(&self, scope: &Scope) -> Option<Change> {
        match scope {
            Scope::Project(project) => (!matches!(self.kind, Kind::Tokens | Kind::Session)
                && self.project == *project)
                .then(|| Change::in_project(project, What::Project)),
            Scope::Hub => {
                let what = match self.kind {
                    Kind::Log => What::Logged {
                        action: LogAction::from(self.action.as_deref().unwrap_or_default()),
                        task: self.task,
                    },
                    Kind::Mail => What::Message {
                        seq: self.seq.unwrap_or(0),
                    },
                    Kind::Board => What::Board,
                    Kind::Tokens => {
                        return Some(Change {
                            project: None,
                            what: What::Tokens,
                        });
                    }
                    Kind::Session => {
                        return Some(Change {
                            project: None,
                            what: What::McpSessionEnded {
                                id: self.project.clone(),
                            },
                        });
                    }
                    Kind::Mailbox => return None,
                };
                Some(Change::in_project(&self.project, what))
            }
        }
    }
}

/// What the listening thread and the feeds share.
#[derive(Debug, Default)]
struct Listening {
    state: Mutex<State>,
    /// Told when the connection comes or goes.
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Whether the connection is listening now.
    is_listening: bool,
    /// Why it is not, when it tried and failed.
    trouble: Option<String>,
    feeds: Vec<Weak<Subscriber>>,
}

/// The listening thread of a process (of one store), started on the first feed.
#[derive(Debug)]
pub struct Listener {
    listening: Arc<Listening>,
    /// Dropped with the listener: the thread then ends.
    _stop: mpsc::UnboundedSender<()>,
}

impl Listener {
    /// Starts listening at `address`.
    pub fn start(address: Address, tls: Rustls, shown: &str) -> Result<Listener, StoreError> {
        let listening = Arc::new(Listening::default());
        let (stop, stopped) = mpsc::unbounded_channel();
        let shared = listening.clone();
        super::run_on_a_thread(
            "baton-listen",
            "the listening thread",
            shown,
            listen(address, tls, shared, stopped),
        )?;
        Ok(Listener {
            listening,
            _stop: stop,
        })
    }

    /// A feed of `scope`, telling every change committed from now on; fails when the
    /// listening connection is not up within [`CONNECT_WITHIN`].
    pub fn feed(&self, scope: &Scope, shown: &str) -> Result<Box<dyn ChangeFeed>, StoreError> {
        let deadline = Instant::now() + CONNECT_WITHIN;
        let mut state = lock(&self.listening.state);
        while !state.is_listening {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StoreError::Unreachable {
                    store: shown.to_string(),
                    detail: state
                        .trouble
                        .clone()
                        .unwrap_or_else(|| "the listening connection is not up".to_string()),
                    lasting: false,
                });
            }
            state = self
                .listening
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let subscriber = Arc::new(Subscriber {
            scope: scope.clone(),
            queue: Mutex::default(),
            arrived: Condvar::new(),
        });
        state.feeds.retain(|feed| feed.strong_count() > 0);
        state.feeds.push(Arc::downgrade(&subscriber));
        Ok(Box::new(Feed {
            subscriber,
            listening: self.listening.clone(),
            shown: shown.to_string(),
        }))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One feed's side: the changes told to it and not yet taken.
#[derive(Debug)]
struct Subscriber {
    scope: Scope,
    queue: Mutex<Queue>,
    arrived: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    changes: Vec<Change>,
    /// A waker asked the wait to end.
    woken: bool,
    /// The connection was lost since the last look: changes may have been missed.
    lost: bool,
}

impl Subscriber {
    fn tell(&self, change: Change) {
        let mut queue = lock(&self.queue);
        if !queue.changes.contains(&change) || matches!(change.what, What::Logged { .. }) {
            queue.changes.push(change);
        }
        drop(queue);
        self.arrived.notify_all();
    }
}

/// A feed of a PostgreSQL store.
struct Feed {
    subscriber: Arc<Subscriber>,
    listening: Arc<Listening>,
    shown: String,
}

impl ChangeFeed for Feed {
    fn next(&mut self, within: Duration) -> Result<Vec<Change>, StoreError> {
        let deadline = Instant::now() + within;
        let mut queue = lock(&self.subscriber.queue);
        loop {
            if !queue.changes.is_empty() {
                return Ok(std::mem::take(&mut queue.changes));
            }
            if queue.woken {
                queue.woken = false;
                return Ok(Vec::new());
            }
            if queue.lost {
                let state = lock(&self.listening.state);
                if !state.is_listening {
                    return Err(StoreError::Unreachable {
                        store: self.shown.clone(),
                        detail: state
                            .trouble
                            .clone()
                            .unwrap_or_else(|| "the listening connection was lost".to_string()),
                        lasting: false,
                    });
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Vec::new());
            }
            queue = self
                .subscriber
                .arrived
                .wait_timeout(queue, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn waker(&self) -> FeedWaker {
        let subscriber = self.subscriber.clone();
        FeedWaker::new(move || {
            lock(&subscriber.queue).woken = true;
            subscriber.arrived.notify_all();
        })
    }
}

/// The live feeds, dropping those gone.
fn feeds(listening: &Listening) -> Vec<Arc<Subscriber>> {
    let mut state = lock(&listening.state);
    state.feeds.retain(|feed| feed.strong_count() > 0);
    state.feeds.iter().filter_map(Weak::upgrade).collect()
}

/// The listening thread's work: connect, LISTEN, hand each notification to the feeds; when
/// the connection goes, tell the feeds and connect again, until the listener is dropped.
async fn listen(
    address: Address,
    tls: Rustls,
    listening: Arc<Listening>,
    mut stop: mpsc::UnboundedReceiver<()>,
) {
    loop {
        let connected = tokio::select! {
            connected = client::connect(&address, tls.clone()) => connected,
            _ = stop.recv() => return,
        };
        let (client, mut connection) = match connected {
            Ok(connected) => connected,
            Err(error) => {
                lock(&listening.state).trouble = Some(describe(&error));
                listening.changed.notify_all();
                tokio::select! {
                    () = tokio::time::sleep(RECONNECT_AFTER * 4) => continue,
                    _ = stop.recv() => return,
                }
            }
        };
        // The connection's messages: the notifications come through here.
        let (notices, mut heard) = mpsc::unbounded_channel();
        let driver = tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|context| connection.poll_message(context)).await {
                    Some(Ok(AsyncMessage::Notification(notification))) => {
                        if notices.send(notification.payload().to_string()).is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => return,
                }
            }
        });
        let listened = client::answered(client.batch_execute(&format!("LISTEN {CHANNEL}"))).await;
        if let Err(error) = listened {
            lock(&listening.state).trouble = Some(describe(&error));
            driver.abort();
            tokio::time::sleep(RECONNECT_AFTER).await;
            continue;
        }
        {
            let mut state = lock(&listening.state);
            state.is_listening = true;
            state.trouble = None;
        }
        listening.changed.notify_all();
        // The feeds that lost the connection before hear that they may have missed changes.
        for feed in feeds(&listening) {
            let mut queue = lock(&feed.queue);
            if queue.lost {
                queue.lost = false;
                let everything = Change {
                    project: None,
                    what: What::Everything,
                };
                if !queue.changes.contains(&everything) {
                    queue.changes.push(everything);
                }
                drop(queue);
                feed.arrived.notify_all();
            }
        }
        let mut ask = tokio::time::interval_at(tokio::time::Instant::now() + ASK_EVERY, ASK_EVERY);
        loop {
            let payload = tokio::select! {
                payload = heard.recv() => payload,
                _ = ask.tick() => {
                    match client::answered(client.batch_execute("")).await {
                        Ok(()) => continue,
                        // Cut: the socket closes with the driver.
                        Err(_) => {
                            driver.abort();
                            break;
                        }
                    }
                }
                _ = stop.recv() => return,
            };
            let Some(payload) = payload else {
                break;
            };
            let Ok(notice) = serde_json::from_str::<Notice>(&payload) else {
                continue;
            };
            for feed in feeds(&listening) {
                if let Some(change) = notice.change_for(&feed.scope) {
                    feed.tell(change);
                }
            }
        }
        drop(client);
        {
            let mut state = lock(&listening.state);
            state.is_listening = false;
            state.trouble = Some("the listening connection was lost".to_string());
        }
        for feed in feeds(&listening) {
            lock(&feed.queue).lost = true;
            feed.arrived.notify_all();
        }
        listening.changed.notify_all();
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}
