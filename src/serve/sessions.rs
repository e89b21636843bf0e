//! Which token opened each MCP session of `/mcp` (SPEC section 13: a session belongs to the
//! token that opened it).
//!
//! rmcp hands out a session id in the `Mcp-Session-Id` header of its answer to `initialize`,
//! and serves whoever presents that id afterwards. This layer, between the token check and
//! rmcp, notes the token behind each id it sees handed out and answers 404 to any request
//! (POST, GET, DELETE) that presents an id with another token, exactly as to an id that
//! never was: whoever learned a session id cannot tell it from a made-up one, let alone use
//! or end the session.
//!
//! A session is bound to its token ([`TokenId`]), not to the token's agent: two tokens of one
//! agent are two secrets handed to two places (a browser's login and a `token add` for a
//! client, say), and one of them leaking must not open the sessions of the other; nor may a
//! token made after `token rm` under the same name take over the sessions of the one removed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::api::ApiError;
use crate::store::Store;
use crate::tokens::{self, KeptTokens, TokenId};

/// The sessions rmcp keeps, and the token that opened each.
#[derive(Debug)]
pub struct McpSessions {
    manager: Arc<LocalSessionManager>,
    owners: Mutex<HashMap<String, TokenId>>,
}

impl McpSessions {
    pub fn new(manager: Arc<LocalSessionManager>) -> Self {
        McpSessions {
            manager,
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// The session manager rmcp's service is to use.
    pub fn manager(&self) -> Arc<LocalSessionManager> {
        self.manager.clone()
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, TokenId>> {
        // The map stays whole whatever panicked while holding it: every change is one call.
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the session `id` was opened with `token`. An id this server never handed out
    /// is nobody's.
    fn is_owned_by(&self, id: &str, token: &TokenId) -> bool {
        self.owners().get(id) == Some(token)
    }

    /// Notes that `token` opened the session `id`, and forgets the sessions rmcp has ended
    /// since (idle, or closed by their client), so the map holds no more than rmcp does.
    async fn record(&self, id: String, token: TokenId) {
        let live = self.manager.sessions.read().await;
        let mut owners = self.owners();
        owners.retain(|known, _| live.contains_key(known.as_str()));
        owners.insert(id, token);
    }

    fn forget(&self, id: &str) {
        self.owners().remove(id);
    }

    /// Ends the sessions whose token is no longer good (removed, replaced, or a login whose
    /// server stopped): their requests are refused already, and this ends their open streams
    /// too. A tokens file that cannot be read ends none: requests are refused meanwhile.
    pub async fn end_those_of_stale_tokens(&self, store: &Arc<dyn Store>, kept: &Arc<KeptTokens>) {
        let owners: Vec<(String, TokenId)> = self
            .owners()
            .iter()
            .map(|(id, token)| (id.clone(), token.clone()))
            .collect();
        let (store, kept) = (store.clone(), kept.clone());
        let stale = tokio::task::spawn_blocking(move || {
            owners
                .into_iter()
                .filter(|(_, token)| matches!(tokens::is_current(&*store, &kept, token), Ok(false)))
                .map(|(id, _)| id)
                .collect::<Vec<String>>()
        })
        .await
        .unwrap_or_default();
        for id in stale {
            self.forget(&id);
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
    if let Some(id) = &presented
        && !sessions.is_owned_by(id, &token)
    {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "no such MCP session for this token: it ended, or was never opened with it",
        )
        .with_hint("open a new session with `initialize`")
        .into_response();
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
        Some(id) if is_delete && response.status().is_success() => sessions.forget(&id),
        Some(_) => {}
    }
    response
}
