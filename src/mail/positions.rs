//! How far each agent has read a project's mail (`mail.read.json`), and what it has not
//! read yet.

use super::{Message, ReadPositions, file};
use crate::error::Result;
use crate::store::{self, Mailboxes, Store, StoreError};
use crate::time::Timestamp;

/// How far each agent has read the mail; none yet means nobody has read anything.
pub fn read_positions(store: &dyn Mailboxes, project: &str) -> Result<ReadPositions, StoreError> {
    store.read_positions(project)
}

/// The messages that reach `agent` (who joined the hub at `joined`) and that it has not
/// been shown, oldest first. Looks only: nothing is marked read.
pub fn unread(
    store: &dyn Store,
    project: &str,
    agent: &str,
    joined: Timestamp,
) -> Result<Vec<Message>, StoreError> {
    let (positions, messages) = store.positions_and_mail(project)?;
    Ok(unread_after(messages, agent, joined, positions.of(agent)))
}

pub(super) fn unread_after(
    messages: Vec<Message>,
    agent: &str,
    joined: Timestamp,
    position: u64,
) -> Vec<Message> {
    messages
        .into_iter()
        .filter(|message| is_unread(message, agent, joined, position))
        .collect()
}

/// Whether `message` reaches `agent` (who joined at `joined`) and comes after the agent's
/// read `position`.
fn is_unread(message: &Message, agent: &str, joined: Timestamp, position: u64) -> bool {
    message.seq > position && message.reaches(agent, joined)
}

/// How far a look counts what it finds as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marking {
    /// A peek: nothing counts as read.
    Leave,
    /// Everything unread when the look is made: what `baton messages` prints, it read.
    All,
    /// The messages numbered up to this one: what a view drew before it asked (the terminal
    /// board, the web board's "mark read"), so one that arrived since stays unread.
    Through(u64),
}

/// Every message in `mail.jsonl` and `agent`'s read position before this look. Unless the
/// `marking` is [`Marking::Leave`], in one locked step what reaches the agent now (up to the
/// marking's bound) counts as read: two processes reading for one agent at once never both
/// get a message, and none is skipped.
pub fn look(
    store: &dyn Store,
    project: &str,
    agent: &str,
    joined: Timestamp,
    marking: Marking,
    now: Timestamp,
) -> Result<(Vec<Message>, u64)> {
    let position = read_positions(store, project)?.of(agent);
    let messages = file::read(store, project)?;
    let bound = match marking {
        Marking::Leave => return Ok((messages, position)),
        Marking::All => u64::MAX,
        Marking::Through(seq) => seq,
    };
    // With nothing unread there is nothing to mark, and no lock to take: the hooks look on
    // every prompt, and most of those looks find no mail.
    if newest_unread(&messages, agent, joined, position, bound).is_none() {
        return Ok((messages, position));
    }
    store::change_mail(store, project, now, |mailbox| {
        let before = mailbox.positions().of(agent);
        if let Some(newest) = newest_unread(mailbox.messages(), agent, joined, before, bound) {
            mailbox.mark_read(agent, newest);
        }
        Ok((mailbox.messages().to_vec(), before))
    })
}

/// The number of the newest message unread by `agent`, of those numbered up to `bound`.
fn newest_unread(
    messages: &[Message],
    agent: &str,
    joined: Timestamp,
    position: u64,
    bound: u64,
) -> Option<u64> {
    let unread = messages
        .iter()
        .filter(|message| message.seq <= bound && is_unread(message, agent, joined, position));
    unread.map(|message| message.seq).max()
}

/// [`unread`], and marks what it returns as read (see [`look`]).
pub fn take_unread(
    store: &dyn Store,
    project: &str,
    agent: &str,
    joined: Timestamp,
    now: Timestamp,
) -> Result<Vec<Message>> {
    let (messages, position) = look(store, project, agent, joined, Marking::All, now)?;
    Ok(unread_after(messages, agent, joined, position))
}
