//! The tables of a PostgreSQL store and their version. baton migrates the schema itself:
//! the first connection of a process reads `baton_schema`; an older schema is brought up
//! to date in one transaction under an advisory lock (so two hubs starting at once migrate
//! it once), and a newer one is refused, as a newer file is.
//!
//! What the files keep as text (a task, an activity line, a message, a versioned document)
//! is kept here as the same text, so a copy between the two stores is exact; the columns
//! beside it are what baton looks things up by.

use postgres::error::SqlState;

use super::client::{Client, Error, Statements};

/// The schema this binary writes, and the highest it reads.
pub const SCHEMA: i64 = 6;

/// The advisory lock (two-key form: this class, key 0) that a migration holds.
pub const MIGRATION_LOCK: (i32, i32) = (0x6261_0000, 0);

/// What each version adds, in order: `MIGRATIONS[n]` takes a schema from `n` to `n + 1`.
pub(super) const MIGRATIONS: &[&str] = &[
    // 0 → 1: everything.
    r#"
    CREATE TABLE IF NOT EXISTS baton_schema (version bigint NOT NULL);

    -- One row a project with a board: its own fields, and the board before the last change
    -- (its fields here, its tasks in board_previous), which doctor --restore brings back.
    CREATE TABLE boards (
        project text PRIMARY KEY,
        schema integer NOT NULL,
        next_id bigint NOT NULL,
        version bigint NOT NULL,
        previous_schema integer,
        previous_next_id bigint
    );
    -- The tasks on the boards, each as the text of the task's JSON.
    CREATE TABLE tasks (
        project text NOT NULL,
        id bigint NOT NULL,
        task text NOT NULL,
        PRIMARY KEY (project, id)
    );
    -- The tasks the last change of each board changed, as they were before it (NULL: not on
    -- the board then).
    CREATE TABLE board_previous (
        project text NOT NULL,
        id bigint NOT NULL,
        task text,
        PRIMARY KEY (project, id)
    );
    -- The activity log: numbered per project from 1, gapless, in commit order.
    CREATE TABLE activity (
        project text NOT NULL,
        seq bigint NOT NULL,
        at_millis bigint NOT NULL,
        record text NOT NULL,
        PRIMARY KEY (project, seq)
    );
    -- Finished tasks moved off the boards, in the order they moved.
    CREATE TABLE archive (
        project text NOT NULL,
        place bigserial,
        id bigint NOT NULL,
        task text NOT NULL,
        PRIMARY KEY (project, place)
    );
    CREATE INDEX archive_by_id ON archive (project, id);
    -- The mail, and the messages the sweep moved off it.
    CREATE TABLE mail (
        project text NOT NULL,
        seq bigint NOT NULL,
        message text NOT NULL,
        PRIMARY KEY (project, seq)
    );
    CREATE TABLE mail_archive (
        project text NOT NULL,
        seq bigint NOT NULL,
        month text NOT NULL,
        message text NOT NULL
    );
    CREATE INDEX mail_archive_by_project ON mail_archive (project, seq);
    CREATE TABLE read_positions (
        project text PRIMARY KEY,
        positions text NOT NULL
    );
    -- The small versioned documents (projects, agents, tokens, alerts, the alert queue),
    -- each as its file's bytes; version counts its changes.
    CREATE TABLE documents (
        kind text NOT NULL,
        name text NOT NULL,
        body bytea NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (kind, name)
    );
    -- What is told once, whoever looks first (a stall's alert).
    CREATE TABLE marks (
        name text PRIMARY KEY,
        marked_at timestamptz NOT NULL DEFAULT now()
    );
    -- Live sessions and listeners: a row is live while the session-level advisory lock on
    -- its id is held (by the connection of the process that announced it, so a process
    -- that dies, or loses its connection, lets go at once).
    CREATE SEQUENCE presence_ids;
    CREATE TABLE presence (
        id bigint PRIMARY KEY,
        kind text NOT NULL,
        project text NOT NULL,
        agent text NOT NULL,
        client text NOT NULL,
        announced_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX presence_by_agent ON presence (kind, agent, project);
    "#,
    // 1 → 2: the owners of MCP sessions, so that any hub answers a session to the token
    // that opened it on another.
    r#"
    CREATE TABLE mcp_sessions (
        session text PRIMARY KEY,
        token text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
    );
    "#,
    // 2 → 3: the reservations kept with each board (SPEC section 18.2), as the JSON text of
    // the board's list, and those of the board before the last change (NULL: none kept, as
    // a board written before this version has none).
    r#"
    ALTER TABLE boards
        ADD COLUMN reservations text NOT NULL DEFAULT '[]',
        ADD COLUMN previous_reservations text;
    "#,
    // 3 → 4: the search of the archive (SPEC section 19). Beside each task, its labels and
    // its words folded (subject, body, thread; filled in for the tasks archived before by
    // `archive::fill_searched`), each with an index: the labels' GIN, and a GIN of the
    // words' trigrams (pg_trgm) that answers `LIKE '%…%'`. Where the extension cannot be
    // made (not installed, or not allowed), the migration goes on without that index and
    // searches read the archive's words through; `doctor` says so.
    r#"
    ALTER TABLE archive
        ADD COLUMN labels text[] NOT NULL DEFAULT '{}',
        ADD COLUMN words text NOT NULL DEFAULT '';
    CREATE INDEX archive_by_label ON archive USING gin (labels);
    DO $$
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX archive_words_trgm ON archive USING gin (words gin_trgm_ops);
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'baton: no trigram index on the archive (%)', SQLERRM;
    END $$;
    "#,
    // 4 → 5: what any hub needs to serve an MCP session opened on another: what its client
    // said at `initialize` (rmcp's session state as JSON; empty for the sessions recorded
    // before, which only their own hub can serve), and when it was last used (a session
    // unused for long ends, whichever hub served it last).
    r#"
    ALTER TABLE mcp_sessions
        ADD COLUMN state text NOT NULL DEFAULT '',
        ADD COLUMN used_at timestamptz NOT NULL DEFAULT now();
    "#,
    // 5 → 6: each MCP session's event log, the pushes of its stream (`GET /mcp`), so that a
    // stream resumes on any hub from its `Last-Event-ID`: the events at their positions
    // (taken from the session's count, `events`), each once per key, gone with the session.
    r#"
    ALTER TABLE mcp_sessions ADD COLUMN events bigint NOT NULL DEFAULT 0;
    CREATE TABLE mcp_events (
        session text NOT NULL REFERENCES mcp_sessions (session) ON DELETE CASCADE,
        position bigint NOT NULL,
        key text NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (session, position),
        UNIQUE (session, key)
    );
    "#,
];

/// The version whose migration adds what the archive keeps for a search: those archived
/// before it are filled in by baton itself, after that migration's statements.
const SEARCHED_ARCHIVE: usize = 3;

/// The index of the archive's words that answers a search, when it could be made.
pub const WORDS_INDEX: &str = "archive_words_trgm";

/// Whether the database has the index of the archive's words ([`WORDS_INDEX`]).
pub fn has_words_index(client: &mut impl Statements) -> Result<bool, Error> {
    Ok(client
        .query_one("SELECT to_regclass('archive_words_trgm') IS NOT NULL", &[])?
        .get(0))
}

/// What the database's schema is, as this binary sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// At [`SCHEMA`]: nothing to do.
    Current,
    /// Older (0: no tables yet): to migrate.
    Older(i64),
    /// Newer than this binary knows: refused.
    Newer(i64),
}

/// The schema of the database `client` is connected to, asked in one round trip: what every
/// process's first connection checks (a command's included), so it costs one statement
/// unprepared rather than two prepared ones, and is exact every time (a database migrated
/// by a newer baton since the last command is refused at once, never written as an older).
/// The version's table not being there at all says the database has no schema yet.
pub fn standing_at_once(client: &mut Client) -> Result<Standing, Error> {
    match client.value_of("SELECT max(version) FROM baton_schema") {
        Ok(found) => Ok(standing_of(
            found.and_then(|version| version.parse().ok()).unwrap_or(0),
        )),
        Err(error) if error.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(Standing::Older(0)),
        Err(error) => Err(error),
    }
}

fn standing_of(version: i64) -> Standing {
    match version {
        version if version == SCHEMA => Standing::Current,
        version if version > SCHEMA => Standing::Newer(version),
        version => Standing::Older(version),
    }
}

/// The schema of the database `client` is connected to, as a transaction sees it (a
/// migration's, which must not fail on a table not there).
pub fn standing(client: &mut impl Statements) -> Result<Standing, Error> {
    let exists: bool = client
        .query_one("SELECT to_regclass('baton_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(Standing::Older(0));
    }
    let found: Option<i64> = client
        .query_opt("SELECT max(version) FROM baton_schema", &[])?
        .and_then(|row| row.get(0));
    Ok(standing_of(found.unwrap_or(0)))
}

/// How long each statement of a migration may take: it waits for another process's
/// migration to end, and rewrites tables that may be large. Still a bound, so that a
/// server that stops answering mid-way does not hold the command for ever.
pub const MIGRATE_WITHIN: std::time::Duration = std::time::Duration::from_secs(600);

/// Brings the schema up to [`SCHEMA`], in one transaction under the migration lock (another
/// process may have done it while this one waited: the version is read again under it).
/// The standing found under the lock: [`Standing::Newer`] is left alone.
pub fn migrate(client: &mut Client) -> Result<Standing, Error> {
    // The lock is the session's, taken before the transaction begins, so that the
    // transaction reads the catalog as another migration left it (a lock taken inside it
    // would leave it reading the tables as they were when it began).
    client.execute(
        "SELECT pg_advisory_lock($1, $2)",
        &[&MIGRATION_LOCK.0, &MIGRATION_LOCK.1],
    )?;
    let migrated = migrate_locked(client);
    let unlocked = client.execute(
        "SELECT pg_advisory_unlock($1, $2)",
        &[&MIGRATION_LOCK.0, &MIGRATION_LOCK.1],
    );
    let standing = migrated?;
    unlocked?;
    Ok(standing)
}

fn migrate_locked(client: &mut Client) -> Result<Standing, Error> {
    let mut transaction = client.transaction()?;
    let found = standing(&mut transaction)?;
    let from = match found {
        Standing::Older(version) => version,
        Standing::Current | Standing::Newer(_) => return Ok(found),
    };
    for (version, migration) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
        transaction.batch_execute(migration)?;
        if version == SEARCHED_ARCHIVE {
            super::archive::fill_searched(&mut transaction)?;
        }
    }
    transaction.execute("DELETE FROM baton_schema", &[])?;
    transaction.execute("INSERT INTO baton_schema (version) VALUES ($1)", &[&SCHEMA])?;
    transaction.commit()?;
    Ok(Standing::Current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_has_its_migration() {
        assert_eq!(MIGRATIONS.len() as i64, SCHEMA);
    }
}
