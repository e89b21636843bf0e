//! Alerts (SPEC section 14): when work reaches a human, baton posts it to a URL of theirs
//! (a JSON webhook, ntfy, a Slack-style incoming webhook), so they hear wherever they are.
//!
//! `alerts.json` (0600, under `alerts.lock`) keeps each alert with its URL and secret; a
//! change queues one file per alert and receiver in `alerts/queue/` (no network, no DNS in
//! the command), and a detached sender (`baton __alert-send`, one at a time through
//! `alerts/sender.lock`) posts them, retrying with backoff for a day, one line per attempt
//! in `alerts/alerts.log`. The secret is read from `alerts.json` by whoever posts: it is in
//! no argv, no environment and no log.

pub mod format;
pub mod queue;
pub mod send;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::board::Board;
use crate::board::handover::Handover;
use crate::board::inbox::Reason;
use crate::error::{AlertError, AlertUrl, Result};
use crate::mail::{Arrival, MessageType};
use crate::names::{self, NameKind};
use crate::secret;
use crate::store::versioned::{self, Versioned};
use crate::store::{Document, Store};
use crate::time::Timestamp;

pub const ALERTS_SCHEMA: u32 = 1;

/// What every secret starts with, so one found in a paste is recognised as baton's.
pub const SECRET_PREFIX: &str = "baton_alert_";

/// What kind of hand-over an alert tells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A task handed to them to do: sent, sent back with changes requested, or waiting on a
    /// task that ended and can never complete.
    Task,
    /// The assignee asked them a question (input_required).
    Question,
    /// The assignee asked them for a verdict (review_requested).
    Review,
    /// A task they sent failed.
    Failed,
    /// A task they sent stalled: its assignee's lease ran out.
    Stalled,
    /// A message to them (`@all` included).
    Message,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Task,
        Kind::Question,
        Kind::Review,
        Kind::Failed,
        Kind::Stalled,
        Kind::Message,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Task => "task",
            Kind::Question => "question",
            Kind::Review => "review",
            Kind::Failed => "failed",
            Kind::Stalled => "stalled",
            Kind::Message => "message",
        }
    }

    /// The kind a hand-over of `reason` is.
    pub fn of_reason(reason: Reason) -> Kind {
        match reason {
            Reason::Question => Kind::Question,
            Reason::ReviewRequested => Kind::Review,
            Reason::Stalled => Kind::Stalled,
            Reason::Assigned | Reason::ChangesRequested | Reason::DependencyEnded { .. } => {
                Kind::Task
            }
        }
    }

    /// `KINDS` as `--on` takes them: names between commas.
    pub fn parse_list(text: &str) -> Result<Vec<Kind>> {
        let mut kinds = Vec::new();
        for word in text
            .split(',')
            .map(str::trim)
            .filter(|word| !word.is_empty())
        {
            let Some(kind) = Kind::ALL.into_iter().find(|kind| kind.as_str() == word) else {
                return Err(AlertError::UnknownKind {
                    word: word.to_string(),
                    kinds: Kind::names(),
                }
                .into());
            };
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        if kinds.is_empty() {
            return Err(AlertError::NoKind {
                kinds: Kind::names(),
            }
            .into());
        }
        kinds.sort();
        Ok(kinds)
    }

    fn names() -> Vec<&'static str> {
        Kind::ALL.map(Kind::as_str).to_vec()
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(self.as_str())
    }
}

/// How an alert's request is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `{project, task, kind, subject, from, to, url}`, signed in `X-Baton-Signature`.
    Json,
    /// ntfy: Title, Priority, Tags and Click headers, the text as the body.
    Ntfy,
    /// A Slack-style incoming webhook (Mattermost, Discord's `/slack`): `{"text": …}`.
    Slack,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Ntfy => "ntfy",
            Format::Slack => "slack",
        }
    }
}

/// One alert as `alerts.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub name: String,
    pub url: String,
    pub format: Format,
    /// The one agent it is for; the project's humans when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_agent: Option<String>,
    pub on: Vec<Kind>,
    /// The web board's address as the human reaches it, for the link in each alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_url: Option<String>,
    /// The HMAC key of the JSON format's signature.
    pub secret: String,
    pub created_at: Timestamp,
    /// Fields written by a newer baton: kept, never dropped.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl Alert {
    /// Whether the alert posts `event`: of a kind it is on, for whom it is for.
    pub fn wants(&self, event: &Event, humans: &[String]) -> bool {
        self.on.contains(&event.kind)
            && match &self.for_agent {
                Some(agent) => *agent == event.to,
                None => humans.contains(&event.to),
            }
    }

    /// The alert as `alert list` shows it: never the secret, and of the URL only its
    /// origin (a Slack webhook's path is itself a secret).
    pub fn row(&self) -> AlertRow {
        AlertRow {
            name: self.name.clone(),
            url: origin(&self.url),
            format: self.format,
            for_agent: self.for_agent.clone(),
            on: self.on.clone(),
            board_url: self.board_url.clone(),
            created_at: self.created_at,
        }
    }
}

/// An alert without its secret: what `alert list` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlertRow {
    pub name: String,
    /// The URL's scheme, host and port, with `/…` where it had more.
    pub url: String,
    pub format: Format,
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    pub for_agent: Option<String>,
    pub on: Vec<Kind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board_url: Option<String>,
    pub created_at: Timestamp,
}

/// One piece of work that reached someone, as an alert tells it. `to` is whose inbox it
/// reached; `from`, who made the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub project: String,
    /// `T-3`, or `None` for a message.
    pub task: Option<String>,
    pub kind: Kind,
    /// Written by an agent: escaped when formatted, never here.
    pub subject: String,
    pub from: String,
    pub to: String,
}

/// The contents of `alerts.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct AlertsFile {
    schema: u32,
    #[serde(default)]
    alerts: Vec<Alert>,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

impl Versioned for AlertsFile {
    const SCHEMA: u32 = ALERTS_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

/// Whether `text` (the alerts kept at `origin`) reads as `alerts.json` does: what a copy to
/// another store checks before carrying it.
pub fn check_stored(
    origin: &crate::store::Origin,
    text: &[u8],
) -> std::result::Result<(), crate::store::StoreError> {
    versioned::decode::<AlertsFile>(origin, text).map(drop)
}

/// What `alert add` is asked for.
#[derive(Debug, Clone)]
pub struct NewAlert {
    pub name: String,
    pub url: String,
    pub format: Format,
    pub for_agent: Option<String>,
    pub on: Vec<Kind>,
    pub board_url: Option<String>,
}

/// Adds an alert and returns its secret, which nothing shows again.
pub fn add(store: &dyn Store, new: NewAlert, now: Timestamp) -> Result<String> {
    names::check(NameKind::Agent, &new.name).map_err(|_| AlertError::BadName {
        name: new.name.clone(),
    })?;
    check_url(&new.url, AlertUrl::Url)?;
    if let Some(board_url) = &new.board_url {
        check_url(board_url, AlertUrl::BoardUrl)?;
    }
    if let Some(agent) = &new.for_agent {
        names::check(NameKind::Agent, agent)?;
    }
    let secret = format!(
        "{SECRET_PREFIX}{}",
        secret::hex(&secret::random_bytes("a secret")?)
    );
    change(store, |file| {
        if file.alerts.iter().any(|alert| alert.name == new.name) {
            return Err(AlertError::Exists {
                name: new.name.clone(),
            }
            .into());
        }
        file.alerts.push(Alert {
            name: new.name.clone(),
            url: new.url.clone(),
            format: new.format,
            for_agent: new.for_agent.clone(),
            on: new.on.clone(),
            board_url: new.board_url.clone(),
            secret: secret.clone(),
            created_at: now,
            other: serde_json::Map::new(),
        });
        Ok(())
    })?;
    Ok(secret)
}

/// Removes the alert `name`; what waits for it in the queue is dropped by the sender.
pub fn remove(store: &dyn Store, name: &str) -> Result<()> {
    change(store, |file| {
        let before = file.alerts.len();
        file.alerts.retain(|alert| alert.name != name);
        if file.alerts.len() == before {
            return Err(AlertError::NoSuchAlert {
                name: name.to_string(),
            }
            .into());
        }
        Ok(())
    })
}

/// Every alert, secrets included: for the queue and the sender, never for showing.
pub fn load(store: &dyn Store) -> Result<Vec<Alert>> {
    Ok(versioned::read::<AlertsFile>(store, &Document::Alerts)?
        .map(|file| file.alerts)
        .unwrap_or_default())
}

/// The alert called `name`.
pub fn find(store: &dyn Store, name: &str) -> Result<Alert> {
    load(store)?
        .into_iter()
        .find(|alert| alert.name == name)
        .ok_or_else(|| {
            AlertError::NoSuchAlert {
                name: name.to_string(),
            }
            .into()
        })
}

/// The sample `alert test` posts: the first kind the alert is on, to whom it is for.
pub fn sample_request(alert: &Alert) -> format::Outgoing {
    let event = Event {
        project: "example".into(),
        task: Some("T-1".into()),
        kind: alert.on.first().copied().unwrap_or(Kind::Question),
        subject: "A test alert from baton: it reaches you".into(),
        from: "baton".into(),
        to: alert.for_agent.clone().unwrap_or_else(|| "human".into()),
    };
    format::request(alert, &event)
}

/// A locked read-change-write of the alerts.
fn change(store: &dyn Store, edit: impl FnOnce(&mut AlertsFile) -> Result<()>) -> Result<()> {
    versioned::update(store, &Document::Alerts, |file: &mut Option<AlertsFile>| {
        let file = file.get_or_insert_with(|| AlertsFile {
            schema: ALERTS_SCHEMA,
            alerts: Vec::new(),
            other: serde_json::Map::new(),
        });
        edit(file)?;
        file.schema = ALERTS_SCHEMA;
        Ok(())
    })
}

/// Refuses a URL that is not http(s) with a host: baton posts alerts to nothing else.
pub fn check_url(url: &str, field: AlertUrl) -> Result<(), AlertError> {
    let url_of = || url.to_string();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(AlertError::NotUrl {
            field,
            url: url_of(),
        });
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(AlertError::NotHttp {
            field,
            url: url_of(),
        });
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(AlertError::NoHost {
            field,
            url: url_of(),
        });
    }
    Ok(())
}

/// The scheme, host and port of `url`, with `/…` where it had more.
pub fn origin(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "…".into();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    // Credentials in the URL (`user:pass@host`) are a secret too.
    let host = rest[..end].rsplit('@').next().unwrap_or("");
    let more = if end < rest.len() { "/…" } else { "" };
    format!("{scheme}://{host}{more}")
}

/// The events a change makes: one per hand-over and per message arrival, `actor` having
/// made the change. A notification baton wrote counts only when it tells of a failure
/// (the sender hears); the rest (completed, canceled, reassigned) reach nobody as work.
pub fn events_of(handovers: &[Handover], arrivals: &[Arrival], actor: &str) -> Vec<Event> {
    let mut events: Vec<Event> = handovers
        .iter()
        // A stall is told once, by [`stalls`], which sees every stalled task of the board.
        .filter(|handover| handover.reason != Reason::Stalled)
        .map(|handover| Event {
            project: handover.project.clone(),
            task: Some(handover.task.to_string()),
            kind: Kind::of_reason(handover.reason),
            subject: handover.subject.clone(),
            from: actor.to_string(),
            to: handover.agent.clone(),
        })
        .collect();
    for arrival in arrivals {
        let (kind, task) = match arrival.kind {
            MessageType::Notification if arrival.event.as_deref() == Some("failed") => {
                (Kind::Failed, arrival.task.map(|task| task.to_string()))
            }
            MessageType::Notification => continue,
            _ => (Kind::Message, None),
        };
        events.push(Event {
            project: arrival.project.clone(),
            task,
            kind,
            subject: arrival.summary.clone(),
            from: actor.to_string(),
            to: arrival.agent.clone(),
        });
    }
    events
}

/// The stalls of `board` not told of yet: one event to the sender of each working task
/// whose lease ran out by `now`, from its quiet assignee. Each stall (a task and the lease
/// that ran out) is told once, whoever looks first: the first to mark it in the store
/// tells it ([`Presences::mark_once`](crate::store::Presences::mark_once)), without a lock.
///
/// No baton process watches the clock, so a stall is found when a change in its project
/// hands work over or delivers a message after the lease ran out (the sender's inbox shows
/// it at once all the same).
pub fn stalls(store: &dyn Store, board: &Board, now: Timestamp) -> Vec<Event> {
    let mut events = Vec::new();
    for head in board.open_heads() {
        let Some(expired) = head.lease_expires_at.filter(|_| head.is_stalled(now)) else {
            continue;
        };
        let Ok(Some(task)) = board.task(head.id) else {
            continue;
        };
        let mark = format!(
            "{}-{}-{}",
            board.project,
            task.id,
            expired.datetime().timestamp_millis()
        );
        // A mark that cannot be made tells nothing: a stall is never told twice.
        if !store.mark_once(&mark).unwrap_or(false) {
            continue;
        }
        events.push(Event {
            project: board.project.clone(),
            task: Some(task.id.to_string()),
            kind: Kind::Stalled,
            subject: task.subject.clone(),
            from: task.to.clone(),
            to: task.from.clone(),
        });
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::TaskId;

    #[test]
    fn only_http_and_https_urls_with_a_host_are_taken() {
        for good in [
            "http://127.0.0.1:9/x",
            "https://ntfy.sh/topic",
            "HTTPS://hooks.slack.com/services/A/B/C",
        ] {
            assert!(check_url(good, AlertUrl::Url).is_ok(), "{good}");
        }
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ntfy.sh/topic",
            "http://",
            "http:///path",
            "https://exa mple.com/",
        ] {
            assert!(check_url(bad, AlertUrl::Url).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_listed_url_keeps_only_its_origin() {
        assert_eq!(
            origin("https://hooks.slack.com/services/T0/B0/XYZ"),
            "https://hooks.slack.com/…"
        );
        assert_eq!(origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(
            origin("https://user:pw@ntfy.example/topic"),
            "https://ntfy.example/…"
        );
    }

    #[test]
    fn kinds_parse_from_a_list_and_refuse_unknown_words() {
        assert_eq!(
            Kind::parse_list("review, question,review").unwrap(),
            vec![Kind::Question, Kind::Review]
        );
        assert!(Kind::parse_list("questions").is_err());
        assert!(Kind::parse_list(" , ").is_err());
    }

    #[test]
    fn each_hand_over_and_message_is_one_event_and_only_failures_of_notifications() {
        let handover = |reason, task| Handover {
            agent: "ann".into(),
            project: "api".into(),
            task: TaskId(task),
            reason,
            subject: format!("task {task}"),
        };
        let arrival = |kind, event: Option<&str>| Arrival {
            agent: "ann".into(),
            project: "api".into(),
            seq: 1,
            kind,
            summary: "words".into(),
            task: Some(TaskId(9)),
            event: event.map(str::to_string),
        };
        let events = events_of(
            &[
                handover(Reason::Question, 1),
                handover(Reason::ReviewRequested, 2),
                handover(Reason::Assigned, 3),
                // Left to `stalls`, which tells each stall once.
                handover(Reason::Stalled, 4),
            ],
            &[
                arrival(MessageType::Text, None),
                arrival(MessageType::Notification, Some("failed")),
                arrival(MessageType::Notification, Some("completed")),
            ],
            "codex",
        );
        let kinds: Vec<(Kind, Option<&str>)> = events
            .iter()
            .map(|event| (event.kind, event.task.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (Kind::Question, Some("T-1")),
                (Kind::Review, Some("T-2")),
                (Kind::Task, Some("T-3")),
                (Kind::Message, None),
                (Kind::Failed, Some("T-9")),
            ]
        );
        assert!(events.iter().all(|event| event.from == "codex"));
    }
}
