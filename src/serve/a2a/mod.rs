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

mod card;
pub mod protocol;
mod stream;
mod tasks;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use std::future::Future;

pub use self::card::card_routes;
use self::card::{EndpointQuery, endpoint_project};
use self::protocol::{Method, RpcError, Version, code};
use self::stream::{Guard, Streaming, Watch};
use self::tasks::Shown;
use super::connections::Held;
use super::streams::Slot;
use crate::board::action::ActionKind;
use crate::board::task::{Priority, Status, TaskId};
use crate::board::transition::{Action, TransitionError};
use crate::error::{Error, Result};
use crate::mcp::Caller;
use crate::project;
use crate::session::blocking::{Opening, Stopped, in_session};
use crate::session::{BoardFilter, Desk, LocalDesk, NewTask, TaskView};
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

/// What a caller says to baton beyond A2A, under `metadata.baton` (the message's, else the
/// request's).
#[derive(Debug, Clone, Default)]
struct Said {
    project: Option<String>,
    action: Option<String>,
    to: Option<String>,
    priority: Option<Priority>,
    review: bool,
    reason: Option<String>,
}

impl Said {
    fn of(layers: &[Option<&Map<String, Value>>]) -> std::result::Result<Said, RpcError> {
        let mut said = Said::default();
        // The request's first, the message's over it.
        for layer in layers.iter().rev().flatten() {
            let Some(baton) = layer.get("baton") else {
                continue;
            };
            let Value::Object(baton) = baton else {
                return Err(said_wrong("metadata.baton", "an object"));
            };
            let text = |name: &str| -> std::result::Result<Option<String>, RpcError> {
                match baton.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(value)) => Ok(Some(value.clone())),
                    Some(_) => Err(said_wrong(&format!("metadata.baton.{name}"), "a string")),
                }
            };
            said.project = text("project")?.or(said.project);
            said.action = text("action")?.or(said.action);
            said.to = text("to")?.or(said.to);
            said.reason = text("reason")?.or(said.reason);
            if let Some(priority) = text("priority")? {
                said.priority = Some(priority.parse().map_err(|refused: String| {
                    RpcError::new(
                        code::INVALID_PARAMS,
                        "INVALID_PARAMS",
                        text::inline(&refused).to_string(),
                    )
                })?);
            }
            match baton.get("review") {
                None | Some(Value::Null) => {}
                Some(Value::Bool(review)) => said.review = *review,
                Some(_) => return Err(said_wrong("metadata.baton.review", "true or false")),
            }
        }
        Ok(said)
    }
}

fn said_wrong(what: &str, wanted: &str) -> RpcError {
    RpcError::new(
        code::INVALID_PARAMS,
        "INVALID_PARAMS",
        format!("{what} must be {wanted}"),
    )
}

/// The text of a message: its text parts, one after the other. baton takes nothing else.
fn message_text(message: &protocol::IncomingMessage) -> std::result::Result<String, RpcError> {
    let mut texts = Vec::new();
    for part in &message.parts {
        match part.as_text() {
            Some(text) => texts.push(text),
            None => {
                return Err(RpcError::new(
                    code::CONTENT_TYPE_NOT_SUPPORTED,
                    "CONTENT_TYPE_NOT_SUPPORTED",
                    "baton takes text parts only: put the task in words (name files by their \
                     paths in the body)",
                ));
            }
        }
    }
    Ok(texts.join("\n"))
}

/// A message's text as a task: the first line its subject, the rest its body.
fn subject_and_body(text: &str) -> (String, String) {
    let (subject, body) = text.split_once('\n').unwrap_or((text, ""));
    let subject = subject.strip_suffix('\r').unwrap_or(subject);
    (
        subject.to_string(),
        body.trim_start_matches(['\r', '\n']).to_string(),
    )
}

/// One JSON-RPC call, by its token's agent, to an agent's endpoint or the hub's.
struct Call {
    state: super::State,
    caller: Caller,
    token: TokenId,
    /// The agent whose endpoint was called; none for the hub's.
    agent: Option<String>,
    /// The project the endpoint's `?project=` names, checked.
    project: Option<String>,
    version: Version,
    id: Value,
}

type Answered = std::result::Result<Response, RpcError>;

impl Call {
    /// Runs `work` at the caller's desk in `project`, on a blocking thread (the desk reads
    /// and locks the store).
    async fn at_desk<T, F>(
        &self,
        project: &str,
        doing: Doing,
        work: F,
    ) -> std::result::Result<T, RpcError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Desk) -> Result<T> + Send + 'static,
    {
        let Caller(agent, standing) = self.caller.clone();
        let opening = Opening::ById {
            agent,
            project: project.to_string(),
            standing,
        };
        let done = in_session(self.state.hub.clone(), opening, move |session| {
            work(&LocalDesk::of(session))
        })
        .await
        .map_err(|Stopped| stopped())?;
        done.map_err(|error| refusal(&error, doing))
    }

    /// The task `id` of `project`, if it is the caller's (else not found, as if it were not
    /// there).
    async fn show(&self, project: &str, id: TaskId) -> std::result::Result<TaskView, RpcError> {
        let caller = self.caller.0.clone();
        self.at_desk(project, Doing::Other, move |desk| {
            shown_to(desk, &caller, id)
        })
        .await
    }

    /// The project of a call that names none: the one the hub has (`default` while it has
    /// none), else the caller must say which.
    async fn only_project(&self) -> std::result::Result<String, RpcError> {
        let store = self.state.hub.store.clone();
        let ids = tokio::task::spawn_blocking(move || project::project_ids(&*store))
            .await
            .map_err(|_| stopped())?
            .map_err(|error| refusal(&error, Doing::Other))?;
        match ids.as_slice() {
            [] => Ok(project::DEFAULT_PROJECT.to_string()),
            [only] => Ok(only.clone()),
            several => Err(RpcError::new(
                code::INVALID_PARAMS,
                "INVALID_PARAMS",
                format!(
                    "this hub has {} projects ({}): say which one",
                    several.len(),
                    several.join(", ")
                ),
            )
            .with_hint("name it in the message's metadata: {\"baton\": {\"project\": \"ID\"}}")),
        }
    }

    /// The project a new task's `contextId` names: the `contextId` of the tasks baton
    /// answers with is their project, and one that names none is refused (A2A: a context
    /// the agent cannot take is an error, never replaced by another).
    async fn context_project(&self, context: &str) -> std::result::Result<String, RpcError> {
        let store = self.state.hub.store.clone();
        let id = context.to_string();
        let exists = tokio::task::spawn_blocking(move || project::check_exists(&*store, &id))
            .await
            .map_err(|_| stopped())?;
        match exists {
            Ok(()) => Ok(context.to_string()),
            Err(Error::Store(error)) => Err(refusal(&Error::Store(error), Doing::Other)),
            Err(_) => Err(RpcError::new(
                code::INVALID_PARAMS,
                "INVALID_PARAMS",
                format!(
                    "the contextId `{}` is no project of this hub: a task's contextId is its \
                     project",
                    text::inline(context)
                ),
            )
            .with_hint("leave the contextId out, or name the project in metadata.baton.project")),
        }
    }

    /// Where a task id points: its project (from the id, else what the caller said, else
    /// the hub's only one) and number. A context that is not the task's project is refused.
    async fn locate(
        &self,
        task: &str,
        said: Option<&str>,
        context: Option<&str>,
    ) -> std::result::Result<(String, TaskId), RpcError> {
        let (named, id) = tasks::parse_task_ref(task)
            .map_err(|refused| RpcError::new(code::TASK_NOT_FOUND, "TASK_NOT_FOUND", refused))?;
        let project = match named.or(said).or(context).or(self.project.as_deref()) {
            Some(project) => project.to_string(),
            None => self.only_project().await?,
        };
        if let Some(context) = context.filter(|context| !context.is_empty())
            && context != project
        {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "INVALID_PARAMS",
                format!(
                    "the contextId `{}` is not the context of task {} (its project, {project})",
                    text::inline(context),
                    tasks::task_ref(&project, id)
                ),
            ));
        }
        Ok((project, id))
    }

    /// `SendMessage` and `SendStreamingMessage`: a new task for the agent, or an answer or a
    /// verdict on a task waiting on the caller; then the task, at once, once it stops, or
    /// as a stream.
    async fn send(self, params: Value, streams: bool) -> Answered {
        let params: protocol::SendParams = params_of(params)?;
        let text = message_text(&params.message)?;
        let said = Said::of(&[params.message.metadata.as_ref(), params.metadata.as_ref()])?;
        let context = params
            .message
            .context_id
            .as_deref()
            .filter(|context| !context.is_empty());
        let config = params.configuration.clone().unwrap_or_default();
        // Taken before the task is sent or answered: a refusal changes nothing.
        let slot = match streams || config.waits() {
            true => Some(self.hold_stream()?),
            false => None,
        };
        // Subscribed before the change, so that nothing after it is missed.
        let changes = stream::follow(&self.state);
        let (project, view) = match params
            .message
            .task_id
            .as_deref()
            .filter(|id| !id.is_empty())
        {
            Some(task) => {
                let (project, id) = self.locate(task, said.project.as_deref(), context).await?;
                let view = self
                    .reply(&project, id, text, said.action.as_deref())
                    .await?;
                (project, view)
            }
            None => {
                let project = match (said.project.as_deref(), context, &self.project) {
                    (Some(project), _, _) => project.to_string(),
                    (None, Some(context), _) => self.context_project(context).await?,
                    (None, None, Some(project)) => project.clone(),
                    (None, None, None) => self.only_project().await?,
                };
                let view = self.new_task(&project, text, &said).await?;
                (project, view)
            }
        };
        let watch = Watch::new(changes, &project, view.task.id);
        if streams {
            return Ok(self.stream(project, view, watch, slot));
        }
        let view = match config.waits() {
            true => {
                let id = view.task.id;
                let look_project = project.clone();
                stream::until_it_stops(view, watch, || self.show(&look_project, id), self.guard())
                    .await?
            }
            false => view,
        };
        let shown = Shown {
            history_length: config.history_length,
            artifacts: true,
        };
        let task = tasks::task(self.version, &project, &view, shown);
        Ok(self.answer(protocol::send_result(self.version, &task)))
    }

    /// A new task from the caller to the endpoint's agent (the hub's endpoint: the one
    /// `metadata.baton.to` names).
    async fn new_task(
        &self,
        project: &str,
        text: String,
        said: &Said,
    ) -> std::result::Result<TaskView, RpcError> {
        let Some(to) = self.agent.clone().or_else(|| said.to.clone()) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "INVALID_PARAMS",
                "a new task needs an agent: send it to the agent's card (/a2a/agents/NAME), \
                 or name the agent in metadata.baton.to",
            ));
        };
        let (subject, body) = subject_and_body(&text);
        let new = NewTask {
            to: Some(to),
            subject,
            body,
            priority: said.priority.unwrap_or_default(),
            review: said.review,
            ..NewTask::default()
        };
        let report_wake = self.state.report_wake;
        self.at_desk(project, Doing::Other, move |desk| {
            let changed = desk.send(new)?;
            changed.woken.iter().for_each(report_wake);
            Ok(changed.task)
        })
        .await
    }

    /// The caller's word on a task waiting on it: the answer to a question, or a verdict on
    /// a review (`metadata.baton.action: "approve"` approves; anything else asks for
    /// changes). On a task in any other status, the desk says why not.
    async fn reply(
        &self,
        project: &str,
        id: TaskId,
        text: String,
        action: Option<&str>,
    ) -> std::result::Result<TaskView, RpcError> {
        let caller = self.caller.0.clone();
        let approves = action.is_some_and(|action| action.trim().eq_ignore_ascii_case("approve"));
        let report_wake = self.state.report_wake;
        self.at_desk(project, Doing::Other, move |desk| {
            let view = shown_to(desk, &caller, id)?;
            let action = match (view.task.status, approves) {
                (Status::ReviewRequested, true) => Action::new(ActionKind::Approve, text),
                (Status::ReviewRequested, false) => Action::new(ActionKind::RequestChanges, text),
                _ => Action::new(ActionKind::Answer, text),
            };
            let changed = desk.act(id, action)?;
            changed.woken.iter().for_each(report_wake);
            Ok(changed.task)
        })
        .await
    }

    /// `GetTask`: one of the caller's tasks.
    async fn get(self, params: Value) -> Answered {
        let params: protocol::TaskParams = params_of(params)?;
        let (project, id) = self.locate(&params.id, None, None).await?;
        let view = self.show(&project, id).await?;
        let shown = Shown {
            history_length: params.history_length,
            artifacts: true,
        };
        let task = tasks::task(self.version, &project, &view, shown);
        Ok(self.answer(protocol::to_value(&task)))
    }

    /// `CancelTask`: the sender withdraws its task (`metadata.baton.reason` says why).
    async fn cancel(self, params: Value) -> Answered {
        let metadata: Option<Map<String, Value>> =
            params.get("metadata").and_then(Value::as_object).cloned();
        let said = Said::of(&[metadata.as_ref()])?;
        let params: protocol::TaskParams = params_of(params)?;
        let (project, id) = self.locate(&params.id, None, None).await?;
        let caller = self.caller.0.clone();
        let reason = said.reason.unwrap_or_default();
        let report_wake = self.state.report_wake;
        let view = self
            .at_desk(&project, Doing::Cancel, move |desk| {
                shown_to(desk, &caller, id)?;
                let changed = desk.act(id, Action::new(ActionKind::Cancel, reason))?;
                changed.woken.iter().for_each(report_wake);
                Ok(changed.task)
            })
            .await?;
        let task = tasks::task(self.version, &project, &view, Shown::ALL);
        Ok(self.answer(protocol::to_value(&task)))
    }

    /// `SubscribeToTask`: the stream of one of the caller's tasks from now on.
    async fn subscribe(self, params: Value) -> Answered {
        let params: protocol::TaskParams = params_of(params)?;
        let slot = self.hold_stream()?;
        let (project, id) = self.locate(&params.id, None, None).await?;
        let changes = stream::follow(&self.state);
        let view = self.show(&project, id).await?;
        if view.task.status.is_finished() {
            return Err(RpcError::new(
                code::UNSUPPORTED_OPERATION,
                "UNSUPPORTED_OPERATION",
                format!(
                    "{} is {}: it is finished, and nothing moves it again",
                    tasks::task_ref(&project, id),
                    view.task.status
                ),
            )
            .with_hint("GetTask shows it as it ended"));
        }
        let watch = Watch::new(changes, &project, id);
        Ok(self.stream(project, view, watch, Some(slot)))
    }

    /// `ListTasks`: the caller's tasks on the boards (those this endpoint's agent has, at
    /// an agent's endpoint), most recently changed first.
    async fn list(self, params: Value) -> Answered {
        let params: protocol::ListParams = params_of(params)?;
        let state = match params.status.as_deref().filter(|status| !status.is_empty()) {
            Some("TASK_STATE_UNSPECIFIED") | None => None,
            Some(status) => Some(Version::parse_state(status).ok_or_else(|| {
                RpcError::new(
                    code::INVALID_PARAMS,
                    "INVALID_PARAMS",
                    format!("`{}` is not a task state baton has", text::inline(status)),
                )
            })?),
        };
        let size = usize::try_from(params.page_size.unwrap_or(50).clamp(1, 100)).unwrap_or(50);
        let skip = match params
            .page_token
            .as_deref()
            .filter(|token| !token.is_empty())
        {
            None => 0,
            Some(token) => token.parse::<usize>().map_err(|_| {
                RpcError::new(
                    code::INVALID_PARAMS,
                    "INVALID_PARAMS",
                    "the pageToken is not one a listing gave",
                )
            })?,
        };
        let projects = match params.context_id.filter(|context| !context.is_empty()) {
            Some(project) => vec![project],
            None => {
                let hub = self.state.hub.clone();
                tokio::task::spawn_blocking(move || project::project_ids(&*hub.store))
                    .await
                    .map_err(|_| stopped())?
                    .map_err(|error| refusal(&error, Doing::Other))?
            }
        };
        let mut found: Vec<(String, TaskView)> = Vec::new();
        for project in projects {
            let caller = self.caller.0.clone();
            let agent = self.agent.clone();
            let views = self
                .at_desk(&project, Doing::Other, move |desk| {
                    let every = BoardFilter {
                        all: true,
                        ..BoardFilter::default()
                    };
                    Ok(desk
                        .board(&every)?
                        .into_iter()
                        .filter(|view| tasks::is_callers(view, &caller))
                        .filter(|view| agent.as_deref().is_none_or(|agent| view.task.to == agent))
                        .collect::<Vec<_>>())
                })
                .await?;
            found.extend(
                views
                    .into_iter()
                    .filter(|view| {
                        state.is_none_or(|state| tasks::state_of(view.task.status) == state)
                    })
                    .map(|view| (project.clone(), view)),
            );
        }
        found.sort_by(|(a_project, a), (b_project, b)| {
            b.task
                .updated_at
                .cmp(&a.task.updated_at)
                .then_with(|| a_project.cmp(b_project))
                .then_with(|| a.task.id.cmp(&b.task.id))
        });
        let total = found.len();
        let shown = Shown {
            history_length: params.history_length,
            artifacts: params.include_artifacts.unwrap_or(false),
        };
        let page: Vec<protocol::Task> = found
            .iter()
            .skip(skip)
            .take(size)
            .map(|(project, view)| tasks::task(self.version, project, view, shown))
            .collect();
        let next = skip + page.len();
        let list = protocol::TaskList {
            page_size: page.len(),
            tasks: page,
            next_page_token: if next < total {
                next.to_string()
            } else {
                String::new()
            },
            total_size: total,
        };
        Ok(self.answer(protocol::to_value(&list)))
    }

    /// A place among the caller's token's streams, for a stream or a wait.
    fn hold_stream(&self) -> std::result::Result<Slot, RpcError> {
        self.state
            .streams
            .try_open(&self.token)
            .map_err(RpcError::from)
    }

    /// The stream of a task from `view` on (see [`stream::stream`]), holding `slot` until
    /// it ends.
    fn stream(self, project: String, view: TaskView, watch: Watch, slot: Option<Slot>) -> Response {
        let id = view.task.id;
        let guard = self.guard();
        let call = std::sync::Arc::new(self);
        let look_project = project.clone();
        let streaming = Streaming {
            version: call.version,
            id: call.id.clone(),
            project,
            watch,
            look: move || {
                let (call, project) = (call.clone(), look_project.clone());
                async move { call.show(&project, id).await }
            },
            guard,
        };
        stream::stream(view, streaming).map(|body| axum::body::Body::new(Held::new(body, slot)))
    }

    /// What ends a wait of this call besides the task: its token's removal, the server's
    /// stop.
    fn guard(
        &self,
    ) -> Guard<impl Fn() -> std::pin::Pin<Box<dyn Future<Output = bool> + Send>> + Send + use<>>
    {
        let (store, tokens, token) = (
            self.state.hub.store.clone(),
            self.state.tokens.clone(),
            self.token.clone(),
        );
        Guard {
            is_current: move || {
                let (store, tokens, token) = (store.clone(), tokens.clone(), token.clone());
                Box::pin(async move { super::events::is_current(&store, &tokens, &token).await })
                    as std::pin::Pin<Box<dyn Future<Output = bool> + Send>>
            },
            tokens_changed: self.state.feed.tokens_changed(),
            stopping: self.state.stopping.clone(),
        }
    }

    fn answer(&self, result: Value) -> Response {
        let mut response = axum::Json(protocol::result(&self.id, result)).into_response();
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

fn params_of<T: DeserializeOwned>(value: Value) -> std::result::Result<T, RpcError> {
    params(value)
}

/// The task `id` at `desk`, if `caller` sent it or reviews it; any other is not found.
fn shown_to(desk: &dyn Desk, caller: &str, id: TaskId) -> Result<TaskView> {
    let view = desk.show(id)?;
    if tasks::is_callers(&view, caller) {
        return Ok(view);
    }
    Err(Error::UnknownTask {
        task: id,
        project: desk.project_id()?,
    })
}

/// The refusal of a request whose blocking work ended without an answer (it panicked).
fn stopped() -> RpcError {
    RpcError::new(
        code::INTERNAL_ERROR,
        "INTERNAL_ERROR",
        "the request stopped",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_a_subject_line_and_a_body() {
        assert_eq!(
            subject_and_body("Fix the parser\n\nIt drops commas.\nSee src/parse.rs"),
            (
                "Fix the parser".to_string(),
                "It drops commas.\nSee src/parse.rs".to_string()
            )
        );
        assert_eq!(
            subject_and_body("One line"),
            ("One line".to_string(), String::new())
        );
        assert_eq!(
            subject_and_body("Windows\r\nbody"),
            ("Windows".to_string(), "body".to_string())
        );
    }

    #[test]
    fn metadata_baton_is_read_from_the_message_over_the_request() {
        let message = serde_json::json!({"baton": {"project": "api", "action": "approve"}});
        let request = serde_json::json!({"baton": {"project": "web", "to": "dev", "review": true}});
        let said = Said::of(&[message.as_object(), request.as_object()]).unwrap();
        assert_eq!(said.project.as_deref(), Some("api"));
        assert_eq!(said.action.as_deref(), Some("approve"));
        assert_eq!(said.to.as_deref(), Some("dev"));
        assert!(said.review);
        let wrong = serde_json::json!({"baton": {"project": 3}});
        assert_eq!(
            Said::of(&[wrong.as_object()]).unwrap_err().message,
            "metadata.baton.project must be a string"
        );
    }

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
