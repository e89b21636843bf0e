//! `baton serve` as an A2A server (SPEC section 17): agents that speak the Agent2Agent
//! protocol (Gemini CLI's remote subagents, ADK, Agent Framework) hand work to the agents
//! on the board, answer their questions and review their work.
//!
//! - `/.well-known/agent-card.json`: the hub's Agent Card, an A2A skill per agent;
//!   `/a2a/agents/NAME/.well-known/agent-card.json`: each agent's, its registry skills and
//!   strengths as A2A skills. Both declare bearer auth: a baton token.
//! - `POST /a2a/agents/NAME`: the agent's JSON-RPC endpoint (the URL its card gives), and
//!   `POST /a2a` the hub's (a new task there names its agent in `metadata.baton.to`). Both
//!   take A2A 1.0's method names and 0.3's ([`protocol::method`]), each answered in its
//!   version's shapes.
//! - `?project=ID` on an agent's card gives a card whose endpoint carries it too: the tasks
//!   sent there go to that project unless the message names another. A caller that cannot
//!   put baton's metadata in its messages (Gemini CLI's remote subagents) reaches a hub of
//!   several projects so.
//!
//! The token is the caller's identity, as everywhere on the server: the caller is the
//! task's sender. Everything goes through the desk of the caller in the task's project
//! ([`crate::session::Desk`]), so the same rules and refusals hold on any store; a refusal
//! is a JSON-RPC error carrying baton's words, as the MCP tools word them.
//!
//! A stream, or a send that waits for its task to stop, holds a connection for as long as
//! the task moves: it takes a place among its token's streams ([`crate::serve::streams`])
//! before anything is done, or is refused.

mod call;
mod card;
pub mod protocol;
mod said;
mod stream;
mod tasks;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::de::DeserializeOwned;
use serde_json::Value;

use self::call::Call;
pub use self::card::card_routes;
use self::card::{EndpointQuery, endpoint_project};
use self::protocol::{Method, RpcError, Version, code};
use crate::board::transition::TransitionError;
use crate::error::Error;
use crate::session::blocking::Caller;
use crate::text::{self, Face};
use crate::tokens::TokenId;

/// The JSON-RPC endpoints: the server puts the token check around them, and
/// [`refusals_as_rpc`] around that, so that a refused token is a JSON-RPC error as well.
pub fn rpc_routes() -> Router<super::State> {
    Router::new()
        .route("/a2a", post(hub_rpc))
        .route("/a2a/agents/{name}", post(agent_rpc))
}

/// The header a caller names its A2A version in.
const VERSION_HEADER: &str = "a2a-version";

/// The most of a refusal's body read to reword it.
const REFUSAL_READ_LIMIT: usize = 64 * 1024;

/// Makes a refusal of the JSON-RPC endpoints that is not JSON-RPC yet (the token check's,
/// a body too large) a JSON-RPC error with the same words, status and headers: an A2A
/// client reads errors there, whatever refused.
pub async fn refusals_as_rpc(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if status.is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, REFUSAL_READ_LIMIT)
        .await
        .unwrap_or_default();
    let read: Option<Value> = serde_json::from_slice(&bytes).ok();
    if read
        .as_ref()
        .is_some_and(|read| read.get("jsonrpc").is_some())
    {
        return (parts, bytes).into_response();
    }
    let words = read
        .as_ref()
        .and_then(|read| read.get("error"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(&bytes);
            let line = text.lines().map(str::trim).find(|line| !line.is_empty());
            line.unwrap_or(status.canonical_reason().unwrap_or("refused"))
                .to_string()
        });
    let (number, reason) = match status {
        StatusCode::UNAUTHORIZED => (code::UNAUTHENTICATED, "UNAUTHENTICATED"),
        status if status.is_client_error() => (code::INVALID_REQUEST, "INVALID_REQUEST"),
        _ => (code::INTERNAL_ERROR, "INTERNAL_ERROR"),
    };
    let mut error = RpcError::new(number, reason, text::inline(&words).to_string());
    if let Some(hint) = read
        .as_ref()
        .and_then(|read| read.get("hint"))
        .and_then(Value::as_str)
    {
        error = error.with_hint(text::inline(hint).to_string());
    }
    let mut rewritten = (
        status,
        axum::Json(protocol::error(&Value::Null, &error, Version::V1)),
    )
        .into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}

// ---- JSON-RPC ----

async fn hub_rpc(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Extension(token): Extension<TokenId>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    rpc(state, caller, token, None, None, &headers, &body).await
}

async fn agent_rpc(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Extension(token): Extension<TokenId>,
    Path(name): Path<String>,
    Query(query): Query<EndpointQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let project = match endpoint_project(&state, query).await {
        Ok(project) => project,
        Err(refusal) => return refusal.into_response(),
    };
    rpc(state, caller, token, Some(name), project, &headers, &body).await
}

/// One JSON-RPC request, answered in the shapes of the version its method names.
async fn rpc(
    state: super::State,
    caller: Caller,
    token: TokenId,
    agent: Option<String>,
    project: Option<String>,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let request = match protocol::request(body) {
        Ok(request) => request,
        Err((id, error)) => return refuse(&id, &error, Version::V1),
    };
    let Some((method, version)) = protocol::method(&request.method) else {
        let error = RpcError::new(
            code::METHOD_NOT_FOUND,
            "METHOD_NOT_FOUND",
            format!(
                "no method `{}` here: A2A 1.0's SendMessage, SendStreamingMessage, GetTask, \
                 ListTasks, CancelTask and SubscribeToTask are served, and 0.3's \
                 message/send, message/stream, tasks/get, tasks/cancel and tasks/resubscribe",
                text::inline(&request.method)
            ),
        );
        return refuse(&request.id, &error, Version::V1);
    };
    // A refusal of a streaming method comes as a stream, as its answer would.
    let refuse = |id: &Value, error: &RpcError, version: Version| match method {
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            stream::refusal(id, error, version)
        }
        _ => refuse(id, error, version),
    };
    if let Some(asked) = headers.get(VERSION_HEADER) {
        let asked = asked.to_str().unwrap_or("");
        if !protocol::is_served_version(asked) {
            let error = RpcError::new(
                code::VERSION_NOT_SUPPORTED,
                "VERSION_NOT_SUPPORTED",
                format!(
                    "A2A version `{}` is not served: 1.0 and 0.3 are",
                    text::inline(asked)
                ),
            );
            return refuse(&request.id, &error, version);
        }
    }
    let call = Call {
        state,
        caller,
        token,
        agent,
        project,
        version,
        id: request.id.clone(),
    };
    let answered = match method {
        Method::SendMessage => call.send(request.params, false).await,
        Method::SendStreamingMessage => call.send(request.params, true).await,
        Method::GetTask => call.get(request.params).await,
        Method::ListTasks => call.list(request.params).await,
        Method::CancelTask => call.cancel(request.params).await,
        Method::SubscribeToTask => call.subscribe(request.params).await,
        Method::PushNotificationConfig => Err(RpcError::new(
            code::PUSH_NOTIFICATION_NOT_SUPPORTED,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            "baton sends no push notifications to A2A callers: stream the task \
             (SendStreamingMessage, SubscribeToTask) or look at it (GetTask)",
        )
        .with_hint("`baton alert add NAME --url URL` posts hand-overs to a URL")),
        Method::ExtendedAgentCard => Err(RpcError::new(
            code::UNSUPPORTED_OPERATION,
            "UNSUPPORTED_OPERATION",
            "there is no extended card: the agent's card is all there is",
        )),
    };
    match answered {
        Ok(response) => response,
        Err(error) => refuse(&request.id, &error, version),
    }
}

/// A refusal as JSON-RPC answers it: HTTP 200 with the error object.
fn refuse(id: &Value, error: &RpcError, version: Version) -> Response {
    axum::Json(protocol::error(id, error, version)).into_response()
}

/// What a refusal of the desk is in A2A's terms: baton's words and hint as the MCP tools
/// word them, under the code A2A gives such a refusal.
fn refusal(error: &Error, doing: Doing) -> RpcError {
    let (number, reason) = match (error, doing) {
        (Error::UnknownTask { .. }, _) => (code::TASK_NOT_FOUND, "TASK_NOT_FOUND"),
        (Error::Transition(TransitionError::Refused { .. }), Doing::Cancel) => {
            (code::TASK_NOT_CANCELABLE, "TASK_NOT_CANCELABLE")
        }
        (Error::Transition(TransitionError::Refused { .. }), _) => {
            (code::UNSUPPORTED_OPERATION, "UNSUPPORTED_OPERATION")
        }
        (Error::Store(_), _) => (code::INTERNAL_ERROR, "INTERNAL_ERROR"),
        _ => (code::INVALID_PARAMS, "INVALID_PARAMS"),
    };
    RpcError {
        code: number,
        message: text::inline(&error.message(Face::Tool)).to_string(),
        reason,
        hint: error
            .hint_for(Face::Tool)
            .map(|hint| text::inline(&hint).to_string()),
        exit_code: Some(error.exit_code()),
    }
}

/// What a call was doing when the desk refused it: a cancel's refusal has a code of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing {
    Other,
    Cancel,
}

/// Params of the wrong shape.
fn params<T: DeserializeOwned>(params: Value) -> std::result::Result<T, RpcError> {
    serde_json::from_value(params).map_err(|error| {
        RpcError::new(
            code::INVALID_PARAMS,
            "INVALID_PARAMS",
            format!(
                "the params are not as A2A has them: {}",
                text::inline(&error.to_string())
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::{Status, TaskId};

    #[test]
    fn refusals_keep_batons_words_under_a2a_codes() {
        let unknown = Error::UnknownTask {
            task: TaskId(9),
            project: "default".into(),
        };
        let refused = refusal(&unknown, Doing::Other);
        assert_eq!(refused.code, code::TASK_NOT_FOUND);
        assert_eq!(refused.message, "no task T-9 in project default");
        let finished = Error::Transition(TransitionError::Refused {
            task: TaskId(9),
            status: Status::Completed,
            assignee: "dev".into(),
            why: crate::board::transition::Why::Finished,
        });
        assert_eq!(
            refusal(&finished, Doing::Cancel).code,
            code::TASK_NOT_CANCELABLE
        );
        assert_eq!(
            refusal(&finished, Doing::Other).message,
            "T-9 is completed, assigned to dev: it is finished, and nothing moves it again"
        );
        let words = Error::Transition(TransitionError::MissingWords {
            action: crate::board::action::ActionKind::Answer,
        });
        let refused = refusal(&words, Doing::Other);
        assert_eq!(refused.code, code::INVALID_PARAMS);
        // As the MCP tools word it: the argument, not the flag.
        assert_eq!(refused.message, "answer needs `body` with some words");
    }
}
