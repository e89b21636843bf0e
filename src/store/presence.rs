//! Presence: a live session (a process that can take work into a session already running: an
//! opencode plugin following the board, `baton mcp` serving a Claude Code session that takes
//! channel pushes) or a listener (`baton listen` on an agent's other machine, whose event
//! stream a hub serves), announced through the store for as long as it lives
//! ([`Presences::announce_session`], [`Presences::announce_listener`]). How it is
//! held is each store's: a lock file on the files ([`super::files::presence`]), a session
//! advisory lock on PostgreSQL.
//!
//! [`Presences`] is what the processes sharing a store know of each other: who is live,
//! who holds a duty ([`super::duty`]), and what one of them has told already (a mark).

use std::fmt;

use super::StoreError;
use super::duty::{Duty, Held};

/// What the processes sharing a store know of each other, whichever machine they run on.
pub trait Presences: fmt::Debug + Send + Sync {
    /// Announces that `agent` has a live session of `client` in `project` (a process that
    /// can take work into a running session), for as long as the returned value is kept.
    fn announce_session(
        &self,
        project: &str,
        agent: &str,
        client: &str,
    ) -> Result<Presence, StoreError>;

    /// Announces a listener of `agent` (`baton listen` on its machine) whose event stream
    /// this process serves, for as long as the returned value is kept.
    fn announce_listener(&self, agent: &str) -> Result<Presence, StoreError>;

    /// Whether a listener of `agent` is announced now.
    fn is_listened(&self, agent: &str) -> bool;

    /// The clients of `agent`'s live sessions in `project`, one entry a session, sorted.
    fn live_clients(&self, project: &str, agent: &str) -> Vec<String>;

    /// Takes up `duty` if no process sharing this store holds it ([`super::duty`]), for as
    /// long as the returned value is kept; `None` when another holds it: it is doing the job
    /// already, so waiting would be pointless.
    fn try_hold(&self, duty: &Duty) -> Result<Option<Held>, StoreError>;

    /// Whether a process holds `duty` now, looked at without taking it up (a look that took
    /// it, even for an instant, would make a holder starting then give up as if another
    /// held it). A peek, not a promise: the holder may let go right after.
    fn is_held(&self, duty: &Duty) -> bool;

    /// Records `mark` (a name of the caller's making); false when it was recorded already,
    /// by this process or any other: how a thing is told once, whoever looks first (a
    /// stall's alert).
    fn mark_once(&self, mark: &str) -> Result<bool, StoreError>;
}

/// A live session or a listener, announced for as long as this value lives: dropping it
/// takes the announcement back. What holds the announcement is the store's.
#[derive(Debug)]
pub struct Presence {
    _announcement: Box<dyn std::fmt::Debug + Send + Sync>,
}

impl Presence {
    /// The announcement `held` makes for as long as it is kept.
    pub fn new(held: impl std::fmt::Debug + Send + Sync + 'static) -> Self {
        Presence {
            _announcement: Box::new(held),
        }
    }
}
