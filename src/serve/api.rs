//! `/api/v1/…`: what the web board reads and does, in the shapes of the CLI's `--json`
//! (SPEC section 12). Each endpoint ([`crate::json_api::endpoint`]) is served by
//! [`super::endpoint::serve`] with a handler here, which opens the desk of the request's
//! [`Caller`] in the project its path names and calls the same desk method as the CLI;
//! nothing in a request names who acts.
//!
//! A refusal is JSON: `{"error", "hint", "code"}`, `code` being the CLI's exit code for it.
//! So is every other refusal of the server, `/mcp`'s included ([`refusals_as_json`]).

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::answers::{Encoded, Key, Versions};
use super::endpoint::{Asked, Reply, serve};
use crate::board::action::ActionKind;
use crate::board::task::TaskId;
use crate::board::transition::{Action, Place};
use crate::error::{Error, Result};
use crate::json_api::{
    ActBody, ActivityRecord, AgentMatrix, AgentQuery, AgentRecord, BoardQuery, Changed,
    CoordinatorBody, DiffQuery, ErrorBody, Holding, HookBody, Inbox, InboxQuery, LogQuery,
    LoggedOut, Mail, MessageBody, MessagesQuery, NoBody, OfferedQuery, Page, PathsBody,
    ProfileBody, Project, Reservation, ReservationsQuery, ReserveAsk, Reserved, SendBody, Sent,
    Stats, StatsQuery, TaskDiff, TaskIds, TaskView, TextBody, UnreserveAsk, WakeOutcome, Whoami,
    endpoint, route,
};
use crate::mail::{Marking, MessageType};
use crate::names::{self, NameKind};
use crate::registry::Profile;
use crate::session::blocking::{Caller, Stopped, off_thread};
use crate::session::hook_answer::Answer as HookAnswer;
use crate::session::{Desk, LocalDesk, Session, Standing};

/// Every endpoint of the API ([`crate::json_api::endpoint`]) with its handler, and the
/// event stream.
pub fn routes() -> Router<super::State> {
    let router = Router::new();
    let router = serve::<endpoint::Whoami>(router, whoami);
    let router = serve::<endpoint::Page>(router, page);
    let router = serve::<endpoint::Logout>(router, logout);
    let router = serve::<endpoint::Projects>(router, projects);
    let router = serve::<endpoint::ProjectShow>(router, project_show);
    let router = serve::<endpoint::Board>(router, board);
    let router = serve::<endpoint::Inbox>(router, inbox);
    let router = serve::<endpoint::Hook>(router, hook);
    let router = serve::<endpoint::Note>(router, note);
    let router = serve::<endpoint::Context>(router, add_context);
    let router = serve::<endpoint::Coordinator>(router, coordinator);
    let router = serve::<endpoint::Wake>(router, wake);
    let router = serve::<endpoint::Woken>(router, woken);
    let router = serve::<endpoint::Seen>(router, seen);
    let router = serve::<endpoint::AgentShow>(router, agent_show);
    let router = serve::<endpoint::AgentProfile>(router, agent_profile);
    let router = serve::<endpoint::SendTask>(router, send);
    let router = serve::<endpoint::Show>(router, show);
    let router = serve::<endpoint::Act>(router, act);
    let router = serve::<endpoint::Agents>(router, agents);
    let router = serve::<endpoint::Log>(router, log);
    let router = serve::<endpoint::Stats>(router, stats);
    let router = serve::<endpoint::Messages>(router, messages);
    let router = serve::<endpoint::Message>(router, message);
    let router = serve::<endpoint::Reservations>(router, reservations);
    let router = serve::<endpoint::Reserve>(router, reserve);
    let router = serve::<endpoint::Unreserve>(router, unreserve);
    let router = serve::<endpoint::Reserved>(router, reserved);
    let router = serve::<endpoint::Diff>(router, diff);
    router.route(route::EVENTS.pattern(), get(super::events::stream))
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
    pub(super) fn of_form(status: StatusCode, words: &str) -> Self {
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

type Answered<T> = std::result::Result<T, ApiError>;

/// Runs `work` at the desk of `caller` in no project (the hub's projects, an agent's
/// record), on a blocking thread.
async fn at_hub<T, F>(state: &super::State, caller: &Caller, work: F) -> Answered<T>
where
    T: Send + 'static,
    F: FnOnce(&dyn Desk) -> Result<T> + Send + 'static,
{
    let desk = LocalDesk::new(state.hub.clone(), Some(caller.0.clone()), None);
    answer(move || work(&desk)).await
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

/// Runs `work` on a blocking thread (it reads and locks the store).
async fn answer<T, F>(work: F) -> Answered<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    Ok(off_thread(work).await.map_err(|Stopped| stopped())??)
}

/// The refusal of a request whose work ended without an answer.
pub(crate) fn stopped() -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the request stopped")
}

/// The caller's changes wake and notify whom they reach, as the CLI's do; the server says
/// whom on its stderr.
fn report(state: &super::State, woken: &[crate::wake::WakeOutcome]) {
    for outcome in woken {
        (state.report_wake)(outcome);
    }
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

async fn whoami(asked: Asked<NoBody>) -> Answered<Whoami> {
    Ok(Whoami {
        agent: asked.caller.0,
    })
}

async fn projects(asked: Asked<NoBody>) -> Answered<Vec<Project>> {
    let caller = asked.caller.clone();
    at_hub(&asked.state, &asked.caller, move |desk| {
        Ok(desk
            .projects()?
            .into_iter()
            .map(|project| shown_to(&caller, project))
            .collect())
    })
    .await
}

/// A project as `caller` is shown it over HTTP: its workspace, a directory of the hub's
/// machine, only to a human of the project. An agent elsewhere works in a directory of its
/// own (`baton project map`; SPEC section 7), and the hub's layout is nothing it needs: a
/// path shown to it would pass for one where it should work, and tells a stranger with a
/// token where the hub keeps its code. A person steering the project is shown where it
/// lives on the hub, as the hub's own `project show` does.
fn shown_to(caller: &Caller, mut project: Project) -> Project {
    if !project.settings.humans.contains(&caller.0) {
        project.workspace = None;
    }
    project
}

/// What the web board opens on: who the page acts as, and the project of the directory
/// `baton serve` runs in (none when it could not tell).
async fn page(asked: Asked<NoBody>) -> Answered<Page> {
    Ok(Page {
        agent: asked.caller.0,
        project: asked.state.start_project,
    })
}

/// A browser logging out: the login token it presented is removed, so that it is good
/// nowhere any more (not in another tab, nor in a copy of the link). Another token (an
/// agent's, pasted into the page) is only forgotten by the page, never removed here.
async fn logout(asked: Asked<NoBody>) -> Answered<LoggedOut> {
    let Some(token) = asked.token else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the request has no token",
        ));
    };
    let hub = asked.state.hub.clone();
    answer(move || {
        let removed = crate::tokens::remove_login(&*hub.store, &token)?;
        Ok(LoggedOut { removed })
    })
    .await
}

/// The board as the caller's `--json` has it, answered from the bytes kept for this
/// version of the board when there are some ([`super::answers`]), else encoded now and kept.
/// Read from the session rather than the desk: the versions of the board around the read
/// say whether the bytes kept are still its answer.
async fn board(asked: Asked<BoardQuery>) -> Answered<Reply<Vec<TaskView>>> {
    let [project] = asked.parameters();
    let query = asked.body;
    let hub = asked.state.hub.clone();
    let answers = asked.state.board_answers.clone();
    let Caller(agent, standing) = asked.caller;
    let read = asked.read;
    let encoded = answer(move || -> Result<Encoded> {
        // With `offered`, the buttons the page shows: what the caller may do with each task.
        let filter = query.filter()?;
        // Only a project's name is looked at on the store before the session checks it.
        let before = names::check(NameKind::Project, &project)
            .ok()
            .and_then(|()| Versions::of(&*hub.store, &project));
        let store = hub.store.clone();
        let session = Session::open_by_id_read(hub, &agent, &project, standing, &read)?;
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
    .await?;
    Ok(Reply::Encoded(encoded.respond(&asked.headers)))
}

async fn show(asked: Asked<OfferedQuery>) -> Answered<TaskView> {
    let [project, id] = asked.parameters();
    let id = task_id(&id)?;
    let (seat, OfferedQuery { offered }) = asked.split();
    seat.at_desk(project, move |desk| match offered {
        true => desk.show_with_offers(id),
        false => desk.show(id),
    })
    .await
}

async fn send(asked: Asked<SendBody>) -> Answered<Changed> {
    let [project] = asked.parameters();
    let (seat, body) = asked.split();
    let new = body.without_empty_names();
    let reporter = seat.state.clone();
    seat.at_desk(project, move |desk| {
        let changed = desk.send(new)?;
        report(&reporter, &changed.woken);
        Ok(changed)
    })
    .await
}

async fn act(asked: Asked<ActBody>) -> Answered<Changed> {
    let [project, id, action] = asked.parameters();
    let id = task_id(&id)?;
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
    let (seat, body) = asked.split();
    // No body at all is no words, as the page sends a claim.
    let ActBody {
        text,
        to,
        edits,
        worktree,
        reviewed,
    } = body;
    let Some(mut action) = Action::of(kind, text, to) else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "reassign needs `to`: the new assignee",
        ));
    };
    if let Some(edits) = edits {
        action = action.with_edits(edits);
    }
    // What the machine of a remote agent's work says, kept for the action it belongs to
    // (a worktree for a claim, a commit for a review); the session checks it.
    let place = match kind {
        ActionKind::Claim => worktree.map(Place::Worktree),
        ActionKind::Review => reviewed.map(Place::Reviewed),
        _ => None,
    };
    if let Some(place) = place {
        action = action.with_place(place);
    }
    let reporter = seat.state.clone();
    seat.at_desk(project, move |desk| {
        let changed = desk.act(id, action)?;
        report(&reporter, &changed.woken);
        Ok(changed)
    })
    .await
}

async fn agents(asked: Asked<NoBody>) -> Answered<AgentMatrix> {
    let [project] = asked.parameters();
    let (seat, _) = asked.split();
    seat.at_desk(project, |desk| desk.agents()).await
}

async fn log(asked: Asked<LogQuery>) -> Answered<Vec<ActivityRecord>> {
    let [project] = asked.parameters();
    let (seat, LogQuery { n, since }) = asked.split();
    seat.at_desk(project, move |desk| desk.log(n, since)).await
}

async fn stats(asked: Asked<StatsQuery>) -> Answered<Stats> {
    let [project] = asked.parameters();
    let (seat, StatsQuery { since: window }) = asked.split();
    seat.at_desk(project, move |desk| desk.stats(window)).await
}

async fn messages(asked: Asked<MessagesQuery>) -> Answered<Mail> {
    let [project] = asked.parameters();
    let (seat, query) = asked.split();
    let marking = match (query.peek, query.through) {
        (true, _) => Marking::Leave,
        (false, Some(seq)) => Marking::Through(seq),
        (false, None) => Marking::All,
    };
    seat.at_desk(project, move |desk| desk.messages(query.all, marking))
        .await
}

async fn message(asked: Asked<MessageBody>) -> Answered<Sent> {
    let [project] = asked.parameters();
    let (seat, message) = asked.split();
    let kind: MessageType = match message.kind.as_deref() {
        None | Some("") => MessageType::Text,
        Some(kind) => kind
            .parse()
            .map_err(|refused: String| ApiError::from(Error::invalid(refused)))?,
    };
    let reporter = seat.state.clone();
    seat.at_desk(project, move |desk| {
        let summary = message
            .summary
            .as_deref()
            .filter(|summary| !summary.is_empty());
        let sent = desk.message(&message.to, &message.text, kind, summary)?;
        report(&reporter, &sent.woken);
        Ok(sent)
    })
    .await
}

async fn project_show(asked: Asked<NoBody>) -> Answered<Project> {
    let [project] = asked.parameters();
    let (seat, _) = asked.split();
    let shown = seat.caller.clone();
    seat.at_desk(project, move |desk| Ok(shown_to(&shown, desk.project()?)))
        .await
}

async fn inbox(asked: Asked<InboxQuery>) -> Answered<Inbox> {
    let [project] = asked.parameters();
    let (seat, query) = asked.split();
    let look = query.look();
    seat.at_desk(project, move |desk| desk.inbox(look)).await
}

/// A remote agent's hook: the hook's answer in baton's words (`{"answer", "text"}`), which
/// the agent's machine puts in its client's format. Never fails but on a project it cannot
/// open: what goes wrong after that is the answer's note, as on the hub's own machine.
/// Worked out on a session of its own: a hook opens it unless the lock is busy, and the
/// context names the agent's own directory.
async fn hook(asked: Asked<HookBody>) -> Answered<HookAnswer> {
    use crate::client::HookEvent;
    let [project, event] = asked.parameters();
    let event = HookEvent::from_name(&event).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "no hook event `{}`; events: session-start, prompt, stop",
                crate::text::inline(&event)
            ),
        )
    })?;
    let input = asked.body;
    // As on the hub's own machine, a hook shows the inbox unmarked rather than keep its
    // client waiting on a busy lock.
    let hub = crate::hook::hub_for_hook(&asked.state.hub);
    let (caller, read) = (asked.caller, asked.read);
    answer(move || {
        if event == HookEvent::Stop && input.stop_hook_active {
            return Ok(HookAnswer::Nothing);
        }
        let mut session = Session::open_by_id_unless_busy(hub, &caller.0, &project, &read)?;
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

async fn reservations(asked: Asked<ReservationsQuery>) -> Answered<Vec<Reservation>> {
    let [project] = asked.parameters();
    let (seat, ReservationsQuery { mine }) = asked.split();
    seat.at_desk(project, move |desk| desk.reservations(mine))
        .await
}

async fn reserve(asked: Asked<ReserveAsk>) -> Answered<Reserved> {
    let [project] = asked.parameters();
    let (seat, ask) = asked.split();
    seat.at_desk(project, move |desk| desk.reserve(ask)).await
}

async fn unreserve(asked: Asked<UnreserveAsk>) -> Answered<Reserved> {
    let [project] = asked.parameters();
    let (seat, ask) = asked.split();
    seat.at_desk(project, move |desk| desk.unreserve(ask)).await
}

async fn reserved(asked: Asked<PathsBody>) -> Answered<Vec<Holding>> {
    let [project] = asked.parameters();
    let (seat, PathsBody { paths }) = asked.split();
    seat.at_desk(project, move |desk| desk.reserved(&paths))
        .await
}

async fn diff(asked: Asked<DiffQuery>) -> Answered<TaskDiff> {
    let [project, id] = asked.parameters();
    let (seat, DiffQuery { stat }) = asked.split();
    let id = task_id(&id)?;
    seat.at_desk(project, move |desk| desk.diff(id, stat)).await
}

async fn note(asked: Asked<TextBody>) -> Answered<ActivityRecord> {
    let [project] = asked.parameters();
    let (seat, TextBody { text }) = asked.split();
    seat.at_desk(project, move |desk| desk.note(&text)).await
}

async fn add_context(asked: Asked<TextBody>) -> Answered<Project> {
    let [project] = asked.parameters();
    let (seat, TextBody { text }) = asked.split();
    let shown = seat.caller.clone();
    seat.at_desk(project, move |desk| {
        Ok(shown_to(&shown, desk.add_context(&text)?))
    })
    .await
}

async fn coordinator(asked: Asked<CoordinatorBody>) -> Answered<Project> {
    let [project] = asked.parameters();
    let (seat, change) = asked.split();
    let shown = seat.caller.clone();
    seat.at_desk(project, move |desk| {
        let project = desk.coordinate(
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
/// ([`Desk::wake_for_waiting_work`]). The answer names no path of the hub's.
async fn wake(asked: Asked<NoBody>) -> Answered<WakeOutcome> {
    let [project, agent] = asked.parameters();
    let (seat, _) = asked.split();
    seat.at_desk(project, move |desk| {
        desk.wake_for_waiting_work(&agent).map(without_hub_paths)
    })
    .await
}

/// A wake's outcome as another machine is told it: the log is named as a file of the hub's
/// home (`wake/<agent>.log`, SPEC section 2), not by the hub's own path, and a failure to
/// start is said without the hub's program path.
fn without_hub_paths(outcome: WakeOutcome) -> WakeOutcome {
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
async fn woken(asked: Asked<TaskIds>) -> Answered<TaskIds> {
    record_delivery(asked, |desk, ids| desk.record_woken(ids)).await
}

/// A remote live session (`hook follow` on an agent's machine) pushed these tasks into its
/// session: they count as seen (SPEC section 11), for the caller's own hand-overs only.
async fn seen(asked: Asked<TaskIds>) -> Answered<TaskIds> {
    record_delivery(asked, |desk, ids| desk.record_seen(ids)).await
}

/// Records a step of the caller's deliveries of the tasks a body names; answers with the
/// ids `record` says it recorded.
async fn record_delivery(
    asked: Asked<TaskIds>,
    record: fn(&dyn Desk, &[TaskId]) -> Result<Vec<TaskId>>,
) -> Answered<TaskIds> {
    let [project] = asked.parameters();
    let (seat, TaskIds { tasks }) = asked.split();
    seat.at_desk(project, move |desk| {
        Ok(TaskIds {
            tasks: record(desk, &tasks)?,
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
async fn agent_show(asked: Asked<AgentQuery>) -> Answered<AgentRecord> {
    let [agent] = asked.parameters();
    let AgentQuery { project } = asked.body;
    let store = asked.state.hub.store.clone();
    let caller = asked.caller.0.clone();
    at_hub(&asked.state, &asked.caller, move |desk| {
        let mut record = desk.agent_record(&agent)?;
        let coordinates = || -> Result<bool> {
            let Some(id) = project.as_deref() else {
                return Ok(false);
            };
            names::check(NameKind::Project, id)?;
            Ok(crate::project::load(&*store, id)?
                .is_some_and(|project| project.coordinator.as_deref() == Some(caller.as_str())))
        };
        if record.name != caller && !coordinates()? && record.wake.take().is_some() {
            record
                .other
                .insert("wake_hidden".to_string(), serde_json::Value::Bool(true));
        }
        Ok(record)
    })
    .await
}

async fn agent_profile(asked: Asked<ProfileBody>) -> Answered<AgentRecord> {
    let [agent] = asked.parameters();
    let caller = &asked.caller.0;
    if agent != *caller {
        return Err(ApiError::from(Error::invalid_with_hint(
            format!(
                "this token acts as {caller}: it can describe only {caller} itself, not {}",
                crate::text::inline(&agent)
            ),
            "on the hub's machine, `baton agent add NAME` describes any agent",
        )));
    }
    let profile = Profile {
        strengths: asked.body.strengths,
        skills: asked.body.skills,
    };
    at_hub(&asked.state, &asked.caller, move |desk| {
        desk.describe_agent(&agent, profile)
    })
    .await
}
