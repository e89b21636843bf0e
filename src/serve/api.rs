//! `/api/v1/…`: what the web board reads and does, in the shapes of the CLI's `--json`
//! (SPEC section 12). Each handler opens a session as the request's [`Caller`] in the project
//! its path names and calls the same session method as the CLI; nothing in a request names
//! who acts.
//!
//! A refusal is JSON: `{"error", "hint", "code"}`, `code` being the CLI's exit code for it.

use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use crate::board::task::{Priority, Status, TaskId};
use crate::board::transition::Action;
use crate::error::{Error, Result};
use crate::mail::MessageType;
use crate::mcp::Caller;
use crate::project;
use crate::session::{BoardFilter, NewTask, Session};

pub fn routes() -> Router<super::State> {
    Router::new()
        .route("/whoami", get(whoami))
        .route("/projects", get(projects))
        .route("/projects/{project}/board", get(board))
        .route("/projects/{project}/tasks", post(send))
        .route("/projects/{project}/tasks/{id}", get(show))
        .route("/projects/{project}/tasks/{id}/{action}", post(act))
        .route("/projects/{project}/agents", get(agents))
        .route("/projects/{project}/log", get(log))
        .route("/projects/{project}/messages", get(messages).post(message))
        .route("/events", get(super::events::stream))
}

/// A refused request, as the page and any other client read it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
}

#[derive(Debug, Serialize)]
struct ErrorBody {
    error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// The CLI's exit code for the same refusal; none for a refusal only HTTP has.
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                error: message.into(),
                hint: None,
                code: None,
            },
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.body.hint = Some(hint.into());
        self
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        let code = error.exit_code();
        let status = match (&error, code) {
            (Error::UnknownTask { .. } | Error::UnknownProject { .. }, _) => StatusCode::NOT_FOUND,
            (_, 2) => StatusCode::FORBIDDEN,
            (_, 3) => StatusCode::SERVICE_UNAVAILABLE,
            (_, 4) => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError {
            status,
            body: ErrorBody {
                error: error.to_string(),
                hint: error.hint(),
                code: Some(code),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.body)).into_response()
    }
}

/// What no route answers.
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such page")
}

type Answer = std::result::Result<Response, ApiError>;

/// Runs `operation` in a session of `caller` in `project`, and answers with its JSON.
async fn as_caller<T, F>(
    caller: Caller,
    project: String,
    state: &super::State,
    operation: F,
) -> Answer
where
    T: Serialize + Send + 'static,
    F: FnOnce(&Session) -> Result<T> + Send + 'static,
{
    let hub = state.hub.clone();
    answer(move || {
        let session = Session::open_by_id(hub, &caller.0, &project)?;
        operation(&session)
    })
    .await
}

/// Runs `work` on a blocking thread (it reads and locks files) and answers with its JSON.
async fn answer<T, F>(work: F) -> Answer
where
    T: Serialize + Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let done = tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the request stopped"))?;
    Ok(axum::Json(done?).into_response())
}

/// The caller's changes wake and notify whom they reach, as the CLI's do; the server says
/// whom on its stderr.
fn report(state: &super::State, woken: &[crate::wake::WakeOutcome]) {
    for outcome in woken {
        (state.report_wake)(outcome);
    }
}

/// A JSON body, or the refusal saying what is wrong with it.
fn body<T>(
    payload: std::result::Result<axum::Json<T>, JsonRejection>,
) -> std::result::Result<T, ApiError> {
    payload
        .map(|axum::Json(value)| value)
        .map_err(|rejection| ApiError::new(StatusCode::BAD_REQUEST, rejection.body_text()))
}

/// `12` or the `T-12` a listing shows, read as the CLI reads it.
fn task_id(text: &str) -> std::result::Result<TaskId, ApiError> {
    text.parse().map_err(|refused: String| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            crate::text::inline(&refused).to_string(),
        )
    })
}

async fn whoami(Extension(caller): Extension<Caller>) -> Response {
    axum::Json(serde_json::json!({ "agent": caller.0 })).into_response()
}

async fn projects(State(state): State<super::State>) -> Answer {
    let home = state.hub.home.clone();
    answer(move || project::list(&home)).await
}

#[derive(Debug, Default, Deserialize)]
struct BoardQuery {
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    mine: bool,
    #[serde(default)]
    all: bool,
}

async fn board(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<BoardQuery>,
) -> Answer {
    let filter = BoardFilter {
        status: query.status,
        mine: query.mine,
        all: query.all,
    };
    as_caller(caller, project, &state, move |session| {
        session.list(&filter)
    })
    .await
}

async fn show(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, id)): Path<(String, String)>,
) -> Answer {
    let id = task_id(&id)?;
    as_caller(caller, project, &state, move |session| session.show(id)).await
}

/// A task to send: `send`'s options.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SendBody {
    #[serde(default)]
    to: Option<String>,
    #[serde(default)]
    skill: Option<String>,
    subject: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    priority: Priority,
    #[serde(default)]
    after: Vec<u64>,
    #[serde(default)]
    review: bool,
    #[serde(default)]
    reviewer: Option<String>,
}

async fn send(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<SendBody>, JsonRejection>,
) -> Answer {
    let sent = body(payload)?;
    let new = NewTask {
        to: sent.to.filter(|to| !to.is_empty()),
        skill: sent.skill.filter(|skill| !skill.is_empty()),
        subject: sent.subject,
        body: sent.body,
        files: sent.files,
        priority: sent.priority,
        after: sent.after.into_iter().map(TaskId).collect(),
        review: sent.review,
        reviewer: sent.reviewer.filter(|reviewer| !reviewer.is_empty()),
    };
    let reporter = state.clone();
    as_caller(caller, project, &state, move |session| {
        let changed = session.send(new)?;
        report(&reporter, &changed.woken);
        Ok(changed)
    })
    .await
}

/// The words of a transition, and the new assignee of a reassignment.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActBody {
    #[serde(default)]
    text: String,
    #[serde(default)]
    to: Option<String>,
}

async fn act(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, id, action)): Path<(String, String, String)>,
    payload: Option<axum::Json<ActBody>>,
) -> Answer {
    let id = task_id(&id)?;
    let ActBody { text, to } = payload.map(|axum::Json(words)| words).unwrap_or_default();
    let action = match action.as_str() {
        "claim" => Action::Claim,
        "release" => Action::Release,
        "ask" => Action::Ask { question: text },
        "answer" => Action::Answer { answer: text },
        "review" => Action::Review { note: text },
        "approve" => Action::Approve { note: text },
        "request-changes" => Action::RequestChanges { what: text },
        "done" => Action::Done { result: text },
        "fail" => Action::Fail { reason: text },
        "cancel" => Action::Cancel { reason: text },
        "reassign" => match to.filter(|to| !to.is_empty()) {
            Some(to) => Action::Reassign { to, note: text },
            None => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "reassign needs `to`: the new assignee",
                ));
            }
        },
        other => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!(
                    "no action `{}`; actions: claim, release, ask, answer, review, approve, \
                     request-changes, done, fail, cancel, reassign",
                    crate::text::inline(other)
                ),
            ));
        }
    };
    let reporter = state.clone();
    as_caller(caller, project, &state, move |session| {
        let changed = session.act(id, action)?;
        report(&reporter, &changed.woken);
        Ok(changed)
    })
    .await
}

async fn agents(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
) -> Answer {
    as_caller(caller, project, &state, |session| session.agents()).await
}

#[derive(Debug, Deserialize)]
struct LogQuery {
    #[serde(default = "twenty")]
    n: usize,
}

fn twenty() -> usize {
    20
}

async fn log(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<LogQuery>,
) -> Answer {
    as_caller(caller, project, &state, move |session| {
        session.log(Some(query.n), None)
    })
    .await
}

#[derive(Debug, Default, Deserialize)]
struct MessagesQuery {
    #[serde(default)]
    all: bool,
    #[serde(default)]
    peek: bool,
}

async fn messages(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<MessagesQuery>,
) -> Answer {
    as_caller(caller, project, &state, move |session| {
        session.messages(query.all, query.peek)
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    to: String,
    text: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

async fn message(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<MessageBody>, JsonRejection>,
) -> Answer {
    let message = body(payload)?;
    let kind: MessageType = match message.kind.as_deref() {
        None | Some("") => MessageType::Text,
        Some(kind) => kind
            .parse()
            .map_err(|refused: String| ApiError::from(Error::invalid(refused)))?,
    };
    let reporter = state.clone();
    as_caller(caller, project, &state, move |session| {
        let summary = message
            .summary
            .as_deref()
            .filter(|summary| !summary.is_empty());
        let sent = session.message(&message.to, &message.text, kind, summary)?;
        report(&reporter, &sent.woken);
        Ok(sent)
    })
    .await
}
