//! A project exported from a store and imported into another of its kind is alike there,
//! and numbering carries on where it left off; an import replaces whatever was there.

use super::{Hub, draft, now, on_each_store, record};
use crate::board::reservation::Grant;
use crate::board::scope::Pattern;
use crate::board::task::{Status, Task, TaskId};
use crate::store::{Document, Edit, Store, StoreError, Wait, change_board, change_mail};
use crate::time::Timestamp;

on_each_store!(
    a_project_exported_and_imported_into_another_store_is_alike,
    an_import_replaces_what_the_project_held,
);

/// A hub's state on `store`: two projects, tasks on the board (with what they touch and
/// reservations) and archived in two months (the later month archived first), the log, mail read, sent and archived in two months,
/// a project record, an agent, tokens, alerts and a queued alert.
pub(crate) fn fill(store: &dyn Store) {
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
                task.touches = vec!["src/**".into(), format!("port:300{id}")];
                tx.board.push(task);
                tx.record(record("alice", "send", id));
            }
            tx.board.next_id = 4;
            tx.archive(&[TaskId(1), TaskId(2)]).unwrap();
            // Reservations: one a claim of task 3 took, one taken by hand.
            for (agent, pattern, grant) in [
                (
                    "codex",
                    "src/**",
                    Grant {
                        task: Some(TaskId(3)),
                        lasts: None,
                        exclusive: true,
                        reason: None,
                    },
                ),
                (
                    "gemini",
                    "docs/",
                    Grant {
                        task: None,
                        lasts: Some(chrono::Duration::days(1)),
                        exclusive: false,
                        reason: Some("a \"quoted\" reason".into()),
                    },
                ),
            ] {
                let pattern = Pattern::parse(pattern).unwrap();
                let now = tx.now;
                tx.board.reserve(agent, &[pattern], &grant, now).unwrap();
            }
            Ok::<_, crate::error::Error>(())
        })
        .unwrap();
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

/// The image of `project` on `store` as JSON, with its record.
fn image(store: &dyn Store, project: &str) -> String {
    let image = store.export_project(project).unwrap();
    format!(
        "{} {:?}",
        serde_json::to_string(&image).unwrap(),
        image.record.map(String::from_utf8)
    )
}

fn a_project_exported_and_imported_into_another_store_is_alike(hub: &Hub) {
    let source = hub.store();
    fill(&*source);
    let exported = source.export_project("p").unwrap();
    assert!(exported.unreadable.is_empty(), "{:?}", exported.unreadable);
    let board = exported.board.as_ref().unwrap();
    let reserved: Vec<(&str, &str)> = board
        .reservations
        .iter()
        .map(|reservation| (reservation.agent.as_str(), reservation.pattern.as_str()))
        .collect();
    assert_eq!(reserved, [("codex", "src/**"), ("gemini", "docs/")]);
    assert_eq!(board.tasks[0].touches, ["src/**", "port:3003"]);
    assert_eq!(
        (
            exported.board.as_ref().map(|board| board.tasks.len()),
            exported.archive.len(),
            exported.log.len(),
            exported.mail.len(),
            exported.mail_archive.len(),
        ),
        (Some(1), 2, 3, 2, 2)
    );
    let elsewhere = other_of_its_kind(hub);
    let target = elsewhere.store();
    assert!(
        target.export_project("p").unwrap().is_empty(),
        "a project never made is an empty image"
    );
    target.import_project("p", &exported).unwrap();
    assert_eq!(image(&*target, "p"), image(&*source, "p"));
    assert!(target.export_project("q").unwrap().is_empty(), "only p");
    // Imported again: alike still.
    target.import_project("p", &exported).unwrap();
    assert_eq!(image(&*target, "p"), image(&*source, "p"));
    // Numbering carries on in the copy where it left off.
    let next = change_mail(&*target, "p", now(), |mailbox| {
        Ok::<_, StoreError>(mailbox.add(now(), vec![draft("after the move")])[0].seq)
    })
    .unwrap();
    assert_eq!(next, 5, "after the four the source numbered");
    assert_eq!(target.highest_archived_id("p").unwrap(), 2);
    let board = target.board("p").unwrap();
    assert_eq!(board.next_id, 4);
    assert_eq!(board.reservations(), exported.board.unwrap().reservations);
    assert_eq!(
        board.head(TaskId(3)).unwrap().touches,
        ["src/**", "port:3003"]
    );
    assert_eq!(target.read_positions("p").unwrap().of("codex"), 3);
}

fn an_import_replaces_what_the_project_held(hub: &Hub) {
    let store = hub.store();
    fill(&*store);
    let q = image(&*store, "q");
    let exported = store.export_project("q").unwrap();
    store
        .import_project("p", &crate::store::copy::ProjectImage::empty())
        .unwrap();
    assert!(store.export_project("p").unwrap().is_empty(), "emptied");
    assert!(store.board("p").unwrap().is_empty());
    assert!(store.log("p", None, None).unwrap().is_empty());
    assert!(store.mail("p").unwrap().is_empty());
    assert!(store.archived_tasks("p").unwrap().is_empty());
    assert_eq!(image(&*store, "q"), q, "another project untouched");
    store.import_project("p", &exported).unwrap();
    assert_eq!(image(&*store, "p"), q, "p holds what q held, and only that");
}

/// An empty hub of the same kind as `hub`: another home, or another database.
fn other_of_its_kind(hub: &Hub) -> Hub {
    match hub {
        Hub::Files(_) => Hub::files(),
        #[cfg(unix)]
        Hub::Postgres(_) => Hub::postgres().expect("PostgreSQL runs here"),
    }
}
