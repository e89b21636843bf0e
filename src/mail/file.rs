//! A project's `mail.jsonl`: read without a lock, appended to under the mail lock.

use std::io::ErrorKind;

use serde_json::Value;

use super::positions::read_positions;
use super::{Draft, Message, sweep};
use crate::error::Result;
use crate::store::lock::{FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::store::{StoreError, jsonl, regular};
use crate::time::Timestamp;

/// Reads every message of a project without locking (a missing file reads as empty). A
/// torn or unknown line is skipped: it belongs to a crashed writer or a newer baton.
pub fn read(home: &Home, project: &str) -> Result<Vec<Message>, StoreError> {
    Ok(jsonl::read_all(&home.mail_file(project))?.records)
}

/// The project's mail lock, which every write of its mail holds.
pub(super) fn lock(home: &Home, project: &str, policy: LockPolicy) -> Result<FileLock> {
    Ok(FileLock::acquire(
        &home.mail_lock(project),
        "the mail lock",
        policy,
    )?)
}

/// Appends `drafts` as numbered messages, then sweeps old read mail to the archive.
pub fn append(
    home: &Home,
    project: &str,
    policy: LockPolicy,
    now: Timestamp,
    drafts: Vec<Draft>,
) -> Result<Vec<Message>> {
    if drafts.is_empty() {
        return Ok(Vec::new());
    }
    let (_guard, mut appending) = Appending::begin(home, project, policy, now)?;
    let messages = appending.add(now, drafts);
    appending.write(home, project)?;
    Ok(messages)
}

/// Messages being appended to a project's mail under its lock, perhaps from many callers
/// (`crate::store::group`): numbered as they are added, written at once.
pub struct Appending {
    lines: Vec<RawLine>,
    positions: super::ReadPositions,
    last: u64,
    messages: Vec<Message>,
    /// The latest time of the messages added, which the sweep goes by.
    now: Timestamp,
}

impl Appending {
    /// Takes the mail lock and reads what the mail holds.
    pub fn begin(
        home: &Home,
        project: &str,
        policy: LockPolicy,
        now: Timestamp,
    ) -> Result<(FileLock, Appending)> {
        let guard = lock(home, project, policy)?;
        let lines = raw_lines(home, project)?;
        let positions = read_positions(home, project)?;
        let last = lines
            .iter()
            .filter_map(|line| line.seq)
            .chain([positions.archived_through])
            // A read position past every message can only come from a mail file cut short
            // by hand; numbering on from it keeps new messages from hiding behind old
            // positions.
            .chain(positions.positions.values().copied())
            .max()
            .unwrap_or(0);
        let appending = Appending {
            lines,
            positions,
            last,
            messages: Vec::new(),
            now,
        };
        Ok((guard, appending))
    }

    /// Numbers `drafts` after every message so far, sent at `now`.
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
        self.messages.extend(messages.iter().cloned());
        messages
    }

    /// Appends the messages added (one write, one fsync), then sweeps old read mail to the
    /// archive. The caller holds the mail lock.
    pub fn write(mut self, home: &Home, project: &str) -> Result<()> {
        if self.messages.is_empty() {
            return Ok(());
        }
        jsonl::append(&home.mail_file(project), &self.messages)?;
        // The sweep rewrites what stays, and the messages just appended stay.
        self.lines
            .extend(self.messages.iter().map(|message| RawLine {
                // Serializing plain data cannot fail; `jsonl::append` just did the same.
                text: serde_json::to_string(message).unwrap_or_default(),
                seq: Some(message.seq),
                message: Some(message.clone()),
            }));
        sweep::sweep_locked(home, project, self.now, self.lines, self.positions)?;
        Ok(())
    }
}

/// A failed change adds nothing: the messages it added are taken back.
impl crate::store::group::Work for Appending {
    type Mark = (usize, u64, Timestamp);

    fn mark(&self) -> Self::Mark {
        (self.messages.len(), self.last, self.now)
    }

    fn roll_back(&mut self, (messages, last, now): Self::Mark) {
        self.messages.truncate(messages);
        self.last = last;
        self.now = now;
    }
}

/// One line of `mail.jsonl` as stored: kept byte for byte, so the sweep never drops or
/// rewrites what it does not understand.
pub(super) struct RawLine {
    pub(super) text: String,
    pub(super) seq: Option<u64>,
    pub(super) message: Option<Message>,
}

fn raw_lines(home: &Home, project: &str) -> Result<Vec<RawLine>, StoreError> {
    let path = home.mail_file(project);
    let text = match regular::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError::io(&path)(error)),
    };
    Ok(text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: Option<Value> = serde_json::from_str(line).ok();
            RawLine {
                seq: value.as_ref().and_then(|value| value["seq"].as_u64()),
                message: value.and_then(|value| serde_json::from_value(value).ok()),
                text: line.to_string(),
            }
        })
        .collect())
}
