//! Mail: numbered in one change each, read positions moved, old mail archived, and a
//! change that gives up leaving nothing.

use super::{Hub, draft, now, on_each_store};
use crate::store::{StoreError, at_once, change_mail};

on_each_store!(
    mail_is_numbered_read_and_archived_in_one_change_each,
    messages_sent_at_once_are_each_numbered_once,
);

fn mail_is_numbered_read_and_archived_in_one_change_each(hub: &Hub) {
    let store = hub.store();
    let store = &*store;
    assert!(store.mail("p").unwrap().is_empty());
    assert_eq!(store.read_positions("p").unwrap().of("codex"), 0);
    let sent = change_mail(store, "p", now(), |mailbox| {
        Ok::<_, StoreError>(mailbox.add(now(), vec![draft("one"), draft("two")]))
    })
    .unwrap();
    assert_eq!(sent.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2]);
    let refused: Result<(), crate::error::Error> = change_mail(store, "p", now(), |mailbox| {
        mailbox.add(now(), vec![draft("never")]);
        mailbox.mark_read("codex", 2);
        mailbox.archive(&[1]);
        Err(crate::error::Error::invalid("no"))
    });
    assert!(refused.is_err());
    let other = hub.store();
    assert_eq!(
        other
            .mail("p")
            .unwrap()
            .iter()
            .map(|m| m.summary.as_str())
            .collect::<Vec<_>>(),
        ["one", "two"],
        "the refused change left nothing"
    );
    assert_eq!(other.read_positions("p").unwrap().of("codex"), 0);
    change_mail(store, "p", now(), |mailbox| {
        mailbox.mark_read("codex", 2);
        mailbox.archive(&[1]);
        Ok::<_, StoreError>(())
    })
    .unwrap();
    let mail = other.mail("p").unwrap();
    assert_eq!(
        mail.iter().map(|m| m.summary.as_str()).collect::<Vec<_>>(),
        ["two"]
    );
    let positions = other.read_positions("p").unwrap();
    assert_eq!(positions.of("codex"), 2);
    assert_eq!(positions.of("alice"), 0);
    assert_eq!(positions.archived_through, 1);
    let archived = other.export_project("p").unwrap().mail_archive;
    assert_eq!(
        archived.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [1],
        "what left is in the archive"
    );
    // Numbering carries on past what left.
    change_mail(store, "p", now(), |mailbox| {
        mailbox.archive(&[2]);
        Ok::<_, StoreError>(())
    })
    .unwrap();
    assert!(other.mail("p").unwrap().is_empty());
    let third = change_mail(store, "p", now(), |mailbox| {
        Ok::<_, StoreError>(mailbox.add(now(), vec![draft("three")]))
    })
    .unwrap();
    assert_eq!(third[0].seq, 3);
    assert!(
        other.mail("q").unwrap().is_empty(),
        "another project's mail"
    );
}

fn messages_sent_at_once_are_each_numbered_once(hub: &Hub) {
    const SENDERS: usize = 16;
    let stores = [hub.store(), hub.store().resident()];
    let numbers = at_once(SENDERS, |n| {
        change_mail(&*stores[n % 2], "p", now(), |mailbox| {
            Ok::<_, StoreError>(mailbox.add(now(), vec![draft(&format!("m{n}"))])[0].seq)
        })
        .unwrap()
    });
    let mut sorted = numbers.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        (1..=SENDERS as u64).collect::<Vec<_>>(),
        "{numbers:?}"
    );
    let mail = hub.store().mail("p").unwrap();
    assert_eq!(
        mail.iter().map(|m| m.seq).collect::<Vec<_>>(),
        sorted,
        "every message, in the order of its number"
    );
    for (n, seq) in numbers.iter().enumerate() {
        let message = mail.iter().find(|m| m.seq == *seq).unwrap();
        assert_eq!(message.summary, format!("m{n}"));
    }
}
