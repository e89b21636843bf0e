//! A connection to PostgreSQL for a thread that waits for each answer, every wait bounded:
//! the connection's start (TCP, TLS, the startup and the login) and each statement. A
//! server that accepts TCP and then says nothing (a hung server, a proxy whose backend is
//! gone, a "black hole") makes the call fail as unreachable rather than wait for ever.
//!
//! The `postgres` crate's blocking client is the same client library on a runtime of its
//! own, but it offers no way to bound a statement, and bounds only the TCP connect of the
//! start: these few lines do what baton used of it, each wait under `tokio::time::timeout`.
//! A statement that is not answered in time cuts the connection (the pool then lets it
//! go), since its answer may still come and would be read as the next statement's.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use postgres::Row;
use postgres::error::SqlState;
use postgres::types::ToSql;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::{Socket, Statement};

use super::address::Address;
use super::tls::{Encrypted, Rustls};
use crate::metrics::{RoundTrip, StoreKind};

/// How long a statement may go unanswered before its connection counts as lost. Baton's
/// statements read or write a project's rows by key and take milliseconds; a database
/// under heavy load (vacuum, I/O saturated, a checkpoint) may take seconds. Half a minute
/// leaves a slow but alive database room while a request or a command that the server
/// stopped answering still fails in time to be told. Statements that wait on purpose (for
/// a lock, a migration) are given their own bound with [`Client::answered_within`].
pub const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The most statements one connection keeps prepared. Baton's statements are a few dozen
/// fixed texts; the bound only keeps a text made anew each time from growing the map (and
/// the server's memory) without end: past it, the kept ones are let go and prepared again.
const MOST_PREPARED: usize = 256;

/// A connection's messages, as the client library gives them when it connects with TLS
/// available.
pub type Connection = tokio_postgres::Connection<Socket, Encrypted<Socket>>;

/// What a call on the database met: the server's or the client library's error, or no
/// answer in time.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
    /// Nothing came back within `within` (the connection is given up).
    #[error("no answer to {to} within {}s", .within.as_secs_f64())]
    NoAnswer { to: &'static str, within: Duration },
    /// The runtime the connection runs on could not be made.
    #[error("cannot start a runtime for the connection: {0}")]
    Runtime(std::io::Error),
    /// The schema remembered from an earlier command is not the database's now: it is to
    /// be checked ([`super::pool::Pool::rechecked`]).
    #[error("the database's schema is not the one remembered")]
    SchemaUnchecked,
    /// A statement expected to answer at most one row, or exactly one, answered `rows`.
    #[error("a statement answered {rows} rows where one was expected")]
    Rows { rows: usize },
}

impl Error {
    /// The server's code for the error, when it refused the statement.
    pub fn code(&self) -> Option<&postgres::error::SqlState> {
        match self {
            Error::Postgres(error) => error.code(),
            Error::NoAnswer { .. }
            | Error::Runtime(_)
            | Error::SchemaUnchecked
            | Error::Rows { .. } => None,
        }
    }
}

/// Connects to `address` on the current runtime, the whole start bounded by
/// [`Address::start_within`]: the client library's own `connect_timeout` covers only the
/// TCP connect, and a server that accepts it and never answers the startup held the caller
/// for ever.
pub async fn connect(
    address: &Address,
    tls: Rustls,
) -> Result<(tokio_postgres::Client, Connection), Error> {
    let within = address.start_within();
    match tokio::time::timeout(within, address.config.connect(tls)).await {
        Ok(connected) => Ok(connected?),
        Err(_) => Err(Error::NoAnswer {
            to: "the connection's start",
            within,
        }),
    }
}

/// Waits for `future`, a statement's on a connection of an async task (the listening one,
/// the presence keeper's), for at most [`ANSWER_WITHIN`]. One not answered by then leaves
/// the connection to be given up by its caller.
pub async fn answered<T>(
    future: impl Future<Output = Result<T, postgres::Error>>,
) -> Result<T, Error> {
    let _trip = RoundTrip::start(StoreKind::Postgres);
    match tokio::time::timeout(ANSWER_WITHIN, future).await {
        Ok(answered) => Ok(answered?),
        Err(_) => Err(Error::NoAnswer {
            to: "a statement",
            within: ANSWER_WITHIN,
        }),
    }
}

/// A connection for blocking calls: the client library's client on a runtime of its own,
/// which runs the connection's messages while a call waits.
pub struct Client {
    runtime: Runtime,
    /// Taken only when the connection is dropped, to say goodbye.
    client: Option<tokio_postgres::Client>,
    connection: JoinHandle<()>,
    /// How long the next statement may take.
    within: Duration,
    /// A statement went unanswered: the connection is given up.
    is_cut: bool,
    /// The statements prepared on this connection, by their text: each is parsed by the
    /// server once per connection, and each later use is one round trip rather than two
    /// (prepare, then run). They live and die with the connection (a new one, after a
    /// server's restart, prepares its own).
    prepared: HashMap<String, Statement>,
    /// The texts of the statements prepared since [`Client::newly_prepared`] last took them.
    newly_prepared: Vec<String>,
    /// Whether statements are sent unprepared, each in one round trip with its parameters'
    /// types (a command's, which uses most of them once: [`super::unprepared`]), rather
    /// than prepared and kept.
    unprepared: bool,
}

impl Client {
    /// A new connection to `address`, its start bounded as [`connect`] says.
    pub fn connect(address: &Address, tls: Rustls) -> Result<Client, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let (client, connection) = runtime.block_on(connect(address, tls))?;
        // A runtime of one thread runs this task only while a call waits (in `block_on`),
        // which is when its messages matter.
        let connection = runtime.spawn(async move {
            let _ = connection.await;
        });
        Ok(Client {
            runtime,
            client: Some(client),
            connection,
            within: ANSWER_WITHIN,
            is_cut: false,
            prepared: HashMap::new(),
            newly_prepared: Vec::new(),
            unprepared: false,
        })
    }

    /// Makes this connection send its statements unprepared (when `unprepared`), each one
    /// round trip with its parameters' types ([`super::unprepared`]): for a command, which
    /// prepares nothing it would use again.
    pub fn sends_unprepared(&mut self, unprepared: bool) {
        self.unprepared = unprepared;
    }

    /// `params` with their types, when this connection sends statements unprepared and
    /// each parameter's type is known.
    fn typed<'a>(
        &self,
        params: &[&'a (dyn ToSql + Sync)],
    ) -> Option<Vec<(&'a (dyn ToSql + Sync), postgres::types::Type)>> {
        self.unprepared
            .then(|| super::unprepared::typed(params))
            .flatten()
    }

    /// Whether the connection is gone: closed by the server, or given up here.
    pub fn is_closed(&self) -> bool {
        self.is_cut
            || self
                .client
                .as_ref()
                .is_none_or(tokio_postgres::Client::is_closed)
    }

    /// Whether a statement of this connection went unanswered (and it was given up): the
    /// server, or the way to it, may have stopped answering every connection.
    pub fn went_unanswered(&self) -> bool {
        self.is_cut
    }

    /// Lets the connection go without a word to the server, which may not be listening.
    pub fn abandon(mut self) {
        self.is_cut = true;
    }

    /// Runs `work` with each statement given `within` to answer rather than
    /// [`ANSWER_WITHIN`]: a statement that waits on purpose (for a lock, up to the lock's
    /// timeout) is given that wait and more.
    pub fn answered_within<T>(
        &mut self,
        within: Duration,
        work: impl FnOnce(&mut Client) -> T,
    ) -> T {
        let before = std::mem::replace(&mut self.within, within);
        let done = work(self);
        self.within = before;
        done
    }

    /// Begins a transaction (read-write, read committed), rolled back unless committed.
    pub fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        self.batch_execute("BEGIN")?;
        Ok(Transaction {
            client: self,
            is_over: false,
        })
    }

    /// Begins a read-only transaction that sees one moment's state throughout.
    pub fn read_transaction(&mut self) -> Result<Transaction<'_>, Error> {
        self.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        Ok(Transaction {
            client: self,
            is_over: false,
        })
    }

    /// Begins a read-only transaction as [`Client::read_transaction`] does, and runs `then`
    /// (one statement, no parameters) in the same round trip: its first value. On an error
    /// the transaction is rolled back.
    pub fn read_transaction_and(
        &mut self,
        then: &str,
    ) -> Result<(Transaction<'_>, Option<String>), Error> {
        let answered = self.value_of(&format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; {then}"
        ));
        let transaction = Transaction {
            client: self,
            is_over: false,
        };
        // Dropped on an error: rolled back.
        let answer = answered?;
        Ok((transaction, answer))
    }

    fn live(&self) -> &tokio_postgres::Client {
        // Only `drop` takes it.
        self.client
            .as_ref()
            .expect("a connection in use has its client")
    }

    /// Waits for `future`, a statement's, for at most the bound in force; one not answered
    /// by then cuts the connection.
    fn wait<T>(
        runtime: &Runtime,
        within: Duration,
        is_cut: bool,
        future: impl Future<Output = Result<T, postgres::Error>>,
    ) -> Result<T, Error> {
        if is_cut {
            return Err(Error::NoAnswer {
                to: "an earlier statement",
                within,
            });
        }
        // Every statement baton sends waits here: one round trip counted (a statement's
        // first use on a connection prepares it, in a wait of its own; a pipeline's
        // statements are one wait).
        let _trip = RoundTrip::start(StoreKind::Postgres);
        let started = super::pool::timings::now();
        // The timer is made inside the runtime, which drives it.
        let answered = runtime.block_on(async { tokio::time::timeout(within, future).await });
        super::pool::timings::took("round trip", started);
        match answered {
            Ok(answered) => Ok(answered?),
            Err(_) => Err(Error::NoAnswer {
                to: "a statement",
                within,
            }),
        }
    }

    /// `result` as it stands, the connection given up when it was not answered.
    fn noted<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if matches!(result, Err(Error::NoAnswer { .. })) && !self.is_cut {
            self.is_cut = true;
            self.connection.abort();
        }
        result
    }

    /// How many statements this connection keeps prepared.
    #[cfg(all(test, unix))]
    pub fn prepared_count(&self) -> usize {
        self.prepared.len()
    }

    /// The first column of the first row that `statement` (no parameters) answers, as
    /// text: one round trip, nothing prepared.
    pub fn value_of(&mut self, statement: &str) -> Result<Option<String>, Error> {
        let answered = Client::wait(
            &self.runtime,
            self.within,
            self.is_cut,
            self.live().simple_query(statement),
        );
        let messages = self.noted(answered)?;
        Ok(messages
            .iter()
            .find_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => {
                    Some(row.get(0).map(str::to_string))
                }
                _ => None,
            })
            .flatten())
    }

    /// Runs `statements` (each its text and parameters) in order, sent together and answered
    /// together: one round trip for them all rather than one each, their statements
    /// prepared first (once per connection, as [`Client::statement`] keeps them). The rows
    /// of each, in order; or the first error (in a transaction, the statements after a
    /// refused one are refused too, and the transaction is then only good to roll back).
    pub fn pipelined(&mut self, statements: &[Piped<'_>]) -> Result<Vec<Vec<Row>>, Error> {
        let typed: Option<Vec<_>> = statements
            .iter()
            .map(|(_, params)| self.typed(params))
            .collect();
        if let Some(typed) = typed {
            let client = self.live();
            let queries: Vec<_> = statements
                .iter()
                .zip(&typed)
                .map(|((text, _), params)| Box::pin(client.query_typed(text, params)))
                .collect();
            let answered = Client::wait(&self.runtime, self.within, self.is_cut, in_order(queries));
            return self.noted(answered);
        }
        let texts: Vec<&str> = statements.iter().map(|(text, _)| *text).collect();
        self.prepare_all(&texts)?;
        let prepared: Vec<Statement> = texts
            .iter()
            .map(|text| self.prepared[*text].clone())
            .collect();
        let client = self.live();
        let queries: Vec<_> = prepared
            .iter()
            .zip(statements)
            .map(|(statement, (_, params))| Box::pin(client.query(statement, params)))
            .collect();
        let answered = Client::wait(&self.runtime, self.within, self.is_cut, in_order(queries));
        if let Err(error) = &answered
            && error.code().is_some_and(is_stale_statement)
        {
            self.prepared.clear();
        }
        self.noted(answered)
    }

    /// Prepares those of `statements` this connection has not prepared yet, all in one
    /// round trip, and keeps them ([`Client::prepared`]).
    pub fn prepare_all(&mut self, statements: &[&str]) -> Result<(), Error> {
        let mut missing: Vec<&str> = statements.to_vec();
        missing.sort_unstable();
        missing.dedup();
        if self.prepared.len() + missing.len() > MOST_PREPARED {
            // Let go of the kept ones, and prepare all of these again (none is left out
            // that the caller counts on finding kept).
            self.prepared.clear();
        }
        missing.retain(|text| !self.prepared.contains_key(*text));
        if missing.is_empty() {
            return Ok(());
        }
        let client = self.live();
        let preparing: Vec<_> = missing
            .iter()
            .map(|text| Box::pin(client.prepare(text)))
            .collect();
        let answered = Client::wait(&self.runtime, self.within, self.is_cut, in_order(preparing));
        let prepared = self.noted(answered)?;
        for (text, statement) in missing.into_iter().zip(prepared) {
            self.keep(text, statement);
        }
        Ok(())
    }

    /// Keeps `statement`, prepared from `text`, and notes it among [`Client::newly_prepared`].
    fn keep(&mut self, text: &str, statement: Statement) {
        self.prepared.insert(text.to_string(), statement);
        self.newly_prepared.push(text.to_string());
    }

    /// The texts of the statements this connection prepared since it was last asked.
    pub fn newly_prepared(&mut self) -> Vec<String> {
        std::mem::take(&mut self.newly_prepared)
    }

    /// `statement`, prepared once on this connection and kept ([`Client::prepared`]).
    fn statement(&mut self, statement: &str) -> Result<Statement, Error> {
        self.prepare_all(&[statement])?;
        Ok(self.prepared[statement].clone())
    }

    /// What a prepared `statement` answered. One the server no longer knows as it was
    /// prepared (its tables changed under it, or a pooler between let it go) is forgotten,
    /// to be prepared again by the next call.
    fn answered<T>(&mut self, statement: &str, answered: Result<T, Error>) -> Result<T, Error> {
        if let Err(error) = &answered
            && error.code().is_some_and(is_stale_statement)
        {
            self.prepared.remove(statement);
        }
        self.noted(answered)
    }
}

/// A statement of a pipeline ([`Client::pipelined`]): its text and its parameters.
pub type Piped<'a> = (&'a str, &'a [&'a (dyn ToSql + Sync)]);

/// Waits for every one of `futures`, polled together (so each sends its statement before any
/// answer is awaited), and gives their answers in order, or the first error in order.
async fn in_order<T, F>(futures: Vec<std::pin::Pin<Box<F>>>) -> Result<Vec<T>, postgres::Error>
where
    F: Future<Output = Result<T, postgres::Error>>,
{
    let mut futures: Vec<Option<std::pin::Pin<Box<F>>>> = futures.into_iter().map(Some).collect();
    let mut answers: Vec<Option<Result<T, postgres::Error>>> =
        futures.iter().map(|_| None).collect();
    std::future::poll_fn(|context| {
        let mut waiting = false;
        for (slot, answer) in futures.iter_mut().zip(answers.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(context) {
                    std::task::Poll::Ready(answered) => {
                        *answer = Some(answered);
                        *slot = None;
                    }
                    std::task::Poll::Pending => waiting = true,
                }
            }
        }
        match waiting {
            true => std::task::Poll::Pending,
            false => std::task::Poll::Ready(()),
        }
    })
    .await;
    answers
        .into_iter()
        .map(|answer| answer.expect("every statement of a pipeline answered"))
        .collect()
}

/// Whether the server refused a prepared statement for being prepared: its result's type
/// changed since (`0A000`, "cached plan must not change result type"), or it is not known on
/// this session (`26000`).
fn is_stale_statement(code: &SqlState) -> bool {
    *code == SqlState::FEATURE_NOT_SUPPORTED || *code == SqlState::INVALID_SQL_STATEMENT_NAME
}

impl Drop for Client {
    fn drop(&mut self) {
        // The client's end gone, the connection says goodbye to the server (rather than
        // leave it to log an unexpected end): given a moment to, unless the server stopped
        // answering, or this runs on a runtime's thread, where no runtime may be waited on.
        drop(self.client.take());
        if !self.is_cut && tokio::runtime::Handle::try_current().is_err() {
            let connection = &mut self.connection;
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(GOODBYE_WITHIN, connection).await });
        }
        self.connection.abort();
    }
}

/// How long a connection let go is given to tell the server it is leaving.
const GOODBYE_WITHIN: Duration = Duration::from_secs(1);

/// The statements baton makes, on a connection or in a transaction: each sent prepared and
/// kept, or unprepared with its parameters' types ([`Client::sends_unprepared`]).
pub trait Statements {
    fn query(&mut self, statement: &str, params: &[&(dyn ToSql + Sync)])
    -> Result<Vec<Row>, Error>;

    fn execute(&mut self, statement: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error>;

    /// Runs `statements` (separated by semicolons, no parameters).
    fn batch_execute(&mut self, statements: &str) -> Result<(), Error>;

    /// The one row `statement` answers; more or none is an error.
    fn query_one(&mut self, statement: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, Error> {
        match self.query_opt(statement, params)? {
            Some(row) => Ok(row),
            None => Err(Error::Rows { rows: 0 }),
        }
    }

    /// The row `statement` answers, if any; more than one is an error.
    fn query_opt(
        &mut self,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        let mut rows = self.query(statement, params)?;
        match rows.len() {
            0 | 1 => Ok(rows.pop()),
            rows => Err(Error::Rows { rows }),
        }
    }
}

impl Statements for Client {
    fn query(
        &mut self,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        if let Some(typed) = self.typed(params) {
            let answered = Client::wait(
                &self.runtime,
                self.within,
                self.is_cut,
                self.live().query_typed(statement, &typed),
            );
            return self.noted(answered);
        }
        let prepared = self.statement(statement)?;
        let answered = Client::wait(
            &self.runtime,
            self.within,
            self.is_cut,
            self.live().query(&prepared, params),
        );
        self.answered(statement, answered)
    }

    fn execute(&mut self, statement: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        if let Some(typed) = self.typed(params) {
            let answered = Client::wait(
                &self.runtime,
                self.within,
                self.is_cut,
                self.live().execute_typed(statement, &typed),
            );
            return self.noted(answered);
        }
        let prepared = self.statement(statement)?;
        let answered = Client::wait(
            &self.runtime,
            self.within,
            self.is_cut,
            self.live().execute(&prepared, params),
        );
        self.answered(statement, answered)
    }

    fn batch_execute(&mut self, statements: &str) -> Result<(), Error> {
        let answered = Client::wait(
            &self.runtime,
            self.within,
            self.is_cut,
            self.live().batch_execute(statements),
        );
        self.noted(answered)
    }
}

/// A transaction on a [`Client`]: rolled back when dropped before [`Transaction::commit`].
pub struct Transaction<'a> {
    client: &'a mut Client,
    is_over: bool,
}

impl Transaction<'_> {
    pub fn commit(mut self) -> Result<(), Error> {
        // Whatever COMMIT answers, the transaction is over (a failed COMMIT rolls back).
        self.is_over = true;
        self.client.batch_execute("COMMIT")
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.is_over && !self.client.is_closed() {
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

impl Statements for Transaction<'_> {
    fn query(
        &mut self,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.client.query(statement, params)
    }

    fn execute(&mut self, statement: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        self.client.execute(statement, params)
    }

    fn batch_execute(&mut self, statements: &str) -> Result<(), Error> {
        self.client.batch_execute(statements)
    }
}
