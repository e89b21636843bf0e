//! The delivery record of SPEC section 11: whether a task handed over reached its agent.
//! Pure: times are passed in, nothing is read or written here.

use std::fmt;

use chrono::Duration;
use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// How long work may wait queued or woken before the board marks it unseen.
pub const UNSEEN_AFTER: Duration = Duration::minutes(5);

/// How far a hand-over got: only ever forward, until the next hand-over starts it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// In the agent's inbox, nothing else yet.
    Queued,
    /// A wake run started for it; the agent has not been shown it yet.
    Woken,
    /// The agent was shown it (inbox, status, a hook, MCP inbox, a push).
    Seen,
    /// The agent changed the task.
    Acted,
}

impl DeliveryState {
    pub const fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Queued => "queued",
            DeliveryState::Woken => "woken",
            DeliveryState::Seen => "seen",
            DeliveryState::Acted => "acted",
        }
    }

    /// Queued or woken: the agent has not been shown it.
    pub fn is_unseen(self) -> bool {
        matches!(self, DeliveryState::Queued | DeliveryState::Woken)
    }
}

impl fmt::Display for DeliveryState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One hand-over of a task and how far it got. A hand-over is known by `(task, since)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// The agent whose inbox the task was put in.
    pub to: String,
    /// When the hand-over happened.
    pub since: Timestamp,
    pub state: DeliveryState,
    #[serde(default)]
    pub woken_at: Option<Timestamp>,
    #[serde(default)]
    pub seen_at: Option<Timestamp>,
}

impl Delivery {
    /// A hand-over to `to` at `now`: queued.
    pub fn queued(to: &str, now: Timestamp) -> Delivery {
        Delivery {
            to: to.to_string(),
            since: now,
            state: DeliveryState::Queued,
            woken_at: None,
            seen_at: None,
        }
    }

    /// The state after `event` by `by`, or `None` when the event changes nothing: states
    /// only move forward, and only the agent the task went to sees or acts on it.
    pub fn after(&self, event: DeliveryEvent, by: &str) -> Option<DeliveryState> {
        let next = match event {
            DeliveryEvent::WakeStarted => DeliveryState::Woken,
            DeliveryEvent::Shown => DeliveryState::Seen,
            DeliveryEvent::Changed => DeliveryState::Acted,
        };
        (by == self.to && next > self.state).then_some(next)
    }

    /// Applies `event` by `by` at `now`; whether anything changed.
    pub fn record(&mut self, event: DeliveryEvent, by: &str, now: Timestamp) -> bool {
        let Some(next) = self.after(event, by) else {
            return false;
        };
        match next {
            DeliveryState::Woken => self.woken_at = Some(now),
            DeliveryState::Seen => self.seen_at = Some(now),
            // Acting on a task shows it was seen: the time it was first shown stays.
            DeliveryState::Acted => self.seen_at = self.seen_at.or(Some(now)),
            DeliveryState::Queued => {}
        }
        self.state = next;
        true
    }

    /// How long it has waited unseen, when that is more than [`UNSEEN_AFTER`].
    pub fn unseen_for(&self, now: Timestamp) -> Option<Duration> {
        let waited = self.since.until(now);
        (self.state.is_unseen() && waited > UNSEEN_AFTER).then_some(waited)
    }

    /// Whether it waited unseen for more than [`UNSEEN_AFTER`] before its agent was shown
    /// it, or before `until` (now, or when the task ended) if it never was: what the board
    /// marked it at some time, looked at afterwards (`stats`).
    pub fn was_unseen_too_long(&self, until: Timestamp) -> bool {
        let shown = match self.state {
            DeliveryState::Queued | DeliveryState::Woken => until,
            // Seen or acted on: when first shown (a record written before the time was kept
            // has none, and is taken as shown in time).
            DeliveryState::Seen | DeliveryState::Acted => self.seen_at.unwrap_or(self.since),
        };
        self.since.until(shown) > UNSEEN_AFTER
    }
}

/// What can happen to a hand-over after it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryEvent {
    /// A wake run started for the agent.
    WakeStarted,
    /// The agent was shown the task.
    Shown,
    /// The agent changed the task.
    Changed,
}

#[cfg(test)]
mod tests {
    use super::*;
    use DeliveryEvent::*;
    use DeliveryState::*;

    fn at(minutes: i64) -> Timestamp {
        "2026-11-29T12:00:00Z"
            .parse::<Timestamp>()
            .unwrap()
            .plus(Duration::minutes(minutes))
    }

    #[test]
    fn states_only_move_forward_and_only_for_the_agent_it_went_to() {
        // (state before, event, by, state after or None when nothing changes)
        let cases: &[(DeliveryState, DeliveryEvent, &str, Option<DeliveryState>)] = &[
            (Queued, WakeStarted, "codex", Some(Woken)),
            (Queued, Shown, "codex", Some(Seen)),
            (Queued, Changed, "codex", Some(Acted)),
            (Woken, Shown, "codex", Some(Seen)),
            (Woken, WakeStarted, "codex", None),
            (Woken, Changed, "codex", Some(Acted)),
            // A wake run after the agent has seen it is not a step back to woken.
            (Seen, WakeStarted, "codex", None),
            (Seen, Shown, "codex", None),
            (Seen, Changed, "codex", Some(Acted)),
            (Acted, Shown, "codex", None),
            (Acted, WakeStarted, "codex", None),
            (Acted, Changed, "codex", None),
            // Someone else looking at or changing the task is no delivery to codex.
            (Queued, Shown, "claude", None),
            (Woken, Changed, "claude", None),
        ];
        for (state, event, by, expected) in cases {
            let mut delivery = Delivery::queued("codex", at(0));
            delivery.state = *state;
            assert_eq!(
                delivery.after(*event, by),
                *expected,
                "{state} {event:?} {by}"
            );
            let changed = delivery.record(*event, by, at(1));
            assert_eq!(changed, expected.is_some());
            assert_eq!(delivery.state, expected.unwrap_or(*state));
        }
    }

    #[test]
    fn each_step_keeps_its_time_and_woken_is_never_seen() {
        let mut delivery = Delivery::queued("codex", at(0));
        assert!(delivery.record(WakeStarted, "codex", at(1)));
        assert_eq!((delivery.woken_at, delivery.seen_at), (Some(at(1)), None));
        assert!(delivery.state.is_unseen());
        assert!(delivery.record(Shown, "codex", at(2)));
        assert_eq!(delivery.seen_at, Some(at(2)));
        assert!(delivery.record(Changed, "codex", at(3)));
        assert_eq!((delivery.state, delivery.seen_at), (Acted, Some(at(2))));
        // Acting unshown counts as seen then.
        let mut direct = Delivery::queued("codex", at(0));
        direct.record(Changed, "codex", at(4));
        assert_eq!(direct.seen_at, Some(at(4)));
    }

    #[test]
    fn work_is_unseen_past_five_minutes_queued_or_woken() {
        let mut delivery = Delivery::queued("codex", at(0));
        assert_eq!(delivery.unseen_for(at(5)), None);
        assert_eq!(delivery.unseen_for(at(12)), Some(Duration::minutes(12)));
        delivery.record(WakeStarted, "codex", at(1));
        assert_eq!(delivery.unseen_for(at(12)), Some(Duration::minutes(12)));
        delivery.record(Shown, "codex", at(13));
        assert_eq!(delivery.unseen_for(at(60)), None);
    }

    #[test]
    fn looked_at_afterwards_a_hand_over_was_unseen_too_long_if_shown_past_five_minutes() {
        let mut late = Delivery::queued("codex", at(0));
        late.record(WakeStarted, "codex", at(1));
        late.record(Shown, "codex", at(6));
        assert!(late.was_unseen_too_long(at(60)), "shown after six minutes");
        let mut in_time = Delivery::queued("codex", at(0));
        in_time.record(Changed, "codex", at(5));
        assert!(
            !in_time.was_unseen_too_long(at(60)),
            "exactly five is not more"
        );
        let never = Delivery::queued("codex", at(0));
        assert!(!never.was_unseen_too_long(at(4)));
        assert!(
            never.was_unseen_too_long(at(7)),
            "still unseen at seven minutes"
        );
    }

    #[test]
    fn a_board_written_before_has_no_record_and_one_written_now_reads_back() {
        let delivery = Delivery::queued("codex", at(0));
        let json = serde_json::to_string(&delivery).unwrap();
        assert_eq!(
            json,
            r#"{"to":"codex","since":"2026-11-29T12:00:00.000Z","state":"queued","woken_at":null,"seen_at":null}"#
        );
        assert_eq!(serde_json::from_str::<Delivery>(&json).unwrap(), delivery);
    }
}
