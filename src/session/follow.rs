//! What a live session is pushed: the hand-overs to the caller it has not been pushed yet.
//!
//! One hand-over is one (task, moment it reached the caller's inbox) pair, pushed once. Until
//! the delivery record (SPEC section 11) lands here, the moment is the task's last change
//! while it is in the inbox, and the tasks the inbox held when the session began are not
//! pushed (its first model call shows them).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::board::task::TaskId;
use crate::error::Result;
use crate::time::Timestamp;

use super::Session;

/// One hand-over to push into the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Push {
    pub id: TaskId,
    pub since: Timestamp,
    pub subject: String,
    pub from: String,
}

/// The hand-overs a live session was pushed, or had in front of it when it began.
#[derive(Debug, Default)]
pub struct Pushed {
    handovers: BTreeSet<(TaskId, Timestamp)>,
}

impl Session {
    /// The hand-overs to the caller that `pushed` does not hold yet, which it now holds.
    pub fn handovers_to_push(&self, pushed: &mut Pushed) -> Result<Vec<Push>> {
        let inbox = self.inbox()?;
        let new = inbox
            .tasks
            .into_iter()
            .filter(|entry| entry.task.to == inbox.agent)
            .filter(|entry| {
                pushed
                    .handovers
                    .insert((entry.task.id, entry.task.updated_at))
            })
            .map(|entry| Push {
                id: entry.task.id,
                since: entry.task.updated_at,
                subject: entry.task.subject,
                from: entry.task.from,
            })
            .collect();
        Ok(new)
    }

    /// What the caller's inbox holds now, as already pushed: a session that begins has it in
    /// front of it at its first model call.
    pub fn pushed_so_far(&self) -> Result<Pushed> {
        let mut pushed = Pushed::default();
        self.handovers_to_push(&mut pushed)?;
        Ok(pushed)
    }
}
