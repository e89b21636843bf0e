//! `/api/v1/events`: one server-sent event per change anywhere on the hub (SPEC section 12),
//! `{project, kind, id}`, whoever made it (the CLI, an agent, a page, another hub sharing the
//! store).
//!
//! One thread waits on the store's feed of the hub's changes ([`Store::changes`] with
//! [`Scope::Hub`]: on the files, the kernel's file events on the files every change is
//! written to). Each change it tells becomes an event: an activity record's `kind` is its
//! action and `id` its task; a message's `kind` is `message` and `id` its seq; a board write
//! with no record of its own (a delivery mark) is `board`. What it finds goes to every open
//! stream through a bounded broadcast: a client that reads slowly misses events and is told
//! to look again (`kind` `resync`, as every stream is when the feed says changes were lost),
//! and never holds up the feed, let alone a change.
//!
//! A stream lasts no longer than its token (SPEC section 13): it asks again whether the
//! token is good whenever the feed says the tokens changed, before every event and at every
//! keep-alive, and ends once it is not (removed, replaced, or the login of a server that
//! stopped).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::response::Response;
use axum::response::sse::{Event, KeepAlive, Sse};
use tokio::sync::{broadcast, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::session::blocking::off_thread;
use crate::store::{self, ChangeFeed, Scope, Store, StoreError, What};
use crate::tokens::{self, KeptTokens, TokenId};

/// How long the follower waits for changes before it asks again whether the server is
/// stopping (a stopping server wakes it at once; this is for one that cannot).
const ASK_STOP_EVERY: Duration = Duration::from_secs(5);
/// How long the follower waits before it tries again a feed that broke (a store's
/// connection lost), at first; doubled while it stays broken, up to [`ASK_STOP_EVERY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
/// How many events a stream may fall behind before it is told to look again.
const BACKLOG: usize = 512;
/// A comment line this often keeps proxies and clients from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One change, as a stream carries it.
pub use crate::json_api::{Change, ChangeKind};

/// The changes found on the hub, for every stream to subscribe to, and a count of the
/// changes of the tokens.
#[derive(Debug, Clone)]
pub struct Feed {
    sender: broadcast::Sender<Change>,
    tokens: watch::Receiver<u64>,
    /// The ids of the MCP sessions ended, here or on another hub sharing the store.
    sessions_ended: broadcast::Sender<String>,
}

impl Feed {
    /// Starts following the changes `store` commits from now on, until `stop` is
    /// cancelled.
    pub fn start(store: Arc<dyn Store>, stop: CancellationToken) -> Feed {
        let (sender, _) = broadcast::channel(BACKLOG);
        let (tokens_changed, tokens) = watch::channel(0);
        let (sessions_ended, _) = broadcast::channel(BACKLOG);
        let feed = Feed {
            sender: sender.clone(),
            tokens,
            sessions_ended: sessions_ended.clone(),
        };
        // Made here, before the server answers anything: no change after it is missed.
        let first = store.changes(&Scope::Hub);
        let follower = Follower {
            store,
            sender,
            tokens_changed,
            sessions_ended,
            stop,
            runtime: tokio::runtime::Handle::try_current().ok(),
        };
        std::thread::Builder::new()
            .name("baton-feed".to_string())
            .spawn(move || follower.follow(first))
            .expect("a thread for the event feed");
        feed
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.sender.subscribe()
    }

    /// The ids of the MCP sessions ended from now on (DELETE, or their token gone), on this
    /// hub or another sharing the store: their push streams end at once
    /// ([`super::pushes`]). A receiver that lags has missed some, and asks the store.
    pub fn sessions_ended(&self) -> broadcast::Receiver<String> {
        self.sessions_ended.subscribe()
    }

    /// Tells this hub's streams that the session `id` ended here (a store that tells other
    /// hubs tells this one too, a moment later: a stream ends once).
    pub fn tell_session_ended(&self, id: String) {
        // No stream open is no one to tell.
        let _ = self.sessions_ended.send(id);
    }

    /// Told each time the tokens changed (a token added, removed or replaced).
    pub fn tokens_changed(&self) -> watch::Receiver<u64> {
        let mut tokens = self.tokens.clone();
        tokens.mark_unchanged();
        tokens
    }
}

/// The server-sent event stream of every change from now on, until the client goes, the
/// server stops or the request's token is no longer good; refused when the token, or the
/// server, has as many streams open as it may ([`super::streams`]).
pub async fn stream(
    State(state): State<super::State>,
    Extension(token): Extension<TokenId>,
    Extension(caller): Extension<crate::session::blocking::Caller>,
    headers: axum::http::HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Response> {
    let slot = state
        .streams
        .try_open(&token)
        .map_err(super::streams::refusal)?;
    // A `baton listen` of the token's agent is announced for as long as its stream is open,
    // so that work handed to the agent meanwhile is known to reach it (SPEC section 13).
    // Announced before the stream opens: once the listener hears it open, it is known.
    let is_listener = headers
        .get(crate::remote::OBSERVER_HEADER)
        .is_some_and(|value| value == crate::remote::Observer::Listen.as_str());
    let listener = match is_listener {
        true => {
            let store = state.hub.store.clone();
            let agent = caller.0.clone();
            off_thread(move || store.announce_listener(&agent).ok())
                .await
                .ok()
                .flatten()
        }
        false => None,
    };
    let mut changes = state.feed.subscribe();
    let mut tokens_changed = state.feed.tokens_changed();
    let (sender, events) = tokio::sync::mpsc::channel::<Change>(16);
    let stopping = state.stopping.clone();
    let store = state.hub.store.clone();
    let kept = state.tokens.clone();
    let mut keep_alive =
        tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    tokio::spawn(async move {
        // Taken back when the stream ends, whichever way (its client gone, its token removed).
        let _listener = listener;
        let _slot = slot;
        loop {
            // `biased`: a change of the tokens is looked at before the changes the feed told
            // with it, so a token removed with them sees none.
            let change = tokio::select! {
                biased;
                () = stopping.cancelled() => break,
                () = sender.closed() => break,
                changed = tokens_changed.changed() => {
                    if changed.is_err() || !is_current(&store, &kept, &token).await {
                        break;
                    }
                    continue;
                }
                _ = keep_alive.tick() => {
                    // A login whose server stopped leaves the tokens as they were.
                    if !is_current(&store, &kept, &token).await {
                        break;
                    }
                    continue;
                }
                change = changes.recv() => match change {
                    Ok(change) => change,
                    Err(broadcast::error::RecvError::Lagged(_)) => Change::resync(),
                    Err(broadcast::error::RecvError::Closed) => break,
                },
            };
            if !is_current(&store, &kept, &token).await {
                break;
            }
            // A slow reader holds up only this loop; the feed goes on and this stream is
            // told to look again once it catches up.
            if sender.send(change).await.is_err() {
                break;
            }
        }
    });
    let events = ReceiverStream::new(events).map(|change| {
        let data = serde_json::to_string(&change).unwrap_or_default();
        Ok(Event::default().event("change").data(data))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive")))
}

/// Whether `token` is still good; a tokens file that cannot be read says no, as it refuses
/// every request meanwhile.
pub(super) async fn is_current(
    store: &Arc<dyn Store>,
    kept: &Arc<KeptTokens>,
    token: &TokenId,
) -> bool {
    let (store, kept, token) = (store.clone(), kept.clone(), token.clone());
    off_thread(move || tokens::is_current(&*store, &kept, &token))
        .await
        .is_ok_and(|current| current.unwrap_or(false))
}

/// What carries the store's changes to the streams, on a thread of its own.
struct Follower {
    store: Arc<dyn Store>,
    sender: broadcast::Sender<Change>,
    tokens_changed: watch::Sender<u64>,
    sessions_ended: broadcast::Sender<String>,
    stop: CancellationToken,
    /// Where the task that wakes the feed when the server stops runs.
    runtime: Option<tokio::runtime::Handle>,
}

impl Follower {
    /// Carries what the feed tells until the server stops. A feed that breaks, or cannot be
    /// made, is tried again after a pause; once back, it tells that changes may have been
    /// missed ([`What::Everything`]), and every stream is told to look again.
    fn follow(self, first: Result<Box<dyn ChangeFeed>, StoreError>) {
        let mut feed = self.woken_on_stop(first);
        let mut pause = FIRST_RETRY;
        while !self.stop.is_cancelled() {
            let Some(open) = feed.as_mut() else {
                self.pause(pause);
                pause = (pause * 2).min(ASK_STOP_EVERY);
                feed = self.woken_on_stop(self.store.changes(&Scope::Hub));
                if feed.is_some() {
                    self.tell(store::Change {
                        project: None,
                        what: What::Everything,
                    });
                }
                continue;
            };
            let changes = match open.next(ASK_STOP_EVERY) {
                Ok(changes) => changes,
                Err(_) => {
                    // The feed tries again itself, and says what it missed once back.
                    self.pause(pause);
                    pause = (pause * 2).min(ASK_STOP_EVERY);
                    continue;
                }
            };
            pause = FIRST_RETRY;
            if self.stop.is_cancelled() {
                break;
            }
            for change in changes {
                self.tell(change);
            }
        }
    }

    /// `made`, if it was, set to be woken when the server stops (it would otherwise sleep
    /// until a change).
    fn woken_on_stop(
        &self,
        made: Result<Box<dyn ChangeFeed>, StoreError>,
    ) -> Option<Box<dyn ChangeFeed>> {
        let feed = made.ok()?;
        if let Some(runtime) = &self.runtime {
            let (stop, waker) = (self.stop.clone(), feed.waker());
            runtime.spawn(async move {
                stop.cancelled().await;
                waker.wake();
            });
        }
        Some(feed)
    }

    /// Waits `pause`, or less if the server stops meanwhile.
    fn pause(&self, pause: Duration) {
        let started = std::time::Instant::now();
        while !self.stop.is_cancelled() && started.elapsed() < pause {
            std::thread::sleep(pause.min(Duration::from_millis(50)));
        }
    }

    /// Passes one change on: the tokens' to the streams' token checks, every other to the
    /// streams themselves. Nobody listening is not an error: the next stream starts from
    /// now.
    fn tell(&self, change: store::Change) {
        let told = match change.what {
            What::Tokens => {
                self.tokens_changed.send_modify(|count| *count += 1);
                return;
            }
            What::McpSessionEnded { id } => {
                let _ = self.sessions_ended.send(id);
                return;
            }
            What::Everything => Change::resync(),
            What::Logged { action, task } => Change {
                project: change.project,
                kind: ChangeKind::Logged(action),
                id: task,
            },
            What::Message { seq } => Change {
                project: change.project,
                kind: ChangeKind::Message,
                id: Some(seq),
            },
            // A change the store told without saying which is a change of the board, as
            // far as a stream can say.
            What::Board | What::Project => Change {
                project: change.project,
                kind: ChangeKind::Board,
                id: None,
            },
        };
        let _ = self.sender.send(told);
    }
}
