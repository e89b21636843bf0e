//! What a long-running process (`baton serve`) keeps of the files it parsed, until they
//! change: a board, the tokens, an agent's record would otherwise be read and parsed again
//! on every request.
//!
//! Whether a file changed is told by its [`Stamp`]: which file the path names (the inode, or
//! Windows' file index), its length and its modification time, and on Unix the time its
//! inode last changed. baton replaces its files by a rename, which always gives the path
//! another file; a hand edit in place moves the times. The stamp is taken *before* the file
//! is read, so a file replaced in between is kept under the old stamp and read again at the
//! next look: what is kept can be older than the file only until it is looked at, never
//! after.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use crate::file::platform;

/// What identifies one version of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    file: u64,
    length: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    changed: (i64, i64),
}

impl Stamp {
    /// The stamp of the file at `path` now; `None` when there is none (or it cannot be
    /// looked at).
    pub fn of(path: &Path) -> Option<Stamp> {
        let metadata = fs::metadata(path).ok()?;
        Some(Stamp {
            file: platform::file_id(path, &metadata),
            length: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            changed: {
                use std::os::unix::fs::MetadataExt;
                (metadata.ctime(), metadata.ctime_nsec())
            },
        })
    }
}

/// Values parsed from files, each kept with the stamp its file had when it was read.
#[derive(Debug)]
pub struct FileCache<T> {
    kept: Mutex<HashMap<PathBuf, (Stamp, T)>>,
}

impl<T> Default for FileCache<T> {
    fn default() -> Self {
        FileCache {
            kept: Mutex::default(),
        }
    }
}

impl<T: Clone> FileCache<T> {
    /// The value of the file at `path`: the one kept if the file is still the one it was
    /// read from, else what `load` reads now (kept for next time). A file that is not there
    /// is loaded every time (`load` says what that means) and nothing is kept for it.
    pub fn get<E>(&self, path: &Path, load: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let Some(stamp) = Stamp::of(path) else {
            self.forget(path);
            return load();
        };
        if let Some((kept, value)) = self.lock().get(path)
            && *kept == stamp
        {
            return Ok(value.clone());
        }
        let value = load()?;
        self.lock()
            .insert(path.to_path_buf(), (stamp, value.clone()));
        Ok(value)
    }

    /// Keeps `value` as what the file at `path` now holds, for a writer that has just
    /// written it and still holds the lock that keeps others from replacing it.
    pub fn keep(&self, path: &Path, value: T) {
        match Stamp::of(path) {
            Some(stamp) => {
                self.lock().insert(path.to_path_buf(), (stamp, value));
            }
            None => self.forget(path),
        }
    }

    pub fn forget(&self, path: &Path) {
        self.lock().remove(path);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, (Stamp, T)>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn read(path: &Path, reads: &Cell<u32>) -> std::io::Result<String> {
        reads.set(reads.get() + 1);
        fs::read_to_string(path)
    }

    #[test]
    fn a_value_is_read_again_exactly_when_its_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        let cache = FileCache::<String>::default();
        let reads = Cell::new(0);
        assert!(cache.get(&path, || read(&path, &reads)).is_err(), "no file");
        fs::write(&path, "one").unwrap();
        assert_eq!(cache.get(&path, || read(&path, &reads)).unwrap(), "one");
        assert_eq!(cache.get(&path, || read(&path, &reads)).unwrap(), "one");
        assert_eq!(reads.get(), 2, "the second look kept what the first read");
        // Replaced by a rename, with the same length and perhaps within one clock tick.
        let temp = dir.path().join("board.json.tmp");
        fs::write(&temp, "two").unwrap();
        fs::rename(&temp, &path).unwrap();
        assert_eq!(cache.get(&path, || read(&path, &reads)).unwrap(), "two");
        // Written in place, as an editor might.
        fs::write(&path, "three!").unwrap();
        assert_eq!(cache.get(&path, || read(&path, &reads)).unwrap(), "three!");
        fs::remove_file(&path).unwrap();
        assert!(cache.get(&path, || read(&path, &reads)).is_err(), "gone");
        assert_eq!(reads.get(), 5);
    }

    #[test]
    fn a_writer_keeps_what_it_wrote_and_a_later_change_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        let cache = FileCache::<String>::default();
        let reads = Cell::new(0);
        fs::write(&path, "written").unwrap();
        cache.keep(&path, "written".to_string());
        assert_eq!(cache.get(&path, || read(&path, &reads)).unwrap(), "written");
        assert_eq!(reads.get(), 0, "kept by the writer");
        let temp = dir.path().join("tokens.json.tmp");
        fs::write(&temp, "another").unwrap();
        fs::rename(&temp, &path).unwrap();
        assert_eq!(cache.get(&path, || read(&path, &reads)).unwrap(), "another");
    }
}
