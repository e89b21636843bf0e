//! The PostgreSQL store against a real cluster ([`super::cluster`]): each test on a database
//! of its own.

use std::collections::BTreeSet;
use std::time::Duration;

use super::address::Address;
use super::cluster;
use super::documents::lock_of;
use super::*;
use crate::board::mail::{Draft, MessageType};
use crate::board::task::Status;
use crate::store::document::{Collection, Document, Documents, Edit};
use crate::store::{at_once, change_board, change_mail};
use postgres::Client;

mod copy;
mod sharing;

struct Fixture {
    url: String,
    home: tempfile::TempDir,
}

impl Fixture {
    /// A fresh database (on `BATON_TEST_STORE`'s cluster when it names one).
    fn new() -> Fixture {
        let given = std::env::var("BATON_TEST_STORE")
            .ok()
            .filter(|value| address::is_postgres_url(value));
        Fixture {
            url: cluster::fresh_database(given.as_deref()),
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// A store on the database: each one its own pool, as another hub's would be.
    fn store(&self) -> PgStore {
        self.store_at(&self.url)
    }

    fn store_at(&self, url: &str) -> PgStore {
        PgStore::new(
            Address::parse(url).unwrap(),
            Home::new(self.home.path().to_path_buf()),
            LockPolicy::silent(Duration::from_secs(30)),
        )
    }

    fn client(&self) -> Client {
        Client::connect(&self.url, postgres::NoTls).unwrap()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        cluster::drop_database(&self.url);
    }
}

fn now() -> Timestamp {
    crate::time::now()
}

fn record(actor: &str, action: &str, task: u64) -> ActivityRecord {
    ActivityRecord {
        at: now(),
        project: "p".into(),
        actor: actor.to_string(),
        action: action.into(),
        task: Some(TaskId(task)),
        from_status: None,
        to_status: None,
        text: None,
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

#[derive(Debug)]
enum Claim {
    Won,
    Taken,
}

#[test]
fn twenty_claimers_through_two_hubs_exactly_one_wins() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let hubs = [fixture.store(), fixture.store()];
    let id = send(&hubs[0], "one task");
    let answers = at_once(20, |n| {
        let claimer = format!("agent{n}");
        change_board(&hubs[n % 2], "p", now(), |tx| {
            let status = tx.board.head(id).map(|head| head.status);
            if status != Some(Status::Pending) {
                return Err(Claim::Taken);
            }
            tx.board
                .modify(id, |task| {
                    task.status = Status::Working;
                    task.to = claimer.clone();
                })
                .map_err(|_| Claim::Taken)?;
            tx.record(record(&claimer, "claim", id.0));
            Ok(Claim::Won)
        })
    });
    let won: Vec<usize> = answers
        .iter()
        .enumerate()
        .filter(|(_, answer)| matches!(answer, Ok(Claim::Won)))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(won.len(), 1, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|answer| matches!(answer, Ok(Claim::Won) | Err(Claim::Taken))),
        "{answers:?}"
    );
    let winner = format!("agent{}", won[0]);
    let board = hubs[1].board("p").unwrap();
    let task = board.task(id).unwrap().unwrap();
    assert_eq!(
        (task.status, task.to.as_str()),
        (Status::Working, winner.as_str())
    );
    let claims: Vec<String> = hubs[0]
        .log("p", None, None)
        .unwrap()
        .into_iter()
        .filter(|record| record.action == "claim")
        .map(|record| record.actor)
        .collect();
    assert_eq!(claims, [winner], "one claim logged, the winner's");
}

impl From<StoreError> for Claim {
    fn from(error: StoreError) -> Self {
        panic!("the store failed: {error}")
    }
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
fn a_change_that_gives_up_writes_nothing() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    let first = send(&store, "first");
    let mut client = fixture.client();
    let before: Vec<i64> = [
        "tasks",
        "activity",
        "archive",
        "board_previous",
        "documents",
    ]
    .iter()
    .map(|table| count(&mut client, table))
    .collect();
    let board_before = store.board("p").unwrap();
    let refused: Result<(), crate::error::Error> = change_board(&store, "p", now(), |tx| {
        tx.board.next_id += 5;
        tx.board
            .modify(first, |task| task.status = Status::Completed)
            .unwrap();
        tx.archive(&[first]).unwrap();
        let mut task = Task::example(Status::Pending, tx.now);
        task.id = TaskId(99);
        tx.board.push(task);
        tx.record(record("alice", "send", 99));
        tx.save_project(b"{\"schema\":1}".to_vec());
        Err(crate::error::Error::invalid("refused"))
    });
    assert_eq!(refused.unwrap_err().to_string(), "refused");
    let after: Vec<i64> = [
        "tasks",
        "activity",
        "archive",
        "board_previous",
        "documents",
    ]
    .iter()
    .map(|table| count(&mut client, table))
    .collect();
    assert_eq!(after, before);
    let board = store.board("p").unwrap();
    assert_eq!(board.next_id, board_before.next_id);
    assert_eq!(board.task(first).unwrap().unwrap().status, Status::Pending);
    assert!(store.archived_task("p", first).unwrap().is_none());
    // And the connection it used is fit for the next change.
    let second = send(&store, "second");
    assert!(store.board("p").unwrap().contains(second));
}

#[test]
fn a_change_commits_the_board_its_records_the_archive_and_the_project_together() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    let first = send(&store, "first");
    let second = send(&store, "second");
    change_board(&store, "p", now(), |tx| {
        tx.board
            .modify(first, |task| task.status = Status::Completed)
            .unwrap();
        tx.archive(&[first]).unwrap();
        tx.record(record("alice", "complete", first.0));
        tx.save_project(b"{\"schema\":1,\"id\":\"p\"}\n".to_vec());
        // The change sees its own move to the archive.
        assert_eq!(tx.find_archived(first).unwrap().unwrap().id, first);
        assert_eq!(tx.highest_archived_id().unwrap(), first.0);
        Ok::<_, crate::error::Error>(())
    })
    .unwrap();
    let board = store.board("p").unwrap();
    assert!(!board.contains(first) && board.contains(second));
    assert_eq!(
        store.archived_task("p", first).unwrap().unwrap().status,
        Status::Completed
    );
    assert_eq!(store.highest_archived_id("p").unwrap(), first.0);
    assert_eq!(
        store
            .load_document(&Document::Project("p".into()))
            .unwrap()
            .as_deref(),
        Some(&b"{\"schema\":1,\"id\":\"p\"}\n"[..])
    );
    let actions: Vec<String> = store
        .log("p", None, None)
        .unwrap()
        .into_iter()
        .map(|record| record.action.to_string())
        .collect();
    assert_eq!(actions, ["send", "send", "complete"]);
    assert_eq!(store.log("p", None, Some(1)).unwrap()[0].action, "complete");
    // A later change reads the archive in its own transaction.
    change_board(&store, "p", now(), |tx| {
        assert_eq!(tx.find_archived(first).unwrap().unwrap().id, first);
        assert_eq!(tx.archived_tasks().unwrap().len(), 1);
        assert!(tx.board.next_free_id(tx.highest_archived_id()?).0 > second.0);
        Ok::<_, StoreError>(())
    })
    .unwrap();
}

#[test]
fn the_board_before_the_last_change_is_kept_and_brought_back() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    assert!(store.previous_board("p").unwrap().is_none());
    let first = send(&store, "first");
    // As on files: a board's first write has none before it.
    assert!(store.previous_board("p").unwrap().is_none());
    let second = send(&store, "second");
    assert_eq!(store.previous_board("p").unwrap().unwrap().len(), 1);
    change_board(&store, "p", now(), |tx| {
        tx.board
            .modify(first, |task| task.subject = "renamed".into())
            .unwrap();
        tx.record(record("alice", "edit", first.0));
        Ok::<_, crate::error::Error>(())
    })
    .unwrap();
    let previous = store.previous_board("p").unwrap().unwrap();
    assert_eq!(previous.task(first).unwrap().unwrap().subject, "first");
    assert!(previous.contains(second));
    store
        .restore_board("p", false, &mut |restoring| {
            let previous = restoring.previous.unwrap().unwrap();
            assert_eq!(
                restoring
                    .current
                    .unwrap()
                    .unwrap()
                    .task(first)
                    .unwrap()
                    .unwrap()
                    .subject,
                "renamed"
            );
            assert_eq!(restoring.log.len(), 3);
            Ok((previous, vec![record("doctor", "restore", 0)]))
        })
        .unwrap();
    let board = store.board("p").unwrap();
    assert_eq!(board.task(first).unwrap().unwrap().subject, "first");
    assert!(board.contains(second));
    assert_eq!(store.log("p", None, Some(1)).unwrap()[0].action, "restore");
    // The board replaced is the previous one now.
    let previous = store.previous_board("p").unwrap().unwrap();
    assert_eq!(previous.task(first).unwrap().unwrap().subject, "renamed");
    let snapshot = store.snapshot("p").unwrap().unwrap();
    assert!(snapshot.recovered.is_none());
    assert_eq!(snapshot.board.unwrap().unwrap().len(), 2);
    assert_eq!(snapshot.log.unwrap().len(), 4);
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
fn mail_is_numbered_read_and_archived_in_one_change_each() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    let draft = |summary: &str| Draft {
        from: "alice".into(),
        to: "codex".into(),
        kind: MessageType::Text,
        summary: summary.to_string(),
        body: String::new(),
        payload: serde_json::Value::Null,
    };
    let sent = change_mail(&store, "p", now(), |mailbox| {
        Ok::<_, StoreError>(mailbox.add(now(), vec![draft("one"), draft("two")]))
    })
    .unwrap();
    assert_eq!(sent.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2]);
    let refused: Result<(), crate::error::Error> = change_mail(&store, "p", now(), |mailbox| {
        mailbox.add(now(), vec![draft("never")]);
        Err(crate::error::Error::invalid("no"))
    });
    assert!(refused.is_err());
    change_mail(&store, "p", now(), |mailbox| {
        mailbox.mark_read("codex", 2);
        mailbox.archive(&[1]);
        Ok::<_, StoreError>(())
    })
    .unwrap();
    let mail = store.mail("p").unwrap();
    assert_eq!(
        mail.iter().map(|m| m.summary.as_str()).collect::<Vec<_>>(),
        ["two"]
    );
    let positions = store.read_positions("p").unwrap();
    assert_eq!(positions.of("codex"), 2);
    assert_eq!(positions.archived_through, 1);
    let mut client = fixture.client();
    assert_eq!(count(&mut client, "mail_archive"), 1);
    // Numbering carries on past what left.
    change_mail(&store, "p", now(), |mailbox| {
        mailbox.archive(&[2]);
        Ok::<_, StoreError>(())
    })
    .unwrap();
    let third = change_mail(&store, "p", now(), |mailbox| {
        Ok::<_, StoreError>(mailbox.add(now(), vec![draft("three")]))
    })
    .unwrap();
    assert_eq!(third[0].seq, 3);
}

#[test]
fn documents_are_versioned_locked_and_listed() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    let agent = Document::Agent("codex".into());
    assert!(store.load_document(&agent).unwrap().is_none());
    assert!(store.document_version(&agent).is_none());
    assert!(
        store
            .update_document(&agent, Wait::AsTheStoreDoes, &mut |text| {
                assert!(text.is_none());
                Ok(Edit::Write(b"{\"schema\":1}".to_vec()))
            })
            .unwrap()
    );
    let first = store.document_version(&agent).unwrap();
    store
        .update_document(&agent, Wait::AsTheStoreDoes, &mut |_| {
            Ok(Edit::WriteUnsynced(b"{\"schema\":1,\"x\":1}".to_vec()))
        })
        .unwrap();
    assert_ne!(store.document_version(&agent).unwrap(), first);
    assert_eq!(
        store.load_document(&agent).unwrap().as_deref(),
        Some(&b"{\"schema\":1,\"x\":1}"[..])
    );
    // A change that gives up writes nothing; one that must not wait finds a busy lock.
    store
        .update_document(&agent, Wait::AsTheStoreDoes, &mut |_| Err(GaveUp))
        .unwrap();
    assert_eq!(
        store.load_document(&agent).unwrap().as_deref(),
        Some(&b"{\"schema\":1,\"x\":1}"[..])
    );
    let other = fixture.store();
    let mut connection = other.begin().unwrap();
    let (class, key, what) = lock_of(&agent);
    other
        .take_lock(&mut connection, class, &key, &what, Wait::AsTheStoreDoes)
        .unwrap();
    assert!(
        !store
            .update_document(&agent, Wait::Never, &mut |_| Ok(Edit::Remove))
            .unwrap()
    );
    drop(connection);
    store
        .save_document(
            &Document::Agent("claude".into()),
            Edit::Write(b"{}".to_vec()),
        )
        .unwrap();
    store
        .save_document(
            &Document::Agent("bad name!".into()),
            Edit::Write(b"{}".to_vec()),
        )
        .unwrap();
    assert_eq!(
        store.list_documents(Collection::Agents).unwrap(),
        ["claude", "codex"]
    );
    assert!(store.remove_document(&agent).unwrap());
    assert!(!store.remove_document(&agent).unwrap());
    // This machine's own documents stay files under its home.
    store
        .save_document(&Document::ProjectMap, Edit::Write(b"{}".to_vec()))
        .unwrap();
    assert!(fixture.home.path().join("project-map.json").exists());
    assert!(store.mark_once("stalled-1").unwrap());
    assert!(!other.mark_once("stalled-1").unwrap());
}

/// A resident store (`baton serve`'s) commits the changes that arrive while a transaction of
/// the project is in progress together, in one transaction ([`super::board::Batch`]): each
/// change gets its own answer, a refused or panicking one is rolled back alone, a command's
/// change commits beside them, and every committed change is on the board and in the log
/// once, the log gapless; the board took fewer writes than there were changes.
#[test]
fn changes_committed_together_each_get_their_own_answer_and_lose_nothing() {
    if !cluster::runs_here() {
        return;
    }
    use std::panic::{self, AssertUnwindSafe};
    const CHANGES: u64 = 60;
    let fixture = Fixture::new();
    let command = fixture.store();
    let resident = fixture.store().resident();
    send(&command, "first");
    let version_before = command.board_version("p");
    let counted = |n: u64| {
        move |tx: &mut Transaction| -> Result<u64, Refused> {
            tx.board.next_id += 1;
            if n % 4 == 1 {
                return Err(Refused(format!("change {n} refused")));
            }
            if n % 7 == 5 {
                panic!("change {n} panics");
            }
            tx.record(record(&format!("agent{n}"), "counted", n));
            Ok(tx.board.next_id)
        }
    };
    let first = command.board("p").unwrap().next_id;
    let answers = at_once(CHANGES as usize, |n| {
        let n = n as u64;
        let answer = panic::catch_unwind(AssertUnwindSafe(|| {
            let store: &dyn Store = match n % 3 {
                0 => &command,
                _ => &*resident,
            };
            change_board(store, "p", now(), counted(n))
        }));
        (n, answer)
    });
    let mut counts = BTreeSet::new();
    let mut committed = BTreeSet::new();
    for (n, answer) in answers {
        match answer {
            Err(_) => assert_eq!(n % 7, 5, "only the panicking change panics ({n})"),
            Ok(Err(refused)) => {
                assert_eq!(n % 4, 1, "{n} refused: {refused:?}");
                assert_eq!(refused.0, format!("change {n} refused"));
            }
            Ok(Ok(count)) => {
                assert!(n % 4 != 1 && n % 7 != 5, "{n} should have failed");
                assert!(counts.insert(count), "{n} saw a count another saw");
                committed.insert(n);
            }
        }
    }
    let board = command.board("p").unwrap();
    assert_eq!(board.next_id, first + committed.len() as u64);
    let expected: BTreeSet<u64> = (first + 1..=board.next_id).collect();
    assert_eq!(
        counts, expected,
        "each change on the board its predecessor left"
    );
    let logged: Vec<u64> = command
        .log("p", None, None)
        .unwrap()
        .iter()
        .filter(|record| record.action == "counted")
        .map(|record| record.task.unwrap().0)
        .collect();
    assert_eq!(
        logged.len(),
        committed.len(),
        "one record per committed change"
    );
    assert_eq!(logged.into_iter().collect::<BTreeSet<_>>(), committed);
    let mut client = fixture.client();
    let numbers: Vec<i64> = client
        .query(
            "SELECT seq FROM activity WHERE project = 'p' ORDER BY seq",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        numbers,
        (1..=numbers.len() as i64).collect::<Vec<_>>(),
        "gapless"
    );
    let writes = match (version_before, command.board_version("p")) {
        (Some(Version::Counted(before)), Some(Version::Counted(after))) => after - before,
        other => panic!("board versions: {other:?}"),
    };
    assert!(
        writes < committed.len() as u64,
        "{} changes committed in {writes} writes: none together",
        committed.len()
    );
}

/// A change's own refusal, or the store's.
#[derive(Debug)]
struct Refused(String);

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        Refused(error.to_string())
    }
}
