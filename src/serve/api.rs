//! `/api/v1/…`: what the web board reads and does, in the shapes of the CLI's `--json`
//! (SPEC section 12). Each handler opens a session as the request's [`Caller`] in the project
//! its path names and calls the same session method as the CLI; nothing in a request names
//! who acts.
//!
//! A refusal is JSON: `{"error", "hint", "code"}`, `code` being the CLI's exit code for it.
//! So is every other refusal of the server, `/mcp`'s included ([`refusals_as_json`]).

use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Extension, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use crate::board::Board;
use crate::board::action::ActionKind;
use crate::board::task::{Head, Priority, Status, TaskId};
use crate::board::transition::{self, Action, Rules};
use crate::error::{Error, Result};
use crate::mail::{Marking, MessageType};
use crate::mcp::Caller;
use crate::project;
use crate::session::{BoardFilter, NewTask, Session, Standing, TaskView};
use crate::tokens::TokenId;

pub fn routes() -> Router<super::State> {
    Router::new()
        .route("/whoami", get(whoami))
        .route("/page", get(page))
        .route("/logout", post(logout))
        .route("/projects", get(projects))
        .route("/projects/{project}", get(project_show))
        .route("/projects/{project}/board", get(board))
        .route("/projects/{project}/inbox", get(inbox))
        .route("/projects/{project}/hook/{event}", post(hook))
        .route("/projects/{project}/notes", post(note))
        .route("/projects/{project}/context", post(add_context))
        .route("/projects/{project}/coordinator", post(coordinator))
        .route("/projects/{project}/wake/{agent}", post(wake))
        .route("/projects/{project}/woken", post(woken))
        .route("/projects/{project}/seen", post(seen))
        .route("/agents/{agent}", get(agent_show).post(agent_profile))
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

    /// The body as it is sent, for tests of what a refusal says.
    #[cfg(test)]
    pub fn body_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.body).expect("an error body is JSON")
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.body.hint = Some(hint.into());
        self
    }

    /// A refusal told by HTTP alone (`status`; no CLI command refuses it, so no `code`), in
    /// the first line of `words` (the status's name when there are none), with the hint that
    /// says what to send instead where there is one.
    fn of_form(status: StatusCode, words: &str) -> Self {
        let message = match words.lines().map(str::trim).find(|line| !line.is_empty()) {
            Some(line) => crate::text::inline(line).to_string(),
            None => status
                .canonical_reason()
                .unwrap_or("refused")
                .to_lowercase(),
        };
        let refusal = ApiError::new(status, message);
        let hint = match status {
            StatusCode::NOT_ACCEPTABLE => {
                "an MCP client sends `Accept: application/json, text/event-stream`"
            }
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                "send the body as JSON, with `Content-Type: application/json`"
            }
            StatusCode::PAYLOAD_TOO_LARGE => {
                "a text is at most 256 KiB: put a longer one in a file and name it in `files`"
            }
            _ => return refusal,
        };
        refusal.with_hint(hint)
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

/// The most of a refusal's body read to reword it: refusals are a line or two.
const REFUSAL_READ_LIMIT: usize = 64 * 1024;

/// Makes every refusal that is not JSON yet (axum's routing and extractors, rmcp's
/// transport, both plain text) the API's `{"error", "hint"}`, with its status and headers
/// (`Allow`, `WWW-Authenticate`) kept. Answers that succeed (pages, event streams, MCP's
/// JSON-RPC) and refusals that are JSON already (the API's own, and MCP's JSON-RPC errors,
/// which clients read as such) pass untouched.
pub async fn refusals_as_json(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let response = next.run(request).await;
    let status = response.status();
    let is_refusal = status.is_client_error() || status.is_server_error();
    if !is_refusal || is_json(response.headers()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    // A body that cannot be read is told by its status alone.
    let text = axum::body::to_bytes(body, REFUSAL_READ_LIMIT)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let refusal = match status {
        // axum's 405 has no words at all and rmcp's says only that; `Allow` says what would do.
        StatusCode::METHOD_NOT_ALLOWED => {
            let refusal = ApiError::new(
                status,
                format!(
                    "{} is not allowed here",
                    crate::text::inline(method.as_str())
                ),
            );
            match parts
                .headers
                .get(header::ALLOW)
                .and_then(|allow| allow.to_str().ok())
            {
                Some(allow) => {
                    refusal.with_hint(format!("this path answers {}", crate::text::inline(allow)))
                }
                None => refusal,
            }
        }
        _ => ApiError::of_form(status, &text),
    };
    let mut rewritten = refusal.into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}

/// Whether `headers` say the body is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok())
        .and_then(|kind| kind.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
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
        let Caller(agent, standing) = caller;
        let session = Session::open_by_id_as(hub, &agent, &project, standing)?;
        operation(&session)
    })
    .await
}

/// How a request stands ([`Standing`]): an observer when it says it comes from a process
/// looking on its agent's behalf (`baton listen`, a remote `watch`: the
/// [`crate::remote::OBSERVER_HEADER`]), else the agent itself. The header is taken on the
/// request's word, with no check, because it can only take away: an observer renews no lease
/// and records no heartbeat, and is shown and allowed exactly what its token's agent is. A
/// token that sends it harms nobody but its own agent's claims.
pub fn standing(headers: &HeaderMap) -> Standing {
    match headers.get(crate::remote::OBSERVER_HEADER) {
        Some(_) => Standing::Observer,
        None => Standing::Agent,
    }
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
    payload.map(|axum::Json(value)| value).map_err(body_refusal)
}

/// The refusal of a body that is no JSON of the right shape, with axum's status for it: 415
/// for another content type, 400 for text that is no JSON, 422 for JSON of another shape,
/// 413 for too much of it.
fn body_refusal(rejection: JsonRejection) -> ApiError {
    ApiError::of_form(rejection.status(), &rejection.body_text())
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

async fn projects(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
) -> Answer {
    let home = state.hub.home.clone();
    answer(move || {
        Ok(project::list(&home)?
            .into_iter()
            .map(|project| shown_to(&caller, project))
            .collect::<Vec<_>>())
    })
    .await
}

/// A project as `caller` is shown it over HTTP: its workspace, a directory of the hub's
/// machine, only to a human of the project. An agent elsewhere works in a directory of its
/// own (`baton project map`; SPEC section 7), and the hub's layout is nothing it needs: a
/// path shown to it would pass for one where it should work, and tells a stranger with a
/// token where the hub keeps its code. A person steering the project is shown where it
/// lives on the hub, as the hub's own `project show` does.
fn shown_to(caller: &Caller, mut project: project::Project) -> project::Project {
    if !project.settings.humans.contains(&caller.0) {
        project.workspace = None;
    }
    project
}

/// What the web board opens on: who the page acts as, and the project of the directory
/// `baton serve` runs in (none when it could not tell).
async fn page(State(state): State<super::State>, Extension(caller): Extension<Caller>) -> Response {
    axum::Json(serde_json::json!({
        "agent": caller.0,
        "project": state.start_project,
    }))
    .into_response()
}

/// A browser logging out: the login token it presented is removed, so that it is good
/// nowhere any more (not in another tab, nor in a copy of the link). Another token (an
/// agent's, pasted into the page) is only forgotten by the page, never removed here.
async fn logout(State(state): State<super::State>, Extension(token): Extension<TokenId>) -> Answer {
    let hub = state.hub.clone();
    answer(move || {
        let removed = crate::tokens::remove_login(&hub.home, &token, hub.lock)?;
        Ok(serde_json::json!({ "removed": removed }))
    })
    .await
}

/// A task as the CLI's `--json` has it and, when the page asks (`?offered=true`), the
/// actions the caller may take on it now, by their names in the activity log: the buttons
/// the page shows, judged by the state machine itself ([`transition::offered`]). The field
/// is left out unless asked for, so every other reader gets the CLI's shape unchanged.
#[derive(Debug, Serialize)]
struct ForCaller {
    #[serde(flatten)]
    view: TaskView,
    #[serde(skip_serializing_if = "Option::is_none")]
    offered: Option<Vec<ActionKind>>,
}

/// Whether the page asked for what the caller may do with each task.
#[derive(Debug, Default, Deserialize)]
struct OfferedQuery {
    #[serde(default)]
    offered: bool,
}

/// `views` for the caller of `session`, with what it may do with each when `offered`.
fn for_caller(session: &Session, views: Vec<TaskView>, offered: bool) -> Result<Vec<ForCaller>> {
    if !offered {
        return Ok(views
            .into_iter()
            .map(|view| ForCaller {
                view,
                offered: None,
            })
            .collect());
    }
    let actor = session.agent()?.to_string();
    // The board as the session just read it: kept by the server, so this costs no read.
    let board = session.hub.board(session.project_id())?;
    Ok(views
        .into_iter()
        .map(|view| {
            let offered = offered_to(session, &board, &actor, &view);
            ForCaller {
                view,
                offered: Some(offered),
            }
        })
        .collect())
}

/// What `actor` may do with `view` now, judged with the facts of `board` the state machine
/// needs: the project's coordinator and lease, and the tasks it waits on.
fn offered_to(session: &Session, board: &Board, actor: &str, view: &TaskView) -> Vec<ActionKind> {
    if view.archived {
        return Vec::new();
    }
    let waiting_on = board.waiting_on(&Head::of(&view.task));
    let rules = Rules {
        now: session.now,
        lease: session.project.lease(),
        coordinator: session.project.coordinator.as_deref(),
        waiting_on: &waiting_on,
    };
    transition::offered(&view.task, actor, rules)
}

#[derive(Debug, Default, Deserialize)]
struct BoardQuery {
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    mine: bool,
    #[serde(default)]
    all: bool,
    #[serde(default)]
    offered: bool,
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
        for_caller(session, session.list(&filter)?, query.offered)
    })
    .await
}

async fn show(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, id)): Path<(String, String)>,
    Query(query): Query<OfferedQuery>,
) -> Answer {
    let id = task_id(&id)?;
    as_caller(caller, project, &state, move |session| {
        let shown = for_caller(session, vec![session.show(id)?], query.offered)?;
        // One view in, one out.
        Ok(shown.into_iter().next())
    })
    .await
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
    payload: std::result::Result<Option<axum::Json<ActBody>>, JsonRejection>,
) -> Answer {
    let id = task_id(&id)?;
    // No body at all is no words, as the page sends a claim.
    let ActBody { text, to } = payload
        .map_err(body_refusal)?
        .map(|axum::Json(words)| words)
        .unwrap_or_default();
    let Some(kind) = ActionKind::from_command(&action) else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "no action `{}`; actions: {}",
                crate::text::inline(&action),
                ActionKind::commands().collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    let Some(action) = Action::of(kind, text, to) else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "reassign needs `to`: the new assignee",
        ));
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
    #[serde(default)]
    since: Option<crate::time::Timestamp>,
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
        session.log(Some(query.n), query.since)
    })
    .await
}

#[derive(Debug, Default, Deserialize)]
struct MessagesQuery {
    #[serde(default)]
    all: bool,
    #[serde(default)]
    peek: bool,
    /// Only the messages numbered up to this one count as read: those a view drew.
    through: Option<u64>,
}

async fn messages(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<MessagesQuery>,
) -> Answer {
    as_caller(caller, project, &state, move |session| {
        let marking = match (query.peek, query.through) {
            (true, _) => Marking::Leave,
            (false, Some(seq)) => Marking::Through(seq),
            (false, None) => Marking::All,
        };
        session.messages(query.all, marking)
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

async fn project_show(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
) -> Answer {
    let shown = caller.clone();
    as_caller(caller, project, &state, move |session| {
        Ok(shown_to(&shown, session.project.clone()))
    })
    .await
}

/// What the inbox shows and records: `peek` leaves messages unread; `preview` lists the
/// first ten tasks in full and counts the rest (`status`, hooks); `record=false` records
/// no hand-over as seen (a remote `listen` looks on the agent's behalf, showing it nothing).
#[derive(Debug, Deserialize)]
struct InboxQuery {
    #[serde(default)]
    peek: bool,
    #[serde(default)]
    preview: bool,
    #[serde(default = "yes")]
    record: bool,
}

fn yes() -> bool {
    true
}

async fn inbox(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<InboxQuery>,
) -> Answer {
    as_caller(caller, project, &state, move |session| {
        match (query.record, query.preview, query.peek) {
            (false, _, _) => session.inbox_before_push(),
            (true, true, peek) => session.inbox_preview(!peek),
            (true, false, true) => session.inbox(),
            (true, false, false) => session.inbox_and_mark_read(),
        }
    })
    .await
}

/// What the client said that matters to a hook on the hub: whether a stop hook already
/// made the agent go on; and the directory the agent's machine maps the project to, which
/// its context names instead of the hub's workspace.
#[derive(Debug, Default, Deserialize)]
struct HookBody {
    #[serde(default)]
    stop_hook_active: bool,
    #[serde(default)]
    workspace: Option<std::path::PathBuf>,
}

/// A remote agent's hook: the hook's answer in baton's words (`{"answer", "text"}`), which
/// the agent's machine puts in its client's format. Never fails but on a project it cannot
/// open: what goes wrong after that is the answer's note, as on the hub's own machine.
async fn hook(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, event)): Path<(String, String)>,
    payload: Option<axum::Json<HookBody>>,
) -> Answer {
    use crate::client::HookEvent;
    use crate::hook::Answer as HookAnswer;
    let event = HookEvent::from_name(&event).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "no hook event `{}`; events: session-start, prompt, stop",
                crate::text::inline(&event)
            ),
        )
    })?;
    let input = payload.map(|axum::Json(input)| input).unwrap_or_default();
    // As on the hub's own machine, a hook shows the inbox unmarked rather than keep its
    // client waiting on a busy lock.
    let hub = crate::hook::hub_for_hook(&state.hub);
    answer(move || {
        if event == HookEvent::Stop && input.stop_hook_active {
            return Ok(HookAnswer::Nothing);
        }
        let mut session = Session::open_by_id_unless_busy(hub, &caller.0, &project)?;
        // The context says where the agent works: on its own machine, its mapped directory
        // (or nothing), never the hub's path (SPEC section 7). The session is open already;
        // the workspace serves only the words from here on.
        session.project.workspace = input.workspace.filter(|dir| dir.is_absolute());
        Ok(crate::hook::answer_in(&session, event)
            .unwrap_or_else(|error| crate::hook::note(&error)))
    })
    .await
}

/// The words of a note, or of the shared context.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TextBody {
    text: String,
}

async fn note(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<TextBody>, JsonRejection>,
) -> Answer {
    let TextBody { text } = body(payload)?;
    as_caller(caller, project, &state, move |session| session.note(&text)).await
}

async fn add_context(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<TextBody>, JsonRejection>,
) -> Answer {
    let TextBody { text } = body(payload)?;
    let shown = caller.clone();
    as_caller(caller, project, &state, move |session| {
        Ok(shown_to(&shown, session.add_context(&text)?))
    })
    .await
}

/// `coordinator [--human NAME] [--not-human NAME] [--set NAME]`, done in that order.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CoordinatorBody {
    #[serde(default)]
    set: Option<String>,
    #[serde(default)]
    human: Option<String>,
    #[serde(default)]
    not_human: Option<String>,
}

async fn coordinator(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<CoordinatorBody>, JsonRejection>,
) -> Answer {
    let change = body(payload)?;
    let shown = caller.clone();
    as_caller(caller, project, &state, move |session| {
        let project = session.coordinate(
            change.set.as_deref(),
            change.human.as_deref(),
            change.not_human.as_deref(),
        )?;
        Ok(shown_to(&shown, project))
    })
    .await
}

/// `wake NAME` from another machine: the agent's wake command runs here, on the hub, as a
/// hand-over would start it, and only while work waits for it
/// ([`Session::wake_for_waiting_work`]). The answer names no path of the hub's.
async fn wake(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, agent)): Path<(String, String)>,
) -> Answer {
    as_caller(caller, project, &state, move |session| {
        session.wake_for_waiting_work(&agent).map(without_hub_paths)
    })
    .await
}

/// A wake's outcome as another machine is told it: the log is named as a file of the hub's
/// home (`wake/<agent>.log`, SPEC section 2), not by the hub's own path, and a failure to
/// start is said without the hub's program path.
fn without_hub_paths(outcome: crate::wake::WakeOutcome) -> crate::wake::WakeOutcome {
    use crate::wake::WakeOutcome;
    let in_home = |agent: &str| std::path::PathBuf::from("wake").join(format!("{agent}.log"));
    match outcome {
        WakeOutcome::Started {
            agent,
            project,
            tasks,
            ..
        } => WakeOutcome::Started {
            log: in_home(&agent),
            agent,
            project,
            tasks,
        },
        WakeOutcome::AlreadyAwake {
            agent,
            project,
            tasks,
            ..
        } => WakeOutcome::AlreadyAwake {
            log: in_home(&agent),
            agent,
            project,
            tasks,
        },
        WakeOutcome::Failed { agent, project, .. } => WakeOutcome::Failed {
            error: "the hub could not start its wake supervisor (the stderr of `baton serve` \
                    says why)"
                .to_string(),
            agent,
            project,
        },
        listening @ WakeOutcome::Listening { .. } => listening,
    }
}

/// The tasks a remote `listen` started its agent's wake command for.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WokenBody {
    tasks: Vec<u64>,
}

/// A remote `listen` says it woke the caller for these tasks: their delivery records say
/// `woken` (SPEC section 11), for the caller's own hand-overs only.
async fn woken(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<WokenBody>, JsonRejection>,
) -> Answer {
    record_delivery(state, caller, project, payload, |session, ids| {
        crate::session::record_woken(&session.hub, session.project_id(), session.agent()?, ids);
        Ok(ids.to_vec())
    })
    .await
}

/// A remote live session (`hook follow` on an agent's machine) pushed these tasks into its
/// session: they count as seen (SPEC section 11), for the caller's own hand-overs only.
async fn seen(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<WokenBody>, JsonRejection>,
) -> Answer {
    record_delivery(state, caller, project, payload, |session, ids| {
        session.record_seen(ids)
    })
    .await
}

/// Records a step of the caller's deliveries of the tasks a body names; answers with the
/// ids `record` says it recorded.
async fn record_delivery(
    state: super::State,
    caller: Caller,
    project: String,
    payload: std::result::Result<axum::Json<WokenBody>, JsonRejection>,
    record: fn(&Session, &[TaskId]) -> Result<Vec<TaskId>>,
) -> Answer {
    let WokenBody { tasks } = body(payload)?;
    as_caller(caller, project, &state, move |session| {
        let ids: Vec<TaskId> = tasks.into_iter().map(TaskId).collect();
        Ok(serde_json::json!({ "tasks": record(session, &ids)? }))
    })
    .await
}

/// Whose wake command a caller may see: `?project=P` names the project whose coordinator
/// the caller may be.
#[derive(Debug, Default, Deserialize)]
struct AgentQuery {
    #[serde(default)]
    project: Option<String>,
}

/// An agent's record. Its wake command is an argv that runs on the hub and may carry a key
/// (`--api-key …`): it is shown to the agent itself and to the coordinator of the project
/// the request names, who decides who works there; to anyone else it is left out, saying
/// so (`wake_hidden`). Humans of the project are not among them for this: they set wake
/// commands on the hub's machine, where `baton agent show` shows them, and a browser's
/// login token is the one most easily lost.
async fn agent_show(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(agent): Path<String>,
    Query(query): Query<AgentQuery>,
) -> Answer {
    let home = state.hub.home.clone();
    answer(move || {
        let mut record = crate::registry::require(&home, &agent)?;
        let coordinates = || -> Result<bool> {
            let Some(id) = query.project.as_deref() else {
                return Ok(false);
            };
            crate::names::check(crate::names::NameKind::Project, id)?;
            Ok(project::load(&home, id)?
                .is_some_and(|project| project.coordinator.as_deref() == Some(caller.0.as_str())))
        };
        if record.name != caller.0 && !coordinates()? && record.wake.take().is_some() {
            record
                .other
                .insert("wake_hidden".to_string(), serde_json::Value::Bool(true));
        }
        Ok(record)
    })
    .await
}

/// `agent add NAME --strengths … --skills …` from another machine, for the caller itself
/// only. A wake command is never set over HTTP (SPEC section 8).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileBody {
    #[serde(default)]
    strengths: Option<String>,
    #[serde(default)]
    skills: Option<Vec<String>>,
}

async fn agent_profile(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(agent): Path<String>,
    payload: std::result::Result<axum::Json<ProfileBody>, JsonRejection>,
) -> Answer {
    let profile = body(payload)?;
    if agent != caller.0 {
        return Err(ApiError::from(Error::invalid_with_hint(
            format!(
                "this token acts as {}: it can describe only {} itself, not {}",
                caller.0,
                caller.0,
                crate::text::inline(&agent)
            ),
            "on the hub's machine, `baton agent add NAME` describes any agent",
        )));
    }
    let hub = state.hub.clone();
    answer(move || {
        crate::registry::add(
            &hub.home,
            &agent,
            hub.lock,
            crate::time::now(),
            &crate::registry::Profile {
                strengths: profile.strengths,
                skills: profile.skills,
            },
            crate::registry::WakeCommandChange::Keep,
        )
    })
    .await
}
