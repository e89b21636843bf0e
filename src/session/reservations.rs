//! Reservations by hand and the questions asked of them (SPEC section 18.2): `reserve`,
//! `unreserve`, `reservations` and `reserved`. Each change is one locked change of the
//! board with one activity record; an `unreserve` that frees held work hands it over
//! (delivery, wake) as any other change does.

use chrono::Duration;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Session;
use crate::activity::{ActivityRecord, LogAction};
use crate::board::handover::{self, Handover};
use crate::board::new_task;
use crate::board::reservation::{self, Grant, Reservation, ReserveError};
use crate::board::scope::Pattern;
use crate::board::task::TaskId;
use crate::error::{Error, Result};
use crate::mail::{Arrival, BATON, Draft, MessageType};
use crate::text::{self, LineField, inline};
use crate::wake::WakeOutcome;

/// What `reserve` asks for: the body of `POST …/reservations`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReserveAsk {
    pub patterns: Vec<String>,
    /// The task the reservation is for; it ends with the task's work too.
    #[serde(default)]
    pub task: Option<TaskId>,
    /// How long it lasts, in seconds (`--for`); the project's lease when left out.
    #[serde(default)]
    pub seconds: Option<u64>,
    /// Kept out only exclusive reservations of others (`--shared`).
    #[serde(default)]
    pub shared: bool,
    #[serde(default)]
    pub reason: Option<String>,
}

/// What `unreserve` asks for: the body of `POST …/reservations/end`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnreserveAsk {
    /// The patterns to end, as they were reserved; all of them when left out (`--all`).
    #[serde(default)]
    pub patterns: Option<Vec<String>>,
    /// Whose reservations: another agent's (the coordinator's or a human's `--agent`).
    #[serde(default)]
    pub agent: Option<String>,
}

/// The answer to `reserve` and `unreserve`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reserved {
    pub project: String,
    /// What was taken or renewed (`reserve`), or what ended (`unreserve`).
    pub reservations: Vec<Reservation>,
    /// Tasks an `unreserve` freed, now in their assignees' inboxes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handovers: Vec<Handover>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<Arrival>,
    /// Whom the change woke; not part of `--json`.
    #[serde(skip)]
    pub woken: Vec<WakeOutcome>,
}

/// One path that another agent holds: the path asked about, the reservation, and the
/// subject of the task it is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holding {
    pub path: String,
    pub reservation: Reservation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl Holding {
    /// `src/date.rs is reserved by codex for T-3 "Fix the date parser"`, every name shown as
    /// SPEC section 10 says.
    pub fn words(&self) -> String {
        let held = &self.reservation;
        let what = match (held.task, &self.subject) {
            (Some(task), Some(subject)) => format!(" for {task} \"{}\"", inline(subject)),
            (Some(task), None) => format!(" for {task}"),
            (None, _) => match &held.reason {
                Some(reason) => format!(" ({})", inline(reason)),
                None => String::new(),
            },
        };
        let pattern = match held.pattern == self.path {
            true => String::new(),
            false => format!(" (as {})", inline(&held.pattern)),
        };
        format!(
            "{} is reserved by {}{what}{pattern}",
            inline(&self.path),
            inline(&held.agent)
        )
    }
}

impl Session {
    /// `reserve PATTERNS`: all or nothing, for the caller.
    pub fn reserve(&self, ask: ReserveAsk) -> Result<Reserved> {
        let agent = self.agent()?.to_string();
        if ask.patterns.is_empty() {
            return Err(Error::invalid_with_hint(
                "reserve needs at least one pattern",
                "e.g. `baton reserve 'src/date/**,port:3000' --for 1h`",
            ));
        }
        let patterns = new_task::check_touches(&ask.patterns)?;
        if let Some(reason) = &ask.reason {
            text::check_line(LineField::Summary, reason)?;
        }
        let asked = ask
            .seconds
            .map(|seconds| Duration::seconds(i64::try_from(seconds).unwrap_or(i64::MAX)));
        let lasts = reservation::length(asked, self.project.lease())?;
        let grant = Grant {
            task: ask.task,
            lasts: Some(lasts),
            exclusive: !ask.shared,
            reason: ask.reason.filter(|reason| !reason.trim().is_empty()),
        };
        let taken = self.update(|tx| {
            if let Some(id) = grant.task {
                let task = tx.board.task(id).map_err(self.refused())?;
                match task {
                    Some(task) if task.status.is_open() && task.to == agent => {}
                    Some(task) => {
                        return Err(Error::invalid(format!(
                            "{id} is {}, assigned to {}: a reservation is for a task of yours \
                             that is still open",
                            task.status,
                            inline(&task.to)
                        )));
                    }
                    None => return Err(self.missing_task(id)),
                }
            }
            let taken = tx
                .board
                .reserve(&agent, &patterns, &grant, self.now)
                .map_err(ReserveError::from)?;
            tx.record(self.reservation_record(LogAction::Reserve, &agent, &taken));
            Ok(taken)
        })?;
        Ok(Reserved {
            project: self.project.id.clone(),
            reservations: taken,
            ..Reserved::default()
        })
    }

    /// `unreserve PATTERNS|--all [--agent NAME]`: ends reservations by hand (and those of
    /// claims, for the coordinator or a human ending another agent's); hands over the work
    /// that was held, and tells the holder when it was someone else who ended them.
    pub fn unreserve(&self, ask: UnreserveAsk) -> Result<Reserved> {
        let actor = self.agent()?.to_string();
        let holder = ask.agent.clone().unwrap_or_else(|| actor.clone());
        if holder != actor && !self.project.reaches_anywhere(&actor) {
            return Err(Error::invalid_with_hint(
                format!(
                    "only the coordinator or a human of project {} may end {}'s reservations",
                    self.project.id,
                    inline(&holder)
                ),
                format!("ask {} to run `baton unreserve`", inline(&holder)),
            ));
        }
        if let Some(patterns) = &ask.patterns {
            if patterns.is_empty() {
                return Err(Error::invalid_with_hint(
                    "unreserve needs the patterns to end, or all of them",
                    "e.g. `baton unreserve 'src/date/**'` or `baton unreserve --all`",
                ));
            }
            for pattern in patterns {
                text::check_line(LineField::Pattern, pattern)?;
            }
        }
        let (ended, handovers) = self.update(|tx| {
            let affected = handover::affected_by_reservations(&tx.board);
            let before = handover::owners(&tx.board, &affected, self.now);
            let ended = tx.board.unreserve(&holder, ask.patterns.as_deref());
            let live: Vec<Reservation> = ended
                .into_iter()
                .filter(|reservation| reservation.is_live(self.now))
                .collect();
            if live.is_empty() {
                return Err(Error::invalid(match &ask.patterns {
                    Some(patterns) => format!(
                        "{} holds no reservation of {}",
                        inline(&holder),
                        patterns
                            .iter()
                            .map(|pattern| inline(pattern).to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None => format!("{} holds no reservation", inline(&holder)),
                }));
            }
            tx.record(self.reservation_record(LogAction::Unreserve, &actor, &live));
            let handovers = handover::handovers(&before, &tx.board, &affected, self.now, &actor);
            handover::record_delivery(&mut tx.board, None, &handovers, &actor, self.now)
                .map_err(self.refused())?;
            Ok((live, handovers))
        })?;
        let mut answer = Reserved {
            project: self.project.id.clone(),
            reservations: ended,
            handovers,
            ..Reserved::default()
        };
        if holder != actor {
            let draft = ended_for_you(&actor, &holder, &answer.reservations);
            let written = self
                .hub
                .append_mail(self.project_id(), self.now, vec![draft])?;
            answer.notifications = written
                .iter()
                .map(|message| Arrival::of(message, &message.to, &self.project.id))
                .collect();
        }
        answer.woken = self.after_change(&answer.handovers, &answer.notifications);
        Ok(answer)
    }

    /// `reservations [--mine]`: the live reservations, the caller's alone with `mine`.
    pub fn reservations(&self, mine: bool) -> Result<Vec<Reservation>> {
        let caller = match mine {
            true => Some(self.agent()?),
            false => None,
        };
        let board = self.board()?;
        Ok(board
            .live_reservations(self.now)
            .filter(|reservation| caller.is_none_or(|caller| reservation.agent == caller))
            .cloned()
            .collect())
    }

    /// `reserved PATH…`: for each path (relative to the workspace's root), who other than
    /// the caller holds it. A caller with no identity is told of every holder.
    pub fn reserved(&self, paths: &[String]) -> Result<Vec<Holding>> {
        let caller = self.agent.as_deref().unwrap_or("");
        let mut asked = Vec::with_capacity(paths.len());
        for path in paths {
            text::check_line(LineField::Pattern, path)?;
            asked.push((path, Pattern::parse(path)?));
        }
        let board = self.hub.board(&self.project.id)?;
        let mut holdings = Vec::new();
        for (path, pattern) in asked {
            for held in board.holders(&pattern, caller, false, self.now) {
                let subject = match held.task {
                    Some(id) => board
                        .task(id)
                        .map_err(self.refused())?
                        .map(|task| task.subject.clone()),
                    None => None,
                };
                holdings.push(Holding {
                    path: path.clone(),
                    reservation: held.clone(),
                    subject,
                });
            }
        }
        Ok(holdings)
    }

    fn reservation_record(
        &self,
        action: LogAction,
        actor: &str,
        reservations: &[Reservation],
    ) -> ActivityRecord {
        let patterns: Vec<&str> = reservations
            .iter()
            .map(|reservation| reservation.pattern.as_str())
            .collect();
        let whose = match reservations.first() {
            Some(first) if first.agent != actor => format!(" of {}", first.agent),
            _ => String::new(),
        };
        ActivityRecord {
            at: self.now,
            project: self.project.id.clone(),
            actor: actor.to_string(),
            action,
            task: reservations.iter().find_map(|reservation| reservation.task),
            from_status: None,
            to_status: None,
            text: Some(format!("{}{whose}", patterns.join(", "))),
        }
    }
}

/// The notification to `holder` that `actor` ended its reservations.
fn ended_for_you(actor: &str, holder: &str, ended: &[Reservation]) -> Draft {
    let patterns: Vec<&str> = ended.iter().map(|r| r.pattern.as_str()).collect();
    Draft {
        from: BATON.to_string(),
        to: holder.to_string(),
        kind: MessageType::Notification,
        summary: format!("{actor} ended your reservations"),
        body: format!(
            "{actor} ended your reservations of {}. Others may now change those paths.",
            patterns.join(", ")
        ),
        payload: json!({
            "event": "unreserved",
            "by": actor,
            "patterns": patterns,
        }),
    }
}
