//! Presence on the files: a process that can take work into a session that is already running (an
//! opencode plugin following the board, `baton mcp` serving a Claude Code session that takes
//! channel pushes) says so by holding a lock file for as long as it lives:
//!
//! ```text
//! $BATON_HOME/live/<project>/<agent>/<client>-<pid>.lock
//! ```
//!
//! A `baton listen` on an agent's other machine, which runs that machine's wake command when
//! work arrives, is announced by the hub that serves its event stream, for as long as the
//! stream is open, so that a hand-over to the agent is known to reach it:
//!
//! ```text
//! $BATON_HOME/listeners/<agent>/<pid>-<n>.lock
//! ```
//!
//! Anyone may ask which sessions are live without taking those locks ([`lock::is_locked`]);
//! a file whose holder died without removing it is held by nobody, so it counts for nothing
//! and the next look removes it.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::file::FileError;
use crate::file::atomic::create_private_dir_all;
use crate::file::lock::{self, FileLock};
use crate::home::Home;
use crate::store::StoreError;
use crate::store::presence::Presence;

/// The file store's announcement: a lock file held open. (A process that is killed leaves
/// the file behind, held by nobody.)
#[derive(Debug)]
struct HeldFile {
    path: PathBuf,
    _lock: FileLock,
}

impl Drop for HeldFile {
    fn drop(&mut self) {
        // Removed while still held, so no look in between can find it unheld.
        let _ = fs::remove_file(&self.path);
    }
}

/// Announces that `agent` has a live session of `client` in `project`, for as long as the
/// returned [`Presence`] is kept. A process's first session is `<client>-<pid>`; one that
/// announces more (a hub, one per open push stream of an HTTP session) numbers the others
/// `<client>-<pid>.<n>`, each a file of its own.
pub fn announce(
    home: &Home,
    project: &str,
    agent: &str,
    client: &str,
) -> Result<Presence, StoreError> {
    static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let session = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pid = std::process::id();
    let stem = match session {
        0 => format!("{client}-{pid}"),
        n => format!("{client}-{pid}.{n}"),
    };
    hold(&home.live_dir(project, agent), &stem)
}

/// Announces a listener of `agent` (`baton listen` on its machine) whose event stream this
/// process serves, for as long as the returned [`Presence`] is kept. One server may serve
/// several streams, so each has a number of its own beside the server's pid.
pub fn announce_listener(home: &Home, agent: &str) -> Result<Presence, StoreError> {
    static STREAMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let stream = STREAMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pid = std::process::id();
    hold(&home.listener_dir(agent), &format!("{pid}-{stream}"))
}

/// Whether a listener of `agent` is announced now: some `baton listen` holds its event
/// stream open on a server of this hub. Leftovers of servers that died are removed on the
/// way.
pub fn is_listened(home: &Home, agent: &str) -> bool {
    let Ok(entries) = fs::read_dir(home.listener_dir(agent)) else {
        return false;
    };
    let mut is_listened = false;
    for entry in entries.filter_map(|entry| entry.ok()) {
        let path = entry.path();
        if path.extension().is_none_or(|extension| extension != "lock") {
            continue;
        }
        match lock::is_locked(&path) {
            true => is_listened = true,
            false => remove_leftover(&path),
        }
    }
    is_listened
}

/// Takes the lock `<dir>/<stem>.lock` and keeps it in the returned [`Presence`].
fn hold(dir: &Path, stem: &str) -> Result<Presence, StoreError> {
    create_private_dir_all(dir)?;
    // Locked under a name no look considers, then renamed into place: a look can never
    // find the file before it is held (and remove it as a leftover).
    let staging = dir.join(format!(".{stem}.new"));
    let path = dir.join(format!("{stem}.lock"));
    let lock = FileLock::try_acquire(&staging)?.ok_or_else(|| FileError::Io {
        path: staging.clone(),
        source: std::io::Error::new(ErrorKind::WouldBlock, "held by another process"),
    })?;
    fs::rename(&staging, &path).map_err(StoreError::io(&path))?;
    Ok(Presence::new(HeldFile { path, _lock: lock }))
}

/// The clients of `agent`'s live sessions in `project`, one entry a session, sorted.
/// Leftovers of sessions that died are removed on the way.
pub fn live_clients(home: &Home, project: &str, agent: &str) -> Vec<String> {
    let dir = home.live_dir(project, agent);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut clients: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let client = session_client(&name)?.to_string();
            let path = entry.path();
            match lock::is_locked(&path) {
                true => Some(client),
                false => {
                    remove_leftover(&path);
                    None
                }
            }
        })
        .collect();
    clients.sort();
    clients
}

/// The client a session file is named after: `opencode-4242.lock` and
/// `claude-http-4242.3.lock` → `opencode` and `claude-http`.
fn session_client(file_name: &str) -> Option<&str> {
    let stem = file_name.strip_suffix(".lock")?;
    let (client, pid) = stem.rsplit_once('-')?;
    let is_number = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    let is_pid = match pid.split_once('.') {
        Some((pid, n)) => is_number(pid) && is_number(n),
        None => is_number(pid),
    };
    (is_pid && !client.is_empty()).then_some(client)
}

/// Removes a session file nobody holds. Best effort: another look may have removed it.
fn remove_leftover(path: &Path) {
    let _ = fs::remove_file(path);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        (dir, home)
    }

    #[test]
    fn a_session_is_live_while_announced_and_gone_after() {
        let (_dir, home) = home();
        assert!(live_clients(&home, "default", "codex").is_empty());
        let presence = announce(&home, "default", "codex", "opencode").unwrap();
        assert_eq!(live_clients(&home, "default", "codex"), ["opencode"]);
        assert!(
            live_clients(&home, "default", "claude").is_empty(),
            "another agent"
        );
        assert!(
            live_clients(&home, "api", "codex").is_empty(),
            "another project"
        );
        let second = announce(&home, "default", "codex", "opencode").unwrap();
        assert_eq!(
            live_clients(&home, "default", "codex"),
            ["opencode", "opencode"],
            "two sessions of one process, each on its own"
        );
        drop(presence);
        assert_eq!(live_clients(&home, "default", "codex"), ["opencode"]);
        drop(second);
        assert!(live_clients(&home, "default", "codex").is_empty());
        let dir = home.live_dir("default", "codex");
        assert_eq!(fs::read_dir(dir).unwrap().count(), 0, "no file left");
    }

    #[test]
    fn a_file_left_by_a_dead_session_counts_for_nothing_and_is_removed() {
        let (_dir, home) = home();
        let dir = home.live_dir("default", "codex");
        fs::create_dir_all(&dir).unwrap();
        let leftover = dir.join("claude-999999.lock");
        fs::write(&leftover, "999999\n").unwrap();
        fs::write(dir.join("notes.txt"), "not a session").unwrap();
        let _live = announce(&home, "default", "codex", "opencode").unwrap();
        assert_eq!(live_clients(&home, "default", "codex"), ["opencode"]);
        assert!(!leftover.exists(), "the dead session's file is removed");
        assert!(dir.join("notes.txt").exists(), "other files are left alone");
    }

    #[test]
    fn a_listener_is_announced_while_held_and_each_stream_on_its_own() {
        let (_dir, home) = home();
        assert!(!is_listened(&home, "codex"));
        let first = announce_listener(&home, "codex").unwrap();
        let second = announce_listener(&home, "codex").unwrap();
        assert!(is_listened(&home, "codex"));
        assert!(!is_listened(&home, "claude"), "another agent");
        drop(first);
        assert!(
            is_listened(&home, "codex"),
            "the other stream is still open"
        );
        drop(second);
        assert!(!is_listened(&home, "codex"));
        let leftover = home.listener_dir("codex").join("999999-0.lock");
        fs::write(&leftover, "").unwrap();
        assert!(
            !is_listened(&home, "codex"),
            "a file nobody holds counts for nothing"
        );
        assert!(!leftover.exists(), "and is removed");
    }

    #[test]
    fn session_files_are_told_by_their_names() {
        assert_eq!(session_client("opencode-4242.lock"), Some("opencode"));
        assert_eq!(session_client("my-client-7.lock"), Some("my-client"));
        assert_eq!(session_client("claude-http-7.12.lock"), Some("claude-http"));
        for other in [
            ".opencode-1.new",
            "opencode.lock",
            "-7.lock",
            "opencode-.lock",
            "opencode-7..lock",
            "opencode-7.x.lock",
            "opencode-.3.lock",
        ] {
            assert_eq!(session_client(other), None, "{other}");
        }
    }
}
