//! Moving old mail that every recipient has read out of `mail.jsonl`, into the archive.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ReadPositions;
use super::file::RawLine;
use super::positions::write_positions;
use super::{KEEP_READ_MAIL_FOR, Message};
use crate::error::Result;
use crate::registry;
use crate::store::atomic;
use crate::store::jsonl;
use crate::store::paths::Home;
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

/// Moves old, fully read mail to `archive/mail-<YYYY-MM>.jsonl`. The caller holds the mail
/// lock. The order of the writes makes a crash safe: the numbering is secured first, then
/// the archive gets its copy, then `mail.jsonl` lets go of it; a crash between the last two
/// leaves a message in both places (never in neither), and a later sweep archives it again.
pub(super) fn sweep_locked(
    home: &Home,
    project: &str,
    now: Timestamp,
    mut lines: Vec<RawLine>,
    mut positions: ReadPositions,
) -> Result<usize> {
    // Cheap check first: most sends find nothing old enough and need not read the registry.
    let is_any_old = lines
        .iter()
        .filter_map(|line| line.message.as_ref())
        .any(|message| message.at.until(now) >= KEEP_READ_MAIL_FOR);
    if !is_any_old {
        return Ok(0);
    }
    let (agents, _unreadable) = registry::list(home)?;
    let messages: Vec<&Message> = lines
        .iter()
        .filter_map(|line| line.message.as_ref())
        .collect();
    let leaving = sweepable(&messages, &agents, &positions, now);
    if leaving.is_empty() {
        return Ok(0);
    }
    let highest = leaving.iter().copied().max().unwrap_or(0);
    if highest > positions.archived_through {
        positions.archived_through = highest;
        write_positions(home, project, &positions)?;
    }
    let (moving, staying): (Vec<RawLine>, Vec<RawLine>) = lines
        .drain(..)
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
    atomic::replace(&home.mail_file(project), text.as_bytes(), None)?;
    Ok(moving.len())
}
