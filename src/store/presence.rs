//! Presence: a live session (a process that can take work into a session already running: an
//! opencode plugin following the board, `baton mcp` serving a Claude Code session that takes
//! channel pushes) or a listener (`baton listen` on an agent's other machine, whose event
//! stream a hub serves), announced through the store for as long as it lives
//! ([`super::Store::announce_session`], [`super::Store::announce_listener`]). How it is
//! held is each store's: a lock file on the files ([`super::files::presence`]), a session
//! advisory lock on PostgreSQL.

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
