//! The Agent Cards of `baton serve` (SPEC section 17): the hub's, an A2A skill per agent,
//! and each agent's, its registry skills and strengths as A2A skills, both declaring bearer
//! auth; `?project=ID` on an agent's card gives an endpoint that carries it.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use super::protocol;
use crate::error::Error;
use crate::names::{self, NameKind};
use crate::project;
use crate::registry::{self, AgentRecord};
use crate::serve::api::ApiError;
use crate::session::blocking::{Stopped, off_thread};
use crate::text;

/// The routes of the cards, which need a token like every other page of the server.
pub fn card_routes() -> Router<crate::serve::State> {
    Router::new()
        .route("/.well-known/agent-card.json", get(hub_card))
        .route(
            "/a2a/agents/{name}/.well-known/agent-card.json",
            get(agent_card),
        )
}

/// Where the caller reached the server, as the URLs of a card give it: the `Host` it sent
/// (the host check let it through), on https when a proxy in front says it spoke TLS.
fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .unwrap_or("localhost");
    let is_tls = headers
        .get("x-forwarded-proto")
        .is_some_and(|proto| proto.as_bytes().eq_ignore_ascii_case(b"https"));
    let scheme = if is_tls { "https" } else { "http" };
    format!("{scheme}://{host}")
}

/// How a caller talks to `name`, for its card.
fn usage(name: &str) -> String {
    format!(
        "A message without a task id sends {name} a task on the baton board: its first line \
         is the subject, the rest the body (metadata.baton.project names the project). A \
         message with the id of a task waiting on you answers its question, or reviews it \
         (metadata.baton.action \"approve\" approves; anything else asks for changes)."
    )
}

/// An agent's strengths, as a card shows text from an agent (SPEC section 10).
fn strengths(record: &AgentRecord) -> Option<String> {
    let strengths = record.strengths.trim();
    (!strengths.is_empty()).then(|| text::escape_controls(strengths).into_owned())
}

fn agent_skills(record: &AgentRecord) -> Vec<protocol::Skill> {
    let said = strengths(record);
    if record.skills.is_empty() {
        return vec![protocol::Skill {
            id: "tasks".into(),
            name: "tasks".into(),
            description: said
                .unwrap_or_else(|| format!("{} takes tasks on the baton board", record.name)),
            tags: vec!["baton".into()],
        }];
    }
    record
        .skills
        .iter()
        .map(|skill| {
            let skill = text::inline(skill).to_string();
            protocol::Skill {
                id: skill.clone(),
                name: skill.clone(),
                description: said
                    .clone()
                    .unwrap_or_else(|| format!("{} takes tasks of {skill}", record.name)),
                tags: vec![skill],
            }
        })
        .collect()
}

async fn registry_records(
    state: &crate::serve::State,
) -> std::result::Result<Vec<AgentRecord>, ApiError> {
    let store = state.hub.store.clone();
    let listed = off_thread(move || registry::list(&*store))
        .await
        .map_err(|Stopped| crate::serve::api::stopped())?;
    Ok(listed.map_err(ApiError::from)?.0)
}

async fn hub_card(
    State(state): State<crate::serve::State>,
    headers: HeaderMap,
) -> std::result::Result<Response, ApiError> {
    let base = base_url(&headers);
    let skills = registry_records(&state)
        .await?
        .iter()
        .map(|record| protocol::Skill {
            id: record.name.clone(),
            name: record.name.clone(),
            description: strengths(record)
                .unwrap_or_else(|| format!("{} takes tasks on the board", record.name)),
            tags: record
                .skills
                .iter()
                .map(|skill| text::inline(skill).to_string())
                .collect(),
        })
        .collect();
    let description = format!(
        "The baton task board at {base}, shared by coding agents and the humans who steer \
         them: each skill here is an agent. Send one a task through its own card, \
         {base}/a2a/agents/NAME/.well-known/agent-card.json, or here with metadata.baton.to \
         naming it; answer and review the tasks waiting on you by their id."
    );
    let card = protocol::AgentCard::new("baton".into(), description, format!("{base}/a2a"), skills);
    Ok(axum::Json(card).into_response())
}

/// The query of an agent's card and endpoint: the project its tasks go to.
#[derive(Debug, Default, Deserialize)]
pub(super) struct EndpointQuery {
    project: Option<String>,
}

/// The project `?project=ID` names, checked: a name, and a project of this hub.
pub(super) async fn endpoint_project(
    state: &crate::serve::State,
    query: EndpointQuery,
) -> std::result::Result<Option<String>, ApiError> {
    let Some(project) = query.project else {
        return Ok(None);
    };
    names::check(NameKind::Project, &project)
        .map_err(|error| ApiError::new(StatusCode::BAD_REQUEST, format!("?project=: {error}")))?;
    let store = state.hub.store.clone();
    let id = project.clone();
    let exists = off_thread(move || project::check_exists(&*store, &id))
        .await
        .map_err(|Stopped| crate::serve::api::stopped())?;
    match exists {
        Ok(()) => Ok(Some(project)),
        Err(Error::Store(error)) => Err(ApiError::from(Error::Store(error))),
        Err(_) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("?project={project}: this hub has no project {project}"),
        )
        .with_hint("`baton project list` on the hub shows its projects")),
    }
}

async fn agent_card(
    State(state): State<crate::serve::State>,
    Path(name): Path<String>,
    Query(query): Query<EndpointQuery>,
    headers: HeaderMap,
) -> std::result::Result<Response, ApiError> {
    let base = base_url(&headers);
    let endpoint_project = endpoint_project(&state, query).await?;
    let store = state.hub.store.clone();
    let found = off_thread(move || registry::require(&*store, &name))
        .await
        .map_err(|Stopped| crate::serve::api::stopped())?;
    let record = match found {
        Ok(record) => record,
        Err(error @ Error::UnknownAgent { .. }) => {
            let refusal = ApiError::new(StatusCode::NOT_FOUND, error.to_string());
            return Err(match error.hint() {
                Some(hint) => refusal.with_hint(hint),
                None => refusal,
            });
        }
        Err(error) => return Err(ApiError::from(error)),
    };
    let description = match strengths(&record) {
        Some(said) => format!("{said}\n\n{}", usage(&record.name)),
        None => usage(&record.name),
    };
    let url = match &endpoint_project {
        Some(project) => format!("{base}/a2a/agents/{}?project={project}", record.name),
        None => format!("{base}/a2a/agents/{}", record.name),
    };
    let card =
        protocol::AgentCard::new(record.name.clone(), description, url, agent_skills(&record));
    Ok(axum::Json(card).into_response())
}
