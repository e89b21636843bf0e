//! One change of a project's mail as a store hands it over: the messages and the read
//! positions read under the mail's lock, the messages the change adds (numbered here, after
//! every message so far), the read positions it moves, and the old messages it sends to the
//! archive. Which messages may leave, and how far an agent has read, is the mail's business
//! (`crate::mail`); the store commits what the change decided, whole. [`Mailboxes`] is
//! where each project's mail is kept.

use std::fmt;

use super::group::Work;
use super::{GaveUp, StoreError};
use crate::board::mail::{Draft, Message, ReadPositions};
use crate::time::Timestamp;

/// Where each project's mail and read positions are kept.
pub trait Mailboxes: fmt::Debug + Send + Sync {
    /// Every message of the mail of `project`, oldest first, read without the lock. A
    /// message that does not read (torn by a crashed writer, or from a newer baton) is
    /// skipped, and kept as it is.
    fn mail(&self, project: &str) -> Result<Vec<Message>, StoreError>;

    /// How far each agent has read the mail of `project`, read without the lock.
    fn read_positions(&self, project: &str) -> Result<ReadPositions, StoreError>;

    /// [`Mailboxes::read_positions`], then [`Mailboxes::mail`]: a store may read both at
    /// once.
    fn positions_and_mail(
        &self,
        project: &str,
    ) -> Result<(ReadPositions, Vec<Message>), StoreError> {
        let positions = self.read_positions(project)?;
        Ok((positions, self.mail(project)?))
    }

    /// One change of the mail of `project`, at `now`: the messages and read positions are
    /// read under the mail's lock (never the board's: a message never waits for a board
    /// change), `change` is run once, and what it did is committed whole, unless it gave
    /// up. As for a board, a store may commit changes that arrive together in one write.
    /// Its typed form is [`super::change_mail`].
    fn change_mail(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError>;
}

/// The mail of a project in a change, under its lock.
#[derive(Debug)]
pub struct Mailbox {
    pub now: Timestamp,
    /// The messages as read, oldest first, then those added.
    messages: Vec<Message>,
    /// How many of `messages` this change added (the last ones).
    added: usize,
    positions: ReadPositions,
    positions_changed: bool,
    /// The highest number given so far: new messages are numbered after it.
    last: u64,
    /// The numbers of the messages that leave for the archive.
    leaving: Vec<u64>,
}

/// What a store writes of a committed [`Mailbox`].
#[derive(Debug)]
pub struct MailCommitted {
    /// The messages added, to append.
    pub added: Vec<Message>,
    /// The read positions, when they changed (the archive's mark included).
    pub positions: Option<ReadPositions>,
    /// The numbers of the messages that leave for the archive.
    pub leaving: Vec<u64>,
}

impl Mailbox {
    /// The mail as a store read it under the lock: its `messages`, the read `positions`,
    /// and `last`, the highest number given so far (what every number in the mail, the
    /// archive's and the positions come to).
    pub fn new(
        now: Timestamp,
        messages: Vec<Message>,
        positions: ReadPositions,
        last: u64,
    ) -> Self {
        Mailbox {
            now,
            messages,
            added: 0,
            positions,
            positions_changed: false,
            last,
            leaving: Vec::new(),
        }
    }

    /// Every message, oldest first, those this change added last.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// How far each agent has read, as this change leaves it.
    pub fn positions(&self) -> &ReadPositions {
        &self.positions
    }

    /// Numbers `drafts` after every message so far, sent at `now`, and adds them.
    pub fn add(&mut self, now: Timestamp, drafts: Vec<Draft>) -> Vec<Message> {
        let messages: Vec<Message> = drafts
            .into_iter()
            .zip(self.last + 1..)
            .map(|(draft, seq)| Message {
                seq,
                at: now,
                from: draft.from,
                to: draft.to,
                kind: draft.kind,
                summary: draft.summary,
                body: draft.body,
                payload: draft.payload,
            })
            .collect();
        self.last += messages.len() as u64;
        self.now = self.now.max(now);
        self.added += messages.len();
        self.messages.extend(messages.iter().cloned());
        messages
    }

    /// Moves `agent`'s read position to `seq`: it has been shown the messages up to there.
    pub fn mark_read(&mut self, agent: &str, seq: u64) {
        if self.positions.of(agent) != seq {
            self.positions.positions.insert(agent.to_string(), seq);
            self.positions_changed = true;
        }
    }

    /// Sends the messages numbered `seqs` to the archive.
    pub fn archive(&mut self, seqs: &[u64]) {
        for seq in seqs {
            if !self.leaving.contains(seq) {
                self.leaving.push(*seq);
            }
        }
    }

    /// What is to be written, as a store commits it. The highest number leaving is kept in
    /// the positions (`archived_through`), so numbering carries on once the mail is empty.
    pub fn commit(mut self) -> MailCommitted {
        if let Some(highest) = self.leaving.iter().copied().max()
            && highest > self.positions.archived_through
        {
            self.positions.archived_through = highest;
            self.positions_changed = true;
        }
        let added = self.messages.split_off(self.messages.len() - self.added);
        MailCommitted {
            added,
            positions: self.positions_changed.then_some(self.positions),
            leaving: self.leaving,
        }
    }
}

/// A failed change is rolled back to the mail as it was before it.
impl Work for Mailbox {
    type Mark = (usize, usize, ReadPositions, bool, u64, usize, Timestamp);

    fn mark(&mut self) -> Self::Mark {
        (
            self.messages.len(),
            self.added,
            self.positions.clone(),
            self.positions_changed,
            self.last,
            self.leaving.len(),
            self.now,
        )
    }

    fn roll_back(
        &mut self,
        (messages, added, positions, positions_changed, last, leaving, now): Self::Mark,
    ) {
        self.messages.truncate(messages);
        self.added = added;
        self.positions = positions;
        self.positions_changed = positions_changed;
        self.last = last;
        self.leaving.truncate(leaving);
        self.now = now;
    }
}
