//! The owners of MCP sessions on PostgreSQL, so that any hub sharing the database answers a
//! session to the token that opened it on another.

use super::PgStore;
use super::client::Statements;
use crate::store::StoreError;

impl PgStore {
    /// Records that `token` opened `session`.
    pub(super) fn record_session(&self, session: &str, token: &str) -> Result<(), StoreError> {
        self.run(|client| {
            client.execute(
                "INSERT INTO mcp_sessions (session, token) VALUES ($1, $2) \
                 ON CONFLICT (session) DO UPDATE SET token = excluded.token",
                &[&session, &token],
            )
        })?;
        Ok(())
    }

    /// The token that opened `session`, if one did.
    pub(super) fn session_owner(&self, session: &str) -> Result<Option<String>, StoreError> {
        self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT token FROM mcp_sessions WHERE session = $1",
                    &[&session],
                )?
                .map(|row| row.get(0)))
        })
    }

    /// Forgets the owners of `sessions`.
    pub(super) fn forget_sessions(&self, sessions: &[String]) -> Result<(), StoreError> {
        if sessions.is_empty() {
            return Ok(());
        }
        self.run(|client| {
            client.execute(
                "DELETE FROM mcp_sessions WHERE session = ANY($1)",
                &[&sessions],
            )
        })?;
        Ok(())
    }
}
