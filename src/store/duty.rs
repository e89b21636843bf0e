//! Duties: jobs that one process at a time does among every process sharing a store,
//! whichever machine it runs on: posting the alert queue, running an agent's wake command.
//! The files hold one with a lock file of the hub home (`alerts/sender.lock`,
//! `wake/<agent>.lock`); a database can hold one with an advisory lock, so that one sender
//! serves every hub.

use std::fmt;

/// A job that one process at a time does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Duty {
    /// Posting the alerts of the queue (`baton __alert-send`).
    AlertSender,
    /// Running `agent`'s wake command while work arrives for it (its wake supervisor).
    Wake(String),
}

/// A duty held, for as long as this value lives: dropping it lets the duty go. What holds it
/// is the store's (a lock file held open, a database session's lock). A process that dies
/// lets go of what it held.
pub struct Held {
    _holding: Box<dyn fmt::Debug + Send + Sync>,
}

impl Held {
    /// The duty `holding` holds for as long as it is kept.
    pub fn new(holding: impl fmt::Debug + Send + Sync + 'static) -> Self {
        Held {
            _holding: Box::new(holding),
        }
    }
}

impl fmt::Debug for Held {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_tuple("Held").field(&self._holding).finish()
    }
}
