//! The file store's own tests: changes at once, the group commit, resident boards.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use super::*;
use crate::error::{Error, Result};
use crate::store::{at_once, change_board};

const CHANGES: u64 = 24;

fn line(n: u64, now: Timestamp) -> ActivityRecord {
    ActivityRecord {
        at: now,
        project: "p".into(),
        actor: format!("agent{n}"),
        action: "counted".into(),
        task: Some(TaskId(n)),
        from_status: None,
        to_status: None,
        text: None,
    }
}

/// Change `n` counts itself on the board (next_id) and logs one line; every fourth
/// changes the board and then refuses, every seventh changes it and then panics, and
/// one in three comes through a writer of its own, as a CLI process would.
fn change(n: u64) -> impl FnOnce(&mut Transaction) -> Result<u64> {
    move |tx| {
        tx.board.next_id += 1;
        if n % 4 == 1 {
            return Err(Error::invalid(format!("change {n} refused")));
        }
        if n % 7 == 5 {
            panic!("change {n} panics");
        }
        tx.record(line(n, tx.now));
        Ok(tx.board.next_id)
    }
}

#[test]
fn changes_committed_together_each_get_their_own_answer_and_lose_nothing() {
    let root = tempfile::tempdir().unwrap();
    let home = Home::new(root.path().to_path_buf());
    let lock = LockPolicy::silent(Duration::from_secs(30));
    let command = FileStore::new(home.clone(), lock);
    let resident = FileStore::resident(home.clone(), lock);
    let now = crate::time::now();
    let answers = at_once(CHANGES as usize, |n| {
        let n = n as u64;
        let answer = panic::catch_unwind(AssertUnwindSafe(|| {
            if n.is_multiple_of(3) {
                change_board(&command, "p", now, change(n))
            } else {
                change_board(&resident, "p", now, change(n))
            }
        }));
        (n, answer)
    });
    let mut counts = BTreeSet::new();
    let mut committed = BTreeSet::new();
    for (n, answer) in answers {
        match answer {
            Err(_) => assert_eq!(n % 7, 5, "only the panicking change panics ({n})"),
            Ok(Err(refused)) => {
                assert_eq!(n % 4, 1, "{n} refused: {refused}");
                assert_eq!(refused.to_string(), format!("change {n} refused"));
            }
            Ok(Ok(count)) => {
                assert!(n % 4 != 1 && n % 7 != 5, "{n} should have failed");
                assert!(
                    counts.insert(count),
                    "{n} saw the count {count} another saw"
                );
                committed.insert(n);
            }
        }
    }
    // What a refused or panicking change did to the board is gone; every other change
    // counted exactly once, in some order, each on the board its predecessor left.
    let board = board::read(&home, "p").unwrap();
    let first = Board::new("p").next_id;
    assert_eq!(board.next_id, first + committed.len() as u64);
    let expected: BTreeSet<u64> = (first + 1..=board.next_id).collect();
    assert_eq!(counts, expected);
    assert_eq!(resident.board("p").unwrap().next_id, board.next_id);
    let logged: Vec<u64> = resident
        .log("p", None, None)
        .unwrap()
        .iter()
        .map(|record| record.task.unwrap().0)
        .collect();
    assert_eq!(
        logged.len(),
        committed.len(),
        "one line per committed change"
    );
    assert_eq!(logged.into_iter().collect::<BTreeSet<_>>(), committed);
}

#[test]
fn a_duty_has_one_holder_among_the_stores_of_one_home_until_it_lets_go() {
    let root = tempfile::tempdir().unwrap();
    let home = Home::new(root.path().to_path_buf());
    let lock = LockPolicy::silent(Duration::from_secs(5));
    let (one, other) = (
        FileStore::new(home.clone(), lock),
        FileStore::new(home, lock),
    );
    for duty in [Duty::AlertSender, Duty::Wake("codex".to_string())] {
        assert!(!other.is_held(&duty), "{duty:?}: nobody holds it yet");
        let held = one
            .try_hold(&duty)
            .unwrap()
            .expect("a free duty is taken up");
        assert!(
            other.is_held(&duty),
            "{duty:?}: seen held from another store"
        );
        assert!(
            other.try_hold(&duty).unwrap().is_none(),
            "{duty:?}: a second holder is refused"
        );
        assert!(
            other
                .try_hold(&Duty::Wake("gemini".to_string()))
                .unwrap()
                .is_some(),
            "{duty:?}: another duty is free"
        );
        drop(held);
        assert!(!other.is_held(&duty), "{duty:?}: let go when dropped");
        assert!(
            other.try_hold(&duty).unwrap().is_some(),
            "{duty:?}: free again"
        );
    }
}

#[test]
fn an_mcp_sessions_owner_is_known_to_the_store_that_recorded_it_until_forgotten() {
    let root = tempfile::tempdir().unwrap();
    let lock = LockPolicy::silent(Duration::from_secs(5));
    let store = FileStore::resident(Home::new(root.path().to_path_buf()), lock);
    let waiting_briefly = store.with_lock(LockPolicy::silent(Duration::from_millis(10)));
    assert_eq!(store.mcp_session_owner("s1").unwrap(), None);
    store.record_mcp_session("s1", "hash-a").unwrap();
    store.record_mcp_session("s2", "hash-b").unwrap();
    assert_eq!(
        waiting_briefly.mcp_session_owner("s1").unwrap().as_deref(),
        Some("hash-a"),
        "the same store with another lock policy knows it"
    );
    waiting_briefly
        .forget_mcp_sessions(&["s1".to_string(), "s9".to_string()])
        .unwrap();
    assert_eq!(store.mcp_session_owner("s1").unwrap(), None);
    assert_eq!(
        store.mcp_session_owner("s2").unwrap().as_deref(),
        Some("hash-b")
    );
}

#[test]
fn a_batch_that_cannot_begin_refuses_each_of_its_changes_and_the_next_one_begins() {
    let root = tempfile::tempdir().unwrap();
    let home = Home::new(root.path().to_path_buf());
    let lock = LockPolicy::silent(Duration::from_secs(5));
    let resident = FileStore::resident(home.clone(), lock);
    let now = crate::time::now();
    std::fs::create_dir_all(home.board_file("p").parent().unwrap()).unwrap();
    std::fs::write(home.board_file("p"), "{ not a board").unwrap();
    let refused = change_board(&resident, "p", now, |_| Ok::<_, Error>(())).unwrap_err();
    assert_eq!(refused.exit_code(), 4, "{refused}");
    assert_eq!(refused.duplicate().to_string(), refused.to_string());
    std::fs::remove_file(home.board_file("p")).unwrap();
    let count = change_board(&resident, "p", now, change(0)).unwrap();
    assert_eq!(count, Board::new("p").next_id + 1);
}
