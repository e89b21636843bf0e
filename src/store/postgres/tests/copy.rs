//! `store copy` on PostgreSQL: a hub copied from the files to a database, back, and between
//! databases holds what it held.

use super::*;

/// A hub's state on `store`: two projects, tasks on the board and archived in two months
/// (the later month archived first), the log, mail read, sent and archived in two months,
/// a project record, an agent, tokens, alerts and a queued alert.
fn fill_for_copy(store: &dyn Store) {
    let november = Timestamp::parse_stored("2026-11-03T09:00:00Z").unwrap();
    let october = Timestamp::parse_stored("2026-10-20T09:00:00Z").unwrap();
    for project in ["p", "q"] {
        let project_record = format!("{{\"schema\":1,\"id\":\"{project}\"}}\n");
        store
            .update_document(
                &Document::Project(project.to_string()),
                Wait::AsTheStoreDoes,
                &mut |_| Ok(Edit::Write(project_record.clone().into_bytes())),
            )
            .unwrap();
        change_board(store, project, now(), |tx| {
            for (id, updated_at) in [(1, november), (2, october), (3, now())] {
                let mut task = Task::example(Status::Pending, updated_at);
                task.id = TaskId(id);
                task.subject = format!("task {id} of {project}");
                tx.board.push(task);
                tx.record(record("alice", "send", id));
            }
            tx.board.next_id = 4;
            tx.archive(&[TaskId(1), TaskId(2)]).unwrap();
            Ok::<_, crate::error::Error>(())
        })
        .unwrap();
        let draft = |summary: &str| Draft {
            from: "alice".into(),
            to: "codex".into(),
            kind: MessageType::Text,
            summary: summary.to_string(),
            body: String::new(),
            payload: serde_json::Value::Null,
        };
        change_mail(store, project, now(), |mailbox| {
            mailbox.add(october, vec![draft("old")]);
            mailbox.add(november, vec![draft("newer")]);
            mailbox.add(now(), vec![draft("now"), draft("later")]);
            Ok::<_, StoreError>(())
        })
        .unwrap();
        change_mail(store, project, now(), |mailbox| {
            mailbox.mark_read("codex", 3);
            mailbox.archive(&[2, 1]);
            Ok::<_, StoreError>(())
        })
        .unwrap();
    }
    for (document, text) in [
        (
            Document::Agent("codex".into()),
            "{\"schema\":1,\"name\":\"codex\"}\n",
        ),
        (
            Document::Tokens,
            "{\"schema\":1,\"tokens\":[{\"hash\":\"ab\"}]}\n",
        ),
        (
            Document::Alerts,
            "{\"schema\":1,\"alerts\":[{\"name\":\"ops\"}]}\n",
        ),
        (
            Document::QueuedAlert("0001.json".into()),
            "{\"schema\":1}\n",
        ),
    ] {
        store
            .update_document(&document, Wait::AsTheStoreDoes, &mut |_| {
                Ok(Edit::Write(text.as_bytes().to_vec()))
            })
            .unwrap();
    }
}

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
