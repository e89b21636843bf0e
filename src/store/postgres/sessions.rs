//! The MCP sessions on PostgreSQL, so that any hub sharing the database answers a session
//! opened on another to its token, and revives it.

use super::PgStore;
use super::client::Statements;
use crate::store::mcp_sessions::{MCP_SESSION_IDLE, MCP_SESSION_USE_NOTED_EVERY};
use crate::store::{KeptMcpSession, StoreError};

/// A duration as the whole seconds SQL takes it as.
fn seconds(duration: std::time::Duration) -> i64 {
    duration.as_secs() as i64
}

impl PgStore {
    /// Records `session`, and forgets those unused for longer than [`MCP_SESSION_IDLE`]
    /// (in the same statement: one round trip). Session ids are new at each `initialize`,
    /// so the one recorded is never among those forgotten; it is left out all the same,
    /// since a statement may not change one row twice.
    pub(super) fn record_session(
        &self,
        session: &str,
        kept: &KeptMcpSession,
    ) -> Result<(), StoreError> {
        let idle = seconds(MCP_SESSION_IDLE);
        self.run_writing(|client| {
            client.execute(
                "WITH idle AS ( \
                     DELETE FROM mcp_sessions \
                     WHERE used_at < now() - $4::bigint * interval '1 second' AND session <> $1 \
                 ) \
                 INSERT INTO mcp_sessions (session, token, state) VALUES ($1, $2, $3) \
                 ON CONFLICT (session) DO UPDATE \
                 SET token = excluded.token, state = excluded.state, used_at = now()",
                &[&session, &kept.token, &kept.state, &idle],
            )
        })?;
        Ok(())
    }

    /// `session` unless unused for longer than [`MCP_SESSION_IDLE`], noting its use when
    /// the last note is older than [`MCP_SESSION_USE_NOTED_EVERY`] (in the same statement:
    /// one round trip, which writes nothing while the note is fresh).
    pub(super) fn kept_session(&self, session: &str) -> Result<Option<KeptMcpSession>, StoreError> {
        let (noted, idle) = (
            seconds(MCP_SESSION_USE_NOTED_EVERY),
            seconds(MCP_SESSION_IDLE),
        );
        self.run_writing(|client| {
            Ok(client
                .query_opt(
                    "WITH used AS ( \
                         UPDATE mcp_sessions SET used_at = now() \
                         WHERE session = $1 \
                           AND used_at < now() - $2::bigint * interval '1 second' \
                           AND used_at >= now() - $3::bigint * interval '1 second' \
                     ) \
                     SELECT token, state FROM mcp_sessions \
                     WHERE session = $1 AND used_at >= now() - $3::bigint * interval '1 second'",
                    &[&session, &noted, &idle],
                )?
                .map(|row| KeptMcpSession {
                    token: row.get(0),
                    state: row.get(1),
                }))
        })
    }

    /// Forgets `sessions`.
    pub(super) fn forget_sessions(&self, sessions: &[String]) -> Result<(), StoreError> {
        if sessions.is_empty() {
            return Ok(());
        }
        self.run_writing(|client| {
            client.execute(
                "DELETE FROM mcp_sessions WHERE session = ANY($1)",
                &[&sessions],
            )
        })?;
        Ok(())
    }
}
