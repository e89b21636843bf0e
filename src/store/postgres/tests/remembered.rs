//! The schema remembered between commands ([`super::remembered`]): a command that finds it
//! remembered skips the check, and still never writes a database whose schema moved since
//! (a newer baton migrated it, an older backup was restored, another database took its
//! place): its first transaction's guard, or a table not there, makes the full check.

use super::*;

/// The file where this binary remembers the fixture's database.
fn remembered(fixture: &Fixture) -> std::path::PathBuf {
    crate::store::postgres::remembered::Remembered::of(
        &Home::new(fixture.home.path().to_path_buf()),
        &Address::parse(&fixture.url).unwrap(),
    )
    .path()
    .to_path_buf()
}

/// A change of the board of `p` by `store` (as `send` makes).
fn bump(store: &PgStore) -> Result<(), StoreError> {
    change_board(store, "p", now(), |tx| {
        tx.board.next_id += 1;
        Ok::<_, StoreError>(())
    })
}

fn set_version(fixture: &Fixture, version: i64) {
    fixture
        .client()
        .execute("UPDATE baton_schema SET version = $1", &[&version])
        .unwrap();
}

#[test]
fn a_command_after_the_first_skips_the_schema_check_and_its_transaction_confirms_it() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let file = remembered(&fixture);
    assert!(!file.exists());
    // The first command checks (and makes) the schema, and remembers it.
    let first = fixture.store();
    send(&first, "one");
    assert_eq!(first.pool().checks(), 1);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap().trim(),
        schema::SCHEMA.to_string()
    );
    // The next commands check nothing: a read's transaction and a change's confirm the
    // schema with their BEGIN.
    let reader = fixture.store();
    assert_eq!(reader.board("p").unwrap().len(), 1);
    assert_eq!(reader.pool().checks(), 0);
    let writer = fixture.store();
    send(&writer, "two");
    assert_eq!(writer.pool().checks(), 0);
    assert_eq!(fixture.store().board("p").unwrap().len(), 2);
    // A hub checks when it starts, remembered or not.
    let hub = fixture.store();
    let resident = hub.resident();
    assert_eq!(resident.board("p").unwrap().len(), 2);
    assert_eq!(hub.pool().checks(), 1);
    // And `doctor`, which only looks: it checks, and makes nothing on this machine.
    std::fs::remove_file(&file).unwrap();
    let doctor = fixture.store();
    doctor.only_looking();
    assert_eq!(doctor.board("p").unwrap().len(), 2);
    assert_eq!(doctor.pool().checks(), 1);
    assert!(!file.exists(), "doctor remembers nothing");
    // A command in a home not made yet makes it, to remember the schema in.
    std::fs::remove_dir_all(fixture.home.path()).unwrap();
    send(&fixture.store(), "three");
    assert!(file.exists(), "the home made, when first needed");
}

#[test]
fn a_schema_a_newer_baton_migrated_since_it_was_remembered_is_refused_before_any_write() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    send(&fixture.store(), "one");
    let file = remembered(&fixture);
    assert!(file.exists());
    set_version(&fixture, schema::SCHEMA + 1);
    // A change: its BEGIN's guard sees the newer schema, the full check refuses it.
    let next = fixture.store();
    let refused = bump(&next).unwrap_err();
    assert!(
        matches!(refused, StoreError::NewerDatabase { found, .. } if found == schema::SCHEMA + 1),
        "{refused}"
    );
    assert_eq!(next.pool().checks(), 1);
    assert!(!file.exists(), "forgotten");
    // A read too, and every call after.
    let reader = fixture.store();
    assert!(matches!(
        reader.board("p").unwrap_err(),
        StoreError::NewerDatabase { .. }
    ));
    assert!(matches!(
        reader.board("p").unwrap_err(),
        StoreError::NewerDatabase { .. }
    ));
    // A write outside any transaction (a mark told once), the schema remembered again (as
    // by a command of this binary run elsewhere with this home), asks before it writes.
    std::fs::write(&file, format!("{}\n", schema::SCHEMA)).unwrap();
    let marker = fixture.store();
    assert!(matches!(
        marker.mark_once("stalled-T-1").unwrap_err(),
        StoreError::NewerDatabase { .. }
    ));
    assert_eq!(marker.pool().checks(), 1, "the guard asked, then the check");
    assert_eq!(count(&mut fixture.client(), "marks"), 0);
    // Nothing was written: the board is as the first command left it.
    set_version(&fixture, schema::SCHEMA);
    let board = fixture.store().board("p").unwrap();
    assert_eq!(board.len(), 1);
    assert_eq!(board.next_id, 2, "the refused change wrote nothing");
}

#[test]
fn an_older_database_restored_where_one_was_remembered_is_migrated() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    send(&fixture.store(), "one");
    // A backup of the schema before this one restored at the same address: the tables as
    // the migrations before the last made them.
    let older = schema::SCHEMA - 1;
    fixture
        .client()
        .batch_execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        .unwrap();
    let mut client = fixture.client_at_schema(older);
    let next = fixture.store();
    send(&next, "two");
    assert_eq!(
        next.pool().checks(),
        1,
        "checked once the guard saw {older}"
    );
    let version: i64 = client
        .query_one("SELECT version FROM baton_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, schema::SCHEMA, "migrated again");
    assert_eq!(fixture.store().board("p").unwrap().len(), 1);
    assert!(remembered(&fixture).exists(), "remembered again");
}

#[test]
fn an_empty_database_at_a_remembered_address_is_made_again_by_the_first_statement_that_misses_it() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    send(&fixture.store(), "one");
    // Another database now at the address (dropped and made anew): no tables at all.
    fixture
        .client()
        .batch_execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        .unwrap();
    // A read outside any transaction (the projects' names) meets no table: checked, made.
    let next = fixture.store();
    assert!(
        next.list_documents(crate::store::document::Collection::Projects)
            .unwrap()
            .is_empty()
    );
    assert_eq!(next.pool().checks(), 1);
    assert_eq!(next.board("p").unwrap().len(), 0);
    // And a change right away (its guard meets no table): the same.
    fixture
        .client()
        .batch_execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        .unwrap();
    let writer = fixture.store();
    send(&writer, "again");
    assert_eq!(writer.pool().checks(), 1);
    assert_eq!(fixture.store().board("p").unwrap().len(), 1);
}
