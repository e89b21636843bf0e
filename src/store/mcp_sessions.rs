//! The MCP sessions of `baton serve` (SPEC sections 13 and 16): which token opened each, and
//! what its client said at `initialize`, from which any hub sharing the store revives the
//! session when its next request reaches it. The files keep them in the serving process's
//! memory (one hub serves them all); a database keeps them for every hub sharing it.

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
}
