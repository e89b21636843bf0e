//! The connections of a PostgreSQL store: opened on first use, kept for the next call, a few
//! at most per process. A pool of our own over a `Mutex<Vec<Client>>` rather than r2d2: what
//! baton needs of one (a cap, a wait, a broken connection dropped and replaced on the next
//! call) is these few lines, and r2d2 would add a crate and its scheduler thread for it.
//!
//! The first connection of a process checks the schema ([`super::schema`]): it migrates an
//! older one, and refuses a newer one on every call.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use postgres::Row;
use postgres::error::SqlState;

use super::address::Address;
use super::client::{self, Client, Piped, Statements};
use super::schema::{self, Standing};
use super::tls::Rustls;
use crate::store::StoreError;

/// The most connections one process keeps open at once. A server's requests beyond it wait
/// for one (a change holds its connection for as long as it runs); a call made while the
/// same thread already holds one is never made to wait for a second.
const MOST_OPEN: usize = 24;

/// How long a call waits for a free connection before the store counts as unreachable:
/// as long as a statement may take ([`client::ANSWER_WITHIN`]), since a connection is
/// busy for as long as its statements run. A call waiting when a new connection fails to
/// open fails with it rather than try the same server again ([`Connections::failures`]).
const WAIT_FOR_A_CONNECTION: Duration = client::ANSWER_WITHIN;

thread_local! {
    /// How many connections this thread holds now (of any pool).
    static HELD: Cell<usize> = const { Cell::new(0) };
}

#[derive(Default)]
struct Connections {
    idle: Vec<Client>,
    open: usize,
    schema_checked: bool,
    /// How many new connections failed to open for want of the server, and why the last
    /// did: a call that waited
    /// while one failed is told that, rather than wait its turn to fail the same way (a
    /// server that does not answer would otherwise hold each waiting call for a start's
    /// bound in turn).
    failures: u64,
    last_failure: Option<String>,
}

/// The connections of one store address.
pub struct Pool {
    pub address: Address,
    tls: Result<Rustls, String>,
    connections: Mutex<Connections>,
    freed: Condvar,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Pool")
            .field("store", &self.address.shown())
            .finish()
    }
}

impl Pool {
    pub fn new(address: Address) -> Pool {
        Pool {
            tls: Rustls::for_address(&address),
            address,
            connections: Mutex::default(),
            freed: Condvar::new(),
        }
    }

    /// The store as it may be named.
    pub fn shown(&self) -> &str {
        self.address.shown()
    }

    /// How many connections are open now (idle or in use).
    #[cfg(all(test, unix))]
    pub fn open_count(&self) -> usize {
        self.lock().open
    }

    /// The TLS this store's connections use.
    pub fn tls(&self) -> Result<Rustls, StoreError> {
        self.tls
            .clone()
            .map_err(|detail| self.unreachable_because(detail))
    }

    /// A connection: an idle one, else a new one (waiting while [`MOST_OPEN`] are in use).
    pub fn get(&self) -> Result<Connection<'_>, StoreError> {
        let nested = HELD.with(Cell::get) > 0;
        let deadline = Instant::now() + WAIT_FOR_A_CONNECTION;
        let mut connections = self.lock();
        let failures_before = connections.failures;
        loop {
            if connections.failures != failures_before
                && let Some(detail) = &connections.last_failure
            {
                return Err(self.unreachable_because(detail.clone()));
            }
            if let Some(client) = connections.idle.pop() {
                return Ok(self.hand_out(client, true));
            }
            if connections.open < MOST_OPEN || nested {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.unreachable_because(format!(
                    "all {MOST_OPEN} connections of this process stayed busy for {}s",
                    WAIT_FOR_A_CONNECTION.as_secs()
                )));
            }
            connections = self
                .freed
                .wait_timeout(connections, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        connections.open += 1;
        let check_schema = !connections.schema_checked;
        drop(connections);
        let opened = self.open(check_schema);
        match opened {
            Ok(client) => Ok(self.hand_out(client, false)),
            Err(error) => {
                let mut connections = self.lock();
                connections.open -= 1;
                if let StoreError::Unreachable { detail, .. } = &error {
                    connections.failures += 1;
                    connections.last_failure = Some(detail.clone());
                }
                drop(connections);
                // Every call waiting hears of it (see `Connections::failures`).
                self.freed.notify_all();
                Err(error)
            }
        }
    }

    /// A new connection, the schema checked (and migrated) when `check_schema`.
    fn open(&self, check_schema: bool) -> Result<Client, StoreError> {
        let mut client = Client::connect(&self.address, self.tls()?)
            .map_err(|error| self.unreachable_because(describe(&error)))?;
        if check_schema {
            let standing =
                schema::standing_at_once(&mut client).map_err(|error| self.failed(&error))?;
            let standing = match standing {
                // A migration waits for another process's, and rewrites tables.
                Standing::Older(_) => client
                    .answered_within(schema::MIGRATE_WITHIN, schema::migrate)
                    .map_err(|error| self.failed(&error))?,
                other => other,
            };
            if let Standing::Newer(found) = standing {
                return Err(StoreError::NewerDatabase {
                    store: self.shown().to_string(),
                    found,
                    known: schema::SCHEMA,
                });
            }
            self.lock().schema_checked = true;
        }
        Ok(client)
    }

    fn hand_out(&self, client: Client, reused: bool) -> Connection<'_> {
        HELD.with(|held| held.set(held.get() + 1));
        Connection {
            pool: self,
            client: Some(client),
            reused,
            in_transaction: false,
            is_let_go: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connections> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes back a connection, kept for the next call when `keep` and it is not closed.
    /// One whose statement went unanswered makes the idle ones suspect: they are let go too,
    /// so that the next calls each meet a new connection's bounded start rather than wait
    /// out a statement's bound in turn on connections that a silent server holds open.
    fn give_back(&self, client: Option<Client>, keep: bool) {
        HELD.with(|held| held.set(held.get().saturating_sub(1)));
        let unanswered = client.as_ref().is_some_and(Client::went_unanswered);
        let mut connections = self.lock();
        match client {
            Some(client) if keep && !client.is_closed() => connections.idle.push(client),
            _ => connections.open -= 1,
        }
        let suspects = match unanswered {
            true => std::mem::take(&mut connections.idle),
            false => Vec::new(),
        };
        connections.open -= suspects.len();
        drop(connections);
        suspects.into_iter().for_each(Client::abandon);
        self.freed.notify_all();
    }

    /// The store unreachable, for `detail`.
    pub fn unreachable_because(&self, detail: String) -> StoreError {
        StoreError::Unreachable {
            store: self.shown().to_string(),
            detail,
        }
    }

    /// What `error` means for a caller: the store unreachable when the connection failed,
    /// else the database's refusal.
    pub fn failed(&self, error: &client::Error) -> StoreError {
        match is_connection_lost(error) {
            true => self.unreachable_because(describe(error)),
            false => StoreError::Database {
                store: self.shown().to_string(),
                detail: describe(error),
            },
        }
    }
}

/// A connection handed out by a [`Pool`], given back when dropped: rolled back first when
/// a transaction was left open, let go when it broke.
pub struct Connection<'a> {
    pool: &'a Pool,
    client: Option<Client>,
    /// Whether it was used before: a failure on its first statement may be the server's
    /// restart since, and is worth one try on a new connection.
    pub reused: bool,
    in_transaction: bool,
    /// Let go rather than kept when given back: it broke.
    is_let_go: bool,
}

impl Connection<'_> {
    pub fn client(&mut self) -> &mut Client {
        // Only `take` empties it, and that consumes the connection's use.
        self.client
            .as_mut()
            .expect("a connection in use has its client")
    }

    /// Opens a transaction (`BEGIN`, with `mode`), rolled back when this connection is
    /// given back before [`Connection::commit`].
    pub fn begin(&mut self, mode: &str) -> Result<(), client::Error> {
        self.client().batch_execute(&format!("BEGIN {mode}"))?;
        self.in_transaction = true;
        Ok(())
    }

    /// Opens a read-write transaction as [`Connection::begin`] does, and runs `statements`
    /// in it, sent with the `BEGIN`: one round trip for them all. The rows of each, in order.
    pub fn begin_with(&mut self, statements: &[Piped<'_>]) -> Result<Vec<Vec<Row>>, client::Error> {
        let mut piped: Vec<Piped<'_>> = Vec::with_capacity(statements.len() + 1);
        piped.push(("BEGIN", &[]));
        piped.extend_from_slice(statements);
        // Rolled back when given back, whichever statement was refused (after a refused
        // BEGIN, the ROLLBACK only draws the server's warning).
        self.in_transaction = true;
        let mut answers = self.client().pipelined(&piped)?;
        answers.remove(0);
        Ok(answers)
    }

    /// The transaction is over: its `COMMIT` was sent and answered with the last statements
    /// of a pipeline ([`Client::pipelined`]).
    pub fn committed(&mut self) {
        self.in_transaction = false;
    }

    pub fn commit(&mut self) -> Result<(), client::Error> {
        // Whatever COMMIT answers, the transaction is over (a failed COMMIT rolls back).
        self.in_transaction = false;
        self.client().batch_execute("COMMIT")
    }

    /// Lends the client out whole (to share it with a change's archive reads); it comes
    /// back with [`Connection::restore`], or the connection is let go.
    pub fn take(&mut self) -> Client {
        self.client
            .take()
            .expect("a connection in use has its client")
    }

    /// Lets this connection go rather than keep it: it broke.
    pub fn let_go(mut self) {
        self.in_transaction = false;
        self.is_let_go = true;
    }

    pub fn restore(&mut self, client: Client) {
        self.client = Some(client);
    }
}

impl Drop for Connection<'_> {
    fn drop(&mut self) {
        if self.in_transaction
            && let Some(client) = &mut self.client
            && client.batch_execute("ROLLBACK").is_err()
        {
            self.is_let_go = true;
        }
        self.pool.give_back(self.client.take(), !self.is_let_go);
    }
}

/// Whether `error` says the connection is gone (or never came): the server down, restarting
/// or shutting down, the network, or no answer in time; rather than a refusal of the
/// statement.
pub fn is_connection_lost(error: &client::Error) -> bool {
    let error = match error {
        client::Error::Postgres(error) => error,
        client::Error::NoAnswer { .. } | client::Error::Runtime(_) => return true,
    };
    if error.is_closed() {
        return true;
    }
    match error.code() {
        Some(code) => {
            code.code().starts_with("08")
                || [
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                ]
                .contains(code)
        }
        // Not the server's word: the connection's (an I/O error, a closed socket).
        None => {
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                if cause.is::<std::io::Error>() {
                    return true;
                }
                source = cause.source();
            }
            false
        }
    }
}

/// The words of `error`: the server's message, or the client's with its causes.
pub fn describe(error: &client::Error) -> String {
    let error = match error {
        client::Error::Postgres(error) => error,
        other => return other.to_string(),
    };
    if let Some(database) = error.as_db_error() {
        return database.message().to_string();
    }
    let mut words = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_words = cause.to_string();
        if !words.contains(&cause_words) {
            words.push_str(": ");
            words.push_str(&cause_words);
        }
        source = cause.source();
    }
    words
}
