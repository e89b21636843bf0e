//! `hook pre-edit --client C`: what a client runs before a tool edits files (SPEC 18.3). It
//! denies an edit of a path another agent has reserved, in the client's own format, with a
//! reason the model reads, and lets everything else through without a word. It answers by
//! its deadline whatever the store or the hub does; one it cannot reach lets the edit
//! through and says so once a session (else once an hour). It always exits 0.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use baton::client::{Client, EditGuard};
use baton::error::Error;
use baton::hook::edit::{self, Asked, EditAnswer, ReadCall};
use baton::session::reservations::Holding;
use baton::store::StoreError;

use super::{ANSWER_BY, Context, EDIT_STDIN_LIMIT, answer_with, read_client_input};

/// What the desk found: the holdings of the paths asked about, and those paths.
type Found = (Vec<Holding>, Vec<Asked>);

pub fn run(context: &Context, client: Option<&str>) -> i32 {
    let started = Instant::now();
    let Some(client) = client.and_then(Client::from_name) else {
        eprintln!(
            "error: `hook {}` needs --client claude, codex, gemini or opencode; this hook \
             does nothing",
            EditGuard::EVENT
        );
        return 0;
    };
    let allow = || answer_with(&edit::render(client, &EditAnswer::Allow));
    let call = match edit::read_call(client.edit_guard(), &read_client_input(EDIT_STDIN_LIMIT)) {
        ReadCall::Edit(call) => call,
        ReadCall::NotAnEdit => return allow(),
        ReadCall::Unreadable(why) => {
            eprintln!(
                "baton hook {}: {why}; the edit goes ahead",
                EditGuard::EVENT
            );
            return allow();
        }
    };
    let session = call.session.clone();
    let desk = context.hook_desk(call.cwd.clone());
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    // A task's worktree on this machine stands for the workspace: paths in it are
    // relative to its root (SPEC section 18.2).
    let worktree = baton::worktree::root_of(
        &context.hub.home.worktrees_root(),
        call.cwd.as_deref().unwrap_or(&here),
    );
    // On a thread of its own, so that the hook answers by its deadline whatever the store
    // or the hub does; one still waiting then is left to the process's exit.
    let (sender, answered) = mpsc::channel();
    thread::spawn(move || {
        let found = (|| -> Result<Found, Error> {
            let Some(workspace) = desk.project()?.workspace else {
                // A project used from anywhere has no tree of files to guard.
                return Ok((Vec::new(), Vec::new()));
            };
            let asked = edit::asked_paths(&call, &workspace, worktree.as_deref(), &here);
            if asked.is_empty() {
                return Ok((Vec::new(), asked));
            }
            let patterns: Vec<String> = asked.iter().map(|asked| asked.pattern.clone()).collect();
            Ok((desk.reserved(&patterns)?, asked))
        })();
        let _ = sender.send(found);
    });
    let unreached = |why: String| {
        eprintln!("baton hook {}: {why}", EditGuard::EVENT);
        match first_time_unreached(context.hub.home.root(), session.as_deref()) {
            true => answer_with(&edit::render(
                client,
                &EditAnswer::AllowWithNote(format!(
                    "baton: {why}; edits are let through without checking reservations \
                     until it answers (said once)"
                )),
            )),
            false => allow(),
        }
    };
    match answered.recv_timeout(ANSWER_BY.saturating_sub(started.elapsed())) {
        Ok(Ok((holdings, _))) if holdings.is_empty() => allow(),
        Ok(Ok((holdings, asked))) => answer_with(&edit::render(
            client,
            &EditAnswer::Deny(edit::refusal(&holdings, &asked)),
        )),
        Ok(Err(
            error @ (Error::Unreachable { .. } | Error::Store(StoreError::Unreachable { .. })),
        )) => unreached(baton::text::inline(&error.to_string()).to_string()),
        Ok(Err(Error::Store(error))) if error.is_lock_timeout() => {
            unreached("the board stayed locked".to_string())
        }
        // Not baton's to guard (no project here, no identity): the edit goes ahead, and the
        // client's log has the line.
        Ok(Err(error)) => {
            eprintln!(
                "baton hook {}: {}; the edit goes ahead",
                EditGuard::EVENT,
                baton::text::inline(&error.to_string())
            );
            allow()
        }
        Err(_) => unreached(format!(
            "no answer from the store within {}s",
            ANSWER_BY.as_secs_f64()
        )),
    }
}

/// How long a note that the store could not be reached is kept, when the client names no
/// session: the user is told again after this.
const NOTE_LASTS: Duration = Duration::from_secs(60 * 60);

/// Whether this is the first time the hook could not reach its store in this session (the
/// client's session id), or this hour when the client names none. A mark in the hub home
/// remembers it; a home it cannot write to says it every time rather than never.
fn first_time_unreached(home: &Path, session: Option<&str>) -> bool {
    let dir = home.join("hooks").join("unreached");
    let key: String = session
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    let now = SystemTime::now();
    let key = match key.is_empty() {
        false => format!("session-{key}"),
        true => {
            let hours = now
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |since| since.as_secs() / NOTE_LASTS.as_secs());
            format!("hour-{hours}")
        }
    };
    if fs::create_dir_all(&dir).is_err() {
        return true;
    }
    // Marks older than a day are of sessions long over.
    if let Ok(entries) = fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|age| age > 24 * NOTE_LASTS);
            if old {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(key))
    {
        Ok(_) => true,
        Err(error) => error.kind() != std::io::ErrorKind::AlreadyExists,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unreached_note_is_said_once_a_session() {
        let home = tempfile::tempdir().unwrap();
        assert!(first_time_unreached(home.path(), Some("abc-1")));
        assert!(!first_time_unreached(home.path(), Some("abc-1")));
        assert!(first_time_unreached(home.path(), Some("other")));
        assert!(first_time_unreached(home.path(), Some("../..")));
        assert!(
            !first_time_unreached(home.path(), None),
            "`../..` names no session"
        );
        assert!(!first_time_unreached(home.path(), None));
    }
}
