//! A project's mail in files: `mail.jsonl` (read without a lock, appended to under
//! `mail.lock`), the read positions in `mail.read.json`, and the mail's archive,
//! `archive/mail-<YYYY-MM>.jsonl`. Every write happens under the mail lock, never under the
//! board lock, so a message never waits for a board change.

use std::collections::BTreeMap;
use std::io::ErrorKind;

use serde_json::Value;

use super::jsonl;
use crate::board::mail::{Message, POSITIONS_SCHEMA, ReadPositions};
use crate::file::{atomic, regular};
use crate::home::Home;
use crate::store::mailbox::{MailCommitted, Mailbox};
use crate::store::versioned::{self, Versioned};
use crate::store::{StoreError, Stored};
use crate::time::Timestamp;

impl Versioned for ReadPositions {
    const SCHEMA: u32 = POSITIONS_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

/// Every message of a project, read without locking (a missing file reads as empty). A
/// torn or unknown line is skipped: it belongs to a crashed writer or a newer baton.
pub fn read(home: &Home, project: &str) -> Result<Vec<Message>, StoreError> {
    Ok(jsonl::read_all(&home.mail_file(project))?.records)
}

/// The read positions; a missing file means nobody has read anything yet.
pub fn read_positions(home: &Home, project: &str) -> Result<ReadPositions, StoreError> {
    Ok(load_positions(home, project)?.unwrap_or_default())
}

/// The read positions, `None` when there is no file.
pub fn load_positions(home: &Home, project: &str) -> Result<Option<ReadPositions>, StoreError> {
    versioned::load(positions(project), &home.mail_cursor_file(project))
}

/// Writes the read positions, durably.
pub fn save_positions(home: &Home, project: &str, read: &ReadPositions) -> Result<(), StoreError> {
    versioned::save(positions(project), &home.mail_cursor_file(project), read)
}

/// The read positions of `project`, as errors name them.
fn positions(project: &str) -> Stored {
    Stored::ReadPositions {
        project: project.to_string(),
    }
}

/// One line of `mail.jsonl` as stored: kept byte for byte, so the sweep never drops or
/// rewrites what it does not understand.
#[derive(Debug, Clone)]
pub struct RawLine {
    text: String,
    seq: Option<u64>,
    message: Option<Message>,
}

/// The mail of a project under its lock: its lines as stored, and the [`Mailbox`] a change
/// works on.
#[derive(Debug)]
pub struct Opened {
    pub lines: Vec<RawLine>,
    pub mailbox: Mailbox,
}

/// Reads the mail and its read positions (the caller holds the mail lock).
pub fn open(home: &Home, project: &str, now: Timestamp) -> Result<Opened, StoreError> {
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
    let messages = lines
        .iter()
        .filter_map(|line| line.message.clone())
        .collect();
    Ok(Opened {
        mailbox: Mailbox::new(now, messages, positions, last),
        lines,
    })
}

/// A failed change is rolled back to the mail as it was before it (the lines as stored
/// change only when the change is written).
impl crate::store::group::Work for Opened {
    type Mark = <Mailbox as crate::store::group::Work>::Mark;

    fn mark(&mut self) -> Self::Mark {
        self.mailbox.mark()
    }

    fn roll_back(&mut self, mark: Self::Mark) {
        self.mailbox.roll_back(mark);
    }
}

/// Writes what a change of the mail did; the caller holds the mail lock. The new messages
/// are appended (one write, one fsync). The order of the other writes makes a crash safe:
/// the numbering is secured first (the read positions, with how far the archive reaches),
/// then the archive gets its copy of the messages that leave, then `mail.jsonl` lets go of
/// them; a crash between the last two leaves a message in both places (never in neither),
/// and a later sweep archives it again.
pub fn commit(home: &Home, project: &str, opened: Opened) -> Result<(), StoreError> {
    let Opened { mut lines, mailbox } = opened;
    let MailCommitted {
        added,
        positions,
        leaving,
    } = mailbox.commit();
    if !added.is_empty() {
        jsonl::append(&home.mail_file(project), &added)?;
    }
    if let Some(positions) = &positions {
        save_positions(home, project, positions)?;
    }
    if leaving.is_empty() {
        return Ok(());
    }
    // The rewrite keeps what stays, and the messages just appended stay.
    lines.extend(added.iter().map(|message| RawLine {
        // Serializing plain data cannot fail; `jsonl::append` just did the same.
        text: serde_json::to_string(message).unwrap_or_default(),
        seq: Some(message.seq),
        message: Some(message.clone()),
    }));
    let (moving, staying): (Vec<RawLine>, Vec<RawLine>) = lines
        .into_iter()
        .partition(|line| line.seq.is_some_and(|seq| leaving.contains(&seq)));
    let mut by_month: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in &moving {
        if let (Some(message), Ok(value)) = (&line.message, serde_json::from_str(&line.text)) {
            by_month.entry(message.at.month()).or_default().push(value);
        }
    }
    let dir = home.archive_dir(project);
    for (month, values) in &by_month {
        jsonl::append(&dir.join(format!("mail-{month}.jsonl")), values)?;
    }
    let mut text = String::new();
    for line in &staying {
        text.push_str(&line.text);
        text.push('\n');
    }
    Ok(atomic::replace(
        &home.mail_file(project),
        text.as_bytes(),
        None,
    )?)
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
