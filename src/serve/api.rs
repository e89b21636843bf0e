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
use serde::Serialize;

use super::answers::{Encoded, Key, Versions};
use crate::board::action::ActionKind;
use crate::board::task::TaskId;
use crate::board::transition::Action;
use crate::error::{Error, Result};
use crate::json_api::{
    ActBody, AgentQuery, BoardQuery, CoordinatorBody, ErrorBody, HookBody, InboxQuery, LogQuery,
    LoggedOut, MessageBody, MessagesQuery, OfferedQuery, Page, ProfileBody, SendBody, TaskIds,
    TextBody, Whoami, route,
};
use crate::mail::{Marking, MessageType};
use crate::mcp::Caller;
use crate::names::{self, NameKind};
use crate::project;
use crate::session::blocking::{Opening, Stopped, in_session};
use crate::session::{BoardFilter, Session, Standing};
use crate::tokens::TokenId;

pub fn routes() -> Router<super::State> {
    Router::new()
        .route(route::WHOAMI.pattern(), get(whoami))
        .route(route::PAGE.pattern(), get(page))
        .route(route::LOGOUT.pattern(), post(logout))
        .route(route::PROJECTS.pattern(), get(projects))
        .route(route::PROJECT.pattern(), get(project_show))
        .route(route::BOARD.pattern(), get(board))
        .route(route::INBOX.pattern(), get(inbox))
        .route(route::HOOK.pattern(), post(hook))
        .route(route::NOTES.pattern(), post(note))
        .route(route::CONTEXT.pattern(), post(add_context))
        .route(route::COORDINATOR.pattern(), post(coordinator))
        .route(route::WAKE.pattern(), post(wake))
        .route(route::WOKEN.pattern(), post(woken))
        .route(route::SEEN.pattern(), post(seen))
        .route(route::AGENT.pattern(), get(agent_show).post(agent_profile))
        .route(route::TASKS.pattern(), post(send))
        .route(route::TASK.pattern(), get(show))
        .route(route::ACT.pattern(), post(act))
        .route(route::AGENTS.pattern(), get(agents))
        .route(route::LOG.pattern(), get(log))
        .route(route::MESSAGES.pattern(), get(messages).post(message))
        .route(route::EVENTS.pattern(), get(super::events::stream))
}

/// A refused request, as the page and any other client read it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: ErrorBody,
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
            // A busy lock, or the store's database out of reach: try again soon.
            (_, 3 | 6) => StatusCode::SERVICE_UNAVAILABLE,
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

type ApiResult = std::result::Result<Response, ApiError>;

/// Runs `operation` in a session of `caller` in `project`, and answers with its JSON.
async fn as_caller<T, F>(
    caller: Caller,
    project: String,
    state: &super::State,
    operation: F,
) -> ApiResult
where
    T: Serialize + Send + 'static,
    F: FnOnce(&Session) -> Result<T> + Send + 'static,
{
    let Caller(agent, standing) = caller;
    let opening = Opening::ById {
        agent,
        project,
        standing,
    };
    let done = in_session(state.hub.clone(), opening, move |session| {
        operation(&session)
    })
    .await
    .map_err(|Stopped| stopped())?;
    Ok(axum::Json(done?).into_response())
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
async fn answer<T, F>(work: F) -> ApiResult
where
    T: Serialize + Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    let done = tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| stopped())?;
    Ok(axum::Json(done?).into_response())
}

/// The refusal of a request whose work ended without an answer.
fn stopped() -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the request stopped")
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
    axum::Json(Whoami { agent: caller.0 }).into_response()
}

async fn projects(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
) -> ApiResult {
    let store = state.hub.store.clone();
    answer(move || {
        Ok(project::list(&*store)?
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
    axum::Json(Page {
        agent: caller.0,
        project: state.start_project,
    })
    .into_response()
}

/// A browser logging out: the login token it presented is removed, so that it is good
/// nowhere any more (not in another tab, nor in a copy of the link). Another token (an
/// agent's, pasted into the page) is only forgotten by the page, never removed here.
async fn logout(
    State(state): State<super::State>,
    Extension(token): Extension<TokenId>,
) -> ApiResult {
    let hub = state.hub.clone();
    answer(move || {
        let removed = crate::tokens::remove_login(&*hub.store, &token)?;
        Ok(LoggedOut { removed })
    })
    .await
}

/// The board as the caller's `--json` has it, answered from the bytes kept for this
/// version of the board when there are some ([`super::answers`]), else encoded now and kept.
async fn board(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<BoardQuery>,
    headers: HeaderMap,
) -> ApiResult {
    let hub = state.hub.clone();
    let answers = state.board_answers.clone();
    let encoded = tokio::task::spawn_blocking(move || -> Result<Encoded> {
        let filter = BoardFilter {
            status: query.status,
            mine: query.mine,
            all: query.all,
            // The buttons the page shows: what the caller may do with each task now.
            offered: query.offered,
        };
        let Caller(agent, standing) = caller;
        // Only a project's name is looked at on the store before the session checks it.
        let before = names::check(NameKind::Project, &project)
            .ok()
            .and_then(|()| Versions::of(&*hub.store, &project));
        let store = hub.store.clone();
        let session = Session::open_by_id_as(hub, &agent, &project, standing)?;
        // What the caller's read does (its due leases renewed) is done as on every read.
        let board = session.board()?;
        let after = Versions::of(&*store, session.project_id());
        // Read between two equal versions, the board is that version's.
        let versions = before.filter(|before| Some(*before) == after);
        let key = Key::new(session.project_id(), &query, &agent);
        if let Some(versions) = versions
            && let Some(kept) = answers.get(&key, versions, session.now)
        {
            return Ok(kept);
        }
        let views = session.list_on(&board, &filter)?;
        let bytes = serde_json::to_vec(&views)
            .map_err(|error| Error::invalid(format!("the board could not be encoded: {error}")))?;
        let encoded = Encoded::new(bytes);
        if let Some(versions) = versions {
            let until = board.next_stall_after(session.now);
            answers.keep(key, versions, until, encoded.clone());
        }
        Ok(encoded)
    })
    .await
    .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the request stopped"))??;
    Ok(encoded.respond(&headers))
}

async fn show(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, id)): Path<(String, String)>,
    Query(query): Query<OfferedQuery>,
) -> ApiResult {
    let id = task_id(&id)?;
    as_caller(caller, project, &state, move |session| {
        let view = session.show(id)?;
        match query.offered {
            true => session.with_offers(view),
            false => Ok(view),
        }
    })
    .await
}

async fn send(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<SendBody>, JsonRejection>,
) -> ApiResult {
    let new = body(payload)?.without_empty_names();
    let reporter = state.clone();
    as_caller(caller, project, &state, move |session| {
        let changed = session.send(new)?;
        report(&reporter, &changed.woken);
        Ok(changed)
    })
    .await
}

async fn act(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, id, action)): Path<(String, String, String)>,
    payload: std::result::Result<Option<axum::Json<ActBody>>, JsonRejection>,
) -> ApiResult {
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
) -> ApiResult {
    as_caller(caller, project, &state, |session| session.agents()).await
}

async fn log(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<LogQuery>,
) -> ApiResult {
    as_caller(caller, project, &state, move |session| {
        session.log(Some(query.n), query.since)
    })
    .await
}

async fn messages(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<MessagesQuery>,
) -> ApiResult {
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

async fn message(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<MessageBody>, JsonRejection>,
) -> ApiResult {
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
) -> ApiResult {
    let shown = caller.clone();
    as_caller(caller, project, &state, move |session| {
        Ok(shown_to(&shown, session.project.clone()))
    })
    .await
}

async fn inbox(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    Query(query): Query<InboxQuery>,
) -> ApiResult {
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

/// A remote agent's hook: the hook's answer in baton's words (`{"answer", "text"}`), which
/// the agent's machine puts in its client's format. Never fails but on a project it cannot
/// open: what goes wrong after that is the answer's note, as on the hub's own machine.
async fn hook(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path((project, event)): Path<(String, String)>,
    payload: Option<axum::Json<HookBody>>,
) -> ApiResult {
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
        let answer = session
            .hook_answer(event, input.stop_hook_active)
            .unwrap_or_else(|error| crate::hook::note(&error));
        // A remote agent's tools reach this hub over HTTP, where only the project they
        // name counts: an agent that nobody woke (an interactive session) is told so here.
        Ok(
            match (answer, crate::project::tools_over_http_note(&project)) {
                (HookAnswer::Context(text), Some(note)) => {
                    HookAnswer::Context(format!("{text}\n{note}"))
                }
                (HookAnswer::KeepWorking(text), Some(note)) => {
                    HookAnswer::KeepWorking(format!("{text} {note}"))
                }
                (answer, _) => answer,
            },
        )
    })
    .await
}

async fn note(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<TextBody>, JsonRejection>,
) -> ApiResult {
    let TextBody { text } = body(payload)?;
    as_caller(caller, project, &state, move |session| session.note(&text)).await
}

async fn add_context(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<TextBody>, JsonRejection>,
) -> ApiResult {
    let TextBody { text } = body(payload)?;
    let shown = caller.clone();
    as_caller(caller, project, &state, move |session| {
        Ok(shown_to(&shown, session.add_context(&text)?))
    })
    .await
}

async fn coordinator(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<CoordinatorBody>, JsonRejection>,
) -> ApiResult {
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
) -> ApiResult {
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
        elsewhere @ (WakeOutcome::Listening { .. } | WakeOutcome::OnItsHost { .. }) => elsewhere,
    }
}

/// A remote `listen` says it woke the caller for these tasks: their delivery records say
/// `woken` (SPEC section 11), for the caller's own hand-overs only.
async fn woken(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(project): Path<String>,
    payload: std::result::Result<axum::Json<TaskIds>, JsonRejection>,
) -> ApiResult {
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
    payload: std::result::Result<axum::Json<TaskIds>, JsonRejection>,
) -> ApiResult {
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
    payload: std::result::Result<axum::Json<TaskIds>, JsonRejection>,
    record: fn(&Session, &[TaskId]) -> Result<Vec<TaskId>>,
) -> ApiResult {
    let TaskIds { tasks } = body(payload)?;
    as_caller(caller, project, &state, move |session| {
        Ok(TaskIds {
            tasks: record(session, &tasks)?,
        })
    })
    .await
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
) -> ApiResult {
    let store = state.hub.store.clone();
    answer(move || {
        let mut record = crate::registry::require(&*store, &agent)?;
        let coordinates = || -> Result<bool> {
            let Some(id) = query.project.as_deref() else {
                return Ok(false);
            };
            crate::names::check(crate::names::NameKind::Project, id)?;
            Ok(project::load(&*store, id)?
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

async fn agent_profile(
    State(state): State<super::State>,
    Extension(caller): Extension<Caller>,
    Path(agent): Path<String>,
    payload: std::result::Result<axum::Json<ProfileBody>, JsonRejection>,
) -> ApiResult {
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
            &*hub.store,
            &agent,
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
