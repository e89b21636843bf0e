//! What a live session is pushed (SPEC section 11): each hand-over to the caller that its
//! agent has not been shown yet, once.
//!
//! A hand-over is a task and the moment its delivery record began (`delivery.since`), taken
//! from [`Session::unseen_handovers`]. A push into the session shows the agent its task, so
//! once a batch is pushed it is recorded as seen in one write ([`Session::record_pushed`]).
//! What the agent was already shown (by `inbox`, a hook, an earlier session's push) is no
//! longer unseen and is not pushed; unseen work already waiting when the session begins is.
//! [`Pushed`] remembers what this session pushed, so a failure to record it as seen (a lock
//! held too long) never pushes it twice; the record is tried again at the next look.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::board::task::TaskId;
use crate::error::Result;
use crate::time::Timestamp;

use super::{InboxEntry, Session};

/// One hand-over to push into the session: what `hook follow` prints, one JSON line each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Push {
    pub id: TaskId,
    pub since: Timestamp,
    pub subject: String,
    pub from: String,
}

/// One hand-over due, with its inbox entry (for a push that shows the task whole).
#[derive(Debug, Clone)]
pub struct Due {
    pub push: Push,
    pub entry: InboxEntry,
}

/// The hand-overs a live session was pushed, and those of them not yet recorded as seen.
#[derive(Debug, Default, Clone)]
pub struct Pushed {
    handovers: BTreeSet<(TaskId, Timestamp)>,
    unrecorded: BTreeSet<TaskId>,
}

impl Pushed {
    /// Whether the hand-over of `id` that began at `since` was pushed already.
    pub fn contains(&self, id: TaskId, since: Timestamp) -> bool {
        self.handovers.contains(&(id, since))
    }

    /// Holds `sent` as pushed: never pushed again, and to be recorded as seen.
    pub fn hold(&mut self, sent: &[Push]) {
        for push in sent {
            self.handovers.insert((push.id, push.since));
            self.unrecorded.insert(push.id);
        }
    }

    /// The tasks pushed and not yet recorded as seen.
    pub fn unrecorded(&self) -> Vec<TaskId> {
        self.unrecorded.iter().copied().collect()
    }

    /// Those pushed are recorded as seen now.
    pub fn recorded(&mut self) {
        self.unrecorded.clear();
    }
}

impl Session {
    /// The hand-overs to the caller not yet seen and not in `pushed`. Before looking, tries
    /// again to record as seen what an earlier [`Session::record_pushed`] could not.
    pub fn handovers_to_push(&self, pushed: &mut Pushed) -> Result<Vec<Due>> {
        let _ = self.record_unrecorded(pushed);
        let due: Vec<(TaskId, Timestamp)> = self
            .unseen_handovers()?
            .into_iter()
            .filter_map(|view| Some((view.task.id, view.task.delivery?.since)))
            .filter(|(id, since)| !pushed.contains(*id, *since))
            .collect();
        if due.is_empty() {
            return Ok(Vec::new());
        }
        // Not `inbox()`: that records as seen what this look only finds, and a push that
        // never reaches the session must leave it unseen.
        let mut inbox = self.inbox_before_push()?;
        Ok(due
            .into_iter()
            .filter_map(|(id, since)| {
                let at = inbox.tasks.iter().position(|entry| entry.task.id == id)?;
                let entry = inbox.tasks.swap_remove(at);
                Some(Due {
                    push: Push {
                        id,
                        since,
                        subject: entry.task.subject.clone(),
                        from: entry.task.from.clone(),
                    },
                    entry,
                })
            })
            .collect())
    }

    /// After a batch was pushed into the session: it is held in `pushed`, never pushed
    /// again, and recorded as seen in one write (SPEC section 11: a push shows the agent
    /// its task). A failure to record is returned and left for the next look to retry.
    pub fn record_pushed(&self, pushed: &mut Pushed, sent: &[Push]) -> Result<()> {
        pushed.hold(sent);
        self.record_unrecorded(pushed)
    }

    fn record_unrecorded(&self, pushed: &mut Pushed) -> Result<()> {
        let ids = pushed.unrecorded();
        if ids.is_empty() {
            return Ok(());
        }
        self.record_seen(&ids)?;
        pushed.recorded();
        Ok(())
    }
}
