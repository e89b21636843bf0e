//! Desktop notifications on hand-overs (SPEC section 8): best-effort, and off with
//! `BATON_NOTIFY=0`.
//!
//! The command that made the change never talks to the notification service itself: a
//! desktop without one can make a D-Bus call hang for its whole timeout. It starts
//! `baton __notify` detached instead, which gives up after [`SHOW_TIMEOUT`], and only where
//! a notification service can be reached at all ([`is_service_reachable`]). The notes go
//! to it on its stdin, never in its arguments, which any local user can read (`ps`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::Path;
#[cfg(all(unix, not(target_os = "macos")))]
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::board::handover::Handover;
use crate::home::Home;
use crate::mail::{Arrival, MessageType};
use crate::process;
use crate::text;

/// The hidden subcommand that shows notes: `baton __notify`, the notes as JSON on stdin.
pub const NOTIFY_COMMAND: &str = "__notify";
/// The most the notifier reads of its stdin: far more than any change's notes take.
const NOTES_LIMIT: u64 = 1024 * 1024;
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

/// Whether a notifier started now could reach a notification service, as far as can be told
/// without connecting. On Linux and the BSDs the notifier speaks D-Bus, so its session bus
/// must be there ([`is_session_bus_reachable`]): on a server, in a container or over ssh
/// there is usually none, and a notifier started there would only fail, at the cost of one
/// more process on every hand-over. macOS and Windows have a notification service of their
/// own, always there.
pub fn is_service_reachable() -> bool {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        // Read as zbus reads them: a value that is not UTF-8 counts as unset.
        let address = std::env::var("DBUS_SESSION_BUS_ADDRESS").ok();
        is_session_bus_reachable(address.as_deref(), &default_session_bus())
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        true
    }
}

/// Where the notifier looks for the session bus when `DBUS_SESSION_BUS_ADDRESS` is unset,
/// as zbus does: `$XDG_RUNTIME_DIR/bus`, else `/run/user/<uid>/bus`.
#[cfg(all(unix, not(target_os = "macos")))]
fn default_session_bus() -> PathBuf {
    match std::env::var("XDG_RUNTIME_DIR") {
        Ok(dir) => PathBuf::from(format!("{dir}/bus")),
        Err(_) => PathBuf::from(format!("/run/user/{}/bus", nix::unistd::geteuid())),
    }
}

/// Whether the session bus at `address` (the value of `DBUS_SESSION_BUS_ADDRESS`; when it
/// is unset, the socket `default_socket`) can be reached, as far as a look at the files
/// tells: a unix socket named by its path must exist and be a socket. A name in Linux's
/// abstract namespace (`unix:abstract=`) and a TCP address cannot be looked at, so they
/// count as reachable, and the notifier finds out. A server's listening address
/// (`unix:dir=`, `unix:tmpdir=`) and a value that is no address at all cannot be connected
/// to. Of a list (`;` between addresses) one reachable address is enough.
#[cfg(all(unix, not(target_os = "macos")))]
fn is_session_bus_reachable(address: Option<&str>, default_socket: &Path) -> bool {
    match address {
        None => is_socket(default_socket),
        Some(address) => address.split(';').any(is_bus_address_reachable),
    }
}

/// One address of [`is_session_bus_reachable`]: `transport:key=value,key=value`. Values are
/// taken as written, as zbus takes them.
#[cfg(all(unix, not(target_os = "macos")))]
fn is_bus_address_reachable(address: &str) -> bool {
    let Some((transport, options)) = address.split_once(':') else {
        return false;
    };
    if transport != "unix" {
        return !transport.is_empty();
    }
    for (key, value) in options
        .split(',')
        .filter_map(|option| option.split_once('='))
    {
        match key {
            "path" => return is_socket(Path::new(value)),
            "abstract" => return cfg!(target_os = "linux"),
            _ => {}
        }
    }
    false
}

#[cfg(all(unix, not(target_os = "macos")))]
fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|metadata| metadata.file_type().is_socket())
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

/// Starts the detached notifier for `notes`, handing them over on its stdin; returns once
/// it is started.
pub fn spawn(program: &Path, home: &Home, notes: &[Note]) -> io::Result<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let json = serde_json::to_vec(notes).map_err(io::Error::other)?;
    process::spawn_detached_with_input(program, &[NOTIFY_COMMAND], home.root(), &json)
}

/// The notes [`spawn`] handed the notifier, read from `input` (its stdin).
pub fn read_notes(input: impl Read) -> Result<Vec<Note>, String> {
    let mut json = Vec::new();
    input
        .take(NOTES_LIMIT)
        .read_to_end(&mut json)
        .map_err(|error| format!("cannot read the notes: {error}"))?;
    serde_json::from_slice(&json).map_err(|error| format!("the notes are not JSON: {error}"))
}

/// A note's body as the notification service is given it. The freedesktop servers of Linux
/// and the BSDs read a body as markup (`<b>`, `<a href>`, `<img src>`), so on those its
/// `&`, `<`, `>` and quotes go as entities and show as the characters they are; macOS and
/// Windows show a body as text.
fn body_for_service(body: &str) -> Cow<'_, str> {
    if cfg!(all(unix, not(target_os = "macos"))) {
        escape_markup(body)
    } else {
        Cow::Borrowed(body)
    }
}

/// `text` with the characters markup gives a meaning written as entities.
fn escape_markup(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Not &apos;, which HTML 4 and some servers' parsers do not know.
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    Cow::Owned(out)
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
                    .body(&body_for_service(&note.body));
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
            task: None,
            event: None,
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

    #[test]
    fn markup_in_a_body_goes_as_entities_after_the_controls_are_escaped() {
        assert_eq!(escape_markup("plain words"), "plain words");
        assert_eq!(
            escape_markup(r#"<b>bold</b> & <a href='x'>"link"</a>"#),
            "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a href=&#39;x&#39;&gt;&quot;link&quot;&lt;/a&gt;"
        );
        // An entity an agent wrote shows as it was written, not as the character it names.
        assert_eq!(escape_markup("&lt;img&gt;"), "&amp;lt;img&amp;gt;");
        let notes = notes_for(
            &[handover(
                "codex",
                3,
                Reason::Assigned,
                "<img src=x>\u{1b}[2J & co",
            )],
            &[],
            |_, _| "delivery: at codex's next prompt".into(),
        );
        let expected = if cfg!(all(unix, not(target_os = "macos"))) {
            "T-3 to do: &lt;img src=x&gt;\\u{1b}[2J &amp; co\ndelivery: at codex&#39;s next prompt"
        } else {
            "T-3 to do: <img src=x>\\u{1b}[2J & co\ndelivery: at codex's next prompt"
        };
        assert_eq!(body_for_service(&notes[0].body), expected);
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn a_session_bus_is_reachable_only_where_its_socket_could_be_connected_to() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("bus");
        let _listening = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let missing = dir.path().join("gone");
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let at = |path: &Path| format!("unix:path={}", path.display());
        // (DBUS_SESSION_BUS_ADDRESS, the default socket when it is unset, reachable)
        let cases: Vec<(Option<String>, &Path, bool)> = vec![
            (None, &socket, true),
            (None, &missing, false),
            (None, &file, false),
            (Some(at(&socket)), &missing, true),
            (
                Some(format!(
                    "{},guid=0123456789abcdef0123456789abcdef",
                    at(&socket)
                )),
                &missing,
                true,
            ),
            // The address wins over the default socket, as it does for zbus.
            (Some(at(&missing)), &socket, false),
            (Some(at(&file)), &socket, false),
            (
                Some(format!("{};{}", at(&missing), at(&socket))),
                &missing,
                true,
            ),
            (
                Some("unix:abstract=/tmp/dbus-Xyz,guid=0123".into()),
                &missing,
                cfg!(target_os = "linux"),
            ),
            (Some("tcp:host=localhost,port=4711".into()), &missing, true),
            (
                Some(format!("unix:dir={}", dir.path().display())),
                &socket,
                false,
            ),
            (
                Some(format!("unix:tmpdir={}", dir.path().display())),
                &socket,
                false,
            ),
            (Some(String::new()), &socket, false),
            (Some("disabled".into()), &socket, false),
            (Some(":path=/x".into()), &socket, false),
        ];
        for (address, default_socket, reachable) in cases {
            assert_eq!(
                is_session_bus_reachable(address.as_deref(), default_socket),
                reachable,
                "{address:?} with {}",
                default_socket.display()
            );
        }
    }

    #[test]
    fn the_notifier_reads_back_the_notes_handed_to_it() {
        let notes = vec![Note {
            summary: "baton: work for codex in api".into(),
            body: "T-3 to do: <b>x</b>".into(),
        }];
        let json = serde_json::to_vec(&notes).unwrap();
        assert_eq!(read_notes(json.as_slice()), Ok(notes));
        assert!(
            read_notes(&b"[{"[..])
                .unwrap_err()
                .starts_with("the notes are not JSON")
        );
    }
}
