//! The activity lines of a board change on their way into the log, so that the log holds
//! exactly one line for every change that committed and none for a change that did not,
//! whenever a writer is killed.
//!
//! A change is staged, then its journal is written (the staged board's identity, the log's
//! identity and length, and the lines), then the board is renamed into place, then the lines
//! are appended and the journal removed. A journal left behind means its writer was killed
//! somewhere after writing it; the next writer, under the board lock, reads it: if the board
//! file is not the staged file, the change never committed and the journal is dropped; if
//! it is, the log is cut back to its length before the append (which a killed writer may have
//! started) and the lines are appended again, exactly once. The journal is written whole
//! before the rename, so one cut short always belongs to a change that never committed.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::log;
use crate::file::atomic::{FileIdentity, create_private_dir_all, private_open_options};
use crate::file::regular;
use crate::store::{Origin, Recovered, StoreError, Stored};

/// What a journal's lines may be: whatever its log holds, one per line.
pub trait Line: Clone + Serialize + DeserializeOwned {}

impl<T: Clone + Serialize + DeserializeOwned> Line for T {}

/// The `schema` of a journal this binary writes and the highest it reads.
pub const JOURNAL_SCHEMA: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(bound = "R: Line")]
struct Journal<R> {
    schema: u32,
    /// The staged board: the board file is this very file once the change has committed.
    board: FileIdentity,
    /// The live log as it was before the lines were appended.
    log: FileIdentity,
    records: Vec<R>,
}

/// Writes the journal of a change whose board is staged as `board`, before the rename. The
/// log is created when missing, so that it has an inode to be known by. The caller holds the
/// board lock. Not synced: see `board::persist` for what a power cut does.
pub fn write<R: Line>(
    path: &Path,
    board: FileIdentity,
    log: &Path,
    records: &[R],
) -> Result<(), StoreError> {
    if let Some(parent) = log.parent() {
        create_private_dir_all(parent)?;
    }
    let log_identity = regular::open_with(log, private_open_options().append(true).create(true))
        .and_then(|file| file.metadata())
        .map_err(StoreError::io(log))?;
    let journal = Journal {
        schema: JOURNAL_SCHEMA,
        board,
        log: FileIdentity::of(log, &log_identity),
        records: records.to_vec(),
    };
    let mut text = serde_json::to_vec(&journal).map_err(|error| {
        StoreError::corrupt(&Origin::file(Stored::Other, path))(error.to_string())
    })?;
    text.push(b'\n');
    regular::open_with(
        path,
        private_open_options()
            .write(true)
            .create(true)
            .truncate(true),
    )
    .and_then(|mut file| std::io::Write::write_all(&mut file, &text))
    .map_err(StoreError::io(path))
}

/// After the rename: appends the lines and removes the journal. When the append fails (a
/// full disk), the change stands all the same and the journal stays for the next writer to
/// complete, so this reports nothing.
pub fn finish<R: Line>(path: &Path, log: &Path, records: &[R]) {
    if log::append(log, records).is_ok() {
        // A journal that cannot be removed is completed again by the next writer, which
        // cuts the log back first, so the lines still appear once.
        let _ = fs::remove_file(path);
    }
}

/// Removes the journal of a change that will not be committed.
pub fn discard(path: &Path) {
    let _ = fs::remove_file(path);
}

/// Completes or drops the journal a killed writer left, if any: see the module's comment.
/// The caller holds the board lock, so nothing else writes the board or the log meanwhile.
pub fn recover<R: Line>(
    path: &Path,
    board: &Path,
    log: &Path,
) -> Result<Option<Recovered<R>>, StoreError> {
    // Read through `regular`: a FIFO left where the journal should be must not hang.
    let bytes = match regular::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(path)(error)),
    };
    let recovered = match serde_json::from_slice::<Journal<R>>(&bytes) {
        Err(_) => Recovered::Torn,
        Ok(journal) if journal.schema > JOURNAL_SCHEMA => {
            return Err(StoreError::NewerSchema {
                origin: Origin::file(Stored::Other, path),
                found: u64::from(journal.schema),
                known: JOURNAL_SCHEMA,
            });
        }
        Ok(journal) if FileIdentity::at(board)? != Some(journal.board) => {
            Recovered::Dropped(journal.records)
        }
        Ok(journal) => {
            complete(log, &journal)?;
            Recovered::Completed(journal.records)
        }
    };
    match fs::remove_file(path) {
        Ok(()) => Ok(Some(recovered)),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(Some(recovered)),
        Err(error) => Err(StoreError::io(path)(error)),
    }
}

/// Puts the lines of a committed change into the log exactly once.
fn complete<R: Line>(log: &Path, journal: &Journal<R>) -> Result<(), StoreError> {
    let is_journal_log =
        |found: Option<FileIdentity>| found.is_some_and(|found| found.inode == journal.log.inode);
    if is_journal_log(FileIdentity::at(&log::generation(log, 1))?) {
        // The log the lines went to was rotated away, which happens only once they are all
        // in it.
        return Ok(());
    }
    if is_journal_log(FileIdentity::at(log)?) {
        // None, some or all of the lines got in, perhaps the last of them torn: cut back to
        // before them. Nothing else was appended since, as every writer recovers first.
        let file = regular::open_with(log, fs::OpenOptions::new().write(true))
            .map_err(StoreError::io(log))?;
        let length = file.metadata().map_err(StoreError::io(log))?.len();
        if length > journal.log.length {
            file.set_len(journal.log.length)
                .map_err(StoreError::io(log))?;
        }
    }
    // Otherwise the log is another file than the one the lines were meant for (removed or
    // replaced by hand): the lines belong at its end all the same.
    log::append(log, &journal.records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::atomic;

    /// A line of a log, as long as an activity line is at its shortest.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Note {
        at: String,
        text: String,
    }

    fn record(text: &str) -> Note {
        Note {
            at: "2026-11-29T12:00:00.000Z, a time as long as any".into(),
            text: text.into(),
        }
    }

    fn texts(path: &Path) -> Vec<String> {
        log::read::<Note>(path)
            .unwrap()
            .into_iter()
            .map(|record| record.text)
            .collect()
    }

    struct Scene {
        _dir: tempfile::TempDir,
        board: std::path::PathBuf,
        log: std::path::PathBuf,
        journal: std::path::PathBuf,
    }

    /// A board and a log with one line, and a change staged with its journal written: where
    /// a writer killed just before its rename leaves things.
    fn staged_change() -> (Scene, atomic::Staged) {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene {
            board: dir.path().join("board.json"),
            log: dir.path().join("activity.jsonl"),
            journal: dir.path().join("activity.journal"),
            _dir: dir,
        };
        atomic::replace(&scene.board, b"old", None).unwrap();
        log::append(&scene.log, &[record("before")]).unwrap();
        let staged = atomic::stage(&scene.board, b"new").unwrap();
        write(
            &scene.journal,
            staged.identity(),
            &scene.log,
            &[record("change")],
        )
        .unwrap();
        (scene, staged)
    }

    #[test]
    fn a_change_killed_before_its_rename_leaves_no_line() {
        let (scene, _staged) = staged_change();
        let recovered = recover::<Note>(&scene.journal, &scene.board, &scene.log).unwrap();
        assert!(
            matches!(recovered, Some(Recovered::Dropped(_))),
            "{recovered:?}"
        );
        assert_eq!(texts(&scene.log), ["before"]);
        assert!(!scene.journal.exists());
        assert_eq!(
            recover::<Note>(&scene.journal, &scene.board, &scene.log).unwrap(),
            None
        );
    }

    #[test]
    fn a_change_killed_after_its_rename_gets_its_line_once_however_far_the_append_got() {
        let line = format!("{}\n", serde_json::to_string(&record("change")).unwrap());
        for appended in [0, 5, line.len(), line.len() * 2] {
            let (scene, staged) = staged_change();
            staged.commit(None).unwrap();
            let mut log = fs::OpenOptions::new()
                .append(true)
                .open(&scene.log)
                .unwrap();
            std::io::Write::write_all(&mut log, &line.repeat(2).as_bytes()[..appended]).unwrap();
            let recovered = recover::<Note>(&scene.journal, &scene.board, &scene.log).unwrap();
            assert!(
                matches!(recovered, Some(Recovered::Completed(_))),
                "{recovered:?}"
            );
            assert_eq!(texts(&scene.log), ["before", "change"], "{appended} bytes");
            assert!(!scene.journal.exists());
        }
    }

    #[test]
    fn a_log_rotated_after_the_append_is_left_as_it_is() {
        let (scene, staged) = staged_change();
        staged.commit(None).unwrap();
        log::append(&scene.log, &[record("change")]).unwrap();
        fs::rename(&scene.log, log::generation(&scene.log, 1)).unwrap();
        recover::<Note>(&scene.journal, &scene.board, &scene.log).unwrap();
        assert_eq!(texts(&scene.log), ["before", "change"]);
    }

    #[test]
    fn a_torn_journal_is_dropped() {
        let (scene, _staged) = staged_change();
        let bytes = fs::read(&scene.journal).unwrap();
        fs::write(&scene.journal, &bytes[..bytes.len() / 2]).unwrap();
        let recovered = recover::<Note>(&scene.journal, &scene.board, &scene.log).unwrap();
        assert_eq!(recovered, Some(Recovered::Torn));
        assert_eq!(texts(&scene.log), ["before"]);
    }
}
