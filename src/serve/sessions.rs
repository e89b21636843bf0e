//! Which token opened each MCP session of `/mcp` (SPEC section 13: a session belongs to the
//! token that opened it).
//!
//! rmcp hands out a session id in the `Mcp-Session-Id` header of its answer to `initialize`,
//! and serves whoever presents that id afterwards. This layer, between the token check and
//! rmcp, notes the token behind each id it sees handed out (in the store, where every hub
//! sharing it can find it: [`Store::record_mcp_session`]) and answers 404 to any request
//! (POST, GET, DELETE) that presents an id with another token, exactly as to an id that
//! never was: whoever learned a session id cannot tell it from a made-up one, let alone use
//! or end the session.
//!
//! A session is bound to its token ([`TokenId`]), not to the token's agent: two tokens of one
//! agent are two secrets handed to two places (a browser's login and a `token add` for a
//! client, say), and one of them leaking must not open the sessions of the other; nor may a
//! token made after `token rm` under the same name take over the sessions of the one removed.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::api::ApiError;
use crate::error::Error;
use crate::session::blocking::{Stopped, off_thread};
use crate::store::{Store, StoreError};
use crate::tokens::{self, KeptTokens, TokenId};

/// The sessions rmcp keeps in this process, and where the token that opened each is
/// recorded: the store, so that any hub sharing it can tell ([`Store::mcp_session_owner`]).
#[derive(Debug)]
pub struct McpSessions {
    manager: Arc<LocalSessionManager>,
    store: Arc<dyn Store>,
    /// The sessions this process handed out and has not forgotten: its own, which it
    /// forgets in the store once rmcp has ended them.
    opened_here: Mutex<BTreeSet<String>>,
}

impl McpSessions {
    pub fn new(manager: Arc<LocalSessionManager>, store: Arc<dyn Store>) -> Self {
        McpSessions {
            manager,
            store,
            opened_here: Mutex::new(BTreeSet::new()),
        }
    }

    /// The session manager rmcp's service is to use.
    pub fn manager(&self) -> Arc<LocalSessionManager> {
        self.manager.clone()
    }

    fn opened_here(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        // The set stays whole whatever panicked while holding it: every change is one call.
        self.opened_here
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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

    /// Whether the session `id` was opened with `token`. An id no hub handed out is
    /// nobody's.
    async fn is_owned_by(&self, id: &str, token: &TokenId) -> Result<bool, Error> {
        let id = id.to_string();
        let owner = self
            .on_store(move |store| store.mcp_session_owner(&id))
            .await?;
        Ok(owner.as_deref() == Some(token.as_stored()))
    }

    /// Notes that `token` opened the session `id`, and forgets the sessions of this
    /// process that rmcp has ended since, so the store holds no more of them than rmcp
    /// does. A session whose owner could not be recorded answers nobody: its next request
    /// is refused as unknown, and its client opens another.
    async fn record(&self, id: String, token: TokenId) {
        let ended: Vec<String> = {
            let live = self.manager.sessions.read().await;
            let mut opened = self.opened_here();
            let ended = opened
                .iter()
                .filter(|known| !live.contains_key(known.as_str()))
                .cloned()
                .collect();
            opened.retain(|known| live.contains_key(known.as_str()));
            opened.insert(id.clone());
            ended
        };
        let _ = self
            .on_store(move |store| {
                store.forget_mcp_sessions(&ended)?;
                store.record_mcp_session(&id, token.as_stored())
            })
            .await;
    }

    async fn forget(&self, ids: Vec<String>) {
        {
            let mut opened = self.opened_here();
            for id in &ids {
                opened.remove(id);
            }
        }
        // A session left recorded answers its own token only, and ended: rmcp refuses it.
        let _ = self
            .on_store(move |store| store.forget_mcp_sessions(&ids))
            .await;
    }

    /// Ends the sessions of this process whose token is no longer good (removed, replaced,
    /// or a login whose server stopped): their requests are refused already, and this ends
    /// their open streams too. A token store that cannot be read ends none: requests are
    /// refused meanwhile.
    pub async fn end_those_of_stale_tokens(&self, kept: &Arc<KeptTokens>) {
        let opened: Vec<String> = self.opened_here().iter().cloned().collect();
        let kept = kept.clone();
        let stale = self
            .on_store(move |store| {
                let mut stale = Vec::new();
                for id in opened {
                    let Some(owner) = store.mcp_session_owner(&id)? else {
                        continue;
                    };
                    let token = TokenId::from_stored(owner);
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

/// The session id a request presents or an answer hands out; one that is not text is none,
/// as rmcp reads it.
fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(HEADER_SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

/// Refuses a request presenting a session that its token did not open, and notes the token
/// behind each session handed out. Runs after the token check, which put the [`TokenId`] in
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
    if let Some(id) = &presented {
        match sessions.is_owned_by(id, &token).await {
            Ok(true) => {}
            Ok(false) => return not_this_tokens(),
            Err(error) => return ApiError::from(error).into_response(),
        }
    }
    let is_delete = request.method() == Method::DELETE;
    let response = next.run(request).await;
    match presented {
        None => {
            if response.status().is_success()
                && let Some(opened) = session_id(response.headers())
            {
                sessions.record(opened, token).await;
            }
        }
        Some(id) if is_delete && response.status().is_success() => sessions.forget(vec![id]).await,
        Some(_) => {}
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
