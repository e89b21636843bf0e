//! Which token opened each MCP session of `baton serve` (SPEC section 13): the files keep it
//! in the serving process's memory, where the session itself lives; a database keeps it for
//! every hub sharing it, since the next request of a session may reach another.

use std::fmt;

use super::StoreError;

/// Where the owners of MCP sessions are kept.
pub trait McpSessions: fmt::Debug + Send + Sync {
    /// Records that the MCP session `session` (the id a hub handed out at `initialize`) was
    /// opened with the token whose stored hash is `token`, so that whichever hub it reaches
    /// answers it to that token alone.
    fn record_mcp_session(&self, session: &str, token: &str) -> Result<(), StoreError>;

    /// The stored hash of the token that opened the MCP session `session`; `None` for a
    /// session never recorded, or forgotten.
    fn mcp_session_owner(&self, session: &str) -> Result<Option<String>, StoreError>;

    /// Forgets the MCP sessions `sessions`: they ended (closed by their client, idle, or
    /// their token gone).
    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError>;
}
