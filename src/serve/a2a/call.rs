//! One JSON-RPC call at the caller's desk: each method of A2A (send, get, list, cancel,
//! subscribe) as the desk's operations, and the streams that follow a task.

use std::future::Future;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::protocol::{RpcError, Version, code};
use super::said::{Said, message_text, subject_and_body};
use super::stream::{Guard, Streaming, Watch};
use super::tasks::Shown;
use super::{Doing, params, protocol, refusal, stream, tasks};
use crate::board::action::ActionKind;
use crate::board::task::{Status, TaskId};
use crate::board::transition::Action;
use crate::error::{Error, Result};
use crate::project;
use crate::serve::connections::Held;
use crate::serve::streams::Slot;
use crate::session::blocking::{Caller, Stopped, in_session, off_thread};
use crate::session::{BoardFilter, Desk, LocalDesk, NewTask, TaskView};
use crate::text;
use crate::tokens::TokenId;

/// One JSON-RPC call, by its token's agent, to an agent's endpoint or the hub's.
pub(super) struct Call {
    pub(super) state: crate::serve::State,
    pub(super) caller: Caller,
    pub(super) token: TokenId,
    /// The agent whose endpoint was called; none for the hub's.
    pub(super) agent: Option<String>,
    /// The project the endpoint's `?project=` names, checked.
    pub(super) project: Option<String>,
    pub(super) version: Version,
    pub(super) id: Value,
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
        let opening = self.caller.clone().opening(project.to_string());
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
        let ids = off_thread(move || project::project_ids(&*store))
            .await
            .map_err(|Stopped| stopped())?
            .map_err(|error| refusal(&error, Doing::Other))?;
        match ids.as_slice() {
            [] => Ok(project::DEFAULT_PROJECT.to_string()),
            [only] => Ok(only.clone()),
            several => Err(RpcError::new(
                code::INVALID_PARAMS,
                "INVALID_PARAMS",
                format!(
                    "this hub has {} projects ({}): say which one in metadata.baton.project",
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
        let exists = off_thread(move || project::check_exists(&*store, &id))
            .await
            .map_err(|Stopped| stopped())?;
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
    pub(super) async fn send(self, params: Value, streams: bool) -> Answered {
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
    pub(super) async fn get(self, params: Value) -> Answered {
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
    pub(super) async fn cancel(self, params: Value) -> Answered {
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
    pub(super) async fn subscribe(self, params: Value) -> Answered {
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
    pub(super) async fn list(self, params: Value) -> Answered {
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
                off_thread(move || project::project_ids(&*hub.store))
                    .await
                    .map_err(|Stopped| stopped())?
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
                Box::pin(
                    async move { crate::serve::events::is_current(&store, &tokens, &token).await },
                ) as std::pin::Pin<Box<dyn Future<Output = bool> + Send>>
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
