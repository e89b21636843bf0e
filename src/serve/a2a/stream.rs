//! Following a task for A2A: the streams of `SendStreamingMessage` and `SubscribeToTask`
//! (and 0.3's `message/stream`, `tasks/resubscribe`), and the wait of a blocking send.
//!
//! Both listen to the board's own changes, the feed behind `/api/v1/events` ([`follow`]),
//! and look at the task again (through the desk) when one concerns it. What changed is read
//! from the task's thread: every transition writes one entry, so the entries written since
//! the last look are the changes, in order, each told as one status event however close
//! together they came and whether or not the feed dropped some on the way.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use super::protocol::{self, RpcError, StreamEvent, Version};
use super::tasks::{self, Shown};
use crate::board::task::TaskId;
use crate::serve::events::{Change, ChangeKind};
use crate::session::TaskView;

/// A comment line this often keeps proxies and clients from closing an idle stream, and
/// asks again whether the stream's token is still good.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The changes of the hub from now on: the one place A2A follows them, the same feed as
/// `/api/v1/events` (SPEC section 12). Subscribed before the task is looked at, so that no
/// change falls between the look and the first wait.
pub fn follow(state: &crate::serve::State) -> broadcast::Receiver<Change> {
    state.feed.subscribe()
}

/// The changes that may concern one task.
pub struct Watch {
    changes: broadcast::Receiver<Change>,
    project: String,
    id: TaskId,
}

impl Watch {
    pub fn new(changes: broadcast::Receiver<Change>, project: &str, id: TaskId) -> Watch {
        Watch {
            changes,
            project: project.to_string(),
            id,
        }
    }

    /// Waits for a change that may concern the task (one of it, a board write of its
    /// project, or a gap the feed had to leave): true; false once the feed has ended.
    pub async fn changed(&mut self) -> bool {
        loop {
            match self.changes.recv().await {
                Ok(change) => {
                    let is_project = change.project.as_deref() == Some(self.project.as_str());
                    let concerns = match change.kind {
                        ChangeKind::Resync => true,
                        // A message's id is its number in the mail, not a task's.
                        ChangeKind::Message => false,
                        ChangeKind::Board => is_project,
                        ChangeKind::Logged(_) => is_project && change.id == Some(self.id.0),
                    };
                    if concerns {
                        return true;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => return true,
                Err(broadcast::error::RecvError::Closed) => return false,
            }
        }
    }
}

/// What keeps a wait on a task honest: whether its token is still good (a stream or a
/// wait ends with its token, SPEC section 13) and whether the server is stopping.
pub struct Guard<Current> {
    pub is_current: Current,
    pub tokens_changed: tokio::sync::watch::Receiver<u64>,
    pub stopping: tokio_util::sync::CancellationToken,
}

/// What ended a wait for the task's next change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woken {
    /// A change that may concern the task.
    Changed,
    /// The server stops, the feed ended or the client went.
    Over,
    /// The token is no longer good.
    TokenGone,
}

impl<Current, Checked> Guard<Current>
where
    Current: Fn() -> Checked,
    Checked: Future<Output = bool>,
{
    /// Waits for a change that may concern the watched task, asking again whether the
    /// token is good whenever the tokens change and every [`KEEP_ALIVE`]; `gone` resolves
    /// when the client has gone.
    async fn next(&mut self, watch: &mut Watch, gone: impl Future<Output = ()>) -> Woken {
        let mut keep_alive =
            tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
        tokio::pin!(gone);
        loop {
            tokio::select! {
                biased;
                () = self.stopping.cancelled() => return Woken::Over,
                () = &mut gone => return Woken::Over,
                changed = self.tokens_changed.changed() => {
                    if changed.is_err() || !(self.is_current)().await {
                        return Woken::TokenGone;
                    }
                }
                _ = keep_alive.tick() => {
                    if !(self.is_current)().await {
                        return Woken::TokenGone;
                    }
                }
                changed = watch.changed() => {
                    return match changed {
                        // A token removed with the change sees none of it.
                        true if !(self.is_current)().await => Woken::TokenGone,
                        true => Woken::Changed,
                        false => Woken::Over,
                    };
                }
            }
        }
    }
}

/// The refusal of a wait whose token was removed meanwhile.
fn token_gone() -> RpcError {
    RpcError::new(
        super::protocol::code::UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "the token was removed while the request waited",
    )
}

/// What a stream needs besides the task: how to look at it again, and its guard.
pub struct Streaming<Look, Current> {
    pub version: Version,
    /// The JSON-RPC request's id, which every event of its stream answers.
    pub id: Value,
    pub project: String,
    pub watch: Watch,
    pub look: Look,
    pub guard: Guard<Current>,
}

/// The stream of a task from `first` (its state when the stream opens, which is the first
/// event) on: one status event per change, until the task stops (a terminal state, or
/// waiting on its caller), the client goes, the server stops or the token is removed.
pub fn stream<Look, Looked, Current, Checked>(
    first: TaskView,
    streaming: Streaming<Look, Current>,
) -> Response
where
    Look: Fn() -> Looked + Send + 'static,
    Looked: Future<Output = Result<TaskView, RpcError>> + Send,
    Current: Fn() -> Checked + Send + 'static,
    Checked: Future<Output = bool> + Send,
{
    let (sender, events) = tokio::sync::mpsc::channel::<Value>(16);
    tokio::spawn(async move {
        let Streaming {
            version,
            id,
            project,
            mut watch,
            look,
            mut guard,
        } = streaming;
        let answer = |event: StreamEvent| protocol::result(&id, event.to_json(version));
        let mut seen = first.task.thread.len();
        let opening = tasks::task(version, &project, &first, Shown::ALL);
        if sender
            .send(answer(StreamEvent::Task(opening)))
            .await
            .is_err()
        {
            return;
        }
        if tasks::state_of(first.task.status).stops_a_wait() {
            return;
        }
        loop {
            if guard.next(&mut watch, sender.closed()).await != Woken::Changed {
                return;
            }
            let view = match look().await {
                Ok(view) => view,
                Err(refused) => {
                    let _ = sender.send(protocol::error(&id, &refused, version)).await;
                    return;
                }
            };
            let (events, ends) = tasks::changes_since(version, &project, &view, seen);
            seen = seen.max(view.task.thread.len());
            for event in events {
                if sender.send(answer(event)).await.is_err() {
                    return;
                }
            }
            if ends {
                return;
            }
        }
    });
    let events = ReceiverStream::new(events)
        .map(|answer| Ok::<Event, Infallible>(Event::default().data(answer.to_string())));
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response()
}

/// The refusal of a streaming request, as a stream of one event carrying the JSON-RPC
/// error: a client that asked for a stream reads what comes as one (the A2A JavaScript
/// SDK, which Gemini CLI uses, refuses an answer that is not `text/event-stream` without
/// reading it, and with it baton's words).
pub fn refusal(id: &Value, error: &RpcError, version: Version) -> Response {
    let event = Event::default().data(protocol::error(id, error, version).to_string());
    Sse::new(tokio_stream::iter([Ok::<Event, Infallible>(event)])).into_response()
}

/// A blocking send's wait: the task as it is once it stops (a terminal state, or waiting on
/// its caller), or as it was when the server began to stop; refused if the token is removed
/// meanwhile.
pub async fn until_it_stops<Look, Looked, Current, Checked>(
    mut view: TaskView,
    mut watch: Watch,
    look: Look,
    mut guard: Guard<Current>,
) -> Result<TaskView, RpcError>
where
    Look: Fn() -> Looked,
    Looked: Future<Output = Result<TaskView, RpcError>>,
    Current: Fn() -> Checked,
    Checked: Future<Output = bool>,
{
    while !tasks::state_of(view.task.status).stops_a_wait() {
        // The client going ends the request's future itself.
        match guard.next(&mut watch, std::future::pending()).await {
            Woken::Changed => view = look().await?,
            Woken::Over => break,
            Woken::TokenGone => return Err(token_gone()),
        }
    }
    Ok(view)
}
