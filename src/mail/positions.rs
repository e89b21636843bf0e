//! How far each agent has read a project's mail (`mail.read.json`), and what it has not
//! read yet.

use super::{Message, ReadPositions, file};
use crate::error::Result;
use crate::store::StoreError;
use crate::store::lock::LockPolicy;
use crate::store::paths::Home;
use crate::store::versioned::{self, Versioned};
use crate::time::Timestamp;

impl Versioned for ReadPositions {
    const SCHEMA: u32 = super::POSITIONS_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

/// Reads `mail.read.json`; a missing file means nobody has read anything yet.
pub fn read_positions(home: &Home, project: &str) -> Result<ReadPositions, StoreError> {
    Ok(versioned::load(&home.mail_cursor_file(project))?.unwrap_or_default())
}

/// Writes `mail.read.json` atomically. The caller holds the mail lock.
pub(super) fn write_positions(home: &Home, project: &str, positions: &ReadPositions) -> Result<()> {
    Ok(versioned::save(&home.mail_cursor_file(project), positions)?)
}

/// The messages that reach `agent` (who joined the hub at `joined`) and that it has not
/// been shown, oldest first. Looks only: nothing is marked read.
pub fn unread(
    home: &Home,
    project: &str,
    agent: &str,
    joined: Timestamp,
) -> Result<Vec<Message>, StoreError> {
    let position = read_positions(home, project)?.of(agent);
    Ok(unread_after(
        file::read(home, project)?,
        agent,
        joined,
        position,
    ))
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
    home: &Home,
    project: &str,
    policy: LockPolicy,
    agent: &str,
    joined: Timestamp,
    marking: Marking,
) -> Result<(Vec<Message>, u64)> {
    let position = read_positions(home, project)?.of(agent);
    let messages = file::read(home, project)?;
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
    let _guard = file::lock(home, project, policy)?;
    let mut positions = read_positions(home, project)?;
    let messages = file::read(home, project)?;
    let before = positions.of(agent);
    if let Some(newest) = newest_unread(&messages, agent, joined, before, bound) {
        positions.positions.insert(agent.to_string(), newest);
        write_positions(home, project, &positions)?;
    }
    Ok((messages, before))
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
    home: &Home,
    project: &str,
    policy: LockPolicy,
    agent: &str,
    joined: Timestamp,
) -> Result<Vec<Message>> {
    let (messages, position) = look(home, project, policy, agent, joined, Marking::All)?;
    Ok(unread_after(messages, agent, joined, position))
}
