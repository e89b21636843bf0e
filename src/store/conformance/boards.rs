//! Boards: a change is all or nothing, each on the board the one before left; the log is
//! in commit order with nothing lost; the archive finds what left the board; the board
//! before the last change comes back; a tail reads what is logged after it was made.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};

use super::{Hub, Refused, now, on_each_store, record, send};
use crate::board::task::{Status, Task, TaskId};
use crate::store::{Document, Store, StoreError, Transaction, Version, at_once, change_board};

on_each_store!(
    a_change_commits_the_board_its_records_the_archive_and_the_project_together,
    a_change_that_gives_up_writes_nothing,
    the_board_version_moves_with_every_write,
    the_log_is_in_commit_order_and_loses_nothing_under_concurrent_writers,
    of_twenty_claimers_through_two_stores_exactly_one_wins,
    changes_committed_together_each_get_their_own_answer_and_lose_nothing,
    the_board_before_the_last_change_is_kept_and_brought_back,
    a_tail_reads_what_is_logged_after_it_was_made,
);

fn a_change_commits_the_board_its_records_the_archive_and_the_project_together(hub: &Hub) {
    let store = hub.store();
    let store = &*store;
    assert_eq!(store.board("p").unwrap().len(), 0, "no board yet is empty");
    assert_eq!(store.highest_archived_id("p").unwrap(), 0);
    let first = send(store, "first");
    let second = send(store, "second");
    change_board(store, "p", now(), |tx| {
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
    // Seen whole by another store on the same state.
    let other = hub.store();
    let board = other.board("p").unwrap();
    assert!(!board.contains(first) && board.contains(second));
    assert_eq!(
        other.archived_task("p", first).unwrap().unwrap().status,
        Status::Completed
    );
    assert!(other.archived_task("p", second).unwrap().is_none());
    assert_eq!(other.archived_tasks("p").unwrap().len(), 1);
    assert_eq!(other.highest_archived_id("p").unwrap(), first.0);
    assert_eq!(
        other
            .load_document(&Document::Project("p".into()))
            .unwrap()
            .as_deref(),
        Some(&b"{\"schema\":1,\"id\":\"p\"}\n"[..])
    );
    let actions: Vec<String> = other
        .log("p", None, None)
        .unwrap()
        .into_iter()
        .map(|record| record.action.to_string())
        .collect();
    assert_eq!(actions, ["send", "send", "complete"]);
    assert_eq!(other.log("p", None, Some(1)).unwrap()[0].action, "complete");
    let later = other.log("p", None, None).unwrap()[2].at;
    assert!(
        other
            .log("p", Some(later), None)
            .unwrap()
            .iter()
            .all(|record| record.at >= later)
    );
    // A later change reads the archive under its lock, and no new task takes an archived id.
    change_board(store, "p", now(), |tx| {
        assert_eq!(tx.find_archived(first).unwrap().unwrap().id, first);
        assert_eq!(tx.archived_tasks().unwrap().len(), 1);
        assert_eq!(tx.highest_archived_id()?, first.0);
        assert!(tx.board.next_free_id(tx.highest_archived_id()?).0 > second.0);
        Ok::<_, StoreError>(())
    })
    .unwrap();
    // The archive keeps the order tasks left in.
    change_board(store, "p", now(), |tx| {
        tx.board
            .modify(second, |task| task.status = Status::Completed)
            .unwrap();
        tx.archive(&[second]).unwrap();
        Ok::<_, crate::error::Error>(())
    })
    .unwrap();
    let archived: Vec<TaskId> = other
        .archived_tasks("p")
        .unwrap()
        .iter()
        .map(|task| task.id)
        .collect();
    assert_eq!(archived, [first, second], "oldest first");
}

/// What a reader sees of a project: its board (every task), log, archive, record and the
/// board before.
fn seen(store: &dyn Store) -> String {
    let board = store.board("p").unwrap();
    let tasks: Vec<Task> = board.tasks().map(|task| task.cloned().unwrap()).collect();
    let previous = store
        .previous_board("p")
        .unwrap()
        .map(|board| board.tasks().count());
    format!(
        "{} {} {:?} {:?} {:?} {:?}",
        board.next_id,
        serde_json::to_string(&tasks).unwrap(),
        store.log("p", None, None).unwrap(),
        store.archived_tasks("p").unwrap(),
        store.load_document(&Document::Project("p".into())).unwrap(),
        previous,
    )
}

fn a_change_that_gives_up_writes_nothing(hub: &Hub) {
    let store = hub.store();
    let first = send(&*store, "first");
    send(&*store, "second");
    let before = seen(&*store);
    let version = store.board_version("p");
    let refused: Result<(), crate::error::Error> = change_board(&*store, "p", now(), |tx| {
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
    assert_eq!(seen(&*store), before, "seen by the store that was refused");
    assert_eq!(seen(&*hub.store()), before, "seen by another");
    assert_eq!(store.board_version("p"), version, "nothing was written");
    // And the store is fit for the next change.
    let third = send(&*store, "third");
    assert!(store.board("p").unwrap().contains(third));
}

fn the_board_version_moves_with_every_write(hub: &Hub) {
    let store = hub.store();
    let other = hub.store();
    assert!(
        store.board_version("nowhere").is_none(),
        "no board, no version"
    );
    send(&*store, "first");
    let mut versions = vec![other.board_version("p").expect("a board has a version")];
    for subject in ["second", "third"] {
        send(&*store, subject);
        let version = other.board_version("p").unwrap();
        assert!(!versions.contains(&version), "{version:?} again");
        versions.push(version);
    }
    assert_eq!(
        store.board_version("p"),
        other.board_version("p"),
        "unchanged between looks"
    );
    // A store that counts its writes counts up.
    if let [
        Version::Counted(a),
        Version::Counted(b),
        Version::Counted(c),
    ] = versions[..]
    {
        assert!(a < b && b < c, "{versions:?}");
    }
}

fn the_log_is_in_commit_order_and_loses_nothing_under_concurrent_writers(hub: &Hub) {
    const WRITERS: usize = 24;
    let stores = [hub.store(), hub.store(), hub.store()];
    // Each change counts itself on the board (next_id) and logs two records naming the
    // count: commit order is count order.
    at_once(WRITERS, |n| {
        change_board(&*stores[n % 3], "p", now(), |tx| {
            tx.board.next_id += 1;
            let count = tx.board.next_id;
            tx.record(record(&format!("w{n}"), "first", count));
            tx.record(record(&format!("w{n}"), "second", count));
            Ok::<_, StoreError>(())
        })
        .unwrap()
    });
    let log = hub.store().log("p", None, None).unwrap();
    assert_eq!(log.len(), 2 * WRITERS, "every record of every change");
    let counts: Vec<u64> = log.iter().map(|record| record.task.unwrap().0).collect();
    for pair in log.chunks(2) {
        assert_eq!(
            (pair[0].action.to_string(), pair[1].action.to_string()),
            ("first".to_string(), "second".to_string()),
            "a change's records together: {pair:?}"
        );
        assert_eq!(pair[0].actor, pair[1].actor);
        assert_eq!(pair[0].task, pair[1].task);
    }
    let mut sorted = counts.clone();
    sorted.sort();
    assert_eq!(counts, sorted, "in the order the changes committed");
    let distinct: BTreeSet<u64> = counts.iter().copied().collect();
    assert_eq!(distinct.len(), WRITERS, "each change counted once");
}

#[derive(Debug)]
enum Claim {
    Won,
    Taken,
}

impl From<StoreError> for Claim {
    fn from(error: StoreError) -> Self {
        panic!("the store failed: {error}")
    }
}

fn of_twenty_claimers_through_two_stores_exactly_one_wins(hub: &Hub) {
    let stores = [hub.store(), hub.store()];
    let id = send(&*stores[0], "one task");
    let answers = at_once(20, |n| {
        let claimer = format!("agent{n}");
        change_board(&*stores[n % 2], "p", now(), |tx| {
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
    let winner = format!("agent{}", won[0]);
    let board = stores[1].board("p").unwrap();
    let task = board.task(id).unwrap().unwrap();
    assert_eq!(
        (task.status, task.to.as_str()),
        (Status::Working, winner.as_str())
    );
    let claims: Vec<String> = stores[0]
        .log("p", None, None)
        .unwrap()
        .into_iter()
        .filter(|record| record.action == "claim")
        .map(|record| record.actor)
        .collect();
    assert_eq!(claims, [winner], "one claim logged, the winner's");
}

/// A resident store (`baton serve`'s) may commit the changes that arrive together in one
/// write: each change still gets its own answer, a refused or panicking one is undone
/// alone, a command's change commits beside them, and every committed change is on the
/// board and in the log once. A store that counts its writes took fewer than there were
/// changes.
fn changes_committed_together_each_get_their_own_answer_and_lose_nothing(hub: &Hub) {
    const CHANGES: u64 = 48;
    let command = hub.store();
    let resident = hub.store().resident();
    send(&*command, "first");
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
            tx.record(record(&format!("agent{n}"), "counted", tx.board.next_id));
            Ok(tx.board.next_id)
        }
    };
    let first = command.board("p").unwrap().next_id;
    let answers = at_once(CHANGES as usize, |n| {
        let n = n as u64;
        let answer = panic::catch_unwind(AssertUnwindSafe(|| {
            let store: &dyn Store = match n % 3 {
                0 => &*command,
                _ => &*resident,
            };
            change_board(store, "p", now(), counted(n))
        }));
        (n, answer)
    });
    let mut counts = BTreeSet::new();
    for (n, answer) in answers {
        match answer {
            Err(_) => assert_eq!(n % 7, 5, "only the panicking change panics ({n})"),
            Ok(Err(refused)) => {
                assert_eq!(n % 4, 1, "{n} refused: {refused:?}");
                assert_eq!(refused, Refused(format!("change {n} refused")));
            }
            Ok(Ok(count)) => {
                assert!(n % 4 != 1 && n % 7 != 5, "{n} should have failed");
                assert!(counts.insert(count), "{n} saw a count another saw");
            }
        }
    }
    let board = command.board("p").unwrap();
    assert_eq!(board.next_id, first + counts.len() as u64);
    assert_eq!(resident.board("p").unwrap().next_id, board.next_id);
    let expected: BTreeSet<u64> = (first + 1..=board.next_id).collect();
    assert_eq!(
        counts, expected,
        "each change on the board its predecessor left"
    );
    let logged: Vec<u64> = resident
        .log("p", None, None)
        .unwrap()
        .iter()
        .filter(|record| record.action == "counted")
        .map(|record| record.task.unwrap().0)
        .collect();
    assert_eq!(
        logged,
        expected.into_iter().collect::<Vec<_>>(),
        "one record per committed change, in commit order"
    );
    if let (Some(Version::Counted(before)), Some(Version::Counted(after))) =
        (version_before, command.board_version("p"))
    {
        assert!(
            after - before < counts.len() as u64,
            "{} changes committed in {} writes: none together",
            counts.len(),
            after - before
        );
    }
}

fn the_board_before_the_last_change_is_kept_and_brought_back(hub: &Hub) {
    let store = hub.store();
    let store = &*store;
    assert!(store.previous_board("p").unwrap().is_none());
    let first = send(store, "first");
    // A board's first write has none before it.
    assert!(store.previous_board("p").unwrap().is_none());
    let second = send(store, "second");
    assert_eq!(store.previous_board("p").unwrap().unwrap().len(), 1);
    change_board(store, "p", now(), |tx| {
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
    // A dry run plans from what is there and writes nothing.
    let version = store.board_version("p");
    store
        .restore_board("p", true, &mut |restoring| {
            Ok((restoring.previous.unwrap().unwrap(), Vec::new()))
        })
        .unwrap();
    assert_eq!(store.board_version("p"), version);
    store
        .restore_board("p", false, &mut |restoring| {
            let previous = restoring.previous.unwrap().unwrap();
            let current = restoring.current.unwrap().unwrap();
            assert_eq!(current.task(first).unwrap().unwrap().subject, "renamed");
            assert_eq!(restoring.log.len(), 3);
            Ok((previous, vec![record("doctor", "restore", 0)]))
        })
        .unwrap();
    let board = hub.store().board("p").unwrap();
    assert_eq!(board.task(first).unwrap().unwrap().subject, "first");
    assert!(board.contains(second));
    assert_eq!(store.log("p", None, Some(1)).unwrap()[0].action, "restore");
    // The board replaced is the previous one now.
    let previous = store.previous_board("p").unwrap().unwrap();
    assert_eq!(previous.task(first).unwrap().unwrap().subject, "renamed");
    let snapshot = store.snapshot("p").unwrap().unwrap();
    assert!(snapshot.recovered.is_none(), "nothing half made to recover");
    assert_eq!(snapshot.board.unwrap().unwrap().len(), 2);
    assert_eq!(snapshot.log.unwrap().len(), 4);
    store.catch_up_log("p").unwrap();
    assert_eq!(
        store.log("p", None, None).unwrap().len(),
        4,
        "nothing to catch up"
    );
}

fn a_tail_reads_what_is_logged_after_it_was_made(hub: &Hub) {
    let (one, two) = (hub.store(), hub.store());
    send(&*one, "before the tail");
    let mut tail = two.tail_log("p").unwrap();
    assert!(tail.fresh_lines().unwrap().is_empty(), "from the end");
    send(&*one, "after");
    send(&*one, "and after");
    let lines = tail.fresh_lines().unwrap();
    let subjects: Vec<u64> = lines
        .iter()
        .map(|line| {
            let record: crate::board::record::ActivityRecord = serde_json::from_str(line).unwrap();
            assert_eq!(record.action, "send");
            record.task.unwrap().0
        })
        .collect();
    assert_eq!(subjects.len(), 2, "{lines:?}");
    assert!(subjects[0] < subjects[1], "oldest first");
    assert!(tail.fresh_lines().unwrap().is_empty(), "each line once");
}
