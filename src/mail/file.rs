//! A project's mail as the store keeps it: read without a lock, appended to in one change
//! of the mail (numbered there), with the sweep of old read mail deciding what leaves.

use super::{Draft, Message, sweep};
use crate::error::Result;
use crate::store::{self, Mailboxes, Store, StoreError};
use crate::time::Timestamp;

/// Reads every message of a project without locking (none yet reads as empty). A torn or
/// unknown line is skipped: it belongs to a crashed writer or a newer baton.
pub fn read(store: &dyn Mailboxes, project: &str) -> Result<Vec<Message>, StoreError> {
    store.mail(project)
}

/// Appends `drafts` as numbered messages, then sweeps old read mail to the archive: one
/// change of the mail.
pub fn append(
    store: &dyn Store,
    project: &str,
    now: Timestamp,
    drafts: Vec<Draft>,
) -> Result<Vec<Message>> {
    if drafts.is_empty() {
        return Ok(Vec::new());
    }
    store::change_mail(store, project, now, |mailbox| {
        let added = mailbox.add(now, drafts);
        sweep::sweep(store, mailbox)?;
        Ok(added)
    })
}
