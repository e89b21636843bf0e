//! `store copy` on PostgreSQL: a hub copied from the files to a database, back, and between
//! databases holds what it held.

use super::*;
use crate::store::conformance::copy::fill as fill_for_copy;
use crate::store::document::Collection;

/// Each project's image as JSON, and every document's bytes: what a copy must carry.
fn everything(store: &dyn Store) -> Vec<String> {
    let mut found = Vec::new();
    for project in store.list_documents(Collection::Projects).unwrap() {
        let image = store.export_project(&project).unwrap();
        found.push(format!(
            "{project}: {} {:?}",
            serde_json::to_string(&image).unwrap(),
            image.record.map(String::from_utf8)
        ));
    }
    let mut documents = vec![Document::Tokens, Document::Alerts];
    for name in store.list_documents(Collection::Agents).unwrap() {
        documents.push(Document::Agent(name));
    }
    for name in store.list_documents(Collection::QueuedAlerts).unwrap() {
        documents.push(Document::QueuedAlert(name));
    }
    for document in documents {
        let text = store.load_document(&document).unwrap();
        found.push(format!("{document:?}: {:?}", text.map(String::from_utf8)));
    }
    found
}

#[test]
fn a_hub_copied_files_to_database_to_files_and_between_databases_is_the_same() {
    if !cluster::runs_here() {
        return;
    }
    use crate::store::copy::{Differing, Unvetted, copy};
    use crate::store::files::FileStore;
    let fixture = Fixture::new();
    let database = fixture.store();
    let lock = LockPolicy::silent(Duration::from_secs(30));
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let files = FileStore::new(Home::new(first.path().to_path_buf()), lock);
    let back = FileStore::new(Home::new(second.path().to_path_buf()), lock);
    fill_for_copy(&files);
    let source = everything(&files);
    assert!(
        source
            .iter()
            .any(|line| line.contains("\"mail_archive\":[{"))
    );

    let up = copy(&files, &database, Differing::Refuse, &Unvetted).unwrap();
    assert_eq!((up.projects, up.tasks, up.messages), (2, 6, 8));
    assert_eq!((up.agents, up.tokens, up.alerts), (1, 1, 2));
    assert_eq!(
        everything(&database),
        source,
        "the database holds what the files held"
    );
    let down = copy(&database, &back, Differing::Refuse, &Unvetted).unwrap();
    assert_eq!(down.written, up.written);
    assert_eq!(everything(&back), source, "and so do the files copied back");
    // The archives in their months' files, as the first files have them.
    for relative in [
        "projects/p/archive/2026-10.jsonl",
        "projects/p/archive/2026-11.jsonl",
        "projects/p/archive/mail-2026-10.jsonl",
        "projects/p/archive/mail-2026-11.jsonl",
        "projects/q/mail.jsonl",
        "projects/q/mail.read.json",
        "projects/q/activity.jsonl",
    ] {
        assert_eq!(
            std::fs::read_to_string(second.path().join(relative)).unwrap(),
            std::fs::read_to_string(first.path().join(relative)).unwrap(),
            "{relative}"
        );
    }
    // Again: nothing to write, either way.
    assert_eq!(
        copy(&files, &database, Differing::Refuse, &Unvetted)
            .unwrap()
            .written,
        0
    );
    assert_eq!(
        copy(&database, &back, Differing::Refuse, &Unvetted)
            .unwrap()
            .written,
        0
    );
    // From one database to another, as well.
    let other = Fixture::new();
    let second_database = other.store();
    copy(&database, &second_database, Differing::Refuse, &Unvetted).unwrap();
    assert_eq!(everything(&second_database), source);
    assert_eq!(
        copy(&database, &second_database, Differing::Refuse, &Unvetted)
            .unwrap()
            .written,
        0
    );
    // The numbering carries on in the copy where it left off in the source.
    let next = change_mail(&database, "p", now(), |mailbox| {
        let draft = Draft {
            from: "codex".into(),
            to: "alice".into(),
            kind: MessageType::Text,
            summary: "after the move".into(),
            body: String::new(),
            payload: serde_json::Value::Null,
        };
        Ok::<_, StoreError>(mailbox.add(now(), vec![draft])[0].seq)
    })
    .unwrap();
    assert_eq!(next, 5, "after the four the files numbered");
    assert_eq!(database.highest_archived_id("p").unwrap(), 2);
    assert_eq!(database.board("p").unwrap().next_id, 4);
}
