//! Feeds: a change committed through one store is told to the feeds another made before
//! it, each as itself on the hub's; a change that gave up is told to none.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::{Hub, draft, now, on_each_store, record, send};
use crate::store::{Change, Document, Edit, Scope, StoreError, What, change_board, change_mail};

on_each_store!(a_committed_change_reaches_the_feeds_of_another_store_and_a_refused_one_none);

/// Long enough for any change to be told on a loaded machine.
const TOLD_WITHIN: Duration = Duration::from_secs(10);
/// How long a feed with nothing to tell is given to stay quiet.
const QUIET_FOR: Duration = Duration::from_millis(300);

fn a_committed_change_reaches_the_feeds_of_another_store_and_a_refused_one_none(hub: &Hub) {
    let (here, there) = (hub.store(), hub.store());
    send(&*here, "before the feeds");
    let mut of_hub = there.changes(&Scope::Hub).unwrap();
    let mut of_project = there.changes(&Scope::Project("p".into())).unwrap();
    let mut of_other = there.changes(&Scope::Project("q".into())).unwrap();
    let refused: Result<(), crate::error::Error> = change_board(&*here, "p", now(), |tx| {
        tx.board.next_id += 1;
        tx.record(record("alice", "never", 1));
        Err(crate::error::Error::invalid("no"))
    });
    assert!(refused.is_err());
    let id = send(&*here, "told");
    change_mail(&*here, "p", now(), |mailbox| {
        mailbox.add(now(), vec![draft("hi")]);
        Ok::<_, StoreError>(())
    })
    .unwrap();
    here.save_document(&Document::Tokens, Edit::Write(b"{}".to_vec()))
        .unwrap();
    let expected: HashSet<Change> = [
        Change::in_project(
            "p",
            What::Logged {
                action: "send".into(),
                task: Some(id.0),
            },
        ),
        Change::in_project("p", What::Message { seq: 1 }),
        Change {
            project: None,
            what: What::Tokens,
        },
    ]
    .into_iter()
    .collect();
    let started = Instant::now();
    let mut told = Vec::new();
    while told.len() < expected.len() && started.elapsed() < TOLD_WITHIN {
        told.extend(of_hub.next(Duration::from_millis(200)).unwrap());
    }
    told.extend(of_hub.next(QUIET_FOR).unwrap());
    assert_eq!(told.len(), expected.len(), "each change once: {told:?}");
    assert_eq!(
        told.into_iter().collect::<HashSet<_>>(),
        expected,
        "each change as itself, the refused one not at all"
    );
    let of_p = of_project.next(TOLD_WITHIN).unwrap();
    assert!(!of_p.is_empty(), "the project's feed is told");
    assert!(
        of_p.iter()
            .all(|change| *change == Change::in_project("p", What::Project)),
        "{of_p:?}"
    );
    assert!(
        of_other.next(QUIET_FOR).unwrap().is_empty(),
        "another project's feed is told nothing"
    );
    // A waker ends a wait with nothing.
    let waker = of_other.waker();
    let started = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            waker.wake();
        });
        assert!(of_other.next(Duration::from_secs(60)).unwrap().is_empty());
    });
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "woken, not timed out"
    );
}
