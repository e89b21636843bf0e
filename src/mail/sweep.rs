//! Which old mail leaves `mail.jsonl` for the archive: what every recipient has read, once
//! it is old enough. The store moves it.

use super::ReadPositions;
use super::{KEEP_READ_MAIL_FOR, Message};
use crate::error::Result;
use crate::registry;
use crate::store::{Mailbox, Store};
use crate::time::Timestamp;

/// Who must read a message before it may leave `mail.jsonl`: its addressee while still
/// registered, or for a broadcast every agent registered when it was sent but the sender.
fn has_been_read_by_all(
    message: &Message,
    agents: &[registry::AgentRecord],
    positions: &ReadPositions,
) -> bool {
    agents
        .iter()
        .filter(|agent| message.reaches(&agent.name, agent.created_at))
        .all(|agent| positions.of(&agent.name) >= message.seq)
}

/// The seqs of the messages the sweep moves: older than [`KEEP_READ_MAIL_FOR`] and read by
/// every recipient.
pub(super) fn sweepable(
    messages: &[&Message],
    agents: &[registry::AgentRecord],
    positions: &ReadPositions,
    now: Timestamp,
) -> Vec<u64> {
    messages
        .iter()
        .filter(|message| message.at.until(now) >= KEEP_READ_MAIL_FOR)
        .filter(|message| has_been_read_by_all(message, agents, positions))
        .map(|message| message.seq)
        .collect()
}

/// Sends the old, fully read mail of `mailbox` to the archive. Cheap when nothing is old
/// enough: the registry is read only when some message is.
pub(super) fn sweep(store: &dyn Store, mailbox: &mut Mailbox) -> Result<()> {
    let now = mailbox.now;
    let is_any_old = mailbox
        .messages()
        .iter()
        .any(|message| message.at.until(now) >= KEEP_READ_MAIL_FOR);
    if !is_any_old {
        return Ok(());
    }
    let (agents, _unreadable) = registry::list(store)?;
    let messages: Vec<&Message> = mailbox.messages().iter().collect();
    let leaving = sweepable(&messages, &agents, mailbox.positions(), now);
    mailbox.archive(&leaving);
    Ok(())
}
