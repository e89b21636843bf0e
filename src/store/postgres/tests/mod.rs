//! The PostgreSQL store against a real cluster ([`super::cluster`]): each test on a database
//! of its own.

use std::collections::BTreeSet;
use std::time::Duration;

use super::address::Address;
use super::cluster;
use super::*;
use crate::board::mail::{Draft, MessageType};
use crate::board::task::Status;
use crate::store::boards::Boards as _;
use crate::store::conformance::{now, record};
use crate::store::document::{Document, Documents, Edit};
use crate::store::{at_once, change_board, change_mail};
use postgres::Client;

mod copy;
mod pace;
mod remembered;
mod sharing;

/// The `pg_stat_activity` condition naming the clients' connections (not the server's own
/// processes, such as autovacuum's): those a server restart cuts.
const CLIENTS: &str = "backend_type = 'client backend'";

pub(crate) struct Fixture {
    pub(crate) url: String,
    pub(crate) home: tempfile::TempDir,
}

impl Fixture {
    /// A fresh database (on `BATON_TEST_STORE`'s cluster when it names one).
    pub(crate) fn new() -> Fixture {
        let given = std::env::var("BATON_TEST_STORE")
            .ok()
            .filter(|value| address::is_postgres_url(value));
        Fixture {
            url: cluster::fresh_database(given.as_deref()),
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// A store on the database: each one its own pool, as another hub's would be.
    pub(crate) fn store(&self) -> PgStore {
        self.store_at(&self.url)
    }

    fn store_at(&self, url: &str) -> PgStore {
        PgStore::new(
            Address::parse(url).unwrap(),
            Home::new(self.home.path().to_path_buf()),
            LockPolicy::silent(Duration::from_secs(30)),
        )
    }

    /// A client of the database as a baton of schema `version` left it: its migrations run
    /// by hand, and its version recorded.
    pub(super) fn client_at_schema(&self, version: i64) -> Client {
        let mut client = self.client();
        for migration in &schema::MIGRATIONS[..version as usize] {
            client.batch_execute(migration).unwrap();
        }
        client
            .execute(
                "INSERT INTO baton_schema (version) VALUES ($1)",
                &[&version],
            )
            .unwrap();
        client
    }

    fn client(&self) -> Client {
        Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    /// The name of the fixture's database, as its URL has it.
    fn database(&self) -> &str {
        let path = self.url.split('/').next_back().unwrap();
        path.split('?').next().unwrap()
    }

    /// Ends the server's processes for the fixture's database that `which` (a condition on
    /// `pg_stat_activity`) names, as a server restart or an administrator does; how many.
    fn terminate(&self, which: &str) -> u64 {
        let name = self.database();
        let mut admin = Client::connect(
            &cluster::with_database(&self.url, "postgres"),
            postgres::NoTls,
        )
        .unwrap();
        admin
            .execute(
                &format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE datname = $1 AND {which}"
                ),
                &[&name],
            )
            .unwrap()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        cluster::drop_database(&self.url);
    }
}

/// Puts a pending task on the board of `p`, as `send` would; its id.
fn send(store: &PgStore, subject: &str) -> TaskId {
    change_board(store, "p", now(), |tx| {
        let id = tx.board.next_free_id(tx.highest_archived_id()?);
        tx.board.next_id = id.0 + 1;
        let mut task = Task::example(Status::Pending, tx.now);
        task.id = id;
        task.subject = subject.to_string();
        tx.board.push(task);
        tx.record(record("alice", "send", id.0));
        Ok::<_, StoreError>(id)
    })
    .unwrap()
}

fn count(client: &mut Client, table: &str) -> i64 {
    client
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0)
}

#[test]
fn activity_numbers_are_gapless_and_in_commit_order_under_concurrent_writers() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let hubs = [fixture.store(), fixture.store(), fixture.store()];
    const WRITERS: usize = 24;
    // Each change counts itself on the board (next_id) and logs two lines naming the
    // count: commit order is count order.
    at_once(WRITERS, |n| {
        change_board(&hubs[n % 3], "p", now(), |tx| {
            tx.board.next_id += 1;
            let count = tx.board.next_id;
            tx.record(record(&format!("w{n}"), "first", count));
            tx.record(record(&format!("w{n}"), "second", count));
            Ok::<_, StoreError>(())
        })
        .unwrap()
    });
    let mut client = fixture.client();
    let rows = client
        .query(
            "SELECT seq, record FROM activity WHERE project = 'p' ORDER BY seq",
            &[],
        )
        .unwrap();
    let seqs: Vec<i64> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(
        seqs,
        (1..=2 * WRITERS as i64).collect::<Vec<_>>(),
        "gapless from 1"
    );
    let counts: Vec<u64> = rows
        .iter()
        .map(|row| {
            let record: ActivityRecord = serde_json::from_str(row.get::<_, &str>(1)).unwrap();
            record.task.unwrap().0
        })
        .collect();
    let mut sorted = counts.clone();
    sorted.sort();
    assert_eq!(
        counts, sorted,
        "numbered in the order the changes committed"
    );
    let distinct: BTreeSet<u64> = counts.iter().copied().collect();
    assert_eq!(distinct.len(), WRITERS, "each change counted once");
}

#[test]
fn a_newer_schema_is_refused_with_a_clear_error_and_an_older_one_migrated() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    // An empty database is made current by the first connection.
    assert_eq!(fixture.store().board("p").unwrap().len(), 0);
    let mut client = fixture.client();
    let version: i64 = client
        .query_one("SELECT version FROM baton_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, schema::SCHEMA);
    client
        .execute(
            "UPDATE baton_schema SET version = $1",
            &[&(schema::SCHEMA + 1)],
        )
        .unwrap();
    let refused = fixture.store().board("p").unwrap_err();
    assert!(
        matches!(refused, StoreError::NewerDatabase { .. }),
        "{refused}"
    );
    let words = refused.to_string();
    assert!(
        words.contains(&format!("has schema {}", schema::SCHEMA + 1))
            && words.contains("upgrade baton"),
        "{words}"
    );
    assert!(!words.contains(cluster::password()), "{words}");
    assert_eq!(crate::error::Error::from(refused).exit_code(), 4);
    // Refused on every call, not only the first.
    assert!(fixture.store().mail("p").is_err());
}

#[test]
fn two_processes_migrating_at_once_make_the_schema_once() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let answers = at_once(6, |_| fixture.store().board("p").map(|board| board.len()));
    assert!(
        answers.iter().all(|answer| matches!(answer, Ok(0))),
        "{answers:?}"
    );
    let rows: i64 = fixture
        .client()
        .query_one("SELECT count(*) FROM baton_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);
}

#[test]
fn a_board_an_older_schema_wrote_is_read_with_no_reservations_and_keeps_them_once_migrated() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    // The database as a baton of schema 2 left it: a board, and the board before it.
    let mut client = fixture.client_at_schema(2);
    let mut task = Task::example(Status::Pending, now());
    task.id = TaskId(1);
    task.touches = vec!["src/**".into()];
    let text = serde_json::to_string(&task).unwrap();
    client
        .batch_execute(
            "INSERT INTO boards (project, schema, next_id, version, previous_schema, \
                 previous_next_id) VALUES ('p', 1, 2, 2, 1, 1); \
             INSERT INTO board_previous (project, id, task) VALUES ('p', 1, NULL);",
        )
        .unwrap();
    client
        .execute(
            "INSERT INTO tasks (project, id, task) VALUES ('p', 1, $1)",
            &[&text],
        )
        .unwrap();
    let store = fixture.store();
    let board = store.board("p").unwrap();
    assert_eq!(board.len(), 1);
    assert!(board.reservations().is_empty());
    assert_eq!(board.head(TaskId(1)).unwrap().touches, ["src/**"]);
    let previous = store.previous_board("p").unwrap().unwrap();
    assert!(previous.is_empty() && previous.reservations().is_empty());
    let version: i64 = client
        .query_one("SELECT version FROM baton_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, schema::SCHEMA);
    // Claimed, its scope is reserved in the board's row, and the board before has none.
    change_board(&store, "p", now(), |tx| {
        let claim = crate::board::transition::Action::from(crate::board::action::ActionKind::Claim);
        let now = tx.now;
        let to = tx.board.head(TaskId(1)).unwrap().to.to_string();
        tx.board
            .apply(
                TaskId(1),
                &claim,
                &to,
                None,
                chrono::Duration::minutes(30),
                now,
            )
            .unwrap()
            .unwrap()
            .unwrap();
        tx.record(record(&to, "claim", 1));
        Ok::<_, StoreError>(())
    })
    .unwrap();
    let row = client
        .query_one(
            "SELECT reservations, previous_reservations FROM boards WHERE project = 'p'",
            &[],
        )
        .unwrap();
    let (now_held, before): (String, Option<String>) = (row.get(0), row.get(1));
    assert!(now_held.contains("\"pattern\":\"src/**\""), "{now_held}");
    assert_eq!(before.as_deref(), Some("[]"));
    let board = fixture.store().board("p").unwrap();
    assert_eq!(board.reservations().len(), 1);
    assert_eq!(board.reservations()[0].task, Some(TaskId(1)));
}

#[test]
fn an_archive_an_older_schema_wrote_is_searched_once_migrated() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    // The database as a baton of schema 3 left it: two archived tasks, one of them labelled
    // (a board copied in by hand with labels before baton knew them), and a row that does
    // not read as a task.
    let mut client = fixture.client_at_schema(3);
    let mut first = Task::example(Status::Completed, now());
    first.id = TaskId(1);
    first.subject = "Fix the ÉDITION Parser".into();
    let mut second = first.clone();
    second.id = TaskId(2);
    second.subject = "Other".into();
    second.labels = vec!["bug".into()];
    for task in [&first, &second] {
        client
            .execute(
                "INSERT INTO archive (project, id, task) VALUES ('p', $1, $2)",
                &[&(task.id.0 as i64), &serde_json::to_string(task).unwrap()],
            )
            .unwrap();
    }
    client
        .execute(
            "INSERT INTO archive (project, id, task) VALUES ('q', 1, 'not a task')",
            &[],
        )
        .unwrap();
    let store = fixture.store();
    let search = |label: Option<&str>, words: Option<&str>| -> Vec<u64> {
        let asked = crate::board::search::Search::new(label, words).unwrap();
        let found = store.search_archive("p", &asked).unwrap();
        found.iter().map(|task| task.id.0).collect()
    };
    assert_eq!(search(None, Some("édition parser")), [1]);
    assert_eq!(search(Some("bug"), None), [2]);
    assert!(search(None, Some("completed")).is_empty());
    let version: i64 = client
        .query_one("SELECT version FROM baton_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, schema::SCHEMA);
    // The words' index was made, and answers a pattern of words (the planner is kept from
    // reading the table through, which it would rather do with three rows).
    let indexed: bool = client
        .query_one(
            "SELECT to_regclass($1::text) IS NOT NULL",
            &[&schema::WORDS_INDEX],
        )
        .unwrap()
        .get(0);
    assert!(indexed);
    client.batch_execute("SET enable_seqscan = off").unwrap();
    let plan: Vec<String> = client
        .query(
            "EXPLAIN SELECT task FROM archive WHERE words LIKE '%parser%'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(
        plan.iter().any(|line| line.contains(schema::WORDS_INDEX)),
        "{plan:#?}"
    );
    let schema = store.schema_version().unwrap().unwrap();
    assert_eq!(schema.words_index, Some(schema::WORDS_INDEX));
    // Without it (a database with no pg_trgm), doctor is told, and a search still answers.
    client
        .batch_execute("RESET enable_seqscan; DROP INDEX archive_words_trgm")
        .unwrap();
    assert_eq!(store.schema_version().unwrap().unwrap().words_index, None);
    assert_eq!(search(None, Some("parser")), [1]);
}
