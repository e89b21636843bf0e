//! What keeps the store at the database's pace, and still right: statements prepared once per
//! connection (and again on a new one), the schema asked in one statement by every process,
//! and a change's reads of the project's record made on the change's own connection.

use super::*;
use crate::store::postgres::client::Client as PgClient;
use crate::store::postgres::tls::Rustls;

/// The texts of the statements prepared on the connection `client` is.
fn prepared_here(client: &mut PgClient) -> Vec<String> {
    client
        .query("SELECT statement FROM pg_prepared_statements", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

const READ_BOARD: &str =
    "SELECT schema, next_id, version, reservations FROM boards WHERE project = $1";

#[test]
fn a_connection_prepares_each_statement_once_and_a_new_one_prepares_its_own() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    // A hub's pool (a command's prepares nothing: see the next test).
    let store = a_hub_with_a_task(&fixture);
    for _ in 0..3 {
        assert_eq!(store.board("p").unwrap().len(), 1);
    }
    let kept = store.run(|client| Ok(prepared_here(client))).unwrap();
    assert_eq!(
        kept.iter().filter(|text| *text == READ_BOARD).count(),
        1,
        "the board's statement prepared once for four reads: {kept:?}"
    );
    let mut unique = kept.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        kept.len(),
        "no statement prepared twice: {kept:?}"
    );
    // The server restarted: the statements it knew are gone with the connections, and the
    // next calls prepare them again on new ones rather than name statements nobody knows.
    // The server restarted: every connection cut.
    fixture.terminate(CLIENTS);
    assert_eq!(store.board("p").unwrap().len(), 1);
    send(&store, "two");
    assert_eq!(store.board("p").unwrap().len(), 2);
    let again = store.run(|client| Ok(prepared_here(client))).unwrap();
    assert_eq!(
        again.iter().filter(|text| *text == READ_BOARD).count(),
        1,
        "{again:?}"
    );
}

/// A hub's new connection prepares, in one round trip before its first use, the statements
/// its pool's other connections have prepared: the requests of a burst that opens
/// connections do not each wait for every statement's first preparation.
#[test]
fn a_hub_s_new_connection_comes_with_the_statements_its_pool_has_prepared() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = a_hub_with_a_task(&fixture);
    assert_eq!(store.board("p").unwrap().len(), 1);
    // Every connection open held (what they prepared, together), then one more: a new one.
    let open = store.pool().open_count();
    let mut held: Vec<_> = (0..open).map(|_| store.pool().get().unwrap()).collect();
    let mut expected: Vec<String> = held
        .iter_mut()
        .flat_map(|connection| prepared_here(connection.client()))
        .collect();
    expected.sort();
    expected.dedup();
    assert!(
        expected.iter().any(|text| text == READ_BOARD),
        "{expected:?}"
    );
    let mut new = store.pool().get().unwrap();
    assert_eq!(store.pool().open_count(), open + 1);
    let mut ready = prepared_here(new.client());
    ready.sort();
    assert_eq!(ready, expected, "prepared before its first use, each once");
    assert_eq!(new.client().prepared_count(), expected.len());
    drop(new);
    held.clear();
    // And used as it came: the board read on it prepares nothing more.
    assert_eq!(store.board("p").unwrap().len(), 1);
}

#[test]
fn a_command_s_connection_prepares_nothing_and_sends_each_statement_with_its_types() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    send(&store, "one");
    send(&store, "two");
    assert_eq!(store.board("p").unwrap().len(), 2);
    assert_eq!(store.log("p", None, None).unwrap().len(), 2);
    let kept = store.run(|client| Ok(prepared_here(client))).unwrap();
    assert!(kept.is_empty(), "{kept:?}");
    assert_eq!(store.pool().open_count(), 1);
    // The same rows as a hub's prepared statements read.
    let hub = fixture.store();
    hub.pool().resident();
    assert_eq!(hub.board("p").unwrap(), store.board("p").unwrap());
    assert_eq!(
        hub.log("p", None, None).unwrap(),
        store.log("p", None, None).unwrap()
    );
    assert!(
        hub.run(|client| Ok(prepared_here(client)))
            .unwrap()
            .iter()
            .any(|text| text == READ_BOARD)
    );
}

#[test]
fn a_statement_whose_result_changed_under_it_is_prepared_again() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let address = Address::parse(&fixture.url).unwrap();
    let mut client = PgClient::connect(&address, Rustls::for_address(&address).unwrap()).unwrap();
    let mut admin = fixture.client();
    admin
        .batch_execute("CREATE TABLE widgets (a integer); INSERT INTO widgets VALUES (1)")
        .unwrap();
    let statement = "SELECT * FROM widgets";
    assert_eq!(client.query(statement, &[]).unwrap()[0].len(), 1);
    admin
        .batch_execute("ALTER TABLE widgets ADD COLUMN b integer")
        .unwrap();
    // The server refuses the statement prepared for one column; it is let go, and the
    // next call prepares it for what the table is now.
    let refused = client.query(statement, &[]).unwrap_err();
    assert_eq!(
        refused.code(),
        Some(&postgres::error::SqlState::FEATURE_NOT_SUPPORTED),
        "{refused}"
    );
    assert_eq!(client.query(statement, &[]).unwrap()[0].len(), 2);
    assert_eq!(client.prepared_count(), 1);
}

#[test]
fn a_schema_migrated_behind_a_command_s_back_is_noticed_by_the_next() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    // No schema yet: the first command's one question finds no table, and migrates.
    send(&fixture.store(), "one");
    // Another baton, newer, migrates the database between two commands: the next command
    // (the schema remembered) asks with its transaction's BEGIN, and refuses before writing
    // a thing.
    fixture
        .client()
        .execute(
            "UPDATE baton_schema SET version = $1",
            &[&(schema::SCHEMA + 1)],
        )
        .unwrap();
    let next = fixture.store();
    let refused = change_board(&next, "p", now(), |tx| {
        tx.board.next_id += 1;
        Ok::<_, StoreError>(())
    })
    .unwrap_err();
    assert!(
        matches!(refused, StoreError::NewerDatabase { .. }),
        "{refused}"
    );
    assert_eq!(
        fixture.store().board("p").unwrap_err().to_string(),
        refused.to_string()
    );
    fixture
        .client()
        .execute("UPDATE baton_schema SET version = $1", &[&schema::SCHEMA])
        .unwrap();
    assert_eq!(
        fixture.store().board("p").unwrap().len(),
        1,
        "nothing written"
    );
}

#[test]
fn a_change_reads_the_project_s_record_on_its_own_connection() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    let record = b"{\"schema\":1,\"id\":\"p\"}\n".to_vec();
    store
        .save_document(&Document::Project("p".into()), Edit::Write(record.clone()))
        .unwrap();
    let store = fixture.store();
    let read = change_board(&store, "p", now(), |tx| {
        tx.stored_project().expect("read in the change")
    })
    .unwrap();
    assert_eq!(read, Some(record));
    // A command's change, its record read: one connection (one login), not two.
    assert_eq!(store.pool().open_count(), 1);
}

#[test]
fn a_store_on_a_unix_socket_logs_in_with_no_password_and_works() {
    if !cluster::runs_here() {
        return;
    }
    // The cluster of this process (its socket's directory is known), whose local
    // connections are trusted as peer authentication trusts the user the process runs as.
    let cluster = cluster::shared();
    let fixture = Fixture {
        url: cluster::fresh_database(None),
        home: tempfile::tempdir().unwrap(),
    };
    let database = fixture.database();
    let url = format!(
        "postgres://postgres@/{database}?host={}&port={}",
        cluster.dir.display(),
        cluster.port
    );
    let store = fixture.store_at(&url);
    assert_eq!(
        store.shown(),
        format!(
            "postgres://postgres@/{database}?host={}",
            cluster.dir.display()
        )
    );
    send(&store, "over the socket");
    assert_eq!(
        fixture.store().board("p").unwrap().len(),
        1,
        "the same database"
    );
    let over: bool = store
        .run(|client| {
            Ok(client
                .query_one("SELECT inet_server_addr() IS NULL", &[])?
                .get(0))
        })
        .unwrap();
    assert!(over, "a Unix socket, not TCP");
}

/// A hub keeps the board it wrote for its next change. Once a change has moved a task off
/// the board (to the archive), the next change of that hub must still write exactly what
/// changed: every task it kept stays in the database, as another hub (or a command) reads
/// it afresh.
#[test]
fn a_hubs_kept_board_after_a_task_left_it_writes_only_what_changed() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let (ids, hub) = sent_then_a_hub(&fixture, 6);
    // A change of the hub moves the second task off the board, which the hub then keeps.
    change_board(&*hub, "p", now(), |tx| {
        tx.board
            .modify(ids[1], |task| task.status = Status::Completed)
            .unwrap();
        tx.archive(&[ids[1]]).unwrap();
        tx.record(record("alice", "done", ids[1].0));
        Ok::<_, StoreError>(())
    })
    .unwrap();
    // Then changes of the last task and of the first, on the board the hub kept.
    for id in [ids[5], ids[0]] {
        edit_subject(&*hub, id);
    }
    let afresh = fixture.store().board("p").unwrap();
    let on_board: Vec<u64> = afresh.tasks().map(|task| task.unwrap().id.0).collect();
    assert_eq!(
        on_board,
        vec![ids[0].0, ids[2].0, ids[3].0, ids[4].0, ids[5].0]
    );
    assert_eq!(hub.board("p").unwrap().len(), 5);
}

/// A hub's change writes the rows of the tasks it changed, and no other: a task one change
/// wrote is not written again by the next, which changed another (each row's `xmin`, the
/// transaction that last wrote it, says which were). Before, a hub's kept board held every
/// task changed since its read as changed, and each write sent them all again.
#[test]
fn a_hubs_change_writes_only_the_tasks_it_changed_not_those_of_its_earlier_changes() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let (ids, hub) = sent_then_a_hub(&fixture, 4);
    let mut admin = fixture.client();
    let written_by = |admin: &mut postgres::Client| -> Vec<(i64, String)> {
        admin
            .query(
                "SELECT id, xmin::text FROM tasks WHERE project = 'p' ORDER BY id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect()
    };
    let edit = |id: TaskId| edit_subject(&*hub, id);
    edit(ids[0]);
    let after_first = written_by(&mut admin);
    edit(ids[2]);
    let after_second = written_by(&mut admin);
    let rewritten: Vec<i64> = after_first
        .iter()
        .zip(&after_second)
        .filter(|(before, after)| before != after)
        .map(|(before, _)| before.0)
        .collect();
    assert_eq!(rewritten, vec![ids[2].0 as i64], "only the task changed");
    let afresh = fixture.store().board("p").unwrap();
    let subjects: Vec<String> = afresh
        .tasks()
        .map(|task| task.unwrap().subject.clone())
        .collect();
    assert_eq!(
        subjects,
        [
            format!("{} changed", ids[0]),
            "task 2".to_string(),
            format!("{} changed", ids[2]),
            "task 4".to_string()
        ]
    );
    // The hub's own board, read and changed again, is the database's.
    edit(ids[0]);
    assert_eq!(
        whole(&hub.board("p").unwrap()),
        whole(&fixture.store().board("p").unwrap())
    );
}

/// A hub's store on `fixture` (its pool resident: it prepares its statements and keeps
/// them), with one task sent on it.
fn a_hub_with_a_task(fixture: &Fixture) -> PgStore {
    let store = fixture.store();
    store.pool().resident();
    send(&store, "one");
    store
}

/// `count` tasks of `p` ("task 1" on) sent by a command, then a hub: it reads the board
/// from the database, its tasks stored as read.
fn sent_then_a_hub(fixture: &Fixture, count: u64) -> (Vec<TaskId>, Arc<dyn Store>) {
    let elsewhere = fixture.store();
    let ids = (1..=count)
        .map(|n| send(&elsewhere, &format!("task {n}")))
        .collect();
    (ids, fixture.store().resident())
}

/// One change on `hub`: task `id` of `p` gets the subject "<id> changed".
fn edit_subject(hub: &dyn Store, id: TaskId) {
    change_board(hub, "p", now(), |tx| {
        let changed = format!("{id} changed");
        tx.board.modify(id, |task| task.subject = changed).unwrap();
        tx.record(record("alice", "edit", id.0));
        Ok::<_, StoreError>(())
    })
    .unwrap();
}

/// Every task of `board`, decoded, in board order; and its next id.
fn whole(board: &Board) -> (Vec<Task>, u64) {
    let tasks = board.tasks().map(|task| task.unwrap().clone()).collect();
    (tasks, board.next_id)
}

/// One change of the board of `p` on `hub`: the board it began from, beside the board a
/// store that keeps nothing reads just before; then `change` made.
fn change_seen(
    hub: &dyn Store,
    afresh: &PgStore,
    change: impl FnOnce(&mut Transaction),
) -> ((Vec<Task>, u64), (Vec<Task>, u64)) {
    let expected = whole(&afresh.board("p").unwrap());
    let began = change_board(hub, "p", now(), |tx| {
        let began = whole(&tx.board);
        change(tx);
        tx.record(record("alice", "edit", 1));
        Ok::<_, StoreError>(began)
    })
    .unwrap();
    (began, expected)
}

/// A change of a board, made in a test's turn.
type Change<'a> = Box<dyn FnOnce(&mut Transaction) + 'a>;

/// A change that gives task `id` the subject `subject`.
fn renamed(id: TaskId, subject: &'static str) -> Change<'static> {
    Box::new(move |tx| {
        tx.board
            .modify(id, |task| task.subject = subject.to_string())
            .unwrap();
    })
}

/// Two hubs taking turns: each change of one begins from the board as the other's last
/// write left it, over the board it kept from its own write (tasks added, changed and taken
/// off by the other), as a read of the board then gives it; and after a copy's import,
/// which replaced the board, from the board imported.
#[test]
fn a_hub_whose_kept_board_another_hub_wrote_over_begins_from_the_board_as_written() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let elsewhere = fixture.store();
    let ids: Vec<TaskId> = (1..=4)
        .map(|n| send(&elsewhere, &format!("task {n}")))
        .collect();
    let (a, b) = (fixture.store().resident(), fixture.store().resident());
    let turns: Vec<(&dyn Store, Change<'_>)> = vec![
        (&*a, renamed(ids[0], "a1")),
        (
            &*b,
            Box::new(|tx| {
                tx.board
                    .modify(ids[1], |task| task.subject = "b1".into())
                    .unwrap();
                let mut task = Task::example(Status::Pending, tx.now);
                task.id = TaskId(tx.board.next_id);
                tx.board.next_id += 1;
                tx.board.push(task);
            }),
        ),
        (
            &*a,
            Box::new(|tx| {
                tx.board
                    .modify(ids[2], |task| task.status = Status::Completed)
                    .unwrap();
                tx.archive(&[ids[2]]).unwrap();
            }),
        ),
        (&*b, renamed(ids[3], "b2")),
        (&*a, renamed(ids[0], "a2")),
        (&*a, renamed(ids[1], "a3")),
        (&*b, Box::new(|_| {})),
    ];
    for (turn, (hub, change)) in turns.into_iter().enumerate() {
        let (began, expected) = change_seen(hub, &elsewhere, change);
        assert_eq!(began, expected, "turn {turn}");
        // A read of the board (no lock) after the other's write gives it as written too.
        let now = whole(&elsewhere.board("p").unwrap());
        for (name, reader) in [("a", &*a), ("b", &*b)] {
            assert_eq!(
                whole(&reader.board("p").unwrap()),
                now,
                "turn {turn}, {name}"
            );
        }
    }
    // A copy's import replaces the board: the version counts up once, but the write was
    // not made over the board either hub kept.
    let mut image = elsewhere.export_project("p").unwrap();
    let board = image.board.as_mut().unwrap();
    board.tasks[0].subject = "imported".into();
    elsewhere.import_project("p", &image).unwrap();
    for hub in [&*a, &*b] {
        let (began, expected) = change_seen(hub, &elsewhere, |_| {});
        assert_eq!(began, expected);
        assert_eq!(began.0[0].subject, "imported");
    }
}

#[test]
fn a_version_and_texts_read_together_are_those_read_one_by_one() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    store.pool().resident();
    let (tokens, project, agent) = (
        Document::Tokens,
        Document::Project("p".into()),
        Document::Agent("bob".into()),
    );
    let apart = |store: &PgStore| {
        (
            store.document_version(&tokens),
            vec![
                store.load_document(&project).unwrap(),
                store.load_document(&agent).unwrap(),
            ],
        )
    };
    let together = |store: &PgStore| {
        store
            .version_and_texts(&tokens, &[project.clone(), agent.clone()])
            .unwrap()
    };
    // None of them there yet.
    assert_eq!(together(&store), (None, vec![None, None]));
    store
        .save_document(&tokens, Edit::Write(b"{\"schema\":1}\n".to_vec()))
        .unwrap();
    store
        .save_document(
            &project,
            Edit::Write(b"{\"schema\":1,\"id\":\"p\"}\n".to_vec()),
        )
        .unwrap();
    let first = together(&store);
    assert_eq!(first, apart(&store));
    assert!(first.0.is_some() && first.1[0].is_some() && first.1[1].is_none());
    // A change moves the version, as one read alone sees it.
    store
        .save_document(
            &tokens,
            Edit::Write(b"{\"schema\":1,\"tokens\":[]}\n".to_vec()),
        )
        .unwrap();
    let second = together(&store);
    assert_ne!(second.0, first.0);
    assert_eq!(second, apart(&store));
}
