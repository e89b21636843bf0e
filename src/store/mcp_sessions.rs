//! The MCP sessions of `baton serve` (SPEC sections 13 and 16): which token opened each, and
//! what its client said at `initialize`, from which any hub sharing the store revives the
//! session when its next request reaches it. The files keep them in the serving process's
//! memory (one hub serves them all); a database keeps them for every hub sharing it.
//!
//! Beside each session, its event log: the messages pushed on its stream (`GET /mcp`), each
//! at a position that means the same on every hub, so that a stream cut by its hub's death
//! resumes on another strictly after its `Last-Event-ID` (`crate::serve::pushes`). An
//! event is appended once per key (a hand-over: its task and delivery), whichever hub
//! appends it and however often; the log goes with its session.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use super::StoreError;

/// How long a session may go unused before it ends, as a login does (SPEC section 13): any
/// hub may serve its next request, so no hub's memory says when it was last used, the store
/// does.
pub const MCP_SESSION_IDLE: Duration = Duration::from_secs(12 * 60 * 60);

/// How stale the store's note of a session's last use may grow before a request notes it
/// again: a session busy with many calls costs one write a minute, not one a call.
pub const MCP_SESSION_USE_NOTED_EVERY: Duration = Duration::from_secs(60);

/// An MCP session as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptMcpSession {
    /// The stored hash of the token that opened it: the session answers that token alone.
    pub token: String,
    /// What its client said at `initialize` (its protocol version, capabilities and name),
    /// as the JSON of rmcp's session state; empty for one kept before baton kept it (such a
    /// session lives only on the hub that opened it).
    pub state: String,
}

/// Where MCP sessions are kept.
pub trait McpSessions: fmt::Debug + Send + Sync {
    /// Records the MCP session `session` (the id a hub handed out at `initialize`), so that
    /// whichever hub it reaches answers it to its token alone and can revive it; forgets,
    /// on the way, the sessions unused for longer than [`MCP_SESSION_IDLE`].
    fn record_mcp_session(&self, session: &str, kept: &KeptMcpSession) -> Result<(), StoreError>;

    /// The MCP session `session`, noting its use (at most every
    /// [`MCP_SESSION_USE_NOTED_EVERY`]); `None` for a session never recorded, forgotten, or
    /// unused for longer than [`MCP_SESSION_IDLE`].
    fn mcp_session(&self, session: &str) -> Result<Option<KeptMcpSession>, StoreError>;

    /// Forgets the MCP sessions `sessions`: they ended (closed by their client, or their
    /// token gone).
    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError>;

    /// Appends `data` to the event log of `session` under `key`, unless an event of that
    /// key is in it already (appended by this hub or another): appending is idempotent, so
    /// that an event made again after a crash is not sent twice. Nothing is appended to a
    /// session not kept. The log keeps the last [`MOST_MCP_EVENTS`].
    fn append_mcp_event(&self, session: &str, key: &str, data: &str) -> Result<(), StoreError>;

    /// The events of the log of `session` after the position `after`, in order; none for
    /// a session not kept.
    fn mcp_events_after(&self, session: &str, after: u64) -> Result<Vec<McpEvent>, StoreError>;

    /// The position of the last event appended to the log of `session` (0: none yet): where
    /// a stream that resumes from nothing begins.
    fn mcp_events_end(&self, session: &str) -> Result<u64, StoreError>;
}

/// How many events of a session's log are kept: a stream that resumes from further back
/// misses those before (a client that was away that long is told its work by its next
/// prompt's hook and its inbox; the hand-overs were recorded seen when appended).
pub const MOST_MCP_EVENTS: u64 = 1000;

/// One event of a session's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpEvent {
    /// Its place in the log, counted from 1 for the session, increasing in commit order
    /// (with gaps where an append found its key there): the stream's event id.
    pub position: u64,
    /// The message, as the JSON-RPC text the stream carries.
    pub data: String,
}

/// A session's event log held in memory (by the files' store, whose one hub serves every
/// session).
#[derive(Debug, Default, Clone)]
pub struct McpLog {
    end: u64,
    events: VecDeque<(McpEvent, String)>,
}

impl McpLog {
    pub fn append(&mut self, key: &str, data: &str) {
        if self.events.iter().any(|(_, kept)| kept == key) {
            return;
        }
        self.end += 1;
        let event = McpEvent {
            position: self.end,
            data: data.to_string(),
        };
        self.events.push_back((event, key.to_string()));
        while self.events.len() as u64 > MOST_MCP_EVENTS {
            self.events.pop_front();
        }
    }

    pub fn after(&self, after: u64) -> Vec<McpEvent> {
        self.events
            .iter()
            .filter(|(event, _)| event.position > after)
            .map(|(event, _)| event.clone())
            .collect()
    }

    pub fn end(&self) -> u64 {
        self.end
    }
}
