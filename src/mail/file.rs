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
    let _guard = lock(home, project, policy)?;
    let mut lines = raw_lines(home, project)?;
    let positions = read_positions(home, project)?;
    let last = lines
        .iter()
        .filter_map(|line| line.seq)
        .chain([positions.archived_through])
        // A read position past every message can only come from a mail file cut short by
        // hand; numbering on from it keeps new messages from hiding behind old positions.
        .chain(positions.positions.values().copied())
        .max()
        .unwrap_or(0);
    let messages: Vec<Message> = drafts
        .into_iter()
        .zip(last + 1..)
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
    jsonl::append(&home.mail_file(project), &messages)?;
    // The sweep rewrites what stays, and the messages just appended stay.
    lines.extend(messages.iter().map(|message| RawLine {
        // Serializing plain data cannot fail; `jsonl::append` just did the same.
        text: serde_json::to_string(message).unwrap_or_default(),
        seq: Some(message.seq),
        message: Some(message.clone()),
    }));
    sweep::sweep_locked(home, project, now, lines, positions)?;
    Ok(messages)
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
