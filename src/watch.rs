//! Waiting for a board to change without busy-looping: what `wait` and `watch` block on.
//!
//! A [`FileWatch`] looks at the files' metadata every [`POLL_EVERY`] (no read of the board
//! itself); a board write replaces board.json by a rename, so its inode changes even when
//! its size and modification time would not (on Windows its file index does).

use std::fs;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Error, Result};
use crate::session::{Inbox, Push, Pushed, Session};
use crate::store::StoreError;
use crate::store::paths::Home;
use crate::store::platform;
use crate::time;

/// How often the watched files are looked at.
pub const POLL_EVERY: Duration = Duration::from_millis(150);
/// How often `wait` looks at the inbox even when nothing was written: a lease running out
/// puts a task into its sender's inbox without any write.
pub const LOOK_AGAIN_EVERY: Duration = Duration::from_secs(5);

/// What identifies one version of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    length: u64,
    modified: Option<SystemTime>,
}

/// Tells when any of a few files changed (appeared, vanished, or was written).
#[derive(Debug)]
pub struct FileWatch {
    paths: Vec<PathBuf>,
    stamps: Option<Vec<Option<Stamp>>>,
}

impl FileWatch {
    pub fn new(paths: Vec<PathBuf>) -> Self {
        FileWatch {
            paths,
            stamps: None,
        }
    }

    /// The files a project's inbox and board are made of.
    pub fn project(home: &Home, project: &str) -> Self {
        FileWatch::new(vec![home.board_file(project), home.mail_file(project)])
    }

    /// True on the first call, then whenever a file differs from the previous call.
    pub fn has_changed(&mut self) -> bool {
        let stamps: Vec<Option<Stamp>> = self
            .paths
            .iter()
            .map(|path| {
                fs::metadata(path).ok().map(|meta| Stamp {
                    inode: platform::file_id(path, &meta),
                    length: meta.len(),
                    modified: meta.modified().ok(),
                })
            })
            .collect();
        let is_changed = self.stamps.as_ref() != Some(&stamps);
        self.stamps = Some(stamps);
        is_changed
    }
}

/// The session as of this moment, for a long-running command whose session was opened
/// long ago (leases and stalled marks depend on the time).
pub fn at_now(session: &Session) -> Session {
    let mut fresh = session.clone();
    fresh.now = time::now();
    fresh
}

/// `wait`: blocks until the caller's inbox holds a task or an unread message and returns
/// it, or fails with [`Error::WaitTimedOut`] once `timeout` has passed.
pub fn wait_for_work(session: &Session, timeout: Option<Duration>) -> Result<Inbox> {
    session.agent()?;
    let started = Instant::now();
    let mut files = FileWatch::project(session.home(), session.project_id());
    let mut last_look: Option<Instant> = None;
    loop {
        let is_due =
            files.has_changed() || last_look.is_none_or(|at| at.elapsed() >= LOOK_AGAIN_EVERY);
        if is_due {
            last_look = Some(Instant::now());
            let inbox = at_now(session).inbox()?;
            if !inbox.is_empty() {
                return Ok(inbox);
            }
        }
        let mut pause = POLL_EVERY;
        if let Some(timeout) = timeout {
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(Error::WaitTimedOut {
                    seconds: timeout.as_secs(),
                });
            }
            pause = pause.min(timeout - waited);
        }
        thread::sleep(pause);
    }
}

/// `hook follow`: hands each hand-over to the caller not yet seen to `push`, as the board
/// changes (and every [`LOOK_AGAIN_EVERY`]), until `is_over` says the live session ended or
/// `push` says its reader is gone. Each batch pushed is recorded as seen
/// ([`Session::record_pushed`]); unseen work waiting when it starts is pushed at once.
pub fn follow_handovers(
    session: &Session,
    is_over: impl Fn() -> bool,
    mut push: impl FnMut(&Push) -> bool,
) -> Result<()> {
    session.agent()?;
    let mut files = FileWatch::project(session.home(), session.project_id());
    let mut pushed = Pushed::default();
    let mut last_look: Option<Instant> = None;
    while !is_over() {
        let is_due =
            files.has_changed() || last_look.is_none_or(|at| at.elapsed() >= LOOK_AGAIN_EVERY);
        if is_due {
            last_look = Some(Instant::now());
            let session = at_now(session);
            let mut sent = Vec::new();
            let mut is_read = true;
            let due = match session.handovers_to_push(&mut pushed) {
                Ok(due) => due,
                // A lock held past the timeout (a long write, a loaded machine) is no
                // reason to end the session's pushes: look again at the next poll.
                Err(Error::Store(StoreError::LockTimeout { .. })) => {
                    last_look = None;
                    thread::sleep(POLL_EVERY);
                    continue;
                }
                Err(error) => return Err(error),
            };
            for due in due {
                if !push(&due.push) {
                    is_read = false;
                    break;
                }
                sent.push(due.push);
            }
            // A lock held too long leaves them unseen on the board, and held in `pushed`:
            // the next look records them, and nothing is pushed twice.
            let _ = session.record_pushed(&mut pushed, &sent);
            if !is_read {
                return Ok(());
            }
        }
        thread::sleep(POLL_EVERY);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_counts_as_changed_even_with_the_same_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        let mut watch = FileWatch::new(vec![path.clone()]);
        assert!(watch.has_changed(), "the first look always counts");
        assert!(!watch.has_changed());
        fs::write(&path, "one").unwrap();
        assert!(watch.has_changed(), "appeared");
        assert!(!watch.has_changed());
        let temp = dir.path().join("board.json.tmp");
        fs::write(&temp, "two").unwrap();
        fs::rename(&temp, &path).unwrap();
        assert!(watch.has_changed(), "renamed over");
        fs::remove_file(&path).unwrap();
        assert!(watch.has_changed(), "vanished");
    }
}
