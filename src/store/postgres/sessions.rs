//! The MCP sessions on PostgreSQL, so that any hub sharing the database answers a session
//! opened on another to its token, and revives it.

use super::PgStore;
use super::client::Statements;
use super::feed::NOTIFY;
use super::listen::{self, Kind};
use crate::store::mcp_sessions::{
    MCP_SESSION_IDLE, MCP_SESSION_USE_NOTED_EVERY, MOST_MCP_EVENTS, McpEvent,
};
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
        // Told to every hub, once gone: the one holding a session's push stream ends it.
        let ended: Vec<String> = sessions
            .iter()
            .map(|session| PgStore::notice(session, Kind::Session).text())
            .collect();
        self.run_writing(|client| {
            client.execute(
                "DELETE FROM mcp_sessions WHERE session = ANY($1)",
                &[&sessions],
            )?;
            client.execute(NOTIFY, &[&listen::CHANNEL, &ended])
        })?;
        Ok(())
    }

    /// Appends an event to the log of `session` unless its `key` is there, in one
    /// statement: the session's row is locked while the position is taken from its count
    /// (`events`), so positions are committed in the order they are taken, and a reader
    /// that sees one sees every one before it (a sequence would let a later position commit
    /// first, and a stream read past an earlier one still to come). Two hubs appending one
    /// key take turns on that lock, and the second finds the key there. Events further back
    /// than [`MOST_MCP_EVENTS`] go in the same statement.
    pub(super) fn append_event(
        &self,
        session: &str,
        key: &str,
        data: &str,
    ) -> Result<(), StoreError> {
        let most = MOST_MCP_EVENTS as i64;
        self.run_writing(|client| {
            client.execute(
                "WITH next AS ( \
                     UPDATE mcp_sessions SET events = events + 1 WHERE session = $1 \
                     RETURNING events \
                 ), trimmed AS ( \
                     DELETE FROM mcp_events \
                     WHERE session = $1 AND position <= (SELECT events FROM next) - $4 \
                 ) \
                 INSERT INTO mcp_events (session, position, key, data) \
                 SELECT $1, events, $2, $3 FROM next \
                 ON CONFLICT (session, key) DO NOTHING",
                &[&session, &key, &data, &most],
            )
        })?;
        Ok(())
    }

    /// The events of the log of `session` after `after`.
    pub(super) fn events_after(
        &self,
        session: &str,
        after: u64,
    ) -> Result<Vec<McpEvent>, StoreError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        self.run(|client| {
            Ok(client
                .query(
                    "SELECT position, data FROM mcp_events \
                     WHERE session = $1 AND position > $2 ORDER BY position",
                    &[&session, &after],
                )?
                .into_iter()
                .map(|row| McpEvent {
                    position: row.get::<_, i64>(0) as u64,
                    data: row.get(1),
                })
                .collect())
        })
    }

    /// The position of the last event appended to the log of `session`.
    pub(super) fn events_end(&self, session: &str) -> Result<u64, StoreError> {
        self.run(|client| {
            Ok(client
                .query_opt(
                    "SELECT events FROM mcp_sessions WHERE session = $1",
                    &[&session],
                )?
                .map_or(0, |row| row.get::<_, i64>(0) as u64))
        })
    }
}
