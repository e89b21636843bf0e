//! Boards kept by other tools, read into one shape that `baton import` carries onto a baton
//! project: roundtable's `board.json` ([`roundtable`]) and agent-bridge's SQLite database
//! ([`agent_bridge`]), in the formats `shared/ANCHORS.md` records.
//!
//! Reading never changes the source (the database is opened read-only), and what cannot be
//! carried over is named in [`Source::skipped`], never dropped in silence. Each imported task
//! keeps where it came from ([`Origin`]), which is what makes a second import add nothing.

pub mod agent_bridge;
pub mod roundtable;

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
pub struct Source {
    pub tasks: Vec<ForeignTask>,
    pub agents: Vec<ForeignAgent>,
    pub skipped: Vec<Skipped>,
    /// Names the source spelled in a way baton does not allow, as they were and as they are
    /// now (`Claude Code` became `claude-code`).
    pub renamed: Vec<(String, String)>,
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

impl Source {
    /// A baton name for `name` as the source spelled it: kept when baton allows it, else
    /// lower-cased with every other character made a `-` (the change is recorded); `None`
    /// when nothing usable is left.
    pub(crate) fn agent_name(&mut self, name: &str) -> Option<String> {
        if names::check(NameKind::Agent, name).is_ok() {
            return Some(name.to_string());
        }
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
        if names::check(NameKind::Agent, &made).is_err() {
            return None;
        }
        if !self.renamed.iter().any(|(was, _)| was == name) {
            self.renamed.push((name.to_string(), made.clone()));
        }
        Some(made)
    }

    pub(crate) fn skip(&mut self, what: impl Into<String>, why: impl Into<String>) {
        self.skipped.push(Skipped {
            what: what.into(),
            why: why.into(),
        });
    }
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

    #[test]
    fn names_baton_does_not_allow_are_made_over_and_recorded_once() {
        let mut source = Source::default();
        assert_eq!(source.agent_name("codex").as_deref(), Some("codex"));
        assert_eq!(
            source.agent_name("Claude Code").as_deref(),
            Some("claude-code")
        );
        assert_eq!(
            source.agent_name("Claude Code").as_deref(),
            Some("claude-code")
        );
        assert_eq!(source.agent_name("  ../Gemini!").as_deref(), Some("gemini"));
        assert_eq!(source.agent_name("!!!"), None);
        assert_eq!(
            source.renamed,
            vec![
                ("Claude Code".to_string(), "claude-code".to_string()),
                ("  ../Gemini!".to_string(), "gemini".to_string()),
            ]
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
