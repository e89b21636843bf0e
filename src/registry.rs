//! The agent registry: one `agents/<name>.json` per agent, global across projects.
//!
//! Every change is a locked read-merge-write of one record, so a heartbeat racing with
//! `agent add` in another process never drops a field. Fields this binary does not know are
//! kept as they are.

use std::fs;
use std::io::ErrorKind;

use chrono::Duration;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::names::{self, NameKind};
use crate::store::lock::{FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::store::{StoreError, atomic};
use crate::time::Timestamp;

pub const AGENT_SCHEMA: u32 = 1;
/// `last_seen` is refreshed at most this often, so hooks firing on every prompt do not write
/// on every prompt.
pub const HEARTBEAT_EVERY: Duration = Duration::minutes(1);

/// The contents of `agents/<name>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    #[serde(default = "default_schema")]
    pub schema: u32,
    pub name: String,
    #[serde(default)]
    pub strengths: String,
    #[serde(default)]
    pub skills: Vec<String>,
    /// The headless command that wakes this agent, as an argv list.
    #[serde(default)]
    pub wake: Option<Vec<String>>,
    /// The agent clients wired to this identity by `baton setup`.
    #[serde(default)]
    pub clients: Vec<String>,
    pub created_at: Timestamp,
    pub last_seen: Timestamp,
    /// Fields written by a newer baton: kept, never dropped.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

fn default_schema() -> u32 {
    AGENT_SCHEMA
}

impl AgentRecord {
    pub fn new(name: &str, now: Timestamp) -> Self {
        AgentRecord {
            schema: AGENT_SCHEMA,
            name: name.to_string(),
            strengths: String::new(),
            skills: Vec::new(),
            wake: None,
            clients: Vec::new(),
            created_at: now,
            last_seen: now,
            other: serde_json::Map::new(),
        }
    }
}

/// Reads one record; `None` when the agent is not registered.
pub fn load(home: &Home, name: &str) -> Result<Option<AgentRecord>> {
    names::check(NameKind::Agent, name)?;
    let path = home.agent_file(name);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(&path)(error).into()),
    };
    let record: AgentRecord =
        serde_json::from_slice(&bytes).map_err(|error| StoreError::Corrupt {
            path: path.clone(),
            detail: error.to_string(),
        })?;
    if record.schema > AGENT_SCHEMA {
        return Err(StoreError::NewerSchema {
            path,
            found: u64::from(record.schema),
            known: AGENT_SCHEMA,
        }
        .into());
    }
    Ok(Some(record))
}

/// The names of every registered agent, sorted.
pub fn names(home: &Home) -> Result<Vec<String>> {
    let dir = home.agents_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError::io(&dir)(error).into()),
    };
    let mut names: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter_map(|file| file.strip_suffix(".json").map(str::to_string))
        .filter(|name| names::check(NameKind::Agent, name).is_ok())
        .collect();
    names.sort();
    Ok(names)
}

/// Every readable record; unreadable ones come back as errors beside them.
pub fn list(home: &Home) -> Result<(Vec<AgentRecord>, Vec<Error>)> {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for name in names(home)? {
        match load(home, &name) {
            Ok(Some(record)) => records.push(record),
            Ok(None) => {}
            Err(error) => problems.push(error),
        }
    }
    Ok((records, problems))
}

/// Fails with the list of known agents unless `name` is registered.
pub fn require(home: &Home, name: &str) -> Result<AgentRecord> {
    load(home, name)?.ok_or_else(|| Error::UnknownAgent {
        name: name.to_string(),
        known: names(home).unwrap_or_default(),
    })
}

/// A locked read-merge-write of one record. The closure gets the current record (or a fresh
/// one) and returns whether it changed anything.
pub fn update<T>(
    home: &Home,
    name: &str,
    lock: LockPolicy,
    now: Timestamp,
    change: impl FnOnce(&mut AgentRecord, bool) -> Result<T>,
) -> Result<T> {
    names::check(NameKind::Agent, name)?;
    let _guard = FileLock::acquire(&home.agent_lock(name), "the registry lock", lock)?;
    let existing = load(home, name)?;
    let is_new = existing.is_none();
    let mut record = existing
        .clone()
        .unwrap_or_else(|| AgentRecord::new(name, now));
    let result = change(&mut record, is_new)?;
    if existing.as_ref() != Some(&record) {
        let path = home.agent_file(name);
        let mut text = serde_json::to_vec_pretty(&record).map_err(|error| StoreError::Corrupt {
            path: path.clone(),
            detail: error.to_string(),
        })?;
        text.push(b'\n');
        atomic::replace(&path, &text, None)?;
    }
    Ok(result)
}

/// Records that `name` is active: registers it on first sight and refreshes `last_seen` at
/// most once per [`HEARTBEAT_EVERY`]. Cheap when nothing is due: one read, no lock.
pub fn heartbeat(home: &Home, name: &str, lock: LockPolicy, now: Timestamp) -> Result<()> {
    if let Some(record) = load(home, name)?
        && record.last_seen.until(now) < HEARTBEAT_EVERY
    {
        return Ok(());
    }
    update(home, name, lock, now, |record, _| {
        if record.last_seen < now {
            record.last_seen = now;
        }
        Ok(())
    })
}

/// Removes the record (the lock file stays, as every lock file does).
pub fn remove(home: &Home, name: &str, lock: LockPolicy) -> Result<()> {
    names::check(NameKind::Agent, name)?;
    let _guard = FileLock::acquire(&home.agent_lock(name), "the registry lock", lock)?;
    let path = home.agent_file(name);
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::NotFound => Err(Error::UnknownAgent {
            name: name.to_string(),
            known: names(home).unwrap_or_default(),
        }),
        Err(error) => Err(StoreError::io(&path)(error).into()),
    }
}
