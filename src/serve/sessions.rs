//! The MCP sessions of `/mcp`: which token opened each (SPEC section 13: a session belongs to
//! the token that opened it), and how any hub sharing the store serves a session opened on
//! another (SPEC section 16: hubs keep no state another hub needs).
//!
//! rmcp hands out a session id in the `Mcp-Session-Id` header of its answer to `initialize`,
//! and serves whoever presents that id afterwards. This layer, between the token check and
//! rmcp, records each session handed out with the token behind it (in the store, where
//! every hub sharing it finds it: [`Store::record_mcp_session`]) and answers 404 to any
//! request (POST, GET, DELETE) that presents an id with another token, exactly as to an id
//! that never was: whoever learned a session id cannot tell it from a made-up one, let alone
//! use or end the session.
//!
//! A session is bound to its token ([`TokenId`]), not to the token's agent: two tokens of one
//! agent are two secrets handed to two places (a browser's login and a `token add` for a
//! client, say), and one of them leaking must not open the sessions of the other; nor may a
//! token made after `token rm` under the same name take over the sessions of the one removed.
//!
//! # Any hub serves any session
//!
//! What a session of baton's MCP server needs is small: its owner, and what its client said
//! at `initialize` (the protocol version it asked for, its capabilities and name), from which
//! the handler negotiates the same version again. Each call names its identity by its own
//! token, and what an agent has been shown (seen marks, read positions, deliveries) is in
//! the store already, not in the session. So the store keeps those two things
//! ([`crate::store::KeptMcpSession`]), and rmcp's own restore does the rest: rmcp's
//! [`SessionStore`] (which [`McpSessions`] is) hands over the client's `initialize` params;
//! a hub that is asked for a session it does not hold asks the store, makes a local session
//! under the same id and replays `initialize` and `initialized` into a new handler, without
//! sending the client anything (rmcp's `try_restore_from_store`), then serves the request.
//! A session's local copy is only a cache: rmcp ends it when idle, or its hub dies, and the
//! next request revives it wherever it lands. A session ends when its client ends it
//! (DELETE, on any hub), when its token goes, or after [`MCP_SESSION_IDLE`] unused.
//!
//! A session's stream (its GET) cut by its hub's end opens again on whichever hub the
//! client's reconnection reaches, from its `Last-Event-ID`. Each answer comes on its own
//! request's stream, so rmcp has nothing of its own to resume there. The stream of a client
//! that takes pushes (Claude Code) is answered by [`super::pushes`] instead of rmcp: its
//! events are the pushes of new work, kept in the session's event log in the store, so
//! that any hub resumes it strictly after its `Last-Event-ID`; this layer hands the
//! session it found ([`super::pushes::Presented`]) to that one. Rather than one hub per
//! session making the pushes (a duty, as the alert sender is), the hub holding the stream
//! makes them, each appended once per hand-over whichever hub appends it: see there why.
//!
//! Why not rmcp's stateless mode with a session layer of baton's own: that mode serves each
//! request by a handler of its own, with no session and no stream of the server's own
//! messages, where the clients baton serves speak the `initialize` eras, whose sessions are
//! what must carry on (see [`crate::mcp::NEWEST_VERSION`]). And why not a session manager
//! of baton's own: rmcp's local one, given the store as its [`SessionStore`], already
//! revives a session under its id and lets one request of many arriving at once revive it,
//! so a manager of baton's own would copy it.
//!
//! [`MCP_SESSION_IDLE`]: crate::store::mcp_sessions::MCP_SESSION_IDLE

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use super::api::ApiError;
use crate::error::Error;
use crate::session::blocking::{Stopped, off_thread};
use crate::store::{KeptMcpSession, Store, StoreError};
use crate::tokens::{self, KeptTokens, TokenId};

/// The sessions rmcp keeps in this process, and the store where every session is kept for
/// every hub sharing it ([`Store::mcp_session`]).
#[derive(Debug)]
pub struct McpSessions {
    manager: Arc<LocalSessionManager>,
    store: Arc<dyn Store>,
    /// What rmcp handed over at `initialize` ([`SessionStore::store`]), by session id,
    /// until [`bind_to_token`] sees the id in the answer and records it with its token: the
    /// store keeps a session whole, owner and state in one write. rmcp hands it over just
    /// before it answers, with nothing to wait on between, so each entry is taken at once.
    opening: Mutex<HashMap<String, String>>,
    /// Where the sessions ended here are told to this hub's push streams
    /// ([`super::pushes`]), which end at once (the store tells other hubs').
    feed: super::events::Feed,
}

impl McpSessions {
    pub fn new(
        manager: Arc<LocalSessionManager>,
        store: Arc<dyn Store>,
        feed: super::events::Feed,
    ) -> Self {
        McpSessions {
            manager,
            store,
            opening: Mutex::new(HashMap::new()),
            feed,
        }
    }

    /// The session manager rmcp's service is to use.
    pub fn manager(&self) -> Arc<LocalSessionManager> {
        self.manager.clone()
    }

    fn opening(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // The map stays whole whatever panicked while holding it: every change is one call.
        self.opening.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `work` on the store, off the async threads (a store may wait on a lock or a
    /// database).
    async fn on_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, Error> {
        let store = self.store.clone();
        match off_thread(move || work(&*store)).await {
            Ok(done) => Ok(done?),
            Err(Stopped) => Err(Error::Store(StoreError::Unfinished)),
        }
    }

    /// The session `id` as the store keeps it, its use noted; `None` for one no hub handed
    /// out, or ended.
    async fn kept(&self, id: &str) -> Result<Option<KeptMcpSession>, Error> {
        let id = id.to_string();
        self.on_store(move |store| store.mcp_session(&id)).await
    }

    /// The session `id` if it was opened with `token`. An id no hub handed out is
    /// nobody's.
    async fn owned_by(&self, id: &str, token: &TokenId) -> Result<Option<KeptMcpSession>, Error> {
        let kept = self.kept(id).await?;
        Ok(kept.filter(|kept| kept.token == token.as_stored()))
    }

    /// Records that `token` opened the session `id`, with what its client said at
    /// `initialize`. A session that could not be recorded answers nobody: its next request
    /// is refused as unknown, and its client opens another.
    async fn record(&self, id: String, token: TokenId) {
        let state = self.opening().remove(&id).unwrap_or_default();
        let kept = KeptMcpSession {
            token: token.as_stored().to_string(),
            state,
        };
        let _ = self
            .on_store(move |store| store.record_mcp_session(&id, &kept))
            .await;
    }

    /// Ends the sessions `ids` in the store, and their push streams (on this hub at once,
    /// on another as the store tells it).
    async fn forget(&self, ids: Vec<String>) {
        let told = ids.clone();
        // A session left kept answers its own token only, and that token is gone: the
        // token check refuses it, and it ends unused.
        let _ = self
            .on_store(move |store| store.forget_mcp_sessions(&ids))
            .await;
        for id in told {
            self.feed.tell_session_ended(id);
        }
    }

    /// Ends the sessions held in this process whose token is no longer good (removed,
    /// replaced, or a login whose server stopped): their requests are refused already, and
    /// this ends their open streams too. A token store that cannot be read ends none:
    /// requests are refused meanwhile.
    pub async fn end_those_of_stale_tokens(&self, kept: &Arc<KeptTokens>) {
        let held: Vec<String> = {
            let live = self.manager.sessions.read().await;
            live.keys().map(ToString::to_string).collect()
        };
        let kept = kept.clone();
        let stale = self
            .on_store(move |store| {
                let mut stale = Vec::new();
                for id in held {
                    let Some(session) = store.mcp_session(&id)? else {
                        continue;
                    };
                    let token = TokenId::from_stored(session.token);
                    if matches!(tokens::is_current(store, &kept, &token), Ok(false)) {
                        stale.push(id);
                    }
                }
                Ok(stale)
            })
            .await
            .unwrap_or_default();
        if stale.is_empty() {
            return;
        }
        self.forget(stale.clone()).await;
        for id in stale {
            // Already gone is as good as closed.
            let _ = self.manager.close_session(&id.into()).await;
        }
    }
}

/// The most bytes of a session's state (its client's `initialize`, as JSON) kept in the
/// store: a real client's is a few KiB (Claude Code's, with every capability, under 4).
pub const MOST_KEPT_STATE: usize = 64 * 1024;

/// The store as rmcp sees it: where a session's `initialize` params are kept, for a hub
/// that is asked for a session it does not hold to revive it.
#[async_trait::async_trait]
impl SessionStore for McpSessions {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let kept = self.kept(id).await.map_err(|error| error.to_string())?;
        // A session kept without its state (by a baton before this one) cannot be revived.
        Ok(kept.and_then(|kept| serde_json::from_str(&kept.state).ok()))
    }

    /// A state over [`MOST_KEPT_STATE`] is not kept: the session lives on this hub alone,
    /// as one kept before its state was (another hub refuses it, and its client opens one
    /// there). rmcp reads any `initialize` up to its body limit (4 MiB); what a client sends
    /// does not get that much room in the store, per session, for 12 hours.
    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_string(state)?;
        if state.len() > MOST_KEPT_STATE {
            return Err(format!(
                "the initialize of MCP session {id} is {} bytes, over the {MOST_KEPT_STATE} \
                 a hub keeps: served by this hub alone",
                state.len()
            )
            .into());
        }
        self.opening().insert(id.to_string(), state);
        Ok(())
    }

    /// The client ended the session (DELETE), on whichever hub.
    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        self.forget(vec![id.to_string()]).await;
        Ok(())
    }
}

/// The session id a request presents or an answer hands out; one that is not text is none,
/// as rmcp reads it.
fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(HEADER_SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

/// Refuses a request presenting a session that its token did not open, and records each
/// session handed out with its token. Runs after the token check, which put the [`TokenId`] in
/// the request.
pub async fn bind_to_token(
    State(sessions): State<Arc<McpSessions>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = request.extensions().get::<TokenId>().cloned() else {
        return ApiError::new(StatusCode::UNAUTHORIZED, "the request carries no token")
            .into_response();
    };
    let presented = session_id(request.headers());
    let mut request = request;
    if let Some(id) = &presented {
        match sessions.owned_by(id, &token).await {
            Ok(Some(kept)) => {
                // For the stream of pushes ([`super::pushes`]), which is the session's own.
                let client = serde_json::from_str::<SessionState>(&kept.state)
                    .ok()
                    .map(|state| state.initialize_params.client_info);
                request.extensions_mut().insert(super::pushes::Presented {
                    id: id.clone(),
                    client,
                });
            }
            Ok(None) => return not_this_tokens(),
            Err(error) => return ApiError::from(error).into_response(),
        }
    }
    let response = next.run(request).await;
    if presented.is_none()
        && response.status().is_success()
        && let Some(opened) = session_id(response.headers())
    {
        sessions.record(opened, token).await;
    }
    response
}

/// The refusal of a session id that its token did not open, in the words of one that
/// never was.
fn not_this_tokens() -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no such MCP session for this token: it ended, or was never opened with it",
    )
    .with_hint("open a new session with `initialize`")
    .into_response()
}
