//! The search of the archive (SPEC section 19): by label, by words of the subject, body or
//! thread with case folded, both at once; oldest first, each task once; words that look
//! like a pattern's wildcards or JSON's escapes found as themselves.

use super::{Hub, now, on_each_store, record};
use crate::board::action::ActionKind;
use crate::board::search::Search;
use crate::board::task::{Status, Task, TaskId, ThreadEntry};
use crate::store::{Store, StoreError, change_board};

on_each_store!(the_archive_is_searched_by_label_and_by_words_case_aside);

/// Archives a completed task with `subject`, `body`, `labels` and one thread entry saying
/// `said`, in a change of its own; its id.
fn archive(store: &dyn Store, subject: &str, body: &str, labels: &[&str], said: &str) -> TaskId {
    change_board(store, "p", now(), |tx| {
        let id = tx.board.next_free_id(tx.highest_archived_id()?);
        tx.board.next_id = id.0 + 1;
        let mut task = Task::example(Status::Completed, tx.now);
        task.id = id;
        task.subject = subject.to_string();
        task.body = body.to_string();
        task.labels = labels.iter().map(|label| label.to_string()).collect();
        task.thread.push(ThreadEntry {
            at: tx.now,
            by: "codex".into(),
            kind: ActionKind::Done,
            text: said.to_string(),
        });
        tx.board.push(task);
        tx.archive(&[id]).unwrap();
        tx.record(record("alice", "send", id.0));
        Ok::<_, StoreError>(id)
    })
    .unwrap()
}

fn the_archive_is_searched_by_label_and_by_words_case_aside(hub: &Hub) {
    let store = hub.store();
    let store = &*store;
    let search = |label: Option<&str>, words: Option<&str>| -> Vec<u64> {
        let asked = Search::new(label, words).unwrap();
        // Another store on the same state finds the same.
        let found = hub.store().search_archive("p", &asked).unwrap();
        found.iter().map(|task| task.id.0).collect()
    };
    assert!(search(Some("bug"), None).is_empty(), "no archive yet");
    let parser = archive(store, "Fix the Parser", "", &["bug", "ui"], "done");
    let docs = archive(
        store,
        "Write docs",
        "100% of the API_KEY notes",
        &["docs"],
        "",
    );
    let quoted = archive(store, "Quotes", "a \"quoted\" C:\\path", &[], "");
    let thread = archive(store, "Other", "", &["bug"], "Straße Ünïcode PARSER note");
    let (parser, docs, quoted, thread) = (parser.0, docs.0, quoted.0, thread.0);
    // A task on the board is not the archive's.
    super::send(store, "parser on the board");
    assert_eq!(search(Some("bug"), None), [parser, thread], "oldest first");
    assert_eq!(search(Some("ui"), None), [parser]);
    assert!(search(Some("bu"), None).is_empty(), "a label whole");
    assert_eq!(search(None, Some("parser")), [parser, thread]);
    assert_eq!(search(None, Some("fix THE")), [parser]);
    assert_eq!(search(None, Some("straße ünïcode")), [thread]);
    assert_eq!(search(Some("bug"), Some("note")), [thread]);
    assert!(search(Some("docs"), Some("parser")).is_empty());
    // A pattern's wildcards are words like any other.
    assert_eq!(search(None, Some("100%")), [docs]);
    assert_eq!(search(None, Some("api_key")), [docs]);
    assert!(search(None, Some("100%key")).is_empty());
    assert!(search(None, Some("api%key")).is_empty());
    // Words JSON escapes are found as themselves.
    assert_eq!(search(None, Some("\"QUOTED\" c:\\")), [quoted]);
    // The fields of a task that are not its words are not searched.
    assert!(search(None, Some("codex")).is_empty());
    assert!(search(None, Some("completed")).is_empty());
    assert_eq!(
        search(None, None),
        [parser, docs, quoted, thread],
        "nothing asked: every archived task"
    );
}
