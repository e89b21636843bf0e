//! Reservations (SPEC section 18.2): who holds which patterns of the workspace, kept with the
//! board and changed in the same change as the board. A claim reserves its task's scope for
//! the assignee; an agent reserves by hand for a while; a task whose scope overlaps what
//! another agent holds is *held*, in nobody's inbox, until that reservation ends.
//!
//! Pure: the time and the lengths are handed in. Expired reservations count for nothing from
//! the moment they expire, and the next change of the board drops them.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use chrono::Duration;
use serde::{Deserialize, Serialize};

use super::Board;
use super::scope::{Pattern, ScopeError};
use super::task::{Head, Status, TaskId};
use crate::text::{Refused, inline};
use crate::time::Timestamp;

/// The longest a reservation by hand may last.
pub const LONGEST: Duration = Duration::days(7);

/// One pattern held by one agent, as the board keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reservation {
    /// Its number on the board: above every reservation's there when it was taken.
    pub id: u64,
    pub pattern: String,
    pub agent: String,
    /// The task whose claim took it; none for one taken by hand.
    pub task: Option<TaskId>,
    /// Whether it keeps everyone else out; a shared one keeps out only exclusive ones.
    pub exclusive: bool,
    #[serde(default)]
    pub reason: Option<String>,
    pub created_at: Timestamp,
    /// When it ends by itself; none for a task's, which ends with the task's work.
    pub expires_at: Option<Timestamp>,
}

impl Reservation {
    /// Whether it still holds at `now`.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|until| until > now)
    }

    /// Its pattern, read. One the board holds was checked when it was taken; one edited
    /// into the file by hand that does not read stands for the whole workspace, so it
    /// keeps others out rather than letting them in (SPEC 18.1: when in doubt, overlap).
    pub fn parsed(&self) -> Pattern {
        stored(&self.pattern)
    }

    /// How it is named to someone it stands in the way of: `src/date/** by codex (T-3)`.
    pub fn holding(&self) -> String {
        let by = match self.task {
            Some(task) => format!("{} ({task})", inline(&self.agent)),
            None => inline(&self.agent).to_string(),
        };
        format!("{} by {by}", inline(&self.pattern))
    }
}

/// What a reservation by hand asks for, beside its patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub task: Option<TaskId>,
    /// How long it lasts; none for a task's reservation, which lasts as long as its work.
    pub lasts: Option<Duration>,
    pub exclusive: bool,
    pub reason: Option<String>,
}

/// Why a reservation was refused: each pattern asked for, with what stands in its way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicts(pub Vec<(String, Reservation)>);

impl std::fmt::Display for Conflicts {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<String> = self
            .0
            .iter()
            .map(|(asked, holder)| format!("{} is held: {}", inline(asked), holder.holding()))
            .collect();
        write!(formatter, "{}", words.join("; "))
    }
}

impl std::error::Error for Conflicts {}

/// Why a scope or a reservation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReserveError {
    #[error(transparent)]
    Scope(#[from] ScopeError),
    /// A pattern that is not one line, or too long (SPEC section 10).
    #[error(transparent)]
    Words(#[from] Refused),
    #[error("a reservation lasts at most 7 days")]
    TooLong,
    #[error("a reservation lasts some time: give --for a length above zero")]
    NoTime,
    #[error(transparent)]
    Held(#[from] Conflicts),
}

impl Board {
    /// Every reservation the board keeps, live or expired, in the order taken.
    pub fn reservations(&self) -> &[Reservation] {
        &self.reservations
    }

    /// The reservations as a store read them (board order kept).
    pub fn set_reservations(&mut self, reservations: Vec<Reservation>) {
        self.reservations = reservations;
        self.reserved_patterns = OnceLock::new();
    }

    /// The reservations' patterns, read and indexed (once, until they change).
    fn read_patterns(&self) -> &ReadPatterns {
        self.reserved_patterns
            .get_or_init(|| Arc::new(ReadPatterns::of(&self.reservations)))
    }

    /// The reservations whose patterns may overlap one of `patterns` (the index rules out
    /// the rest), each with its pattern read, in the order taken.
    fn candidates<'a>(
        &'a self,
        patterns: &[Pattern],
    ) -> impl Iterator<Item = (&'a Reservation, &'a Pattern)> {
        let read = self.read_patterns();
        read.candidates(patterns)
            .into_iter()
            .map(move |index| (&self.reservations[index], &read.patterns[index]))
    }

    /// The reservations that hold at `now`.
    pub fn live_reservations(&self, now: Timestamp) -> impl Iterator<Item = &Reservation> {
        self.reservations
            .iter()
            .filter(move |reservation| reservation.is_live(now))
    }

    /// The live reservations of agents other than `agent` that overlap `pattern` (only the
    /// exclusive ones when `exclusive_only`), in the order taken.
    pub fn holders<'a>(
        &'a self,
        pattern: &Pattern,
        agent: &str,
        exclusive_only: bool,
        now: Timestamp,
    ) -> Vec<&'a Reservation> {
        self.candidates(std::slice::from_ref(pattern))
            .filter(|(reservation, _)| reservation.is_live(now) && reservation.agent != agent)
            .filter(|(reservation, _)| reservation.exclusive || !exclusive_only)
            .filter(|(_, theirs)| theirs.overlaps(pattern))
            .map(|(reservation, _)| reservation)
            .collect()
    }

    /// What holds `task` back: the first live reservation of another agent that its scope
    /// overlaps, when it is waiting to be taken up (pending, or sent back for changes).
    pub fn held_by(&self, task: &Head, now: Timestamp) -> Option<&Reservation> {
        if task.touches.is_empty()
            || !matches!(task.status, Status::Pending | Status::ChangesRequested)
        {
            return None;
        }
        if self.reservations.is_empty() {
            return None;
        }
        let scope = scope_of(&task.touches);
        self.candidates(&scope)
            .filter(|(reservation, _)| reservation.is_live(now) && *reservation.agent != *task.to)
            .find(|(_, theirs)| scope.iter().any(|mine| mine.overlaps(theirs)))
            .map(|(reservation, _)| reservation)
    }

    /// Reserves `patterns` for `agent`, all or nothing: refused, naming every holder, when
    /// one overlaps another agent's exclusive reservation, or for an exclusive one any
    /// reservation of another agent. Asking again for a pattern the agent holds (for the
    /// same task) renews it. The reservations taken or renewed, in the order asked.
    pub fn reserve(
        &mut self,
        agent: &str,
        patterns: &[Pattern],
        grant: &Grant,
        now: Timestamp,
    ) -> Result<Vec<Reservation>, Conflicts> {
        let mut conflicts = Vec::new();
        for pattern in patterns {
            for holder in self.holders(pattern, agent, !grant.exclusive, now) {
                conflicts.push((pattern.as_str().to_string(), holder.clone()));
            }
        }
        if !conflicts.is_empty() {
            return Err(Conflicts(conflicts));
        }
        self.drop_expired(now);
        self.reserved_patterns = OnceLock::new();
        let expires_at = grant.lasts.map(|lasts| now.plus(lasts));
        let mut taken = Vec::new();
        for pattern in patterns {
            let mine = self.reservations.iter_mut().find(|reservation| {
                reservation.agent == agent
                    && reservation.task == grant.task
                    && reservation.pattern == pattern.as_str()
            });
            let reservation = match mine {
                Some(reservation) => {
                    reservation.exclusive = grant.exclusive;
                    reservation.expires_at = expires_at;
                    if grant.reason.is_some() {
                        reservation.reason = grant.reason.clone();
                    }
                    reservation.clone()
                }
                None => {
                    let reservation = Reservation {
                        id: self.next_reservation_id(),
                        pattern: pattern.as_str().to_string(),
                        agent: agent.to_string(),
                        task: grant.task,
                        exclusive: grant.exclusive,
                        reason: grant.reason.clone(),
                        created_at: now,
                        expires_at,
                    };
                    self.reservations.push(reservation.clone());
                    reservation
                }
            };
            taken.push(reservation);
        }
        Ok(taken)
    }

    /// Ends `agent`'s reservations of `patterns` (matched as written), or all of them;
    /// the ones that ended.
    pub fn unreserve(&mut self, agent: &str, patterns: Option<&[String]>) -> Vec<Reservation> {
        self.take_reservations(|reservation| {
            reservation.agent == agent
                && patterns.is_none_or(|patterns| patterns.contains(&reservation.pattern))
        })
    }

    /// Ends the reservations a claim of `task` took; the ones that ended.
    pub fn end_reservations_of(&mut self, task: TaskId) -> Vec<Reservation> {
        self.take_reservations(|reservation| reservation.task == Some(task))
    }

    /// Drops the reservations that expired by `now`.
    pub fn drop_expired(&mut self, now: Timestamp) -> Vec<Reservation> {
        self.take_reservations(|reservation| !reservation.is_live(now))
    }

    /// Renews `agent`'s reservations by hand that have less than half of `lease` left, as
    /// its leases are: each to `lease` from now, or as long as it was first given if that
    /// is shorter. True when any was renewed.
    pub fn renew_reservations(&mut self, agent: &str, now: Timestamp, lease: Duration) -> bool {
        let mut renewed = false;
        for reservation in &mut self.reservations {
            let Some(until) = reservation.expires_at else {
                continue;
            };
            if reservation.agent != agent || until <= now || now.until(until) >= lease / 2 {
                continue;
            }
            let given = reservation.created_at.until(until);
            let next = now.plus(lease.min(given));
            if next > until {
                reservation.expires_at = Some(next);
                renewed = true;
            }
        }
        renewed
    }

    /// The first instant after `now` at which a reservation expires: a task it holds back
    /// may enter an inbox then, with no write.
    pub fn next_expiry_after(&self, now: Timestamp) -> Option<Timestamp> {
        self.reservations
            .iter()
            .filter_map(|reservation| reservation.expires_at)
            .filter(|until| *until > now)
            .min()
    }

    fn take_reservations(&mut self, ends: impl Fn(&Reservation) -> bool) -> Vec<Reservation> {
        if !self.reservations.iter().any(&ends) {
            return Vec::new();
        }
        let (ended, kept) = std::mem::take(&mut self.reservations)
            .into_iter()
            .partition(|reservation| ends(reservation));
        self.reservations = kept;
        self.reserved_patterns = OnceLock::new();
        ended
    }

    fn next_reservation_id(&self) -> u64 {
        self.reservations
            .iter()
            .map(|reservation| reservation.id)
            .max()
            .unwrap_or(0)
            + 1
    }
}

/// The reservations' patterns, read, and indexed by the first component each names: two
/// patterns whose first components are different literal names cannot overlap, so a question
/// about `src/date/**` compares only the reservations under `src` and those that begin with
/// a glob. (A thousand reservations and forty tasks that touch something: `status` 16 -> 4 ms.)
#[derive(Debug, Default)]
pub(super) struct ReadPatterns {
    patterns: Vec<Pattern>,
    /// The reservations under each first component (or of each resource), in order taken.
    by_first: HashMap<String, Vec<usize>>,
    /// Those whose pattern begins with a glob: they may overlap anything.
    anywhere: Vec<usize>,
}

impl ReadPatterns {
    fn of(reservations: &[Reservation]) -> ReadPatterns {
        let mut read = ReadPatterns::default();
        for (index, reservation) in reservations.iter().enumerate() {
            let pattern = reservation.parsed();
            match pattern.first_name() {
                Some(first) => read.by_first.entry(first).or_default().push(index),
                None => read.anywhere.push(index),
            }
            read.patterns.push(pattern);
        }
        read
    }

    /// The places of the reservations that may overlap one of `patterns`, in order taken.
    fn candidates(&self, patterns: &[Pattern]) -> Vec<usize> {
        let mut found = self.anywhere.clone();
        for pattern in patterns {
            match pattern.first_name() {
                Some(first) => found.extend(self.by_first.get(&first).into_iter().flatten()),
                None => return (0..self.patterns.len()).collect(),
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// A task's scope, read: a pattern that does not read (the board edited by hand) stands for
/// the whole workspace.
pub fn scope_of(touches: &[String]) -> Vec<Pattern> {
    touches.iter().map(|text| stored(text)).collect()
}

/// A pattern the board holds, read: one that does not read (edited in by hand) stands for
/// the whole workspace, so it keeps others out rather than letting them in.
fn stored(text: &str) -> Pattern {
    Pattern::parse(text).unwrap_or_else(|_| Pattern::everything())
}

/// How long a reservation by hand lasts: `asked`, else the project's lease; at most
/// [`LONGEST`].
pub fn length(asked: Option<Duration>, lease: Duration) -> Result<Duration, ReserveError> {
    let lasts = asked.unwrap_or(lease);
    if lasts <= Duration::zero() {
        return Err(ReserveError::NoTime);
    }
    if lasts > LONGEST {
        return Err(ReserveError::TooLong);
    }
    Ok(lasts)
}

#[cfg(test)]
mod tests;
