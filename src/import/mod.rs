//! Boards kept by other tools, read into one shape that `baton import` carries onto a baton
//! project: roundtable's `board.json` ([`roundtable`]) and agent-bridge's SQLite database
//! ([`agent_bridge`]), in the formats `shared/ANCHORS.md` records.
//!
//! Reading never changes the source (the database is opened read-only), and what cannot be
//! carried over is named in [`ForeignBoard::skipped`], never dropped in silence. Each imported task
//! keeps where it came from ([`Origin`]), which is what makes a second import add nothing.

pub mod agent_bridge;
pub mod roundtable;

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::board::task::Origin;
use crate::board::task::{Priority, Status, ThreadEntry};
use crate::names::{self, NameKind};
use crate::text;
use crate::time::Timestamp;

/// The tools whose boards baton reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Roundtable,
    AgentBridge,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Roundtable => "roundtable",
            Format::AgentBridge => "agent-bridge",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A task as another tool kept it, in baton's words.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignTask {
    pub origin: Origin,
    pub subject: String,
    pub body: String,
    pub files: Vec<String>,
    pub from: String,
    pub to: String,
    pub status: Status,
    pub priority: Priority,
    pub skill: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub result: Option<String>,
    pub thread: Vec<ThreadEntry>,
    /// The ids, in the same source project, of the tasks this one waits for.
    pub after: Vec<String>,
}

/// An agent as another tool registered it. Its wake command is never carried over (SPEC
/// section 8: wake commands are set from the CLI only); `had_wake` says there was one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignAgent {
    pub name: String,
    pub skills: Vec<String>,
    pub strengths: String,
    pub had_wake: bool,
}

/// Something in the source that is not carried over, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The task's id in the source, or what else was skipped.
    pub what: String,
    pub why: String,
}

/// Everything read from a source, ready to be carried over.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForeignBoard {
    pub tasks: Vec<ForeignTask>,
    pub agents: Vec<ForeignAgent>,
    pub skipped: Vec<Skipped>,
    /// Names the source spelled in a way baton does not allow, as they were and as they are
    /// now (`Claude Code` became `claude-code`).
    pub renamed: Vec<(String, String)>,
    /// Every name the source spelled that can be made a baton name, in the order first met
    /// ([`ForeignBoard::note_agent`]), and the same as a set.
    spelled: Vec<String>,
    noted: HashSet<String>,
}

/// Why a source cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {detail}")]
    Unreadable { path: String, detail: String },
    #[error("{path} is not {format}'s {what}: {detail}")]
    NotTheFormat {
        path: String,
        format: Format,
        what: &'static str,
        detail: String,
    },
    /// A name baton reads from is a view (or another object that is not a plain table).
    #[error("{path} is not agent-bridge's database: `{name}` is a {kind}, not a table")]
    NotATable {
        path: String,
        name: &'static str,
        kind: String,
    },
    #[error("{path} holds the projects {projects}: name one with --source-project")]
    WhichProject { path: String, projects: String },
    #[error("{path} has no project `{project}` (it has {projects})")]
    NoSuchProject {
        path: String,
        project: String,
        projects: String,
    },
}

impl ForeignBoard {
    /// Whether `name` can name a baton agent, as written or made over (see [`made_over`]).
    /// A name that can is noted, in the order the source names it, and the reader keeps it
    /// as written until [`ForeignBoard::settle_names`] gives every name its baton one: whether a
    /// name must be told apart from another is known only once all are.
    pub(crate) fn note_agent(&mut self, name: &str) -> bool {
        if self.noted.contains(name) {
            return true;
        }
        if !is_valid(name) && made_over(name).is_none() {
            return false;
        }
        self.noted.insert(name.to_string());
        self.spelled.push(name.to_string());
        true
    }

    /// Gives each name the source spelled its baton name (see [`baton_names`]) wherever the
    /// tasks, their threads and the agents hold it, and records in `renamed` each one made
    /// over. The readers call it once, when everything is read.
    pub(crate) fn settle_names(&mut self) {
        let names = baton_names(&self.spelled);
        let rename = |name: &mut String| {
            if let Some(baton_name) = names.get(name.as_str()) {
                name.clone_from(baton_name);
            }
        };
        for task in &mut self.tasks {
            rename(&mut task.from);
            rename(&mut task.to);
            for entry in &mut task.thread {
                rename(&mut entry.by);
            }
        }
        for agent in &mut self.agents {
            rename(&mut agent.name);
        }
        self.renamed = self
            .spelled
            .iter()
            .filter_map(|written| {
                let baton_name = names.get(written.as_str())?;
                (baton_name != written).then(|| (written.clone(), baton_name.clone()))
            })
            .collect();
    }

    pub(crate) fn skip(&mut self, what: impl Into<String>, why: impl Into<String>) {
        self.skipped.push(Skipped {
            what: what.into(),
            why: why.into(),
        });
    }
}

fn is_valid(name: &str) -> bool {
    names::check(NameKind::Agent, name).is_ok()
}

/// A baton name made of one baton does not allow: lower-cased, every other character made a
/// `-`, what comes before the first letter or digit and `-` at the end taken off, at most 64
/// characters (`Claude Code` becomes `claude-code`); `None` when nothing usable is left.
fn made_over(name: &str) -> Option<String> {
    let mut made: String = name
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let start = made
        .find(|c: char| c.is_ascii_alphanumeric())
        .unwrap_or(made.len());
    made.drain(..start);
    made.truncate(64);
    let made = made.trim_end_matches('-').to_string();
    is_valid(&made).then_some(made)
}

/// The baton name of each of `spelled`, the names as a source spelled them, in the order
/// it did. A name baton allows keeps it. Any other is made over ([`made_over`]); when that
/// gives a name another of the source's names has (one kept, or one made over before it),
/// it takes the first free `NAME-2`, `NAME-3`, …: names that differ in the source never
/// become one agent here, and the same source gives the same names every time.
fn baton_names(spelled: &[String]) -> HashMap<&str, String> {
    let mut taken: HashSet<String> = spelled
        .iter()
        .filter(|name| is_valid(name))
        .cloned()
        .collect();
    // Per name made over, the number its next `-N` is tried from: numbers below it are taken
    // already, so a source naming one agent a thousand ways costs no more than one.
    let mut next_number: HashMap<String, u64> = HashMap::new();
    let mut names = HashMap::with_capacity(spelled.len());
    for written in spelled {
        if is_valid(written) {
            names.insert(written.as_str(), written.clone());
            continue;
        }
        let Some(made) = made_over(written) else {
            continue;
        };
        let name = if taken.contains(&made) {
            let number = next_number.entry(made.clone()).or_insert(2);
            loop {
                let candidate = numbered(&made, *number);
                *number += 1;
                if let Some(candidate) = candidate.filter(|name| !taken.contains(name)) {
                    break candidate;
                }
            }
        } else {
            made
        };
        taken.insert(name.clone());
        names.insert(written.as_str(), name);
    }
    names
}

/// `name-number`, `name` cut short so that the whole stays within baton's 64 characters
/// (`name` is ASCII: [`made_over`] makes it so).
fn numbered(name: &str, number: u64) -> Option<String> {
    let suffix = format!("-{number}");
    let keep = name.len().min(64 - suffix.len());
    let numbered = format!("{}{suffix}", &name[..keep]);
    is_valid(&numbered).then_some(numbered)
}

/// How much of a word from the source a message shows: enough to recognise it, never a
/// page of it.
const SHOWN_CHARS: usize = 40;

/// A word from the source as a message about it shows it: cut to [`SHOWN_CHARS`], and
/// escaped (SPEC section 10), so it can neither run on nor hold a control character.
pub(crate) fn shown(word: &str) -> String {
    text::excerpt(word, SHOWN_CHARS)
}

/// Why a task whose status (`word`: agent-bridge says state) is `found` is not carried over:
/// the status as the source wrote it, and those baton knows.
pub(crate) fn unknown_status(word: &str, found: Option<&str>) -> String {
    let known = Status::NAMES.join(", ");
    match found {
        Some(found) => format!(
            "its {word} `{}` is not one baton knows ({known})",
            shown(found)
        ),
        None => format!("it has no {word} (baton knows {known})"),
    }
}

/// A time as the source wrote it: RFC 3339 (`2026-11-29T19:15:13Z`), SQLite's
/// `2026-11-29 19:15:13`, or seconds since 1970.
pub(crate) fn parse_time(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(at) = Timestamp::parse_stored(text) {
        return Some(at);
    }
    if let Ok(at) = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f") {
        return Some(Timestamp::from_datetime(at.and_utc()));
    }
    let seconds: i64 = text.parse().ok()?;
    chrono::DateTime::from_timestamp(seconds, 0).map(Timestamp::from_datetime)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that names agents `spelled`, in that order, once settled: each name's baton
    /// name, and what `renamed` says.
    fn settled(spelled: &[&str]) -> (Vec<Option<String>>, Vec<(String, String)>) {
        let mut source = ForeignBoard::default();
        let noted: Vec<bool> = spelled.iter().map(|name| source.note_agent(name)).collect();
        source.agents = spelled
            .iter()
            .zip(&noted)
            .filter(|(_, noted)| **noted)
            .map(|(name, _)| ForeignAgent {
                name: name.to_string(),
                skills: Vec::new(),
                strengths: String::new(),
                had_wake: false,
            })
            .collect();
        source.settle_names();
        let mut settled = source.agents.into_iter().map(|agent| agent.name);
        let names = noted
            .iter()
            .map(|noted| noted.then(|| settled.next().unwrap()))
            .collect();
        (names, source.renamed)
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(was, now)| (was.to_string(), now.to_string()))
            .collect()
    }

    #[test]
    fn names_baton_does_not_allow_are_made_over_and_recorded_once() {
        let (names, renamed) =
            settled(&["codex", "Claude Code", "Claude Code", "  ../Gemini!", "!!!"]);
        assert_eq!(
            names,
            vec![
                Some("codex".to_string()),
                Some("claude-code".to_string()),
                Some("claude-code".to_string()),
                Some("gemini".to_string()),
                None,
            ]
        );
        assert_eq!(
            renamed,
            owned(&[("Claude Code", "claude-code"), ("  ../Gemini!", "gemini")])
        );
    }

    #[test]
    fn names_that_differ_in_the_source_never_become_one() {
        // `alice` is valid as written and keeps its name, wherever it comes; the names made
        // over into it take the first free numbers, in the order the source names them.
        let (names, renamed) = settled(&["Alice", "ALICE!", "alice", "Alice", "alice-2!"]);
        let names: Vec<String> = names.into_iter().map(Option::unwrap).collect();
        assert_eq!(
            names,
            ["alice-2", "alice-3", "alice", "alice-2", "alice-2-2"]
        );
        assert_eq!(
            renamed,
            owned(&[
                ("Alice", "alice-2"),
                ("ALICE!", "alice-3"),
                ("alice-2!", "alice-2-2")
            ])
        );

        // A name valid as written is never numbered, even when a made-over one came first.
        let (names, _) = settled(&["Bob", "bob-2", "bob"]);
        let names: Vec<String> = names.into_iter().map(Option::unwrap).collect();
        assert_eq!(names, ["bob-3", "bob-2", "bob"]);

        // A number never makes a name longer than baton allows.
        let long = "A".repeat(70);
        let (names, _) = settled(&[&long, &"a".repeat(64)]);
        assert_eq!(
            names[0].as_deref(),
            Some(format!("{}-2", "a".repeat(62)).as_str())
        );
    }

    #[test]
    fn times_are_read_in_each_form_sources_write() {
        let expected = Timestamp::parse_stored("2026-11-29T19:15:13Z").unwrap();
        assert_eq!(parse_time("2026-11-29T19:15:13Z"), Some(expected));
        assert_eq!(parse_time("2026-11-29 19:15:13"), Some(expected));
        assert_eq!(
            parse_time(&expected.datetime().timestamp().to_string()),
            Some(expected)
        );
        assert_eq!(parse_time("yesterday"), None);
    }
}
