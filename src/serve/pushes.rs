//! Pushes of new work on an MCP session over HTTP (SPEC section 11, as `baton mcp` makes
//! them over stdio: [`crate::mcp::channel`]), kept in the store so that a session's stream
//! carries on on any hub sharing it, none lost nor repeated when the hub holding it dies.
//!
//! A session's stream (`GET /mcp`) of a client that takes pushes ([`channel::takes_pushes`]:
//! Claude Code) is answered here, not by rmcp. It reads the session's **event log** in the
//! store ([`crate::store::McpSessions::append_mcp_event`]): each event's id is its position
//! in the log (`push-N`), the same on every hub, and a stream that comes back with
//! `Last-Event-ID` resumes strictly after it, on whichever hub its reconnection reaches. A
//! stream opened afresh begins after the log's end, and its first event is a priming event
//! (an id, a `retry`, no data) carrying that position, so the client always has an id to
//! resume from. The streams of a protocol version before priming events (2025-11-25) get
//! none ([`super::priming`]): such a client has an id from its first push on, and one whose
//! stream is cut before it reconnects afresh, after the log's end (an event its dead hub
//! appended and never sent it is then not sent; the hand-over was recorded seen).
//!
//! While a hub holds a session's stream it looks at the boards of every project of the hub
//! for the hand-overs due to the token's agent ([`Session::handovers_to_push`]): when the
//! stream opens, whenever the hub's feed of changes names a project (only that project is
//! looked at again; a message hands nothing over and is passed by), and at every
//! keep-alive (for a change the feed missed). Each hand-over due is **appended to the log
//! first**, keyed by its project, task and delivery (`delivery.since`), and recorded seen
//! after ([`Session::record_pushed`]); then the stream sends every event of the log after
//! its position. A hub that dies between the two leaves the hand-over in the log and unseen:
//! the next look, on any hub, finds it due again and appends nothing (its key is there),
//! and records it seen. Two streams of one session (one on a hub half-dead) append nothing
//! twice for the same reason. A session whose stream is not open is pushed nothing: its
//! work stays unseen for the wake and the next prompt, as over stdio.
//!
//! Why not rmcp's own `EventStore`: it stores every event of every stream (the answer to
//! each call too: a store write per answer), and serves a stream opened without
//! `Last-Event-ID` from the hub's local session alone, so a push made by another hub would
//! never reach it; and the events baton pushes are made from the store's boards, not from a
//! handler's peer. A log of pushes alone, appended by whichever hub holds the stream, is
//! what carries on.
//!
//! The stream ends when its client goes, its session ends (DELETE or a token gone: at once,
//! on any hub, as the store's feed tells it; idle, or a word of the feed lost: at the next
//! keep-alive, and before anything is pushed to it), its token is no longer good, or its
//! hub stops or drains (the client reconnects elsewhere). It is counted among its token's
//! streams ([`super::streams`]: this layer runs inside that count).
//!
//! While it is open, the session is announced as a **live session** of its agent in each
//! project it looks at (client [`LIVE_CLIENT`]), as `baton mcp`'s follower
//! announces a stdio one ([`crate::store::presence`]): a sender is then told the work
//! reaches a live session. The wake command still runs for it, as for a stdio Claude Code
//! session (the client may drop a channel push unsaid: [`crate::wake::supervisor`]). The
//! announcement ends with the stream, and with its hub:
//! it is a lock file or a PostgreSQL advisory lock of the hub's process, which its death
//! lets go of, whichever hub or command looks next.

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{Implementation, ServerJsonRpcMessage};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use crate::json_api::ChangeKind;
use crate::mcp::channel;
use crate::session::blocking::{Caller, Stopped, off_thread};
use crate::session::{Hub, Pushed, Session, Standing};
use crate::store::Store;
use crate::store::presence::Presence;
use crate::tokens::TokenId;

/// The client a session is announced live as while a hub holds its push stream open: a
/// Claude Code session over HTTP (on the files, `live/<project>/<agent>/claude-http-<pid>.lock`).
/// Its pushes do not step the wake aside, as a stdio Claude Code session's do not
/// ([`crate::wake::supervisor`]).
const LIVE_CLIENT: &str = "claude-http";

/// The session a request presents, as its token's check found it in the store: put among
/// the request's extensions by [`super::sessions::bind_to_token`].
#[derive(Debug, Clone)]
pub struct Presented {
    pub id: String,
    /// What its client said it is at `initialize`, when the store kept it.
    pub client: Option<Implementation>,
}

/// The prefix of the event ids of a pushes stream: an id without it is not this log's (the
/// priming event of an answer's stream, which rmcp makes), and is rmcp's to resume.
const ID_PREFIX: &str = "push-";
/// How long a client waits before it opens a cut stream again.
const RETRY: Duration = Duration::from_secs(1);
/// A comment this often keeps proxies from closing an idle stream; the stream also asks
/// then whether its token and session are still good, and looks at the boards again.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Answers the stream (`GET /mcp`) of a session whose client takes pushes; passes every
/// other request on to rmcp.
pub async fn stream_pushes(
    State(state): State<super::State>,
    request: Request,
    next: Next,
) -> Response {
    // A GET that does not take an event stream is rmcp's to refuse (406).
    let takes_events = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("text/event-stream"));
    let taken = request.method() == Method::GET
        && takes_events
        && request
            .extensions()
            .get::<Presented>()
            .and_then(|presented| presented.client.as_ref())
            .is_some_and(channel::takes_pushes);
    let resume = request
        .headers()
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .map(|value| {
            value
                .strip_prefix(ID_PREFIX)
                .and_then(|n| n.parse::<u64>().ok())
        });
    let (true, Some(presented), Some(Caller(agent, _)), Some(token), None | Some(Some(_))) = (
        taken,
        request.extensions().get::<Presented>().cloned(),
        request.extensions().get::<Caller>().cloned(),
        request.extensions().get::<TokenId>().cloned(),
        resume,
    ) else {
        return next.run(request).await;
    };
    let store = state.hub.store.clone();
    let session = presented.id.clone();
    let position = match resume.flatten() {
        Some(after) => after,
        None => match off_thread(move || store.mcp_events_end(&session)).await {
            Ok(Ok(end)) => end,
            Ok(Err(error)) => {
                return super::api::ApiError::from(crate::error::Error::Store(error))
                    .into_response();
            }
            Err(Stopped) => {
                return super::api::ApiError::from(crate::error::Error::Store(
                    crate::store::StoreError::Unfinished,
                ))
                .into_response();
            }
        },
    };
    let (sender, events) = mpsc::channel::<Bytes>(16);
    let stream = Stream {
        hub: state.hub.clone(),
        session: presented.id,
        agent,
        token,
        position,
        pushed: HashMap::new(),
        live: HashMap::new(),
    };
    tokio::spawn(stream.run(state, sender));
    let body = Body::from_stream(ReceiverStream::new(events).map(Ok::<_, Infallible>));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// One open stream of a session's pushes.
struct Stream {
    hub: Hub,
    session: String,
    agent: String,
    token: TokenId,
    /// The position of the last event sent (or resumed after).
    position: u64,
    /// What this stream pushed, per project.
    pushed: HashMap<String, Pushed>,
    /// The session announced live, per project looked at, for as long as the stream is
    /// open.
    live: HashMap<String, Presence>,
}

/// Which projects to look at.
enum Look {
    All,
    Some(BTreeSet<String>),
}

impl Stream {
    async fn run(mut self, state: super::State, sender: mpsc::Sender<Bytes>) {
        let priming = format!(
            "id: {ID_PREFIX}{}\nretry: {}\ndata:\n\n",
            self.position,
            RETRY.as_millis()
        );
        if sender.send(Bytes::from(priming)).await.is_err() {
            return;
        }
        let mut changes = state.feed.subscribe();
        let mut tokens_changed = state.feed.tokens_changed();
        let mut ended = state.feed.sessions_ended();
        let mut keep_alive =
            tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
        let mut look = Look::All;
        loop {
            self = match self.look_and_send(look, &sender).await {
                Some(stream) => stream,
                None => return,
            };
            look = loop {
                tokio::select! {
                    biased;
                    () = state.stopping.cancelled() => return,
                    () = sender.closed() => return,
                    session = ended.recv() => match session {
                        Ok(session) if session == self.session => return,
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            if !self.is_good(&state).await {
                                return;
                            }
                        }
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    changed = tokens_changed.changed() => {
                        if changed.is_err()
                            || !super::events::is_current(&state.hub.store, &state.tokens, &self.token).await
                        {
                            return;
                        }
                    }
                    _ = keep_alive.tick() => {
                        if !self.is_good(&state).await {
                            return;
                        }
                        if sender.send(Bytes::from_static(b": keep-alive\n\n")).await.is_err() {
                            return;
                        }
                        break Look::All;
                    }
                    change = changes.recv() => match change {
                        // A message hands nothing over.
                        Ok(change) if change.kind == ChangeKind::Message => {}
                        Ok(change) => match change.project {
                            Some(project) => break Look::Some(BTreeSet::from([project])),
                            None => break Look::All,
                        },
                        Err(broadcast::error::RecvError::Lagged(_)) => break Look::All,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                }
            };
            // The changes told together are looked at together.
            while let Ok(change) = changes.try_recv() {
                if change.kind == ChangeKind::Message {
                    continue;
                }
                look = match (look, change.project) {
                    (Look::Some(mut projects), Some(project)) => {
                        projects.insert(project);
                        Look::Some(projects)
                    }
                    _ => Look::All,
                };
            }
        }
    }

    /// Whether the stream's token is still good and its session still kept.
    async fn is_good(&self, state: &super::State) -> bool {
        if !super::events::is_current(&state.hub.store, &state.tokens, &self.token).await {
            return false;
        }
        let (store, session) = (state.hub.store.clone(), self.session.clone());
        off_thread(move || store.mcp_session(&session))
            .await
            .is_ok_and(|kept| !matches!(kept, Ok(None)))
    }

    /// Appends the hand-overs due in `look`'s projects to the log, then sends what the log
    /// holds after the stream's position. `None` once the client is gone, or its session.
    async fn look_and_send(self, look: Look, sender: &mpsc::Sender<Bytes>) -> Option<Stream> {
        let (stream, events) = off_thread(move || {
            let mut stream = self;
            if !stream.append_due(look) {
                return None;
            }
            let store = stream.hub.store.clone();
            let events = store
                .mcp_events_after(&stream.session, stream.position)
                .unwrap_or_default();
            Some((stream, events))
        })
        .await
        .ok()??;
        let mut stream = stream;
        for event in events {
            let sent = format!(
                "id: {ID_PREFIX}{}\ndata: {}\n\n",
                event.position, event.data
            );
            sender.send(Bytes::from(sent)).await.ok()?;
            crate::metrics::MCP_PUSHES.add(());
            stream.position = event.position;
        }
        Some(stream)
    }

    /// Announces the session live in each of `look`'s projects (once), then appends each
    /// hand-over due to the agent there to the session's log and records it seen. A
    /// project that cannot be read now is looked at again at the next change or
    /// keep-alive. False when there was work to push and the session is no longer kept
    /// (ended on another hub): nothing is pushed, and the stream ends.
    fn append_due(&mut self, look: Look) -> bool {
        let store: Arc<dyn Store> = self.hub.store.clone();
        let projects = match look {
            Look::All => crate::project::project_ids(&*store).unwrap_or_default(),
            Look::Some(projects) => projects.into_iter().collect(),
        };
        let mut is_kept = None;
        for project in projects {
            if !self.live.contains_key(&project) {
                // Before the look: work handed over after it finds the session live. One
                // that cannot be announced now is tried again at the next look.
                let announced = store.announce_session(&project, &self.agent, LIVE_CLIENT);
                if let Ok(presence) = announced {
                    self.live.insert(project.clone(), presence);
                }
            }
            let Ok(session) =
                Session::open_by_id_as(self.hub.clone(), &self.agent, &project, Standing::Observer)
            else {
                continue;
            };
            let pushed = self.pushed.entry(project.clone()).or_default();
            let Ok(due) = session.handovers_to_push(pushed) else {
                continue;
            };
            if due.is_empty() {
                continue;
            }
            let kept = *is_kept
                .get_or_insert_with(|| !matches!(store.mcp_session(&self.session), Ok(None)));
            if !kept {
                return false;
            }
            let appended = append(&*store, &self.session, &self.agent, &project, due);
            // Recorded after it is in the log: a failure here (or the hub's death) leaves
            // it unseen, and the next look, here or on another hub, records it without
            // appending it again.
            let _ = session.record_pushed(pushed, &appended);
        }
        true
    }
}

/// Appends each of `due` (hand-overs to `agent` in `project`) to the log of `session`, as
/// the channel's notification, keyed by its project, task and delivery; those appended (or
/// there already), in order. One that cannot be appended ends the batch: it and those after
/// are left unseen for the next look.
fn append(
    store: &dyn Store,
    session: &str,
    agent: &str,
    project: &str,
    due: Vec<crate::session::Due>,
) -> Vec<crate::session::Push> {
    let now = crate::time::now();
    let mut appended = Vec::new();
    for due in due {
        let notification = channel::notification(&due.entry, agent, project, now);
        let message = ServerJsonRpcMessage::notification(notification);
        let Ok(data) = serde_json::to_string(&message) else {
            continue;
        };
        let key = format!("{project}/{}@{}", due.push.id, due.push.since);
        if store.append_mcp_event(session, &key, &data).is_err() {
            break;
        }
        appended.push(due.push);
    }
    appended
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::NewTask;
    use crate::session::testing::{START, TestHub};
    use crate::store::KeptMcpSession;

    fn stream(hub: &Hub) -> Stream {
        Stream {
            hub: hub.clone(),
            session: "s1".to_string(),
            agent: "dev".to_string(),
            token: TokenId::from_stored("hash".to_string()),
            position: 0,
            pushed: HashMap::new(),
            live: HashMap::new(),
        }
    }

    /// A hub that dies between appending a hand-over to the log and recording it seen
    /// leaves it in the log and unseen: the next look (another hub's stream, which knows
    /// nothing of the first) finds it due, appends nothing (its key is there) and records
    /// it seen; a look after that finds nothing.
    #[test]
    fn a_handover_appended_by_a_hub_that_died_before_recording_it_is_recorded_once_and_not_appended_again()
     {
        let test = TestHub::new();
        test.register(&["alice", "dev"]);
        let store = test.hub.store.clone();
        let kept = KeptMcpSession {
            token: "hash".to_string(),
            state: String::new(),
        };
        store.record_mcp_session("s1", &kept).unwrap();
        let id = test
            .send("alice", "dev", START, NewTask::default())
            .unwrap();
        let projects = crate::project::project_ids(&*store).unwrap();
        assert_eq!(projects.len(), 1, "{projects:?}");
        let project = &projects[0];
        let unseen = |session: &Session| {
            let board = session.board().unwrap();
            let task = board
                .tasks()
                .filter_map(Result::ok)
                .find(|task| task.id == id)
                .cloned()
                .unwrap();
            task.delivery.unwrap().state.is_unseen()
        };

        // The first hub's look, cut after its append.
        let session =
            Session::open_by_id_as(test.hub.clone(), "dev", project, Standing::Observer).unwrap();
        let due = session.handovers_to_push(&mut Pushed::default()).unwrap();
        assert_eq!(due.len(), 1);
        let appended = append(&*store, "s1", "dev", project, due);
        assert_eq!(appended.len(), 1);
        assert_eq!(store.mcp_events_after("s1", 0).unwrap().len(), 1);
        assert!(unseen(&session));

        // The next hub's stream.
        let mut next = stream(&test.hub);
        next.append_due(Look::All);
        let events = store.mcp_events_after("s1", 0).unwrap();
        assert_eq!(events.len(), 1, "not appended again: {events:?}");
        assert!(!unseen(&session), "recorded seen");
        next.append_due(Look::All);
        stream(&test.hub).append_due(Look::All);
        assert_eq!(store.mcp_events_after("s1", 0).unwrap().len(), 1);
    }

    /// A stream whose session ended on another hub unbeknown to it (the store's word of it
    /// lost) pushes it nothing: the look that finds work due finds the session gone,
    /// appends nothing, leaves the work unseen for the wake, and says the stream is over.
    #[test]
    fn a_stream_whose_session_is_gone_pushes_nothing_and_ends() {
        let test = TestHub::new();
        test.register(&["alice", "dev"]);
        let store = test.hub.store.clone();
        let mut gone = stream(&test.hub);
        assert!(gone.append_due(Look::All), "nothing due: nothing asked");
        test.send("alice", "dev", START, NewTask::default())
            .unwrap();
        assert!(!gone.append_due(Look::All), "the session is not kept");
        assert!(store.mcp_events_after("s1", 0).unwrap().is_empty());
        let project = &crate::project::project_ids(&*store).unwrap()[0];
        let session =
            Session::open_by_id_as(test.hub.clone(), "dev", project, Standing::Observer).unwrap();
        let due = session.handovers_to_push(&mut Pushed::default()).unwrap();
        assert_eq!(due.len(), 1, "still due, for the wake and the next prompt");
    }
}
