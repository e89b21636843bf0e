//! The connections of a PostgreSQL store: opened on first use, kept for the next call, a few
//! at most per process. A pool of our own over a `Mutex<Vec<Client>>` rather than r2d2: what
//! baton needs of one (a cap, a wait, a broken connection dropped and replaced on the next
//! call) is these few lines, and r2d2 would add a crate and its scheduler thread for it.
//!
//! The first connection of a process checks the schema ([`super::schema`]): it migrates an
//! older one, and refuses a newer one on every call. A command may skip that check when the
//! schema is remembered ([`super::remembered`]): its first transaction then asks for the
//! version with its `BEGIN`, and anything but the remembered one makes the full check.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use postgres::Row;
use postgres::error::SqlState;

use super::address::Address;
use super::client::{self, Client, Piped, Statements};
use super::remembered::{self, Remembered};
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

/// What a pool knows of its database's schema.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Schema {
    /// Nothing: the next new connection checks it.
    #[default]
    Unchecked,
    /// Remembered from an earlier command, not yet checked by this process: the next
    /// transaction asks for it with its `BEGIN`.
    Remembered,
    /// Checked (or confirmed) by this process.
    Checked,
}

#[derive(Default)]
struct Connections {
    idle: Vec<Client>,
    open: usize,
    schema: Schema,
    /// A resident process (a hub), or one that only looks (`doctor`), checks the schema
    /// when it starts, remembered or not.
    checks_at_start: bool,
    /// This process only looks: it makes nothing on this machine (not even its cache).
    only_looks: bool,
    /// A resident process's connections prepare their statements and keep them; a
    /// command's send them unprepared ([`Client::sends_unprepared`]).
    keeps_statements: bool,
    /// The statements this resident pool's connections have prepared: a new connection
    /// prepares them all in one round trip before its first use, rather than each on its
    /// first use, one round trip at a time, while a burst of requests waits.
    statements: BTreeSet<String>,
    /// How many times this pool checked the schema in full.
    #[cfg(all(test, unix))]
    checks: usize,
    /// How many new connections failed to open for want of the server, and why the last
    /// did: a call that waited
    /// while one failed is told that, rather than wait its turn to fail the same way (a
    /// server that does not answer would otherwise hold each waiting call for a start's
    /// bound in turn).
    failures: u64,
    last_failure: Option<StoreError>,
}

/// The connections of one store address.
pub struct Pool {
    pub address: Address,
    /// Where the schema is remembered between commands; `None`: checked by every process.
    remembered: Option<Remembered>,
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
            remembered: None,
            connections: Mutex::default(),
            freed: Condvar::new(),
        }
    }

    /// This pool, its schema remembered between processes in `remembered`.
    pub fn remembering(self, remembered: Remembered) -> Pool {
        Pool {
            remembered: Some(remembered),
            ..self
        }
    }

    /// Makes this pool a resident process's (a hub's): statements prepared and kept, and
    /// the schema checked on its first connection whatever is remembered (a hub runs long,
    /// and writes outside transactions). Connections opened before are kept (a hub's setup
    /// runs where no new one may be opened), and prepare from now on; a schema they only
    /// remembered is confirmed by the next transaction, as a command's is.
    pub fn resident(&self) {
        let mut connections = self.lock();
        connections.checks_at_start = true;
        connections.keeps_statements = true;
        for client in &mut connections.idle {
            client.sends_unprepared(false);
        }
    }

    /// Makes this pool one of a process that only looks (`doctor`): the schema checked
    /// whatever is remembered, and nothing remembered on this machine.
    pub fn only_looking(&self) {
        let opened_before = {
            let mut connections = self.lock();
            connections.checks_at_start = true;
            connections.only_looks = true;
            if connections.schema != Schema::Remembered {
                return;
            }
            connections.schema = Schema::Unchecked;
            let idle = std::mem::take(&mut connections.idle);
            connections.open -= idle.len();
            idle
        };
        let_go_apart(opened_before);
    }

    /// The statement a transaction's `BEGIN` is to be sent with, while the schema is only
    /// remembered ([`remembered::GUARD`]); its answer goes to [`Pool::guarded`].
    pub fn guard(&self) -> Option<&'static str> {
        (self.lock().schema == Schema::Remembered).then_some(remembered::GUARD)
    }

    /// What the guard answered: the schema confirmed, or [`client::Error::SchemaUnchecked`]
    /// (the caller rolls back and [`Pool::rechecked`] checks it).
    pub fn guarded(&self, answer: Option<String>) -> Result<(), client::Error> {
        if !remembered::is_current_answer(answer.as_deref()) {
            return Err(client::Error::SchemaUnchecked);
        }
        let mut connections = self.lock();
        if connections.schema == Schema::Remembered {
            connections.schema = Schema::Checked;
        }
        Ok(())
    }

    /// Whether `error`, met on `client`, says the remembered schema was wrong: the guard
    /// found another version, or a statement met a table or a column not there. The schema
    /// is then forgotten and checked on `client` (migrated when older, refused when newer,
    /// as a process that remembered nothing does), and the caller runs its work again.
    pub fn rechecked(
        &self,
        error: &client::Error,
        client: &mut Client,
    ) -> Result<bool, StoreError> {
        let moved = matches!(error, client::Error::SchemaUnchecked)
            || error.code().is_some_and(|code| {
                *code == SqlState::UNDEFINED_TABLE || *code == SqlState::UNDEFINED_COLUMN
            });
        if !moved || self.lock().schema != Schema::Remembered {
            return Ok(false);
        }
        if let Some(remembered) = &self.remembered {
            remembered.forget();
        }
        self.lock().schema = Schema::Unchecked;
        self.check(client)?;
        Ok(true)
    }

    /// The store as it may be named.
    pub fn shown(&self) -> &str {
        self.address.shown()
    }

    /// How many times this pool checked the schema in full (not only its guard).
    #[cfg(all(test, unix))]
    pub fn checks(&self) -> usize {
        self.lock().checks
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
                && let Some(failure) = &connections.last_failure
            {
                return Err(failure.duplicate());
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
        let check_schema = match connections.schema {
            Schema::Unchecked if !connections.checks_at_start && self.is_remembered() => {
                connections.schema = Schema::Remembered;
                false
            }
            Schema::Unchecked => true,
            Schema::Remembered | Schema::Checked => false,
        };
        drop(connections);
        let opened = self.open(check_schema);
        match opened {
            Ok(client) => Ok(self.hand_out(client, false)),
            Err(error) => {
                let mut connections = self.lock();
                connections.open -= 1;
                if let StoreError::Unreachable { .. } = &error {
                    connections.failures += 1;
                    connections.last_failure = Some(error.duplicate());
                }
                drop(connections);
                // Every call waiting hears of it (see `Connections::failures`).
                self.freed.notify_all();
                Err(error)
            }
        }
    }

    /// Whether the schema is remembered as this binary's (a command's, not a hub's).
    fn is_remembered(&self) -> bool {
        self.remembered.as_ref().is_some_and(Remembered::is_current)
    }

    /// A new connection, the schema checked (and migrated) when `check_schema`.
    fn open(&self, check_schema: bool) -> Result<Client, StoreError> {
        let started = timings::now();
        let mut client = Client::connect(&self.address, self.tls()?)
            .map_err(|error| self.not_connected(&error))?;
        timings::took("connect (TCP or socket, TLS, login)", started);
        // Only a resident pool, which keeps its statements, knows any.
        let (keeps_statements, known): (bool, Vec<String>) = {
            let connections = self.lock();
            let known = connections.statements.iter().cloned().collect();
            (connections.keeps_statements, known)
        };
        client.sends_unprepared(!keeps_statements);
        if check_schema {
            let started = timings::now();
            self.check(&mut client)?;
            timings::took("schema check", started);
        }
        if !known.is_empty() {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            // Preparing ahead only saves round trips: a statement the server refuses now
            // is prepared (and refused) again by the call that uses it.
            if let Err(error) = client.prepare_all(&known)
                && client.went_unanswered()
            {
                return Err(self.failed(&error));
            }
            client.newly_prepared();
        }
        Ok(client)
    }

    /// Checks the schema on `client`: migrates an older one, refuses a newer one, and
    /// remembers it when it is this binary's.
    fn check(&self, client: &mut Client) -> Result<(), StoreError> {
        #[cfg(all(test, unix))]
        {
            self.lock().checks += 1;
        }
        let standing = schema::standing_at_once(client).map_err(|error| self.failed(&error))?;
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
        let only_looks = {
            let mut connections = self.lock();
            connections.schema = Schema::Checked;
            connections.only_looks
        };
        if let Some(remembered) = self.remembered.as_ref().filter(|_| !only_looks) {
            remembered.remember();
        }
        Ok(())
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
    fn give_back(&self, mut client: Option<Client>, keep: bool) {
        HELD.with(|held| held.set(held.get().saturating_sub(1)));
        let unanswered = client.as_ref().is_some_and(Client::went_unanswered);
        let prepared = client
            .as_mut()
            .map(Client::newly_prepared)
            .unwrap_or_default();
        let mut connections = self.lock();
        if connections.keeps_statements {
            connections.statements.extend(prepared);
        }
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

    /// The store unreachable, for `detail`: an outage, for all baton knows.
    pub fn unreachable_because(&self, detail: String) -> StoreError {
        StoreError::Unreachable {
            store: self.shown().to_string(),
            detail,
            lasting: false,
        }
    }

    /// The store unreachable, for `error` met opening a connection: lasting when the
    /// server's answer says so ([`is_lasting_refusal`]).
    fn not_connected(&self, error: &client::Error) -> StoreError {
        StoreError::Unreachable {
            store: self.shown().to_string(),
            detail: describe(error),
            lasting: error.code().is_some_and(is_lasting_refusal),
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

/// Lets `clients` go on a thread of their own: each has a runtime, which may not be dropped
/// where a runtime runs (a hub's setup).
fn let_go_apart(clients: Vec<Client>) {
    if !clients.is_empty() {
        let _ = std::thread::Builder::new()
            .name("baton-pg-goodbye".to_string())
            .spawn(move || drop(clients));
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
    /// given back before [`Connection::commit`]. While the schema is only remembered, its
    /// version is asked in the same round trip ([`Pool::guard`]).
    pub fn begin(&mut self, mode: &str) -> Result<(), client::Error> {
        let Some(guard) = self.pool.guard() else {
            self.client().batch_execute(&format!("BEGIN {mode}"))?;
            self.in_transaction = true;
            return Ok(());
        };
        let pool = self.pool;
        let client = self.client();
        let guarded = client
            .value_of(&format!("BEGIN {mode}; {guard}"))
            .and_then(|answer| pool.guarded(answer));
        if guarded.is_err() && !client.is_closed() && client.batch_execute("ROLLBACK").is_err() {
            self.is_let_go = true;
        }
        guarded?;
        self.in_transaction = true;
        Ok(())
    }

    /// Opens a read-write transaction as [`Connection::begin`] does, and runs `statements`
    /// in it, sent with the `BEGIN` (and, while the schema is only remembered, its guard):
    /// one round trip for them all. The rows of each, in order. Whatever fails, the
    /// transaction is rolled back before the error is returned, so that the caller may check
    /// the schema on this connection ([`Pool::rechecked`]) and try again.
    pub fn begin_with(&mut self, statements: &[Piped<'_>]) -> Result<Vec<Vec<Row>>, client::Error> {
        let guard = self.pool.guard().map(|_| remembered::GUARD_AS_TEXT);
        let mut piped: Vec<Piped<'_>> = Vec::with_capacity(statements.len() + 2);
        piped.push(("BEGIN", &[]));
        piped.extend(guard.map(|guard| (guard, &[] as &[_])));
        piped.extend_from_slice(statements);
        let pool = self.pool;
        let client = self.client();
        let answered = client.pipelined(&piped).and_then(|mut answers| {
            answers.remove(0);
            if guard.is_some() {
                let rows = answers.remove(0);
                let answer = rows.first().and_then(|row| row.get::<_, Option<String>>(0));
                pool.guarded(answer)?;
            }
            Ok(answers)
        });
        // After a refused BEGIN, the ROLLBACK only draws the server's warning.
        if answered.is_err() && !client.is_closed() && client.batch_execute("ROLLBACK").is_err() {
            self.is_let_go = true;
        }
        let answers = answered?;
        self.in_transaction = true;
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
        client::Error::SchemaUnchecked | client::Error::Rows { .. } => return false,
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

/// Whether the server, refusing a new connection with `code`, says something that holds
/// until someone changes the server: the database does not exist or was renamed (`3D000`),
/// the role does not exist or may not log in (`28000`), its password is wrong (`28P01`), it
/// may not connect to this database (`42501`). Not so the server starting, stopping or full
/// (`57P03`, `57P01`, `53300`): those pass by themselves.
fn is_lasting_refusal(code: &SqlState) -> bool {
    [
        SqlState::INVALID_CATALOG_NAME,
        SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
        SqlState::INVALID_PASSWORD,
        SqlState::INSUFFICIENT_PRIVILEGE,
    ]
    .contains(code)
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

/// What `BATON_PG_TIMINGS=1` prints on stderr: how long a connection's start and the
/// schema's check took, to see where a command's fixed cost goes (`bench/cli_postgres.py`).
pub mod timings {
    use std::sync::OnceLock;
    use std::time::Instant;

    fn wanted() -> bool {
        static WANTED: OnceLock<bool> = OnceLock::new();
        *WANTED.get_or_init(|| std::env::var_os("BATON_PG_TIMINGS").is_some_and(|v| v == "1"))
    }

    /// Now, when timings are wanted.
    pub fn now() -> Option<Instant> {
        wanted().then(Instant::now)
    }

    /// Prints how long `what` took since `started`.
    pub fn took(what: &str, started: Option<Instant>) {
        if let Some(started) = started {
            eprintln!(
                "baton: postgres: {what}: {:.3} ms",
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}
