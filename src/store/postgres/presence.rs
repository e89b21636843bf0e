//! Presence on PostgreSQL: a live session or a listener is a row of `presence`, live while
//! the session-level advisory lock on its id is held. One connection per process holds them
//! all, kept by a thread of its own: when the process dies, or its connection is cut, the
//! server lets go of every lock at once, as the kernel lets go of a dead process's lock
//! files. The thread connects again by itself and takes back what it held (putting back a
//! row a look removed in between).
//!
//! A look ([`live`]) asks `pg_locks` which rows are held, and removes the rows nobody holds.
//!
//! Duties (one alert sender, one wake supervisor per agent) are session advisory locks of
//! the same connection, and a mark (what is told once, whoever looks first) a row of
//! `marks`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::mpsc as reply;
use std::time::Duration;

use tokio::sync::mpsc;

use super::address::Address;
use super::client::{self, Statements};
use super::pool::{Pool, describe};
use super::{DUTY_LOCKS, PgStore, lock_key, started_once};
use crate::store::presence::Presence;
use crate::store::{self as store, StoreError};

impl PgStore {
    /// Announces a live session of `agent` in `project` through `client`, or (with `kind`
    /// `listener`) a listener of `agent`: live until the presence is dropped or the process
    /// ends.
    pub(super) fn announce(
        &self,
        kind: &'static str,
        project: &str,
        agent: &str,
        client: &str,
    ) -> Result<Presence, StoreError> {
        self.keeper()?.announce(
            self.pool(),
            Announcement {
                kind,
                project: project.to_string(),
                agent: agent.to_string(),
                client: client.to_string(),
            },
        )
    }

    /// The clients of the live presences of `kind` of `agent` in `project`.
    pub(super) fn live(
        &self,
        kind: &str,
        agent: &str,
        project: &str,
    ) -> Result<Vec<String>, StoreError> {
        self.run(|client| live(client, kind, agent, project))
    }

    /// A duty is a session advisory lock of this process's keeper connection: a process
    /// that dies lets go of it with its connection.
    pub(super) fn hold(&self, duty: &store::Duty) -> Result<Option<store::Held>, StoreError> {
        self.keeper()?.take_duty(self.pool(), duty_key(duty))
    }

    /// Whether any process holds `duty`.
    pub(super) fn is_duty_held(&self, duty: &store::Duty) -> bool {
        self.run(|client| is_duty_held(client, duty_key(duty)))
            .unwrap_or(false)
    }

    /// Marks `mark`: true for the first to do it.
    pub(super) fn mark(&self, mark: &str) -> Result<bool, StoreError> {
        let inserted = self.run_writing(|client| {
            client.execute(
                "INSERT INTO marks (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                &[&mark],
            )
        })?;
        Ok(inserted == 1)
    }

    /// The presence keeper of this process, started on first use.
    fn keeper(&self) -> Result<Arc<Keeper>, StoreError> {
        started_once(&self.shared.keeper, || {
            // The schema is checked (and made) by the pool's first connection, or the one
            // remembered confirmed: the keeper writes outside transactions.
            self.run_writing(|_| Ok(()))?;
            Keeper::start(self.pool().address.clone(), self.pool().tls()?)
        })
    }
}

/// The advisory lock (two keys) that holds `duty`.
fn duty_key(duty: &store::Duty) -> (i32, i32) {
    match duty {
        store::Duty::AlertSender => (DUTY_LOCKS, lock_key("alert-sender")),
        store::Duty::Wake(agent) => (DUTY_LOCKS, lock_key(&format!("wake/{agent}"))),
    }
}

/// What a presence is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// `session` or `listener`.
    pub kind: &'static str,
    /// Empty for a listener, which is of no project.
    pub project: String,
    pub agent: String,
    /// The client of a session; empty for a listener.
    pub client: String,
}

enum Command {
    Hold(Announcement, reply::Sender<Result<i64, String>>),
    Release(i64),
    /// Take up the duty of this advisory lock (two keys) if nobody holds it.
    TakeDuty((i32, i32), reply::Sender<Result<bool, String>>),
    LetDutyGo((i32, i32)),
}

/// The thread that holds this process's presence locks.
#[derive(Debug)]
pub struct Keeper {
    commands: mpsc::UnboundedSender<Command>,
}

/// How long the keeper waits before connecting again after losing its connection.
const RECONNECT_AFTER: Duration = Duration::from_millis(250);

impl Keeper {
    /// Starts the keeper of the store at `address`.
    pub fn start(address: Address, tls: super::tls::Rustls) -> Result<Keeper, StoreError> {
        let (commands, received) = mpsc::unbounded_channel();
        let shown = address.shown().to_string();
        super::run_on_a_thread(
            "baton-presence",
            "the presence thread",
            &shown,
            keep(address, tls, received),
        )?;
        Ok(Keeper { commands })
    }

    /// Takes up the duty whose advisory lock is `key` if no process holds it, until the
    /// returned value is dropped; `None` when another holds it.
    pub fn take_duty(
        &self,
        pool: &Pool,
        key: (i32, i32),
    ) -> Result<Option<crate::store::Held>, StoreError> {
        let (answer, answered) = reply::channel();
        let gone = || pool.unreachable_because("the presence thread stopped".to_string());
        self.commands
            .send(Command::TakeDuty(key, answer))
            .map_err(|_| gone())?;
        let taken = answered
            .recv()
            .map_err(|_| gone())?
            .map_err(|detail| pool.unreachable_because(detail))?;
        Ok(taken.then(|| {
            crate::store::Held::new(Duty {
                key,
                commands: self.commands.clone(),
            })
        }))
    }

    /// Announces `what` until the returned value is dropped; fails when the store cannot be
    /// reached now.
    pub fn announce(&self, pool: &Pool, what: Announcement) -> Result<Presence, StoreError> {
        let (answer, answered) = reply::channel();
        let gone = || pool.unreachable_because("the presence thread stopped".to_string());
        self.commands
            .send(Command::Hold(what, answer))
            .map_err(|_| gone())?;
        let id = answered
            .recv()
            .map_err(|_| gone())?
            .map_err(|detail| pool.unreachable_because(detail))?;
        Ok(Presence::new(Held {
            id,
            commands: self.commands.clone(),
        }))
    }
}

/// A presence held by the keeper; dropping it lets go (without waiting: it may be dropped
/// on an async runtime's thread).
#[derive(Debug)]
struct Held {
    id: i64,
    commands: mpsc::UnboundedSender<Command>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Release(self.id));
    }
}

/// A duty held by the keeper; dropping it lets the duty go.
#[derive(Debug)]
struct Duty {
    key: (i32, i32),
    commands: mpsc::UnboundedSender<Command>,
}

impl Drop for Duty {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::LetDutyGo(self.key));
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Hold(what, _) => write!(formatter, "Hold({what:?})"),
            Command::Release(id) => write!(formatter, "Release({id})"),
            Command::TakeDuty(key, _) => write!(formatter, "TakeDuty({key:?})"),
            Command::LetDutyGo(key) => write!(formatter, "LetDutyGo({key:?})"),
        }
    }
}

/// The keeper's work: connect, take back what is held, then hold and let go as told, until
/// every sender is gone.
async fn keep(
    address: Address,
    tls: super::tls::Rustls,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let mut held: BTreeMap<i64, Announcement> = BTreeMap::new();
    let mut duties: BTreeSet<(i32, i32)> = BTreeSet::new();
    loop {
        let (client, connection) = match client::connect(&address, tls.clone()).await {
            Ok(connected) => connected,
            Err(error) => {
                // Out of reach: a new announcement fails at once; those held wait to be
                // taken back.
                let detail = describe(&error);
                let waited = tokio::time::timeout(RECONNECT_AFTER * 4, commands.recv()).await;
                match waited {
                    Ok(None) => return,
                    Ok(Some(Command::Hold(_, answer))) => {
                        let _ = answer.send(Err(detail));
                    }
                    Ok(Some(Command::Release(id))) => {
                        held.remove(&id);
                    }
                    Ok(Some(Command::TakeDuty(_, answer))) => {
                        let _ = answer.send(Err(detail));
                    }
                    Ok(Some(Command::LetDutyGo(key))) => {
                        duties.remove(&key);
                    }
                    Err(_) => {}
                }
                continue;
            }
        };
        let mut connection = tokio::spawn(connection);
        let mut taken_back = true;
        for (id, what) in &held {
            if hold(&client, *id, what).await.is_err() {
                taken_back = false;
                break;
            }
        }
        // A duty another process took up while the connection was down is its now.
        let mut kept = BTreeSet::new();
        for key in &duties {
            match try_duty(&client, *key).await {
                Ok(true) => {
                    kept.insert(*key);
                }
                Ok(false) => {}
                Err(_) => taken_back = false,
            }
        }
        duties = kept;
        while taken_back {
            let command = tokio::select! {
                _ = &mut connection => break,
                command = commands.recv() => command,
            };
            let Some(command) = command else {
                return;
            };
            taken_back = obey(&client, &mut held, &mut duties, command).await;
        }
        connection.abort();
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}

/// Carries out `command` on `client`; false when the connection is gone, or stopped
/// answering (each statement is bounded: a caller waiting for its answer is told in time,
/// and the keeper connects again).
async fn obey(
    client: &tokio_postgres::Client,
    held: &mut BTreeMap<i64, Announcement>,
    duties: &mut BTreeSet<(i32, i32)>,
    command: Command,
) -> bool {
    let mut is_answering = true;
    let mut noted = |error: &client::Error| {
        is_answering &= !matches!(error, client::Error::NoAnswer { .. });
        describe(error)
    };
    match command {
        // A session's advisory lock is taken again by the session that holds it: a duty this
        // process holds already is refused here, as a second lock file is on the files.
        Command::TakeDuty(key, answer) if duties.contains(&key) => {
            let _ = answer.send(Ok(false));
        }
        Command::TakeDuty(key, answer) => match try_duty(client, key).await {
            Ok(taken) => {
                if taken {
                    duties.insert(key);
                }
                let _ = answer.send(Ok(taken));
            }
            Err(error) => {
                let _ = answer.send(Err(noted(&error)));
            }
        },
        Command::LetDutyGo(key) => {
            duties.remove(&key);
            let unlocked = client::answered(
                client.execute("SELECT pg_advisory_unlock($1, $2)", &[&key.0, &key.1]),
            )
            .await;
            if let Err(error) = unlocked {
                noted(&error);
            }
        }
        Command::Hold(what, answer) => {
            let made = async {
                let row = client::answered(client.query_one("SELECT nextval('presence_ids')", &[]))
                    .await?;
                let id: i64 = row.get(0);
                hold(client, id, &what).await?;
                Ok::<i64, client::Error>(id)
            }
            .await;
            match made {
                Ok(id) => {
                    held.insert(id, what);
                    let _ = answer.send(Ok(id));
                }
                Err(error) => {
                    let _ = answer.send(Err(noted(&error)));
                }
            }
        }
        Command::Release(id) => {
            held.remove(&id);
            // The row first: a look never finds it unheld, and so never removes it as a
            // leftover while it is being let go.
            let released = async {
                client::answered(client.execute("DELETE FROM presence WHERE id = $1", &[&id]))
                    .await?;
                client::answered(client.execute("SELECT pg_advisory_unlock($1)", &[&id])).await
            }
            .await;
            if let Err(error) = released {
                noted(&error);
            }
        }
    }
    is_answering && !client.is_closed()
}

/// Takes the duty's lock if it is free.
async fn try_duty(client: &tokio_postgres::Client, key: (i32, i32)) -> Result<bool, client::Error> {
    let row = client::answered(
        client.query_one("SELECT pg_try_advisory_lock($1, $2)", &[&key.0, &key.1]),
    )
    .await?;
    Ok(row.get(0))
}

/// Whether the advisory lock `key` (two keys) is held by any process now.
pub fn is_duty_held(client: &mut impl Statements, key: (i32, i32)) -> Result<bool, client::Error> {
    // The keys show in `pg_locks` as unsigned object ids.
    let (class, object) = (i64::from(key.0 as u32), i64::from(key.1 as u32));
    Ok(client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_locks \
             WHERE locktype = 'advisory' AND granted AND objsubid = 2 \
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
               AND classid::text::bigint = $1 AND objid::text::bigint = $2)",
            &[&class, &object],
        )?
        .get(0))
}

/// Takes the lock of presence `id`, then writes its row (again, if a look removed it while
/// it was not held): a look never finds the row before it is held.
async fn hold(
    client: &tokio_postgres::Client,
    id: i64,
    what: &Announcement,
) -> Result<(), client::Error> {
    client::answered(client.execute("SELECT pg_advisory_lock($1)", &[&id])).await?;
    client::answered(client.execute(
        "INSERT INTO presence (id, kind, project, agent, client) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (id) DO NOTHING",
        &[&id, &what.kind, &what.project, &what.agent, &what.client],
    ))
    .await?;
    Ok(())
}

/// Whether the advisory lock on the id of presence row `p` is held (by anyone: only its
/// keeper takes it). A bigint key shows in `pg_locks` as its high and low halves.
const IS_HELD: &str = "EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::text::bigint = (p.id >> 32) AND l.objid::text::bigint = (p.id & 4294967295)
)";

/// The clients of the live presences of `kind`, `agent` and `project` (one entry each,
/// sorted); the rows nobody holds are removed on the way.
pub fn live(
    client: &mut impl Statements,
    kind: &str,
    agent: &str,
    project: &str,
) -> Result<Vec<String>, client::Error> {
    let rows = client.query(
        &format!(
            "SELECT p.id, p.client, {IS_HELD} FROM presence p \
             WHERE p.kind = $1 AND p.agent = $2 AND p.project = $3"
        ),
        &[&kind, &agent, &project],
    )?;
    let mut clients = Vec::new();
    let mut dead = Vec::new();
    for row in rows {
        let id: i64 = row.get(0);
        match row.get::<_, bool>(2) {
            true => clients.push(row.get::<_, String>(1)),
            false => dead.push(id),
        }
    }
    if !dead.is_empty() {
        // A keeper that takes one back puts its row back too.
        // (Held again since, it stays.)
        client.execute(
            &format!("DELETE FROM presence p WHERE p.id = ANY($1) AND NOT {IS_HELD}"),
            &[&dead],
        )?;
    }
    clients.sort();
    Ok(clients)
}
