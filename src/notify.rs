//! Desktop notifications on hand-overs (SPEC section 8): best-effort, and off with
//! `BATON_NOTIFY=0`.
//!
//! The command that made the change never talks to the notification service itself: a
//! desktop without one can make a D-Bus call hang for its whole timeout. It starts
//! `baton __notify` detached instead, which gives up after [`SHOW_TIMEOUT`].

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::board::handover::Handover;
use crate::mail::{Arrival, MessageType};
use crate::process;
use crate::store::paths::Home;
use crate::text;

/// The hidden subcommand that shows notes: `baton __notify JSON`.
pub const NOTIFY_COMMAND: &str = "__notify";
/// How long the detached notifier waits for the notification service, for all notes.
pub const SHOW_TIMEOUT: Duration = Duration::from_secs(5);

/// One desktop notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub summary: String,
    pub body: String,
}

/// False when `BATON_NOTIFY` is `0`, `false`, `off` or `no`.
pub fn is_enabled() -> bool {
    std::env::var("BATON_NOTIFY").map_or(true, |value| {
        !matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "0" | "false" | "off" | "no"
        )
    })
}

/// One note per agent that received work, with a line per task and per message.
///
/// Each note ends with the line `route` gives for its agent and project: how the work
/// reaches that agent (a wake run, its live session, its next prompt).
pub fn notes_for(
    handovers: &[Handover],
    arrivals: &[Arrival],
    route: impl Fn(&str, &str) -> String,
) -> Vec<Note> {
    let mut by_agent: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for handover in handovers {
        by_agent
            .entry((&handover.agent, &handover.project))
            .or_default()
            .push(format!(
                "{} {}: {}",
                handover.task,
                handover.reason.what_to_do(),
                shown(&handover.subject)
            ));
    }
    for arrival in arrivals {
        let kind = match arrival.kind {
            MessageType::Text => "message",
            other => other.as_str(),
        };
        by_agent
            .entry((&arrival.agent, &arrival.project))
            .or_default()
            .push(format!("{kind}: {}", shown(&arrival.summary)));
    }
    by_agent
        .into_iter()
        .map(|((agent, project), mut lines)| {
            lines.push(route(agent, project));
            Note {
                summary: format!("baton: work for {agent} in {project}"),
                body: lines.join("\n"),
            }
        })
        .collect()
}

/// A participant's line as a notification shows it: escaped (SPEC section 10) and short,
/// since a notification has room for a glance.
fn shown(line: &str) -> String {
    let (kept, left) = text::cut(line, NOTE_LINE_CHARS);
    format!("{}{}", text::inline(kept), if left > 0 { "…" } else { "" })
}

/// The most of a subject or summary a notification shows, in characters.
const NOTE_LINE_CHARS: usize = 120;

/// Starts the detached notifier for `notes`; returns once it is started.
pub fn spawn(program: &Path, home: &Home, notes: &[Note]) -> io::Result<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let json = serde_json::to_string(notes).map_err(io::Error::other)?;
    process::spawn_detached(program, &[NOTIFY_COMMAND, &json], home.root())
}

/// Shows `notes` (in the detached notifier), giving up after [`SHOW_TIMEOUT`].
pub fn show(notes: &[Note]) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the notifier: {error}"))?;
    let shown = runtime.block_on(async {
        let all = async {
            for note in notes {
                let mut notification = notify_rust::Notification::new();
                notification
                    .appname("baton")
                    .summary(&note.summary)
                    .body(&note.body);
                show_one(notification)
                    .await
                    .map_err(|error| format!("no desktop notification: {error}"))?;
            }
            Ok(())
        };
        tokio::time::timeout(SHOW_TIMEOUT, all)
            .await
            .map_err(|_| "the notification service did not answer in time".to_string())?
    });
    // A notification service that never answered holds no thread of the notifier back.
    runtime.shutdown_background();
    shown
}

/// Shows one notification: over D-Bus on Linux and the BSDs, which can be waited for
/// without a thread; through the system's own call on macOS and Windows, on a thread.
#[cfg(all(unix, not(target_os = "macos")))]
async fn show_one(notification: notify_rust::Notification) -> Result<(), String> {
    match notification.show_async().await {
        Ok(_) => Ok(()),
        Err(error) => Err(error.to_string()),
    }
}

#[cfg(any(windows, target_os = "macos"))]
async fn show_one(notification: notify_rust::Notification) -> Result<(), String> {
    let shown = tokio::task::spawn_blocking(move || match notification.show() {
        Ok(_) => Ok(()),
        Err(error) => Err(error.to_string()),
    });
    shown.await.map_err(|error| error.to_string())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::inbox::Reason;
    use crate::board::task::TaskId;

    fn handover(agent: &str, task: u64, reason: Reason, subject: &str) -> Handover {
        Handover {
            agent: agent.into(),
            project: "api".into(),
            task: TaskId(task),
            reason,
            subject: subject.into(),
        }
    }

    #[test]
    fn one_note_per_agent_naming_each_task_and_message() {
        let message = Arrival {
            agent: "codex".into(),
            project: "api".into(),
            seq: 7,
            kind: MessageType::Text,
            summary: "the benchmarks are in bench/".into(),
        };
        let notes = notes_for(
            &[
                handover("codex", 3, Reason::Assigned, "Fix the parser"),
                handover("claude", 2, Reason::Question, "Pick a name"),
                handover("codex", 4, Reason::ChangesRequested, "Add tests"),
            ],
            &[message],
            |agent, _| format!("delivery: {agent} waking"),
        );
        assert_eq!(
            notes,
            vec![
                Note {
                    summary: "baton: work for claude in api".into(),
                    body: "T-2 question for you: Pick a name\ndelivery: claude waking".into(),
                },
                Note {
                    summary: "baton: work for codex in api".into(),
                    body: "T-3 to do: Fix the parser\nT-4 changes requested: Add tests\n\
                           message: the benchmarks are in bench/\ndelivery: codex waking"
                        .into(),
                },
            ]
        );
    }
}
